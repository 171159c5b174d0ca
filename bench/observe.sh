#!/bin/sh
# observe.sh BUILD [PAIRS] [DEPTH] [MALLOC_ITER] [JSON_ROUNDS] [STARTS]
#
# What the shim costs when it watches and does nothing (issue 10): each
# workload with no preload ("none") and three preloaded sides:
#   floor     LD_PRELOAD=libfwd.so: bare forwarding malloc wrappers, the least
#             any preloaded malloc can cost (bench/fwd.c)
#   observe   LD_PRELOAD=libprefault.so, no policy, PREFAULT_REPORT=none
#   never     LD_PRELOAD=libprefault.so, PREFAULT_POLICY= a rule that never
#             matches and a malloc rule that never matches, report none
# The workloads (WORKLOADS= picks some; sizes are the arguments):
#   bintrees  bench/bintrees.c at DEPTH (16: 15.0 M malloc(24)/free pairs), ms
#   newdelete bench/newdelete.cc, the same trees with C++ new/delete, ms
#   malloc    bench/overhead.c malloc mode: malloc(48)+free, MALLOC_ITER
#             times (20 M), ns per pair
#   json      bench/py/json_roundtrip.py, JSON_ROUNDS rounds (10), Debian's
#             python3 with PYTHONMALLOC=malloc, ms
#   startup   bench/startup.c: fork+exec /bin/true STARTS times (300), us per
#             run; the preload is given to each child only (LY_PRELOAD), so
#             this is what the shim adds to a program's start and exit
#   startfork the same with the harness itself preloaded: adds what the
#             shim's fork handlers cost a preloaded parent that forks (a
#             shell under prefault run)
# Each program prints its own time (the workload, without process start;
# startup's figure is the whole run of /bin/true, which is its point).
#
# Runs: PAIRS rounds (11; at least 7 for a median worth having), each running
# every side once, in the order none floor observe never and then reversed
# (ABBA), so drift and order cancel.  A pair ratio is a side's time over
# none's time in the same round; the line shows both medians, the median of
# the pair ratios with their min and max, and the count.  bintrees and
# newdelete are also compared observe/floor and never/floor directly (target
# for the malloc fast path: within 5%).
#
# Environment: every side gets an environment of the same size, byte for
# byte: environment size alone moved run times here by several percent (it
# shifts the initial stack, and with it the alignment of everything on it).
# So each side sets the same names, with one letter changed where a variable
# must not act (LD_PRELOAD -> LX_PRELOAD, PREFAULT_POLICY -> PREFAULX_POLICY,
# PREFAULT_REPORT -> PREFAULX_REPORT), values of the same length (the shorter
# library path is padded with leading slashes), on top of `env -i` with a
# fixed PATH.  The script checks the sizes are equal before it measures, and
# that each preload really loads and sees the calls.
#
# With default arguments the whole run takes about 5 minutes here.
set -e
B=$(cd "${1:-build}" && pwd)
PAIRS=${2:-11}
DEPTH=${3:-16}
MITER=${4:-20000000}
JROUNDS=${5:-10}
STARTS=${6:-300}
WORKLOADS=${WORKLOADS:-bintrees newdelete malloc json startup startfork}
PY=${PY:-/usr/bin/python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "$B$ROOT" in *[[:space:]]*) echo "observe.sh: paths with spaces are not supported" >&2; exit 2 ;; esac
for f in libprefault.so bench/libfwd.so bench/bintrees bench/newdelete bench/overhead bench/startup; do
	[ -e "$B/$f" ] || { echo "observe.sh: no $B/$f (make bench-observe builds it)" >&2; exit 2; }
