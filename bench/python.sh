#!/bin/sh
# python.sh BUILD [ROUNDS]: CPython workloads (bench/py/*.py) under several
# sides, interleaved, with medians and per-round ratios (issues 4 and 20).
#
# SIDES picks them (default: none recycle carve), in that order; the sides
# (none, observe, recycle, carve, thp, hugetlb) are bench/pysides.sh's.
# WORKLOADS picks the scripts of bench/py (default: all but timed.py and
# json_roundtrip.py); ARGS_<name> gives one its arguments.
#
# Each round runs every side once, in order and then in reverse on the next
# round (ABBA), each run a fresh python3 under bench/py/timed.py, which times
# the workload itself (interpreter start and exit left out, as pyperf does)
# and gives the process's faults, peak RSS and AnonHugePages.  Every side
# has the same environment, byte for byte in size (bench/pysides.sh).  Runs
# are pinned to CPU $CPU (default 1; CPU= for none).
#
# Prints, per workload and side: the median time and its range over the
# rounds, the speedup against none (the median of the per-round ratios
# none/side, with their range), the same for CPU time (user and system: on
# a machine shared with other work the steadier of the two, since time
# spent waiting for a CPU is not in it), and the medians of faults, peak
# RSS and AnonHugePages; then per side the geometric mean of the speedups, and the
# arena loop (bench/arena.c: mmap 256 KiB, touch a byte, munmap) under
# recycle and carve.  RAW=FILE keeps every run's figures.
set -e
B=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-7}
PY=${PY:-/usr/bin/python3}
CPU=${CPU-1}
SIDES=${SIDES:-none recycle carve}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHIM="$B/libprefault.so"
[ -e "$SHIM" ] || { echo "python.sh: no $SHIM" >&2; exit 2; }
if [ -z "$WORKLOADS" ]; then
	WORKLOADS=$(cd "$ROOT/bench/py" && ls ./*.py | sed 's|^\./||; s|\.py$||' | grep -v -e '^timed$' -e '^json_roundtrip$')
fi
T=$(mktemp -d)
PIN=
[ -n "$CPU" ] && command -v taskset >/dev/null && PIN="taskset -c $CPU"
BASE=
# shellcheck source=bench/pysides.sh
. "$ROOT/bench/pysides.sh"
trap 'restore_thp; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
py_sides_init python.sh
sz=$ENV_SIZE

echo "python.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), THP $(sed 's/.*\[\(.*\)\].*/\1/' "$THP")"
echo "  $("$PY" -c 'import sys; print("python", sys.version.split()[0])'); $ROUNDS rounds, sides: $SIDES; ${CPU:+pinned to CPU $CPU; }environment $sz bytes on every side"
: >"$T/data"
for w in $WORKLOADS; do
	eval "args=\${ARGS_$w:-}"
	i=0
	while [ "$i" -lt "$ROUNDS" ]; do
		order=$SIDES
		[ $((i % 2)) -eq 1 ] && order=$RSIDES
		for s in $order; do
			# shellcheck disable=SC2086
			run_side "$s" "$PY" "$ROOT/bench/py/timed.py" "$ROOT/bench/py/$w.py" $args >/dev/null 2>"$T/err" ||
				{ echo "python.sh: $w failed under $s:" >&2; cat "$T/err" >&2; exit 1; }
			echo "$w $s $i $(sed -n 's/^timed: //p' "$T/err")" >>"$T/data"
		done
		i=$((i + 1))
	done
done
[ -z "$RAW" ] || cp "$T/data" "$RAW"
"$PY" - "$T/data" $SIDES <<'S'
import math, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split("=") for x in f[3:])
    rows.setdefault((f[0], f[1]), {})[int(f[2])] = {k: float(v) for k, v in kv.items()}
sides = sys.argv[2:]
works = list(dict.fromkeys(w for w, s in rows))
med = statistics.median
print("%-12s %-8s %22s %26s %26s %9s %10s %10s" % ("workload", "side", "ms: median (min-max)", "speedup: median (min-max)",
                                                   "CPU time speedup", "faults", "peak RSS", "AnonHuge"))
speed = {s: [] for s in sides}
cpu = {s: [] for s in sides}
for w in works:
    for s in sides:
        r = rows[(w, s)]
        ms = [r[i]["ms"] for i in sorted(r)]
        line = "%-12s %-8s %9.1f (%.1f-%.1f)" % (w, s, med(ms), min(ms), max(ms))
        if "none" in sides and s != "none":
            for k, keep in (("ms", speed), ("cpu_ms", cpu)):
                q = sorted(rows[(w, "none")][i][k] / r[i][k] for i in r)
                keep[s].append(med(q))
                line += "   %6.3fx (%.3f-%.3f)" % (med(q), q[0], q[-1])
        else:
            line += " " * 52
        line += " %9d %8.1f M %8.1f M" % (med([r[i]["faults"] for i in r]), med([r[i]["peak_kb"] for i in r]) / 1024,
                                          med([r[i]["huge_kb"] for i in r]) / 1024)
        print(line)
for s in sides:
    for what, v in (("", speed[s]), (" in CPU time", cpu[s])):
        if v:
            g = math.exp(sum(math.log(x) for x in v) / len(v))
            print("geometric mean of the speedups%s, %s: %.3fx over %d workloads (lowest %.3f, highest %.3f)" % (
                what, s, g, len(v), min(v), max(v)))
S
# the arena loop
printf '[global]\nreport = none\n[rule a]\ncall = mmap\nsize = 256K\naction = recycle\n' >"$T/arena-r.policy"
printf '[global]\nreport = none\n[rule a]\ncall = mmap\nsize = 256K\naction = carve\n' >"$T/arena-c.policy"
: >"$T/arena"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	a=$("$B/bench/arena" 100000 256 1)
	b=$(LD_PRELOAD="$SHIM" PREFAULT_POLICY="$T/arena-r.policy" "$B/bench/arena" 100000 256 1)
	c=$(LD_PRELOAD="$SHIM" PREFAULT_POLICY="$T/arena-c.policy" "$B/bench/arena" 100000 256 1)
	echo "$a $b $c" >>"$T/arena"
	i=$((i + 1))
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "arena loop (mmap 256 KiB, touch 1 byte, munmap; ns an iteration, faults per 100000): plain $(awk '{print $1}' "$T/arena" | med) ns, $(awk '{print $2}' "$T/arena" | med) faults; recycle $(awk '{print $3}' "$T/arena" | med) ns, $(awk '{print $4}' "$T/arena" | med) faults; carve $(awk '{print $5}' "$T/arena" | med) ns, $(awk '{print $6}' "$T/arena" | med) faults"
