# A churn, then a cache: text tokenised into n-gram tuples and dropped,
# round after round (pymalloc's arenas mapped and unmapped: the learner
# keeps them), then 12,000 strings of 1 KiB kept (malloc, from the heap
# grown by brk: no call the learner looks at).  Prints the total, the
# cache's length and VmHWM (kB) on stderr.  What the default budget keeps
# below the peak, the cache grows back into: BENCHMARKS.md, "The guard".
#   phase.py [ROUNDS [STRINGS]]
import sys
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
lines = [" ".join(words[(i * 7 + j) % 10] + str((i + j) % 13) for j in range(12)) for i in range(8000)]
total = 0
for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 10):
    grams = []
    for line in lines:
        toks = line.split()
        grams.extend(zip(toks, toks[1:], toks[2:]))
    total += len(grams)
    del grams
cache = [("%08d" % i) * 128 for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 12000)]
with open("/proc/self/status") as f:
    hwm = f.read().split("VmHWM:")[1].split()[0]
print(total, len(cache), hwm, file=sys.stderr)
