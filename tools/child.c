/* child.c: see child.h. */
#include "child.h"
#include "fmt.h"
#include "proctree.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Every signal someone may send the tool for the program: all the
 * asynchronous ones, but SIGKILL and SIGSTOP (which cannot be caught),
 * SIGCHLD (ours), SIGPIPE (the tool ignores it to write its report) and the
 * faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS: the tool's own). */
static const int fwd_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGSTKFLT,
                                SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGURG, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
                                SIGWINCH, SIGIO, SIGPWR };
#define NFWD (int)(sizeof fwd_sigs / sizeof fwd_sigs[0])

/* What the tool was started with, restored in every child before exec. */
static int saved;
static struct sigaction orig_fwd[NFWD], orig_pipe, orig_chld;
static sigset_t orig_mask;

static volatile sig_atomic_t running; /* the child's pid while it runs, else 0 */
static volatile sig_atomic_t watcher; /* the watcher's pid while the tool is stopped (follow_stop) */
static volatile sig_atomic_t pending;
static int last_signal; /* the signal the last program died of, or 0 */
static volatile sig_atomic_t arrived; /* INT, TERM, HUP or QUIT, program running or not */
static double deadline;  /* mono: stop the program then; 0: never */
static int timed_out;    /* the last program was stopped at the deadline */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Stop as sig's default action would (the shell then sees why: "Stopped
 * (tty output)"), from a handler or not; go on when continued. */
static void stop_self(int sig)
{
	struct sigaction dfl, old;
	sigset_t one, prev;
	if (sig == SIGSTOP) {
		raise(SIGSTOP);
		return;
	}
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, &old);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, &prev);
	raise(sig);
	sigprocmask(SIG_SETMASK, &prev, NULL);
	sigaction(sig, &old, NULL);
}

static int job_stop(int sig) { return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

static void forward(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	pid_t pid = (pid_t)running, from = si->si_code <= 0 ? si->si_pid : 0;
	(void)uc;
	if (from > 0 && (from == (pid_t)watcher || from == getpid())) {
		; /* ours: the watcher continuing us */
	} else if (from > 0 && pid > 0 && proc_in_tree(from, pid)) {
		/* From the program or its tree: never back to it.  A signal to
		 * its parent ("I'm ready") is for its real caller, as it would be
		 * without us between them; a stop or continue is the job's own. */
		pid_t up = getppid();
		if (!job_stop(sig) && sig != SIGCONT && up > 1)
			kill(up, sig);
	} else if (job_stop(sig) && (pid <= 0 || (si->si_code > 0 && sig != SIGTSTP))) {
		/* No program to stop, or the terminal stopped us for our own
		 * access to it (a report written by a background job under
		 * `stty tostop`): stop, as a shell's exec would have.  Resuming the
		 * write would only bring the signal back. */
		stop_self(sig);
	} else {
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
			arrived = sig;
			if (pid <= 0)
				pending = sig;
		}
		if (pid > 0 && si->si_code <= 0) /* sent by kill or sigqueue, not the terminal */
			kill(pid, sig);
	}
	errno = e;
}

static void save_and_install(void)
{
	struct sigaction sa;
	int i;
	if (saved)
		return;
	saved = 1;
	sigprocmask(SIG_SETMASK, NULL, &orig_mask);
	sigaction(SIGPIPE, NULL, &orig_pipe);
	sigaction(SIGCHLD, NULL, &orig_chld);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < NFWD; i++) {
		sigaction(fwd_sigs[i], NULL, &orig_fwd[i]);
		/* Ignored when we started (nohup, trap '' INT): left ignored, for
		 * us and for the program, as a shell's exec would. */
		if (orig_fwd[i].sa_handler != SIG_IGN)
			sigaction(fwd_sigs[i], &sa, NULL);
	}
	/* With SIGCHLD ignored, children are reaped unasked and wait4 would not
	 * see the status; the program gets the disposition back. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
}

/* In the child: what the tool was started with. */
static void restore_in_child(void)
{
	int i;
	for (i = 0; i < NFWD; i++)
		sigaction(fwd_sigs[i], &orig_fwd[i], NULL);
	sigaction(SIGPIPE, &orig_pipe, NULL);
	sigaction(SIGCHLD, &orig_chld, NULL);
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
}

/* A descriptor of ours at 3 or above, so it never stands in for 0, 1 or 2. */
static int high_fd(int fd)
{
	int h;
	if (fd < 0 || fd > 2)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return h;
}

/* The watcher: a process of ours outside the job (its own process group,
 * so no stop of the job stops it) that continues us once the program is no
 * longer stopped while we still are, as when a supervisor sends SIGCONT to
 * the program alone.  A stopped process cannot see that for itself. */
