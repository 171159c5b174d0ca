#!/usr/bin/env bats
# The tool as a parent (issue 22 D): run, trial, tune and profile stand between
# the caller and the program, and must behave as a shell's exec would for
# signals, job control and deadlines.
load helpers

# state PID: the state letter of /proc/PID/stat (T: stopped), empty once it is gone
state() {
	sed -n 's/.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null
}

# wait_state PID LETTER: up to 10 s for PID to be in that state
wait_state() {
	local i
	for i in $(seq 200); do
		[ "$(state "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_gone PID: up to 10 s for PID to end (or become a zombie)
wait_gone() {
	local i s
	for i in $(seq 200); do
		s=$(state "$1")
		[ -z "$s" ] || [ "$s" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# Finding: the program stopped itself, a supervisor continued it alone with kill -CONT,
# and it ran and exited, but run stayed stopped for good and its caller hung.
@test "a program stopped and continued on its own: the tool does not stay stopped (issue 22 #18)" {
	"$PF" run -o none -- sh -c 'echo $$ >"$1"; kill -STOP $$; exit 5' sh "$BATS_TEST_TMPDIR/pid" &
	tool=$!
	for i in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/pid" ] && break; sleep 0.05; done
	p=$(cat "$BATS_TEST_TMPDIR/pid")
	wait_state "$p" T
	wait_state "$tool" T # the tool follows the program's stop
	kill -CONT "$p"      # the program alone
	if ! wait_gone "$tool"; then
		kill -KILL "$tool"
		false
	fi
	st=0
	wait "$tool" || st=$?
	[ "$st" -eq 5 ]
}

# as_background_job CMD...: run CMD as a background job of a new terminal (a
# pseudo-terminal with `stty tostop`), and print "stopped by N" if it stops
# within 5 s, "ended S" if it ends, else "still running"; it is killed after.
as_background_job() {
	"$PY" -c '
import os, pty, signal, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    a = termios.tcgetattr(0)
    a[3] |= termios.TOSTOP
    termios.tcsetattr(0, termios.TCSANOW, a)
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        os.execv(sys.argv[1], sys.argv[1:])
    try:
        os.setpgid(job, job)  # as a shell does (the child does it too)
    except PermissionError:
        pass  # the child did it first, then exec-ed
    res, end = "still running", time.time() + 5
    while time.time() < end:
        p, st = os.waitpid(job, os.WNOHANG | os.WUNTRACED)
        if p == job:
            res = "stopped by %d" % os.WSTOPSIG(st) if os.WIFSTOPPED(st) else "ended %d" % st
            break
        time.sleep(0.05)
    os.killpg(job, signal.SIGKILL)
    print(res, flush=True)
    os._exit(0)
out = b""
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))' "$@"
}

# Finding: run as a background job on a `stty tostop` terminal spun at 100% CPU: its
# SIGTTOU handler, still in place while it printed the report, made each write restart.
@test "a background job under stty tostop: run stops on SIGTTOU to print its report, as any program would (issue 22 #17)" {
	needs_no_tsan # (its runtime's slowness outlasts the test's wait)
	run as_background_job "$PF" run -- true
	echo "$output"
	[[ "$output" == *"stopped by $("$PY" -c 'import signal; print(int(signal.SIGTTOU))')"* ]]
}

# Finding: a program that signals its parent ("I'm ready") was sent its own signal back by
# run, and died of it (exit 138); the real caller's trap never fired.
@test "a signal the program sends its parent is not bounced back: it reaches the real caller (issue 22 #19)" {
	run --separate-stderr bash -c 'trap "echo caller got USR1" USR1
		"$1" run -o none -- sh -c "kill -USR1 \$PPID; sleep 0.3; exit 4"; echo "status $?"' bash "$PF"
	echo "$output"
	[ "${lines[0]}" = "caller got USR1" ]
	[ "${lines[1]}" = "status 4" ]
	# from a descendant of the program too (one still there when the tool looks)
	run --separate-stderr bash -c 'trap "echo caller got USR2" USR2
		"$1" run -o none -- sh -c "sh -c \"kill -USR2 \\\$1; sleep 0.2\" sh \$PPID; exit 4"; echo "status $?"' bash "$PF"
	echo "$output"
	[ "${lines[0]}" = "caller got USR2" ]
	[ "${lines[1]}" = "status 4" ]
}

# Finding: nohup and trap '' INT were not honoured: the tool caught the signals it had
# inherited as ignored, so `nohup prefault trial ...` stopped at a hangup (exit 129).
@test "signals ignored when the tool starts stay ignored, for it and the program: nohup (issue 22 #20)" {
	ready="$BATS_TEST_TMPDIR/ready"
	env --ignore-signal=HUP "$PF" trial -n 1 -p observe -- sh -c ': >"$1"; sleep 0.3' sh "$ready" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	tool=$!
	for i in $(seq 200); do [ -e "$ready" ] && break; sleep 0.05; done
	kill -HUP "$tool"
	st=0
	wait "$tool" || st=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$st" -eq 0 ]
	grep -q '^verdict: ' "$BATS_TEST_TMPDIR/out"
	# and the program inherits it ignored (SigIgn bit 0 is SIGHUP)
	run --separate-stderr env --ignore-signal=HUP "$PF" run -o none -- sh -c 'sed -n "s/^SigIgn:[[:space:]]*//p" /proc/$$/status'
	[ $((0x$output & 1)) -eq 1 ]
}
