#!/bin/sh
# autoab.sh ROUNDS LIB[@POLICY|#BUDGET] [...] -- CMD [ARGS...]: a program's wall
# time with no shim and under `--auto` (PREFAULT_POLICY=auto; POLICY=FILE
# for another, the same for every library; LIB@FILE for that side alone;
# LIB#BUDGET, the learner with PREFAULT_AUTO_BUDGET=BUDGET, hard,50% say) of
# each shim library given (builds of different commits, to compare before
# and after in one run; or one build, with a policy file beside the
# learner), sides in an order that changes from round to round so that every
# side runs after every other alike (bench/sides.sh).
# Every side sets the same variables, with one letter changed where one must
# not act, and a padding variable that makes the environment block the same
# size whatever the library's path (its size alone moves run times here by
# several percent: README, trial).  The program's output is discarded.
# GAP_MS=N: each run starts N ms after the last ended (untimed), so that on
# a guest that hands free memory back to its host every run finds the
# host's huge pages cold, as a program started now and then does
# (BENCHMARKS.md, "A huge page's first touch"; 1500 is enough here).
# Prints each side's median wall ms and range, and for each library the
# per-round ratio none/this (above 1: faster than no shim), median and range.
set -e
ROUNDS=${1:?usage: autoab.sh ROUNDS LIB [LIB...] -- CMD [ARGS...]}
shift
LIBS=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	l=${1%%@*} pol= bud=
	[ "$l" = "$1" ] || pol=$(cd "$(dirname "${1#*@}")" && pwd)/$(basename "${1#*@}")
	case $l in *'#'*) bud=${l#*#} l=${l%%#*} ;; esac
	LIBS="$LIBS${LIBS:+ }$(cd "$(dirname "$l")" && pwd)/$(basename "$l")${pol:+@$pol}${bud:+#$bud}"
	shift
done
[ "${1:-}" = -- ] && [ $# -gt 1 ] && [ -n "$LIBS" ] || { echo "usage: autoab.sh ROUNDS LIB [LIB...] -- CMD [ARGS...]" >&2; exit 2; }
shift
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/sides.sh"
PAD=$(printf '%*s' 300 '' | tr ' ' x)
printf '%s\n' "$@" >"$T/cmd" # (the command's words, one a line)
side() {
	k=$1
	set --
	while IFS= read -r w; do set -- "$@" "$w"; done <"$T/cmd"
	if [ "$k" -eq 0 ]; then
		lib=$(lib_of 1) v=LX_PRELOAD p=PREFAULX_POLICY
	else
		lib=$(lib_of "$k") v=LD_PRELOAD p=PREFAULT_POLICY
	fi
	pol=${POLICY:-auto} bud= b=PREFAULX_AUTO_BUDGET
	case $lib in *'#'*) bud=${lib#*#} lib=${lib%%#*} b=PREFAULT_AUTO_BUDGET ;; esac
	[ "$k" -ne 0 ] || b=PREFAULX_AUTO_BUDGET # (no shim: side 1's library, a letter changed, its budget too)
	[ "${lib%%@*}" = "$lib" ] || pol=${lib#*@}
	lib=${lib%%@*}
	pad=$(echo "$PAD" | cut -c1-$((300 - ${#lib} - ${#pol} - ${#bud})))
	[ -z "${GAP_MS:-}" ] || sleep "$(awk -v g="$GAP_MS" 'BEGIN { print g / 1000 }')"
	t0=$(date +%s%N)
	env "$v=$lib" "$p=$pol" "$b=$bud" PREFAULT_REPORT=none PREFAULT_BENCH_PAD="$pad" "$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f\n", d / 1e6 }'
}
run_rounds
echo "autoab: $*; $ROUNDS rounds, sides in balanced order (sides.sh, slot)"
print_sides ms none/this
