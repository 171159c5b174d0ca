# Arena churn: object graphs.  Build trees of small class instances with
# cross links, walk them, drop them, many times.
import sys
class Node:
    __slots__ = ("kids", "val", "peer")
    def __init__(self, val):
        self.kids = []
        self.val = val
        self.peer = None
def build(depth, width, start):
    n = Node(start)
    if depth:
        for k in range(width):
            c = build(depth - 1, width, start * width + k)
            c.peer = n
            n.kids.append(c)
    return n
def walk(n):
    s = n.val
    for c in n.kids:
        s += walk(c)
    return s
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
total = 0
for r in range(rounds):
    trees = [build(7, 4, r + t) for t in range(4)]
    total += sum(walk(t) for t in trees)
    del trees
print(total)
