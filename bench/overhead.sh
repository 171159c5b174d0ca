#!/bin/sh
# overhead.sh BUILD [RUNS] [ITER] [MODE]: median ratio, shim (rules matching
# nothing) over no shim, of alternating runs of bench/overhead.c.
B=${1:-build}
RUNS=${2:-11}
ITER=${3:-20000}
MODE=${4:-touch}
POL=$(mktemp)
cat >"$POL" <<'P'
[global]
report = none
[rule never]
size = 1T
action = populate
P
i=0
: >"$POL.r"
while [ $i -lt "$RUNS" ]; do
	# ABBA: alternate which side goes first, so drift and order cancel out.
	if [ $((i % 2)) -eq 0 ]; then
		a=$("$B/bench/overhead" "$ITER" "$MODE")
		b=$(LD_PRELOAD="$(pwd)/$B/libprefault.so" PREFAULT_POLICY="$POL" "$B/bench/overhead" "$ITER" "$MODE")
	else
		b=$(LD_PRELOAD="$(pwd)/$B/libprefault.so" PREFAULT_POLICY="$POL" "$B/bench/overhead" "$ITER" "$MODE")
		a=$("$B/bench/overhead" "$ITER" "$MODE")
	fi
	echo "$a $b" >>"$POL.r"
	i=$((i + 1))
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ra=$(awk '{ print $1 }' "$POL.r" | med)
rb=$(awk '{ print $2 }' "$POL.r" | med)
awk '{ printf "%.4f\n", $2 / $1 }' "$POL.r" | sort -n >"$POL.q"
echo "overhead ($MODE, $ITER iterations): without $ra ns/iter, with $rb ns/iter (medians); ratio median $(med <"$POL.q"), min $(head -n 1 "$POL.q"), max $(tail -n 1 "$POL.q") over $RUNS alternating pairs"
rm -f "$POL" "$POL.r" "$POL.q"
