# Arena churn: text processing.  Tokenise a generated corpus, count words in
# dicts, build n-grams as tuples, drop everything, repeat.
import sys
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
lines = [" ".join(words[(i * 7 + j) % 10] + str((i + j) % 13) for j in range(12)) for i in range(8000)]
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
total = 0
for r in range(rounds):
    counts = {}
    grams = []
    for line in lines:
        toks = line.split()
        for t in toks:
            counts[t] = counts.get(t, 0) + 1
        grams.extend(zip(toks, toks[1:], toks[2:]))
    total += len(counts) + len(grams)
    del counts, grams
print(total)
