import subprocess, sys, time
# the timeout idiom with output captured: Popen + communicate(timeout) + kill + communicate()
for argv in (["sh", "-c", "echo partial; exec sleep 8"], [sys.argv[1], "run", "--", "sh", "-c", "echo partial; exec sleep 8"]):
    t0 = time.time()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        p.communicate(timeout=1)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    print("%-12s killed at 1 s, output collected after %.1f s" % (argv[0].split("/")[-1], time.time() - t0))
