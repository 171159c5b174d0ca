# xml.etree: build a document of nested small elements with attributes and
# text, serialise it, parse it back, walk and search it, drop it; ROUNDS
# times (as pyperformance's xml_etree "process" does, on generated data).
import sys
import xml.etree.ElementTree as ET


def build(n):
    root = ET.Element("root", {"version": "1.0"})
    for i in range(n):
        item = ET.SubElement(root, "item", {"id": str(i), "kind": "k%d" % (i % 7)})
        for j in range(4):
            sub = ET.SubElement(item, "field", {"name": "f%d" % j})
            sub.text = "value %d.%d" % (i, j)
    return root


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
total = 0
for r in range(rounds):
    root = build(6000)
    text = ET.tostring(root)
    back = ET.fromstring(text)
    total += sum(1 for _ in back.iter("field"))
    total += len(back.findall(".//item[@kind='k3']"))
    del root, back, text
print(total)
