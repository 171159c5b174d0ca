#!/bin/sh
# pyperf.sh BUILD [ROUNDS] [PROCESSES] [VALUES]
#
# pyperformance benchmarks, run directly with pyperf, under several sides
# (issues 10 and 20): SIDES= picks them (default: none observe cpython), none
# first; the sides (none, observe, cpython, recycle, carve, thp, hugetlb)
# are bench/pysides.sh's.
# BENCHMARKS= picks them (default: json_loads richards json_dumps
# pickle_pure_python; deltablue and nbody also work).  PYMALLOC=malloc adds
# PYTHONMALLOC=malloc on every side (every object through malloc).
#
# Each round runs each side once, in the order of SIDES and then reversed
# (ABBA); one run is one pyperf invocation: PROCESSES worker
# processes (2), each 1 warm-up and VALUES values (3), with the loop count
# fixed per benchmark by one calibration on the none side first, so every
# side's workers get the same command line.  The ratio of a round is the
# side's pyperf mean over none's mean in that round; the line shows the
# medians of the means and the median (min-max) of the ROUNDS (7) ratios.
# About 5 minutes with the defaults.  TIME=cpu measures CPU time instead, the
# steadier figure on a machine shared with other work (time spent waiting
# for a CPU is not in it): each of the PROCS workers is started by itself
# (pyperf's own --worker command line) under bench/py/timed.py, and a
# round's figure is their CPU time (start-up of the benchmark, warm-up and
# values; interpreter start and exit left out), with every worker's faults,
# peak RSS and AnonHugePages.
#
# Environment: pyperf's runner gives its workers only PATH, HOME and a few
# more by default; LD_PRELOAD and PREFAULT_* would not reach them.  So the
# runner is started with --copy-env (its whole environment, which is exactly
# the side's: `env -i`, a fixed PATH and the side's variables), and before
# measuring the script checks that a worker writes a shim report.  Every side
# has an environment of the same size, byte for byte (bench/pysides.sh).
#
# Setting up the venv on a fresh machine (PyPI not needed; Debian 12 here):
#   apt-get install python3-venv python3-wheel    # wheel: setuptools 66 builds with it
#   # sources: a checkout or `git archive` of github.com/psf/pyperf and of
#   # github.com/python/pyperformance (two large data files of bm_networkx and
#   # bm_tomli_loads may be missing from a partial mirror: neither is used here)
#   mkdir -p /work/src/pyperf /work/src/pyperformance
#   git --git-dir=PYPERF.git archive HEAD | tar -x -C /work/src/pyperf
#   git --git-dir=PYPERFORMANCE.git archive HEAD -- . \
#       ':(exclude)pyperformance/data-files/benchmarks/bm_networkx/data/amazon0302.txt.gz' \
#       ':(exclude)pyperformance/data-files/benchmarks/bm_tomli_loads/data/tomli-bench-data.toml' \
#       | tar -x -C /work/src/pyperformance
#   /usr/bin/python3 -m venv --system-site-packages /work/venv
#   /work/venv/bin/pip install --no-index --no-deps --no-build-isolation \
#       /work/src/pyperf /work/src/pyperformance
# --no-deps: pyperf's psutil is optional (pyperf runs without it) and
# pyperformance's packaging is needed only by its own CLI, which this script
# does not use (it would create venvs from PyPI).  The venv's python is
# Debian's /usr/bin/python3 (3.11), the interpreter policies/cpython.policy
# is written for.  VENV= points elsewhere (default /work/venv).
set -e
B=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-7}
PROCS=${3:-2}
VALUES=${4:-3}
VENV=${VENV:-/work/venv}
BENCHMARKS=${BENCHMARKS:-json_loads richards json_dumps pickle_pure_python}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY="$VENV/bin/python"
case "$B$ROOT$VENV" in *[[:space:]]*) echo "pyperf.sh: paths with spaces are not supported" >&2; exit 2 ;; esac
if ! [ -x "$PY" ] || ! "$PY" -c 'import pyperf, pyperformance' 2>/dev/null; then
	echo "pyperf.sh: no pyperf and pyperformance in $VENV (see the set-up at the top of $0)" >&2
	exit 2
