#!/bin/sh
# python.sh BUILD [PAIRS]: CPython workloads with and without the shipped
# cpython policy (Debian's python3), in alternating pairs (ABBA), medians.
# Also the arena loop: mmap 256 KiB, touch one byte, munmap, with and
# without a recycle rule.
set -e
B=${1:-build}
PAIRS=${2:-7}
PY=${PY:-/usr/bin/python3}
SHIM="$(cd "$B" && pwd)/libprefault.so"
POL="$(pwd)/policies/cpython.policy"
T=$(mktemp -d)
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
plain() { /usr/bin/time -f "%e %R" -o "$T/t" "$PY" "$@" >/dev/null; cat "$T/t"; }
shimmed() { PREFAULT_REPORT=none LD_PRELOAD="$SHIM" PREFAULT_POLICY="$POL" /usr/bin/time -f "%e %R" -o "$T/t" "$PY" "$@" >/dev/null; cat "$T/t"; }
"$PY" -c 'import sys; print("python", sys.version.split()[0])'
printf '%-14s %10s %10s %8s %12s %12s %8s\n' workload plain_s policy_s speedup plain_faults policy_faults cut
for w in ${WORKLOADS:-churn_json churn_graph churn_text steady}; do
	: >"$T/$w"
	i=0
	while [ $i -lt "$PAIRS" ]; do
		if [ $((i % 2)) -eq 0 ]; then a=$(plain bench/py/$w.py); b=$(shimmed bench/py/$w.py)
		else b=$(shimmed bench/py/$w.py); a=$(plain bench/py/$w.py); fi
		echo "$a $b" >>"$T/$w"
		i=$((i + 1))
	done
	ta=$(awk '{print $1}' "$T/$w" | med); tb=$(awk '{print $3}' "$T/$w" | med)
	fa=$(awk '{print $2}' "$T/$w" | med); fb=$(awk '{print $4}' "$T/$w" | med)
	r=$(awk '{printf "%.4f\n", $1 / $3}' "$T/$w" | med)
	[ -n "$RAW" ] && cat "$T/$w"
	printf '%-14s %10s %10s %7.2fx %12s %12s %7.1fx\n' "$w" "$ta" "$tb" "$r" "$fa" "$fb" "$(echo "$fa $fb" | awk '{print $1 / $2}')"
done
# the arena loop
POL2="$T/arena.policy"
printf '[global]\nreport = none\n[rule a]\ncall = mmap\nsize = 256K\naction = recycle\n' >"$POL2"
: >"$T/arena"
i=0
while [ $i -lt "$PAIRS" ]; do
	a=$("$B/bench/arena" 100000 256 1); b=$(LD_PRELOAD="$SHIM" PREFAULT_POLICY="$POL2" "$B/bench/arena" 100000 256 1)
	echo "$a $b" >>"$T/arena"
	i=$((i + 1))
done
echo "arena loop (mmap 256 KiB, touch 1 byte, munmap): plain $(awk '{print $1}' "$T/arena" | med) ns, recycle $(awk '{print $3}' "$T/arena" | med) ns per iteration; median speedup $(awk '{printf "%.3f\n", $1 / $3}' "$T/arena" | med)x; faults per 100000: $(awk '{print $2}' "$T/arena" | med) vs $(awk '{print $4}' "$T/arena" | med)"
rm -rf "$T"
