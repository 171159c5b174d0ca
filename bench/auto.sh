#!/bin/sh
# auto.sh BUILD [ROUNDS]: the learner (prefault run --auto, issue 21) against
# no shim and the best hand-written or tuned policy, side by side.
#
# Sides, each once a round, in an order that changes from round to round
# so that every side runs after every other alike (bench/sides.sh, slot;
# 8 rounds balance 4 sides, the default):
#   none     no preload
#   auto     LD_PRELOAD=libprefault.so, PREFAULT_POLICY=auto
#   best     the best hand-written or tuned policy for the program (where a
#            rule helps; BENCHMARKS.md says where each comes from)
#   learned  the policy `prefault run --auto -o` wrote in one run first, as
#            an ordinary policy
# Every side gets the same variables, with one letter changed where one must
# not act (LX_PRELOAD, PREFAULX_POLICY), and a padding variable, so that the
# environment block is the same size on every side (its size alone moves run
# times by several percent: README, trial).  PREFAULT_REPORT=none.
#
# For each program: each side's median wall time (ms) and peak RSS (MiB),
# and the median (min-max) of the per-round ratios of wall time, none over
# the side (a speedup: above 1 is faster).  Then:
#   gain     where a rule helps: auto's speedup over best's (the target is
#            0.80 or more), and learned's over auto's (within noise)
#   never    where no rule helps: the median ratio for auto (the target:
#            0.98 or more), and its peak RSS against none's, with the budget
#            (the lesser of 10% and 256 MiB of none's peak, 2 MiB at least)
# PROGRAMS= picks some (names below); the raw figures stay in $KEEP if set.
# Take the machine's load first: timings mean something only on a quiet one.
set -e
B=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-8}
PY=${PY:-/usr/bin/python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/sides.sh
. "$ROOT/bench/sides.sh" # (slot)
SHIM="$B/libprefault.so"
VENV=${VENV:-/work/venv}
# With the venv (bench/pyperf.sh's set-up, at its top), a subset of
# pyperformance too: each benchmark run as one of pyperf's workers in the
# process itself (1 warm-up and 3 values, the loop count fixed).
DEFAULT="stream large arena churn_text churn_graph churn_json steady sqlite3 gcc git node sort"
if "$VENV/bin/python" -c 'import pyperf, pyperformance' 2>/dev/null; then
	DEFAULT="$DEFAULT pp_json_dumps pp_deltablue pp_pickle_pure_python pp_xml_etree_process pp_richards"
fi
PROGRAMS=${PROGRAMS:-$DEFAULT}
BM=$("$VENV/bin/python" -c 'import os, pyperformance; print(os.path.join(os.path.dirname(pyperformance.__file__), "data-files", "benchmarks"))' 2>/dev/null || true)
T=${KEEP:-$(mktemp -d)}
mkdir -p "$T"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT INT TERM
for f in prefault libprefault.so examples/stream bench/large bench/arena; do
	[ -e "$B/$f" ] || { echo "auto.sh: no $B/$f (make bench-auto builds it)" >&2; exit 2; }
done

# The best policies where a rule helps.
cat >"$T/big-bg.policy" <<'P'
# tune's pick for the example and for a buffer written late (bench-tune):
# huge pages, populated by a worker
[rule big]
size = >=64M
map = anon private
action = hugepage background
P
cat >"$T/arena.policy" <<'P'
[rule arena]
call = mmap
size = 256K
action = recycle
P
cat >"$T/cc1.policy" <<'P'
# tune's pick for gcc -O2 -c (bench-tune, programs nobody here wrote)
[rule cc1-gc]
call = mmap
size = 2M
caller = cc1
program = cc1
action = populate hugepage
P

# Inputs for the programs nobody here wrote.
"$PY" - "$T" <<'PYEOF'
import os, random, sys
t = sys.argv[1]
random.seed(1)
# gcc: a large file of plain functions
with open(os.path.join(t, "big.c"), "w") as f:
    for i in range(600):
        f.write("int f%d(int *a, int n) { int s = %d; for (int k = 0; k < n; k++) { s += a[k] * %d ^ (s >> 3); if (s & 1) s -= k; } return s; }\n" % (i, i, i % 7 + 1))
# sort: 1.5 million lines
with open(os.path.join(t, "lines.txt"), "w") as f:
    for i in range(1500000):
        f.write("%d %s\n" % (random.randrange(1 << 30), "x" * random.randrange(20)))
# sqlite3: 300,000 inserts, an index, a query
with open(os.path.join(t, "db.sql"), "w") as f:
    f.write("CREATE TABLE t(a INTEGER, b TEXT);\n"
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) "
            "INSERT INTO t SELECT x * 7919 % 300007, hex(randomblob(12)) FROM c;\n"
            "CREATE INDEX ta ON t(a);\n"
            "SELECT count(*), sum(length(b)) FROM t WHERE a % 3 = 0;\n")
