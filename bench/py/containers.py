# dict and list churn: build lists of tuples and dicts of small keys and
# values, sort, merge, filter, drop; ROUNDS times.
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
total = 0
for r in range(rounds):
    rows = [(i * 7919 % 100003, "k%d" % i, float(i)) for i in range(100000)]
    rows.sort()
    index = {k: (a, f) for a, k, f in rows}
    merged = {k: v for k, v in index.items() if v[0] & 1}
    groups = {}
    for a, k, f in rows:
        groups.setdefault(a % 97, []).append(k)
    total += len(merged) + sum(len(g) for g in groups.values())
    del rows, index, merged, groups
print(total)