done
[ "$PAIRS" -ge 1 ] || { echo "observe.sh: PAIRS must be at least 1" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

POL="$T/never.policy"
cat >"$POL" <<'P'
# Rules that never match: the shim matches every request and acts on none.
[global]
report = none
[rule never]
size = 1T
action = populate
[rule never-malloc]
call = malloc
size = 1T
action = populate
P

# The two library paths, padded to one length with leading slashes.
SHIM="$B/libprefault.so"
FWD="$B/bench/libfwd.so"
pad() { # pad PATH LEN
	p=$1
	while [ ${#p} -lt "$2" ]; do p="/$p"; done
	printf '%s' "$p"
}
L=${#SHIM}
[ ${#FWD} -gt "$L" ] && L=${#FWD}
SHIM=$(pad "$SHIM" "$L")
FWD=$(pad "$FWD" "$L")

BASE="PATH=/usr/local/bin:/usr/bin:/bin"
# side_env SIDE: the side's variables, same names but one letter, same lengths.
side_env() {
	case $1 in
	none) echo "LX_PRELOAD=$SHIM PREFAULX_POLICY=$POL PREFAULX_REPORT=none" ;;
	floor) echo "LD_PRELOAD=$FWD PREFAULX_POLICY=$POL PREFAULX_REPORT=none" ;;
	observe) echo "LD_PRELOAD=$SHIM PREFAULX_POLICY=$POL PREFAULT_REPORT=none" ;;
	never) echo "LD_PRELOAD=$SHIM PREFAULT_POLICY=$POL PREFAULT_REPORT=none" ;;
	esac
}
# run_side SIDE EXTRA CMD...: CMD in the side's environment (EXTRA: one
# more VAR=value every side gets, or "-").
run_side() {
	s=$1 x=$2
	shift 2
	[ "$x" = - ] && x=
	if [ "$x" = CHILD ]; then
		# shellcheck disable=SC2046,SC2086 # the variables are one word each
		env -i $BASE $(side_env "$s" | sed 's/LD_PRELOAD=/LY_PRELOAD=/') "$@"
		return
	fi
	# shellcheck disable=SC2046,SC2086 # the variables are one word each
	env -i $BASE $x $(side_env "$s") "$@"
}

SIDES="none floor observe never"
RSIDES="never observe floor none"

# ---- checks before measuring ----
sz=
for s in $SIDES; do
	n=$(run_side "$s" PYTHONMALLOC=malloc /usr/bin/env | wc -c)
	if [ -n "$sz" ] && [ "$n" != "$sz" ]; then
		echo "observe.sh: environment of side $s is $n bytes, not $sz" >&2
		exit 1
	fi
	sz=$n
done
run_side floor - /bin/cat /proc/self/maps | grep -q 'libfwd\.so' ||
	{ echo "observe.sh: the floor side does not load libfwd.so" >&2; exit 1; }
run_side none - /bin/cat /proc/self/maps | grep -q 'libprefault\.so\|libfwd\.so' &&
	{ echo "observe.sh: the none side loads a preload" >&2; exit 1; }
# The shim loads and takes the policy (a rejected policy would leave the
# never side running without the shim's matching), and the workloads really
# make the calls: counted through a policy whose malloc rule watches every
# block (its caller never matches), since observe mode counts no malloc.
COUNT="$T/count.policy"
printf '[rule c]\ncall = malloc\nsize = >=1\ncaller = no-such-object.so\naction = populate\n' >"$COUNT"
calls() { # calls POLICY EXTRA CMD...: "RULES MALLOCS COUNTED_FROM" from a JSON report
	p=$1 x=$2
	shift 2
	[ "$x" = - ] && x=
	# shellcheck disable=SC2086
	env -i $BASE $x LD_PRELOAD="$SHIM" ${p:+PREFAULT_POLICY=$p} PREFAULT_REPORT="$T/r.json" "$@" >"$T/out"
	if [ ! -f "$T/r.json" ]; then
		echo "no-report 0 0" # a rejected policy: the shim passes everything through, silently
		return
	fi
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["calls"]
print(len(d["rules"]) if d["policy"] else "none", (c["malloc"] or 0) + (c["calloc"] or 0), d["malloc_counted_from"])' "$T/r.json"
	rm -f "$T/r.json"
}
# "MS ms depth D pairs N ...": N
pairs() { awk '{ print $6 }' "$T/out"; }
# shellcheck disable=SC2046 # three fields
set -- $(calls "" - "$B/bench/bintrees" 8)
if [ "$1" != none ] || [ "$3" != None ]; then
	echo "observe.sh: observe side: report rules $1, malloc counted from $3 (expected none, None: pure forwarding)" >&2
	exit 1
fi
# shellcheck disable=SC2046
set -- $(calls "$POL" - "$B/bench/newdelete" 8)
if [ "$1" != 2 ] || [ "$3" = None ]; then
	echo "observe.sh: never side: policy rules $1 (2 expected), malloc counted from $3" >&2
	exit 1
fi
for w in bintrees newdelete; do
	# shellcheck disable=SC2046
	set -- $(calls "$COUNT" - "$B/bench/$w" 8)
	if [ "$2" -lt "$(pairs)" ]; then
		echo "observe.sh: $w made $2 mallocs for $(pairs) pairs (the compiler removed some?)" >&2
		exit 1
	fi
done
# shellcheck disable=SC2046
set -- $(calls "$COUNT" PYTHONMALLOC=malloc "$PY" "$ROOT/bench/py/json_roundtrip.py" 1)
if [ "$2" -lt 500000 ]; then
	echo "observe.sh: python3 with PYTHONMALLOC=malloc made only $2 mallocs in a round" >&2
	exit 1
fi

# ---- measuring ----
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# line WORKLOAD LABEL UNIT FILE COL_A COL_B: medians of both columns, and the
# median (min-max) of the per-round ratios B/A.
line() {
	ma=$(awk -v c="$5" '{ print $c }' "$4" | med)
	mb=$(awk -v c="$6" '{ print $c }' "$4" | med)
	awk -v a="$5" -v b="$6" '{ printf "%.3f\n", $b / $a }' "$4" | sort -n >"$T/q"
	printf '%-10s %-14s %12s %12s   %s (%s-%s)  %s pairs\n' "$1" "$2" "$ma $3" "$mb $3" \
		"$(med <"$T/q")" "$(head -n 1 "$T/q")" "$(tail -n 1 "$T/q")" "$(wc -l <"$T/q" | tr -d ' ')"
}

echo "observe.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  $PAIRS rounds of ABBA; environment $sz bytes on every side; $("$PY" -c 'import sys; print("python", sys.version.split()[0])')"
printf '%-10s %-14s %12s %12s   %s\n' workload side "A (median)" "B (median)" "B/A per round: median (min-max)"
for w in $WORKLOADS; do
	x=-
	case $w in
	bintrees) set -- "$B/bench/bintrees" "$DEPTH"; u=ms ;;
	newdelete) set -- "$B/bench/newdelete" "$DEPTH"; u=ms ;;
	malloc) set -- "$B/bench/overhead" "$MITER" malloc; u=ns ;;
	json) set -- "$PY" "$ROOT/bench/py/json_roundtrip.py" "$JROUNDS"; u=ms; x=PYTHONMALLOC=malloc ;;
	startup) set -- "$B/bench/startup" "$STARTS" /bin/true; u=us; x=CHILD ;;
	startfork) set -- "$B/bench/startup" "$STARTS" /bin/true; u=us ;;
	*) echo "observe.sh: no workload $w" >&2; exit 2 ;;
	esac
	: >"$T/$w"
	i=0
	while [ $i -lt "$PAIRS" ]; do
		order=$SIDES
		[ $((i % 2)) -eq 1 ] && order=$RSIDES
		for s in $order; do
			v=$(run_side "$s" "$x" "$@" | awk 'NR == 1 { print $1 }')
			[ -n "$v" ] || { echo "observe.sh: $w failed on side $s" >&2; exit 1; }
			echo "$s $v" >>"$T/$w.raw"
		done
		# one row per round, columns none floor observe never
		for s in $SIDES; do grep "^$s " "$T/$w.raw" | awk '{ print $2 }'; done | tr '\n' ' ' >"$T/row"
		echo >>"$T/row"
		cat "$T/row" >>"$T/$w"
		rm -f "$T/$w.raw"
		i=$((i + 1))
	done
	[ -n "$RAW" ] && sed "s/^/$w raw (none floor observe never): /" "$T/$w"
	line "$w" "floor/none" "$u" "$T/$w" 1 2
	line "$w" "observe/none" "$u" "$T/$w" 1 3
	line "$w" "never/none" "$u" "$T/$w" 1 4
	case $w in
	bintrees | newdelete)
		line "$w" "observe/floor" "$u" "$T/$w" 2 3
		line "$w" "never/floor" "$u" "$T/$w" 2 4
		;;
	esac
done
