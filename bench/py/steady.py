# No churn: arithmetic and string work over a fixed working set that is
# built once and kept, so pymalloc's arenas stay put.
import sys
data = [i * 3 for i in range(200000)]
names = ["k%d" % i for i in range(5000)]
table = {n: i for i, n in enumerate(names)}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 120
total = 0
for r in range(rounds):
    for x in data:
        total += x & 255
    for n in names:
        total += table[n]
print(total)
