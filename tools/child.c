/* child.c: see child.h. */
#include "child.h"
#include "fmt.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int fwd_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NFWD (int)(sizeof fwd_sigs / sizeof fwd_sigs[0])

/* What the tool was started with, restored in every child before exec. */
static int saved;
static struct sigaction orig_fwd[NFWD], orig_pipe, orig_chld;
static sigset_t orig_mask;

static volatile sig_atomic_t running; /* the child's pid while it runs, else 0 */
static volatile sig_atomic_t pending;
static volatile sig_atomic_t arrived; /* any of the four, program running or not */

static void forward(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	pid_t pid = (pid_t)running;
	(void)uc;
	arrived = sig;
	if (pid <= 0)
		pending = sig;
	else if (si->si_code <= 0) /* sent by kill or sigqueue, not the terminal */
		kill(pid, sig);
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
	for (i = 0; i < NFWD; i++)
		sigaction(fwd_sigs[i], &sa, &orig_fwd[i]);
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void __attribute__((noreturn)) in_child(const struct child_spec *spec, int report_fd)
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
	restore_in_child();
	execvp(spec->argv[0], spec->argv);
	e = errno;
	write_all(report_fd, &e, sizeof e);
	fprintf(stderr, "prefault: %s: %s\n", spec->argv[0], strerror(e));
	fflush(stderr);
	_exit(e == ENOENT ? 127 : 126);
}

int child_run(const struct child_spec *spec, struct child_result *r)
{
	sigset_t block, old;
	int p[2], i, e;
	double t0;
	pid_t pid;
	ssize_t n;
	memset(r, 0, sizeof *r);
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
	/* Held off across fork: a signal for the program must find its pid. */
	sigemptyset(&block);
	for (i = 0; i < NFWD; i++)
		sigaddset(&block, fwd_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	fflush(NULL); /* nothing buffered is written twice */
	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		in_child(spec, p[1]);
	}
	e = errno;
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = e;
		return -1;
	}
	running = pid;
	/* Only now: ignored, SIGPIPE would have been inherited through exec. */
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_SETMASK, &old, NULL);
	r->pid = pid;
	/* Empty at exec (close-on-exec), or the child's errno. */
	while ((n = read(p[0], &r->exec_errno, sizeof r->exec_errno)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof r->exec_errno)
		r->exec_errno = 0;
	close(p[0]);
	/* Wait for the end but leave the zombie: its pid cannot be reused while
	 * a late signal may still be passed on to it.  Then reap. */
	for (;;) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0)
			break;
		if (errno != EINTR)
			break; /* wait4 below says what is wrong */
	}
	r->wall_s = now_s() - t0;
	running = 0;
	while (wait4(pid, &r->status, 0, &r->ru) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
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