# node: a million small objects
with open(os.path.join(t, "objs.js"), "w") as f:
    f.write("let a = []; for (let i = 0; i < 1000000; i++) a.push({i: i, s: 'x' + i});\n"
            "let s = 0; for (const o of a) s += o.s.length; console.log(s);\n")
PYEOF

PPARGS="--worker --worker-task=0 -p 1 -w 1 -n 3 --append $T/pp.json -l" # (run_side empties it)
cmd_of() {
	case $1 in
	stream) echo "$B/examples/stream" ;;
	large) echo "$B/bench/large 256 200" ;;
	arena) echo "$B/bench/arena 100000 256 1" ;;
	churn_text | churn_graph | steady) echo "$PY $ROOT/bench/py/$1.py" ;;
	churn_json) echo "$PY $ROOT/bench/py/churn_json.py 4" ;;
	sqlite3) echo "sqlite3 :memory: -init $T/db.sql .quit" ;;
	gcc) echo "gcc -O2 -c $T/big.c -o $T/big.o" ;;
	git) echo "git -C $ROOT log -p -n 400" ;;
	node) echo "node $T/objs.js" ;;
	pp_pickle_pure_python) echo "$VENV/bin/python $BM/bm_pickle/run_benchmark.py --pure-python pickle $PPARGS 16" ;;
	pp_xml_etree_process) echo "$VENV/bin/python $BM/bm_xml_etree/run_benchmark.py process $PPARGS 4" ;;
	pp_json_dumps) echo "$VENV/bin/python $BM/bm_json_dumps/run_benchmark.py $PPARGS 16" ;;
	pp_deltablue) echo "$VENV/bin/python $BM/bm_deltablue/run_benchmark.py $PPARGS 32" ;;
	pp_richards) echo "$VENV/bin/python $BM/bm_richards/run_benchmark.py $PPARGS 4" ;;
	sort) echo "sort -n $T/lines.txt -o $T/sorted.txt" ;;
	*) echo "auto.sh: unknown program $1" >&2; exit 2 ;;
	esac
}
best_of() {
	case $1 in
	stream | large) echo "$T/big-bg.policy" ;;
	arena) echo "$T/arena.policy" ;;
	churn_text | churn_graph | churn_json | steady | pp_*) echo "$ROOT/policies/cpython.policy" ;;
	gcc) echo "$T/cc1.policy" ;;
	*) echo "" ;; # no rule helps (tune kept none: BENCHMARKS.md)
	esac
}

# One run of a side: "ms peak_kb faults" (faults: the process tree's).
# The environment is the same size on every side.
PAD=$(printf '%*s' 400 '' | tr ' ' x)
run_side() { # side policy cmd...
	side=$1 pol=$2
	shift 2
	case $side in
	none) set -- env LX_PRELOAD="$SHIM" PREFAULX_POLICY="$pol" PREFAULX_REPORT=none "$@" ;;
	*) set -- env LD_PRELOAD="$SHIM" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$@" ;;
	esac
	# (padded to one length whatever the policy's path)
	plen=$(printf "%s" "$pol" | wc -c)
	rm -f "$T/pp.json"
	t0=$(date +%s%N)
	PREFAULT_BENCH_PAD=$(echo "$PAD" | cut -c1-$((400 - plen))) /usr/bin/time -o "$T/time" -f "%M %R" "$@" >/dev/null 2>"$T/err" ||
		{ echo "auto.sh: $side failed: $*" >&2; cat "$T/err" >&2; exit 1; }
	t1=$(date +%s%N)
	[ "$(thp_mode)" = "$THP_AT_START" ] || echo "auto.sh: THP is '$(thp_mode)' now, not '$THP_AT_START': this run's figures are disturbed" >&2
	echo "$(((t1 - t0) / 1000000)) $(cat "$T/time")"
}

