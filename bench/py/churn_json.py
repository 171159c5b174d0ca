# Arena churn: build a large list of small dicts, serialise, parse, drop.
# Each round allocates tens of MiB of small objects and frees them all, so
# pymalloc maps and unmaps hundreds of 1 MiB arenas.
import json, sys
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
total = 0
for r in range(rounds):
    rows = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i % 7)], "score": i * 0.5}
            for i in range(60000)]
    text = json.dumps(rows)
    back = json.loads(text)
    total += len(back) + len(text)
    del rows, back, text
print(total)
