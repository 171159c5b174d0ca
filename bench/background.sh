#!/bin/sh
# background.sh BUILD [ROUNDS] [MIB]: issue 11's benchmark.
#
# A MIB buffer (1024) mapped, then W ms of other work (0, 100, 400), then a
# front-to-back write pass (bench/large.c), under four sides:
#   none       no shim
#   bg         action = background, one worker
#   bg2        action = background, workers = 2
#   bgh        action = background hugepage, one worker
#   bgh2       the same with workers = 2 (not run unless SIDES= names it)
# For each W and side, medians over ROUNDS (7) rounds, the sides in the
# order bench/sides.sh's slot gives each round (every side after every
# other alike): the faults left in the program's loop (% of the fewest
# there can be: a fault per page, or per huge page for bgh),
# every fault the process took from the mmap to the end of the pass (program
# and workers) over the fewest there can be (a fault per page, or per huge
# page for bgh: 1.00 means nothing was taken twice), and the time
# from the mmap to the end of the pass; then, per side, the median of the
# per-round ratios none/side of that time (above 1: faster with the shim).
# Every side gets an environment of the same size (the variables it does not
# need are there under a name with one letter changed).
#
# WARM=1: each measured run follows an identical unrecorded one.  On a guest
# whose freed memory goes back to the host, a huge page the host must back
# again costs milliseconds, and which side ran before decides that; with
# WARM=1 every side finds memory as its own kind of run left it.
set -e
B=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-7}
MIB=${3:-1024}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
SHIM="$B/libprefault.so"
# shellcheck source=bench/sides.sh
. "$(dirname "$0")/sides.sh" # (slot)
mk() { printf '[global]\nreport = none\nworkers = %s\n[rule big]\nsize = >=64M\nmap = anon private\naction = %s\n' "$2" "$3" >"$T/$1.policy"; }
mk bg 1 background
mk bg2 2 background
mk bgh 1 "background hugepage"
mk bgh2 2 "background hugepage"
cp "$T/bg.policy" "$T/none.policy" # (not used: the none side's names are changed)
run() { # run SIDE W
	if [ "$1" = none ]; then
		env -i PATH=/usr/bin:/bin LX_PRELOAD="$SHIM" PREFAULX_POLICY="$T/$1.policy" "$B/bench/large" "$MIB" "$2"
	else
		env -i PATH=/usr/bin:/bin LD_PRELOAD="$SHIM" PREFAULT_POLICY="$T/$1.policy" "$B/bench/large" "$MIB" "$2"
	fi
}
SIDES=${SIDES:-none bg bg2 bgh}
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	for w in 0 100 400; do
		set -- $SIDES
		order='' i=0
		while [ $i -lt $# ]; do
			order="$order $(echo $SIDES | cut -d' ' -f$(($(slot $r $i $#) + 1)))"
			i=$((i + 1))
		done
		for s in $order; do
			[ -n "${WARM:-}" ] && run "$s" "$w" >/dev/null
			echo "$w $s $r $(run "$s" "$w")" >>"$T/out"
		done
	done
	r=$((r + 1))
done
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { awk -v w="$1" -v s="$2" '$1 == w && $2 == s' "$T/out" | sed -n "s/.* $3=\([0-9.]*\).*/\1/p"; }
echo "background.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $MIB MiB, $ROUNDS rounds${WARM:+ (each after an identical run)}, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%5s %-5s %12s %13s %9s %11s %22s\n' work side "loop faults" "total faults" "/fewest" "ready ms" "none/side (min-max)"
for w in 0 100 400; do
	for s in $SIDES; do
		pages=$(field "$w" "$s" pages | head -n 1)
		lf=$(field "$w" "$s" faults | med)
		tf=$(field "$w" "$s" total_faults | med)
		rm_=$(field "$w" "$s" ready_ms | med)
		# per-round ratio none/side of ready_ms
		awk -v w="$w" -v s="$s" '$1 == w && ($2 == "none" || $2 == s) { for (i = 4; i <= NF; i++) if ($i ~ /^ready_ms=/) { split($i, a, "="); v[$3, $2] = a[2] } rounds[$3] = 1 }
			END { for (r in rounds) if (v[r, s] > 0) printf "%.3f\n", v[r, "none"] / v[r, s] }' "$T/out" | sort -n >"$T/q"
		fewest=$pages
		case $s in bgh*) fewest=$((pages * $(getconf PAGESIZE) / (2 << 20))) ;; esac
		# (loop faults as a share of the fewest: a huge page's fault is one)
		printf '%5s %-5s %11.1f%% %13s %9.3f %11.1f %10s (%s-%s)\n' "$w" "$s" "$(echo "$lf $fewest" | awk '{ print 100 * $1 / $2 }')" \
			"$tf" "$(echo "$tf $fewest" | awk '{ print $1 / $2 }')" "$rm_" "$(med <"$T/q")" "$(head -n 1 "$T/q")" "$(tail -n 1 "$T/q")"
	done
done