fi
BM=$("$PY" -c 'import os, pyperformance; print(os.path.join(os.path.dirname(pyperformance.__file__), "data-files", "benchmarks"))')
[ -e "$B/libprefault.so" ] || { echo "pyperf.sh: no $B/libprefault.so" >&2; exit 2; }
T=$(mktemp -d)

SHIM="$B/libprefault.so"
SIDES=${SIDES:-none observe cpython}
PIN=
BASE=${PYMALLOC:+PYTHONMALLOC=$PYMALLOC}
# shellcheck source=bench/pysides.sh
. "$ROOT/bench/pysides.sh"
trap 'restore_thp; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
py_sides_init pyperf.sh
sz=$ENV_SIZE
POL="$T/shipd.policy"
# bench_cmd NAME: the benchmark's script and its own arguments
bench_cmd() {
	case $1 in
	pickle_pure_python) echo "$BM/bm_pickle/run_benchmark.py --pure-python pickle" ;;
	xml_etree_*) echo "$BM/bm_xml_etree/run_benchmark.py ${1#xml_etree_}" ;;
	*)
		[ -f "$BM/bm_$1/run_benchmark.py" ] || { echo "pyperf.sh: no benchmark $1 in $BM" >&2; exit 2; }
		echo "$BM/bm_$1/run_benchmark.py"
		;;
	esac
}
# The preload and the policy reach pyperf's workers: each process writes a
# report, and one of them is a child of another (the worker of the runner),
# has the policy and has matched the arena rule.
mkdir "$T/rep"
# shellcheck disable=SC2046,SC2086
env -i $SIDE_PATH $BASE LD_PRELOAD="$SHIM" PREFAULT_POLICY="$POL" PREFAULT_REPORT="$T/rep/%p.json" \
	"$PY" $(bench_cmd json_dumps) --copy-env -p 1 -n 1 -w 0 -l 1 -o "$T/check.json" >/dev/null
if ! "$PY" - "$T/rep" <<'C'; then
import glob, json, sys
reps = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
pids = {r["pid"] for r in reps}
# the runner's python children (its workers also start uname and file)
workers = [r for r in reps if r["ppid"] in pids and "python" in r["exe"] and r["policy"]]
ok = workers and all(sum(x["matched"] for x in w["rules"]) for w in workers)
print("pyperf.sh: %d shim reports, %d from pyperf workers with the policy, %s" %
      (len(reps), len(workers), "its arena rules matched" if ok else "NO MATCHES"))
sys.exit(0 if ok else 1)
C
	echo "pyperf.sh: the shim or its policy does not reach pyperf's workers" >&2
	exit 1
fi

# ---- measuring ----
echo "pyperf.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  $("$PY" -c 'import sys, pyperf, pyperformance; print("python", sys.version.split()[0], "pyperf", pyperf.__version__, "pyperformance", pyperformance.__version__)')${PYMALLOC:+, PYTHONMALLOC=$PYMALLOC}"
echo "  $ROUNDS rounds of ABBA, each run $PROCS processes x (1 warm-up + $VALUES values); environment $sz bytes on every side"
printf '%-20s %-16s %12s %12s   %s\n' benchmark side "A (median)" "B (median)" "B/A per round: median (min-max)"
for b in $BENCHMARKS; do
	cmd=$(bench_cmd "$b")
	# The loop count, once, on the none side: then every side's workers get
	# the same command line (a different --loops would change argv's size).
	# shellcheck disable=SC2086
	run_side none "$PY" $cmd --copy-env -p 1 -n 1 -w 0 -o "$T/cal.json" >/dev/null
	loops=$("$PY" -c 'import pyperf, sys; print(pyperf.Benchmark.load(sys.argv[1]).get_loops())' "$T/cal.json")
	rm -f "$T/cal.json"
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		order=$SIDES
		[ $((i % 2)) -eq 1 ] && order=$RSIDES
		for s in $order; do
			if [ "$TIME" != cpu ]; then
				# shellcheck disable=SC2086
				run_side "$s" "$PY" $cmd --copy-env -p "$PROCS" -n "$VALUES" -w 1 -l "$loops" \
					-o "$T/$b.$s.$i.json" >/dev/null
				continue
			fi
			# TIME=cpu: the same workers, started one by one, each under
			# bench/py/timed.py: the CPU time of its whole run
			k=0
			: >"$T/$b.$s.$i.cpu"
			while [ $k -lt "$PROCS" ]; do
				rm -f "$T/w.json"
				# shellcheck disable=SC2086
				run_side "$s" "$PY" "$ROOT/bench/py/timed.py" $cmd --worker --worker-task=0 -n "$VALUES" -w 1 \
					-l "$loops" -o "$T/w.json" >/dev/null 2>"$T/err" ||
					{ echo "pyperf.sh: $b failed under $s:" >&2; cat "$T/err" >&2; exit 1; }
				sed -n 's/^timed: //p' "$T/err" >>"$T/$b.$s.$i.cpu"
				k=$((k + 1))
			done
		done
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # the sides, a word each
	"$PY" - "$T" "$b" "$ROUNDS" "$loops" "${TIME:-wall}" $SIDES <<'S'
