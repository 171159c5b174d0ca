#!/bin/sh
# pyperf.sh BUILD [ROUNDS] [PROCESSES] [VALUES]
#
# pyperformance benchmarks, run directly with pyperf, under three sides
# (issue 10):
#   none      no preload
#   observe   LD_PRELOAD=libprefault.so, no policy, PREFAULT_REPORT=none
#   cpython   LD_PRELOAD=libprefault.so, PREFAULT_POLICY=policies/cpython.policy,
#             PREFAULT_REPORT=none
# BENCHMARKS= picks them (default: json_loads richards json_dumps
# pickle_pure_python; deltablue and nbody also work).  PYMALLOC=malloc adds
# PYTHONMALLOC=malloc on every side (every object through malloc).
#
# Each round runs each side once, in the order none observe cpython and then
# reversed (ABBA); one run is one pyperf invocation: PROCESSES worker
# processes (2), each 1 warm-up and VALUES values (3), with the loop count
# fixed per benchmark by one calibration on the none side first, so every
# side's workers get the same command line.  The ratio of a round is the
# side's pyperf mean over none's mean in that round; the line shows the
# medians of the means and the median (min-max) of the ROUNDS (7) ratios.
# About 5 minutes with the defaults.
#
# Environment: pyperf's runner gives its workers only PATH, HOME and a few
# more by default; LD_PRELOAD and PREFAULT_* would not reach them.  So the
# runner is started with --copy-env (its whole environment, which is exactly
# the side's: `env -i`, a fixed PATH and the side's variables), and before
# measuring the script checks that a worker writes a shim report.  Every side
# gets the same variable names, with one letter changed where a variable must
# not act (LX_PRELOAD, PREFAULX_POLICY, PREFAULX_REPORT) and values of the
# same length, so the environment block is the same size byte for byte
# (checked too): its size alone moved run times here by several percent.
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
trap 'rm -rf "$T"' EXIT INT TERM

SHIM="$B/libprefault.so"
POL="$ROOT/policies/cpython.policy"
BASE="PATH=/usr/local/bin:/usr/bin:/bin${PYMALLOC:+ PYTHONMALLOC=$PYMALLOC}"
side_env() {
	case $1 in
	none) echo "LX_PRELOAD=$SHIM PREFAULX_POLICY=$POL PREFAULX_REPORT=none" ;;
	observe) echo "LD_PRELOAD=$SHIM PREFAULX_POLICY=$POL PREFAULT_REPORT=none" ;;
	cpython) echo "LD_PRELOAD=$SHIM PREFAULT_POLICY=$POL PREFAULT_REPORT=none" ;;
	esac
}
run_side() { # run_side SIDE CMD...
	s=$1
	shift
	# shellcheck disable=SC2046,SC2086 # the variables are one word each
	env -i $BASE $(side_env "$s") "$@"
}
# bench_cmd NAME: the benchmark's script and its own arguments
bench_cmd() {
	case $1 in
	pickle_pure_python) echo "$BM/bm_pickle/run_benchmark.py --pure-python pickle" ;;
	*)
		[ -f "$BM/bm_$1/run_benchmark.py" ] || { echo "pyperf.sh: no benchmark $1 in $BM" >&2; exit 2; }
		echo "$BM/bm_$1/run_benchmark.py"
		;;
	esac
}
SIDES="none observe cpython"
RSIDES="cpython observe none"

# ---- checks before measuring ----
sz=
for s in $SIDES; do
	n=$(run_side "$s" /usr/bin/env | wc -c)
	if [ -n "$sz" ] && [ "$n" != "$sz" ]; then
		echo "pyperf.sh: environment of side $s is $n bytes, not $sz" >&2
		exit 1
	fi
	sz=$n
done
# The preload and the policy reach pyperf's workers: each process writes a
# report, and one of them is a child of another (the worker of the runner),
# has the policy and has matched the arena rule.
mkdir "$T/rep"
# shellcheck disable=SC2046,SC2086
env -i $BASE LD_PRELOAD="$SHIM" PREFAULT_POLICY="$POL" PREFAULT_REPORT="$T/rep/%p.json" \
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
			# shellcheck disable=SC2086
			run_side "$s" "$PY" $cmd --copy-env -p "$PROCS" -n "$VALUES" -w 1 -l "$loops" \
				-o "$T/$b.$s.$i.json" >/dev/null
		done
		i=$((i + 1))
	done
	"$PY" - "$T" "$b" "$ROUNDS" "$loops" <<'S'
import statistics, sys
import pyperf
d, b, n, loops = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
mean = {s: [pyperf.Benchmark.load("%s/%s.%s.%d.json" % (d, b, s, i)).mean() for i in range(n)]
        for s in ("none", "observe", "cpython")}
def fmt(t):
    for unit, f in (("s", 1), ("ms", 1e3), ("us", 1e6), ("ns", 1e9)):
        if t * f >= 1:
            return "%.4g %s" % (t * f, unit)
    return "%.4g ns" % (t * 1e9)
for s in ("observe", "cpython"):
    r = sorted(x / y for x, y in zip(mean[s], mean["none"]))
    print("%-20s %-16s %12s %12s   %.3f (%.3f-%.3f)  %d rounds, loops %s" % (
        b, s + "/none", fmt(statistics.median(mean["none"])), fmt(statistics.median(mean[s])),
        statistics.median(r), r[0], r[-1], n, loops))
S
done