static pid_t start_watcher(pid_t child)
{
	pid_t me = getpid(), w = fork();
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	sigset_t none;
	int i;
	if (w != 0)
		return w;
	for (i = 0; i < NFWD; i++)
		signal(fwd_sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != me)
		_exit(0);
	for (;;) {
		char c = proc_state(child);
		if (c != 'T' && c != 't' && proc_state(me) == 'T')
			kill(me, SIGCONT);
		nanosleep(&tick, NULL);
	}
}

/* The program stopped (it stopped itself, or was sent a stop signal): stop
 * too, so that the shell above sees it stopped, as it would without us.
 * `fg` continues the whole process group, the program with it; if only the
 * program is continued, the watcher continues us. */
static void follow_stop(pid_t child, int sig)
{
	pid_t w = start_watcher(child);
	if (w > 0)
		watcher = w;
	stop_self(sig);
	if (w > 0) {
		kill(w, SIGKILL);
		while (waitpid(w, NULL, 0) < 0 && errno == EINTR)
			;
		watcher = 0;
	}
}

/* Past the deadline, the program's tree is asked to end (SIGTERM), and a
 * second later made to. */
#define GRACE_S 1.0

/* The socket's end in the program: high, where programs do not look for
 * a descriptor of their own (and not inherited by ours: CLOEXEC is off
 * only on this one). */
static void give_socket(int s)
{
	struct rlimit rl;
	char num[16];
	int lo = 3, fd;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 64)
		lo = (int)(rl.rlim_cur - 16 < 1000 ? rl.rlim_cur - 16 : 1000);
	fd = fcntl(s, F_DUPFD, lo);
	if (fd < 0)
		return;
	snprintf(num, sizeof num, "%d", fd);
	setenv("PREFAULT_REPORT_FD", num, 1);
}

static void __attribute__((noreturn)) in_child(const struct child_spec *spec, int report_fd, int sock)
{
	int src[3] = { spec->fd_in, spec->fd_out, spec->fd_err }, tmp[3], i, e;
	/* Move the caller's files out of the way first: one of them may sit on
	 * 0, 1 or 2 itself (the tool started with its stdio closed). */
	for (i = 0; i < 3; i++)
		tmp[i] = src[i] >= 0 ? fcntl(src[i], F_DUPFD_CLOEXEC, 3) : -1;
	for (i = 0; i < 3; i++)
		if (tmp[i] >= 0 && dup2(tmp[i], i) < 0)
			_exit(126);
	if (spec->in_child)
		spec->in_child(spec->arg);
	if (sock >= 0)
		give_socket(sock);
	else
		unsetenv("PREFAULT_REPORT_FD");
	/* If the tool is killed outright (SIGKILL, which it cannot pass on),
	 * the program goes with it, as it would had it been killed itself. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	restore_in_child();
	execvp(spec->argv[0], spec->argv);
	e = errno;
	write_all(report_fd, &e, sizeof e);
	fprintf(stderr, "prefault: %s: %s\n", tty_str(spec->argv[0]), strerror(e));
	fflush(stderr);
	_exit(e == ENOENT ? 127 : 126);
}

/* Until the program has exited (left a zombie: its pid cannot be reused
 * while a late signal may still be passed on to it), following its stops,
 * and stopping it at the deadline. */
static void wait_end(pid_t pid)
{
	static struct proc_list tree;
	sigset_t chld;
	double next = 0;
	int phase = 0; /* 1: asked to end, 2: made to */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		siginfo_t si;
		/* (a second at most: should another thread of ours, one a
		 * preloaded library started, take SIGCHLD, nothing hangs) */
		struct timespec ts = { 1, 0 };
		int w;
		memset(&si, 0, sizeof si);
		w = waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT);
		if (w < 0 && errno != EINTR)
			return; /* wait4 says what is wrong */
		if (w == 0 && si.si_pid == pid) {
			siginfo_t drop;
			if (si.si_code != CLD_STOPPED)
				return;
			waitid(P_PID, (id_t)pid, &drop, WSTOPPED | WNOHANG); /* consume the stop report */
			follow_stop(pid, si.si_status);
			continue;
		}
		if (deadline > 0 && phase < 2) {
			double now = now_s(), left;
			if (phase == 0 && now >= deadline) {
				timed_out = 1;
				proc_tree(pid, &tree);
				proc_list_signal(&tree, SIGTERM);
				phase = 1;
				next = now + GRACE_S;
			} else if (phase == 1 && now >= next) {
				proc_list_signal(&tree, SIGKILL);
				phase = 2;
			}
			left = (phase == 0 ? deadline : next) - now;
			if (phase < 2 && left < 1) {
				left = left < 0.001 ? 0.001 : left;
				ts.tv_sec = 0;
				ts.tv_nsec = (long)(left * 1e9);
			}
		}
		sigtimedwait(&chld, NULL, &ts); /* a child's news, a signal of ours, or the time */
	}
}

