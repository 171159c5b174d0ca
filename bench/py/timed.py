"""timed.py: run a workload of bench/py under a clock, for bench/python.sh.

    python3 bench/py/timed.py WORKLOAD.py [ARGS...]

Runs the script as __main__ and prints, on stderr, one line that the
harness reads: ms= (the script's run, interpreter start and exit left out,
as pyperf leaves them out), cpu_ms= (the CPU time the process spent in that
run, user and system: what a machine shared with other work disturbs
least, since time spent waiting for a CPU is not in it), faults= and
peak_kb= (the process's, from
getrusage, start-up included), huge_kb= (AnonHugePages of the whole
process while the workload's objects are still alive, from
/proc/self/smaps_rollup).
The script's own output goes where it goes (the harness discards it).
"""
import resource
import runpy
import sys
import time


def anon_huge_kb():
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def main():
    path = sys.argv[1]
    sys.argv = sys.argv[1:]
    t0, c0 = time.perf_counter(), time.process_time()
    g = runpy.run_path(path, run_name="__main__")
    ms, cpu = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
    huge = anon_huge_kb()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write("timed: ms=%.3f cpu_ms=%.3f faults=%d peak_kb=%d huge_kb=%d\n" % (ms, cpu, ru.ru_minflt, ru.ru_maxrss, huge))
    del g


if __name__ == "__main__":
    main()
