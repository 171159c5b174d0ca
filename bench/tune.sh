#!/bin/sh
# tune.sh BUILD [PAIRS] [TRIAL_PAIRS]: issue 12's targets for prefault tune.
#
# For each program below: `prefault tune -n PAIRS` (timed: the target is
# under 4 minutes for programs that run under a second), then
# `prefault trial -n TRIAL_PAIRS` of the tuned policy and of the best
# hand-written policy for that program, each against the program without
# prefault.  One line per program:
#   tune_s       how long tune took, in all
#   rules        what the tuned policy does
#   tuned        the tuned policy's median pair ratio of wall time (with /
#                without), with the range of the pairs: below 1 is faster;
#                the target: never above 1 (never slower than no policy).
#                A policy with no rules says "run without prefault": 1,
#                with the shim's own cost (observe mode) beside it
#   hand         the same for the hand-written policy
#   tuned/hand   how fast the tuned policy is next to the hand-written one
#                (hand ratio over tuned ratio): the target is 0.90 or more
#                where a rule helps
#   faults       the faults left in the program, without -> tuned
# The two trials run one after the other, not interleaved: on a noisy
# machine their ratio is only as good as the drift between them allows.
# PROGRAMS= picks some (names below).  The raw JSON stays in $KEEP if set.
set -e
B=$(cd "${1:-build}" && pwd)
PAIRS=${2:-5}
TPAIRS=${3:-7}
PY=${PY:-/usr/bin/python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROGRAMS=${PROGRAMS:-stream large churn_text steady}
for f in prefault libprefault.so examples/stream bench/large; do
	[ -e "$B/$f" ] || { echo "tune.sh: no $B/$f (make bench-tune builds it)" >&2; exit 2; }
done
T=${KEEP:-$(mktemp -d)}
mkdir -p "$T"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT INT TERM

# The best hand-written policy for the large buffer with work before its
# first touch (BENCHMARKS.md, issue 11): huge pages, populated by a worker.
cat >"$T/large-hand.policy" <<'P'
[rule big]
size = >=64M
map = anon private
action = hugepage background
P

# name: the command, and its hand-written policy
cmd_of() {
	case $1 in
	stream) echo "$B/examples/stream" ;;
	large) echo "$B/bench/large 256 200" ;;
	churn_text) echo "$PY $ROOT/bench/py/churn_text.py" ;;
	steady) echo "$PY $ROOT/bench/py/steady.py 40" ;;
	*) echo "tune.sh: unknown program $1" >&2; exit 2 ;;
	esac
}
hand_of() {
	case $1 in
	stream) echo streaming ;;
	large) echo "$T/large-hand.policy" ;;
	churn_text | steady) echo cpython ;;
	esac
}
# jv FILE EXPR: a Python expression over the JSON document d
jv() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
now() { "$PY" -c 'import time; print(time.monotonic())'; }

echo "prefault tune on $(uname -n), $(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg);" \
	"tune -n $PAIRS, trials -n $TPAIRS"
printf '%-11s %7s  %-22s %-26s %-22s %10s  %s\n' program tune_s rules tuned hand tuned/hand faults
for p in $PROGRAMS; do
	cmd=$(cmd_of "$p")
	t0=$(now)
	# shellcheck disable=SC2086
	"$B/prefault" tune -n "$PAIRS" --json -o "$T/$p.policy" -- $cmd >"$T/$p.tune.json" 2>"$T/$p.tune.err" ||
		{ echo "$p: tune failed:"; cat "$T/$p.tune.err"; continue; }
	t1=$(now)
	rules=$(jv "$T/$p.tune.json" "', '.join(s['rule'] for s in d['sites'] if s['rule']) or 'none'")
	# shellcheck disable=SC2086
	"$B/prefault" trial -n "$TPAIRS" --json -p "$T/$p.policy" -- $cmd >"$T/$p.tuned.json" 2>/dev/null
	# shellcheck disable=SC2086
	"$B/prefault" trial -n "$TPAIRS" --json -p "$(hand_of "$p")" -- $cmd >"$T/$p.hand.json" 2>/dev/null
	r() { jv "$1" "'%.3f (%.3f-%.3f)' % (d['wall_ratio']['median'], d['wall_ratio']['min'], d['wall_ratio']['max'])"; }
	rh=$(jv "$T/$p.hand.json" "d['wall_ratio']['median']")
	if [ "$rules" = none ]; then
		# No rule earned its place: the answer is to run without prefault
		# (ratio 1); the trial of the empty policy is the shim's own cost.
		rt=1
		tuned="1 (no rules; shim $(jv "$T/$p.tuned.json" "'%.3f' % d['wall_ratio']['median']"))"
	else
		rt=$(jv "$T/$p.tuned.json" "d['wall_ratio']['median']")
		tuned=$(r "$T/$p.tuned.json")
	fi
	printf '%-11s %7.1f  %-22s %-26s %-22s %10s  %s\n' "$p" "$(echo "$t1 $t0" | awk '{print $1 - $2}')" "$rules" \
		"$tuned" "$(r "$T/$p.hand.json")" "$(echo "$rh $rt" | awk '{printf "%.2f", $1 / $2}')" \
		"$(jv "$T/$p.tuned.json" "'%d -> %d' % (d['faults_in_program']['without']['median'], d['faults_in_program']['with']['median'])")"
done