med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
stat3() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f (%.3f-%.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

# THP's mode changes what every side measures (a sparse mapping fills whole
# under "always"): it is taken now, and a run that sees another says so.
THP=/sys/kernel/mm/transparent_hugepage/enabled
thp_mode() { sed 's/.*\[\(.*\)\].*/\1/' "$THP" 2>/dev/null || echo none; }
THP_AT_START=$(thp_mode)
echo "prefault run --auto on $(uname -n), $(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); THP $THP_AT_START; $ROUNDS rounds"
printf '%-11s %-8s %9s %9s %10s  %s\n' program side wall_ms peak_MiB faults "speedup over none: median (min-max) of the rounds"
for p in $PROGRAMS; do
	cmd=$(cmd_of "$p")
	best=$(best_of "$p")
	# shellcheck disable=SC2086
	"$B/prefault" run --auto -o "$T/$p.learned.policy" --report none -- $cmd >/dev/null 2>"$T/learn.err" ||
		{ echo "$p: the learning run failed:"; cat "$T/learn.err"; continue; }
	sides="none auto"
	[ -n "$best" ] && sides="$sides best"
	grep -q '^\[rule' "$T/$p.learned.policy" && sides="$sides learned"
	set -- $sides
	n=$#
	# a warm-up of each side, then the rounds, in the order slot gives
	for s in $sides; do
		case $s in none | auto) pol=auto ;; best) pol=$best ;; learned) pol=$T/$p.learned.policy ;; esac
		# shellcheck disable=SC2086
		run_side "$s" "$pol" $cmd >/dev/null
	done
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		i=0
		while [ $i -lt $n ]; do
			k=$(($(slot $r $i $n) + 1))
			s=$(echo $sides | cut -d' ' -f$k)
			case $s in none | auto) pol=auto ;; best) pol=$best ;; learned) pol=$T/$p.learned.policy ;; esac
			# shellcheck disable=SC2086
			run_side "$s" "$pol" $cmd >"$T/$p.r$r.$s"
			i=$((i + 1))
		done
		r=$((r + 1))
	done
	for s in $sides; do
		r=0
		: >"$T/$p.$s.ratio"
		while [ $r -lt "$ROUNDS" ]; do
			awk -v a="$(cut -d' ' -f1 "$T/$p.r$r.none")" -v b="$(cut -d' ' -f1 "$T/$p.r$r.$s")" \
				'BEGIN { printf "%.4f\n", a / b }' >>"$T/$p.$s.ratio"
			r=$((r + 1))
		done
		printf '%-11s %-8s %9s %9s %10s  %s\n' "$p" "$s" "$(cat "$T/$p".r*."$s" | cut -d' ' -f1 | med)" \
			"$(cat "$T/$p".r*."$s" | cut -d' ' -f2 | med | awk '{ printf "%.1f", $1 / 1024 }')" \
			"$(cat "$T/$p".r*."$s" | cut -d' ' -f3 | med)" "$(stat3 <"$T/$p.$s.ratio")"
	done
	sa=$(med <"$T/$p.auto.ratio")
	if [ -n "$best" ]; then
		sb=$(med <"$T/$p.best.ratio")
		echo "$p: gain: auto's speedup $sa over best's $sb: $(echo "$sa $sb" | awk '{ printf "%.2f", $1 / $2 }') (target 0.80 or more)"
	else
		pn=$(cat "$T/$p".r*.none | cut -d' ' -f2 | med)
		pa=$(cat "$T/$p".r*.auto | cut -d' ' -f2 | med)
		echo "$p: never slower: auto's median ratio $sa (target 0.98 or more); peak RSS $pn -> $pa kB," \
			"budget $(echo "$pn" | awk '{ b = $1 / 10; if (b > 262144) b = 262144; if (b < 2048) b = 2048; printf "%d", b }') kB"
	fi
	[ -e "$T/$p.learned.ratio" ] &&
		echo "$p: learned policy's speedup $(med <"$T/$p.learned.ratio") against auto's $sa: $(echo "$(med <"$T/$p.learned.ratio") $sa" | awk '{ printf "%.2f", $1 / $2 }')"
	grep -c '^\[rule' "$T/$p.learned.policy" | sed "s/^/$p: rules learned: /"
done
