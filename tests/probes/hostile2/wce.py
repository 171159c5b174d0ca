# Ctrl-C at a shell loop: does the loop stop?  (bash "wait and cooperative exit")
import os, pty, signal, subprocess, sys, time, select
def reap(pid):
    """Kill the whole session the pty's shell led (job-control shells put
    their jobs in process groups of their own; a stopped one left behind
    would hold the caller's pipes open)."""
    subprocess.run(["pkill", "-9", "-s", str(pid)], stderr=subprocess.DEVNULL)
def run(cmd):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i", "-c", cmd])
    out = b""
    t0 = time.time()
    sent = False
    while time.time() - t0 < 8:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                d = os.read(fd, 1000)
            except OSError:
                break
            if not d: break
            out += d
        if not sent and time.time() - t0 > 1.5:
            os.write(fd, b"\x03"); sent = True
    reap(pid)
    os.waitpid(pid, 0)
    return out.decode(errors="replace")
PF = sys.argv[1]
print("without:", repr(run("for i in 1 2 3; do sleep 2; echo after $i; done; echo loop-finished")))
print("with:   ", repr(run(f"for i in 1 2 3; do {PF} run -- sleep 2; echo after $i; done; echo loop-finished")))
