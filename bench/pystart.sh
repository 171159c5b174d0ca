#!/bin/sh
# pystart.sh BUILD [ROUNDS] [PYTHON ARGS...]: what the CPython policies cost a
# short-lived python3 (default ARGS: -c pass; ROUNDS: 31), side by side.
#
# The sides are bench/pysides.sh's (the same policies, environments of one
# size, pinned to CPU 1): none, recycle (the shipped policy with carve turned
# into recycle) and cpython (as shipped: carving judged by hugepage_check,
# which measures once, before the first reserve).  Each round runs every
# side once, in an order that reverses from round to round.  Prints each
# side's median wall time and the median (min-max) of its per-round speed
# against none (above 1 is faster).
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC2034 # (SHIM, PIN and BASE: read by bench/pysides.sh)
SHIM=$(cd "${1:-build}" && pwd)/libprefault.so
ROUNDS=${2:-31}
if [ $# -gt 2 ]; then shift 2; else set -- -c pass; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck disable=SC2034
SIDES="none recycle cpython" PIN="taskset -c 1" BASE=
# shellcheck source=bench/pysides.sh
. "$ROOT/bench/pysides.sh"
py_sides_init pystart.sh
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	order=$SIDES
	[ $((i % 2)) -eq 0 ] || order=$RSIDES
	for s in $order; do
		t0=$(date +%s%N)
		run_side "$s" /usr/bin/python3 "$@" >/dev/null
		t1=$(date +%s%N)
		echo "$i $s $((t1 - t0))" >>"$T/times"
	done
	i=$((i + 1))
done
awk -v sides="$SIDES" '
function med(a, n,   i, j, t) { # sorts a[1..n] in place
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ t[$2, $1] = $3; if ($1 + 1 > n) n = $1 + 1 }
END {
	k = split(sides, s, " ")
	for (x = 1; x <= k; x++) {
		for (i = 0; i < n; i++) { w[i + 1] = t[s[x], i]; r[i + 1] = t["none", i] / t[s[x], i] }
		m = med(w, n) / 1e6; q = med(r, n)
		printf "%-8s median %.2f ms, speed against none: median %.3f (%.3f-%.3f)\n", s[x], m, q, r[1], r[n]
	}
}' "$T/times"
