import os, pty, signal, subprocess, sys, time, select
def reap(pid):
    """Kill the whole session the pty's shell led (job-control shells put
    their jobs in process groups of their own; a stopped one left behind
    would hold the caller's pipes open)."""
    subprocess.run(["pkill", "-9", "-s", str(pid)], stderr=subprocess.DEVNULL)
def run(cmd):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
    out = b""
    def pump(t):
        nonlocal out
        end = time.time() + t
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try: d = os.read(fd, 4096)
                except OSError: return
                out += d
    pump(0.5); os.write(fd, cmd.encode() + b"\n")
    pump(1.0); os.write(fd, b"PS1='inner$ '\n")
    pump(0.5); os.write(fd, b"suspend\n")
    pump(1.0); os.write(fd, b"echo OUTER-SHELL-ANSWERS\n")
    pump(1.5)
    reap(pid); os.waitpid(pid, 0)
    return out.decode(errors="replace").replace("\x1b[?2004h","").replace("\x1b[?2004l","")
print(run("bash --norc --noprofile -i")); print("=========="); print(run(sys.argv[1] + " run -- bash --norc --noprofile -i"))
