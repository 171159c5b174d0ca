"""pystart.py: what a policy costs a short-lived python3, side by side.

    python3 bench/pystart.py BUILD ROUNDS [PYTHON ARGS...]     (default: -c pass)

Runs Debian's /usr/bin/python3 (ARGS) ROUNDS times on each side, the sides
in alternating order (none, recycle, cpython; then backwards), pinned to
CPU 1, each under env -i with an environment of the same size on every side
(the variables' names changed by a letter where a side must not act): none
(no preload), recycle (policies/cpython.policy with carve turned into
recycle), cpython (the shipped policy: carving judged by hugepage_check,
which measures once, before the first reserve).  Prints each side's median
wall time and the median (min-max) of its per-round speed against none.
"""
import os, statistics, subprocess, sys, tempfile, time

build, rounds = sys.argv[1], int(sys.argv[2])
prog = sys.argv[3:] or ["-c", "pass"]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shim = os.path.join(os.path.abspath(build), "libprefault.so")
tmp = tempfile.mkdtemp()
shipped = open(os.path.join(root, "policies", "cpython.policy")).read()
open(os.path.join(tmp, "carve.policy"), "w").write(shipped)
open(os.path.join(tmp, "recyc.policy"), "w").write(
    "\n".join(l.replace("action = carve", "action = recycle") for l in shipped.splitlines()
              if not l.startswith("hugepage_check")) + "\n")
sides = {
    "none": ["LX_PRELOAD=" + shim, "PREFAULX_POLICY=%s/recyc.policy" % tmp, "PREFAULX_REPORT=none"],
    "recycle": ["LD_PRELOAD=" + shim, "PREFAULT_POLICY=%s/recyc.policy" % tmp, "PREFAULT_REPORT=none"],
    "cpython": ["LD_PRELOAD=" + shim, "PREFAULT_POLICY=%s/carve.policy" % tmp, "PREFAULT_REPORT=none"],
}
t = {s: [] for s in sides}
order = list(sides)
for i in range(rounds):
    for s in order if i % 2 == 0 else order[::-1]:
        cmd = ["env", "-i", "PATH=/usr/bin:/bin"] + sides[s] + ["taskset", "-c", "1", "/usr/bin/python3"] + prog
        a = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        t[s].append(time.perf_counter() - a)
for s in sides:
    r = [b / x for b, x in zip(t["none"], t[s])]
    print("%-8s median %.2f ms, speed against none: median %.3f (%.3f-%.3f)"
          % (s, statistics.median(t[s]) * 1e3, statistics.median(r), min(r), max(r)))