void child_set_deadline(double t) { deadline = t; }
int child_timed_out(void) { return timed_out; }

/* What came through the socket: each message is "NAME\n" and the file's
 * text; NAME is written into dir (a plain file name: no '/', no "..", and
 * only what the shim writes: *.json or *.prof).  Read once the program has
 * ended, without waiting. */
static void collect(int s, const char *dir)
{
	static char msg[1 << 18];
	for (;;) {
		ssize_t n = recv(s, msg, sizeof msg - 1, MSG_DONTWAIT);
		char *nl, *path;
		size_t len;
		int fd;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		msg[n] = '\0';
		nl = memchr(msg, '\n', (size_t)n);
		if (!nl)
			continue;
		*nl = '\0';
		len = strlen(msg);
		if (!len || strchr(msg, '/') || msg[0] == '.' ||
		    (!(len > 5 && !strcmp(msg + len - 5, ".json")) && !(len > 5 && !strcmp(msg + len - 5, ".prof"))))
			continue;
		if (asprintf(&path, "%s/%s", dir, msg) < 0)
			continue;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			write_all(fd, nl + 1, (size_t)(msg + n - (nl + 1)));
			close(fd);
		}
		free(path);
	}
}

int child_run(const struct child_spec *spec, struct child_result *r)
{
	sigset_t block, old;
	int p[2], i, e, sock[2] = { -1, -1 };
	double t0;
	pid_t pid;
	ssize_t n;
	memset(r, 0, sizeof *r);
	timed_out = 0;
	save_and_install();
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	p[0] = high_fd(p[0]);
	p[1] = high_fd(p[1]);
	if (p[0] < 0 || p[1] < 0) {
		e = errno;
		if (p[0] >= 0)
			close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
		errno = e;
		return -1;
	}
	if (spec->collect && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) == 0) {
		int big = 1 << 20; /* (the kernel caps it at rmem_max) */
		sock[0] = high_fd(sock[0]);
		sock[1] = high_fd(sock[1]);
		setsockopt(sock[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	}
	/* Held off across fork: a signal for the program must find its pid.
	 * SIGCHLD stays held until the program has ended: wait_end takes it
	 * with sigtimedwait. */
	sigemptyset(&block);
	for (i = 0; i < NFWD; i++)
		sigaddset(&block, fwd_sigs[i]);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	fflush(NULL); /* nothing buffered is written twice */
	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (sock[0] >= 0)
			close(sock[0]);
		in_child(spec, p[1], sock[1]);
	}
	e = errno;
	close(p[1]);
	if (sock[1] >= 0)
		close(sock[1]);
	if (pid < 0) {
		close(p[0]);
		if (sock[0] >= 0)
			close(sock[0]);
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = e;
		return -1;
	}
	running = pid;
	/* Only now: ignored, SIGPIPE would have been inherited through exec. */
	signal(SIGPIPE, SIG_IGN);
	block = old;
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_SETMASK, &block, NULL);
	r->pid = pid;
	/* Empty at exec (close-on-exec), or the child's errno. */
	while ((n = read(p[0], &r->exec_errno, sizeof r->exec_errno)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof r->exec_errno)
		r->exec_errno = 0;
	close(p[0]);
	wait_end(pid);
	r->wall_s = now_s() - t0;
	running = 0;
	while (wait4(pid, &r->status, 0, &r->ru) < 0)
		if (errno != EINTR) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (sock[0] >= 0)
				close(sock[0]);
			return -1;
		}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sock[0] >= 0) {
		collect(sock[0], spec->collect);
		close(sock[0]);
	}
	r->timed_out = timed_out;
	last_signal = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;
	return 0;
}

void child_exit(int code)
{
	struct sigaction sa;
	struct rlimit none = { 0, 0 };
	sigset_t one;
	int sig = last_signal;
	fflush(NULL);
	if (!sig || code != 128 + sig)
		exit(code);
	/* Die of it too, as the program did, so that whoever waits for us (a
	 * shell's loop on Ctrl-C, a Popen's returncode) sees the same death.
	 * No core of ours: the program dumped its own, if it was to. */
	setrlimit(RLIMIT_CORE, &none);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	exit(code); /* (a signal whose default is to go on) */
}

int child_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int child_take_pending_signal(void)
{
	int s = pending;
	pending = 0;
	return s;
}

int child_take_signal(void)
{
	int s = arrived;
	arrived = 0;
	pending = 0;
	return s;
}
