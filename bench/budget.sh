#!/bin/sh
# budget.sh BUILD [RUNS] [THREADS] [BUILD...]: how far the learner's peak RSS
# stays under its line with THREADS threads churning many sizes at once
# (`autoprobe sizes 20 8 8M THREADS`, tests/auto.bats "the budget: four
# threads"), for each build given (e.g. one of an older commit beside).
# The line: the most the program can have (its working set, VmHWM of
# `sizes 0 8 8M 1` with the shim observing, plus one 8 MiB mapping a thread
# and 1 MiB for stacks)
# plus the learner's limit from its report.  Prints, per run, VmHWM less
# that line in kB (the test allows 2 MiB over it for the learner's own
# tables), and how many runs passed it by more.  An effect, not a timing:
# run it on a loaded machine too.  BUILD must have its probes (make probes).
set -e
B1=${1:?usage: budget.sh BUILD [RUNS] [THREADS] [BUILD...]}
N=${2:-10}
T=${3:-4}
shift
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
R=$D/r.json # (a new file each run: the shim writes no report over a file that is not one)
kv() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
for B in "$B1" "$@"; do
	AP=$B/probes/autoprobe
	[ -x "$AP" ] || { echo "budget.sh: no $AP (make BUILD=$B probes)" >&2; exit 2; }
	base=$(LD_PRELOAD=$B/libprefault.so PREFAULT_POLICY= PREFAULT_REPORT=none "$AP" sizes 0 8 8M 1 | kv vmhwm_kb)
	most=$((base + T * 8192 + 1024))
	bad=0 all=
	i=0
	while [ $i -lt "$N" ]; do
		rm -f "$R"
		hwm=$(LD_PRELOAD=$B/libprefault.so PREFAULT_POLICY=auto PREFAULT_REPORT=$R "$AP" sizes 20 8 8M "$T" 2>/dev/null | kv vmhwm_kb)
		lim=$(grep -o '"budget":{"limit":[0-9]*,"held"' "$R" | tr -cd 0-9) # (the learner's, not the shim's)
		[ -n "$lim" ] || { echo "budget.sh: no report from $AP" >&2; exit 1; }
		past=$((hwm - most - lim / 1024))
		[ $past -le 2048 ] || bad=$((bad + 1))
		all="$all $past"
		i=$((i + 1))
	done
	echo "$B, $T threads: VmHWM less the line, kB:$all; past it by more than 2 MiB: $bad of $N"
done