import statistics, sys
import pyperf
d, b, n, loops, how, sides = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6:]
def cpu(s, i):  # the workers' CPU time, and their figures
    runs = [dict(x.split("=") for x in l.split()) for l in open("%s/%s.%s.%d.cpu" % (d, b, s, i))]
    return sum(float(r["cpu_ms"]) for r in runs) / 1e3, runs
if how == "cpu":
    mean = {s: [cpu(s, i)[0] for i in range(n)] for s in sides}
    figs = {s: [r for i in range(n) for r in cpu(s, i)[1]] for s in sides}
else:
    mean = {s: [pyperf.Benchmark.load("%s/%s.%s.%d.json" % (d, b, s, i)).mean() for i in range(n)]
            for s in sides}
def fmt(t):
    for unit, f in (("s", 1), ("ms", 1e3), ("us", 1e6), ("ns", 1e9)):
        if t * f >= 1:
            return "%.4g %s" % (t * f, unit)
    return "%.4g ns" % (t * 1e9)
with open("%s/ratios" % d, "a") as out:
    for s in sides[1:]:
        r = sorted(x / y for x, y in zip(mean[s], mean["none"]))
        print("%-20s %-16s %12s %12s   %.3f (%.3f-%.3f)  %d rounds, loops %s%s" % (
            b, s + "/none", fmt(statistics.median(mean["none"])), fmt(statistics.median(mean[s])),
            statistics.median(r), r[0], r[-1], n, loops, "  SLOWER in every round" if r[0] > 1 else ""))
        out.write("%s %s %s\n" % (b, s, " ".join("%.6f" % x for x in r)))
if how == "cpu":
    for s in sides:
        f = figs[s]
        print("%-20s %-16s faults %d, peak RSS %.1f MiB, AnonHugePages %.1f MiB (medians of %d workers)" % (
            b, s, statistics.median(int(r["faults"]) for r in f), statistics.median(int(r["peak_kb"]) for r in f) / 1024,
            statistics.median(int(r["huge_kb"]) for r in f) / 1024, len(f)))
S
done
# Per side: the geometric mean of the benchmarks' median ratios, with a
# 95% interval from resampling the benchmarks.
"$PY" - "$T/ratios" <<'S'
import math, random, statistics, sys
by = {}
for line in open(sys.argv[1]):
    f = line.split()
    by.setdefault(f[1], []).append(statistics.median(float(x) for x in f[2:]))
random.seed(20)
for s, m in by.items():
    g = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
    boot = sorted(g([random.choice(m) for _ in m]) for _ in range(4000))
    print("geometric mean %s/none over %d benchmarks: %.3f (95%% interval %.3f to %.3f): %.3fx the speed of none" % (
        s, len(m), g(m), boot[100], boot[3899], 1 / g(m)))
S
# Faults, peak RSS and AnonHugePages of one process per side for FIGURES
# (one worker's work in-process, pyperf's --debug-single-value, under
# bench/py/timed.py: the figures at the end of the run, before exit).
[ "$TIME" = cpu ] && FIGURES=${FIGURES-}
for b in ${FIGURES-json_dumps json_loads pickle_pure_python xml_etree_process deltablue}; do
	cmd=$(bench_cmd "$b")
	for s in $SIDES; do
		# shellcheck disable=SC2086
		run_side "$s" "$PY" "$ROOT/bench/py/timed.py" $cmd --debug-single-value -o "$T/fig.json" >/dev/null 2>"$T/err" || true
		rm -f "$T/fig.json"
		printf '%-20s %-10s %s\n' "$b" "$s" "$(sed -n 's/^timed: //p' "$T/err")"
	done
done
