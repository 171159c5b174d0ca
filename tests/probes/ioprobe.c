/* ioprobe: programs that treat their file descriptors, threads and forks in
 * ways the shim must not disturb (issue 14).  Each subcommand prints
 * key=value lines.
 *
 *   fd2file PATH          close fd 2, open PATH (it gets fd 2), write one
 *                         line to it, exit 0 with it still open: fd=
 *   epipe CODE            make fd 2 a pipe whose reader is gone (SIGPIPE at
 *                         its default action), exit CODE
 *   closefork PATH        (re-executed first with fds 0 to 2 only open)
 *                         close every fd from 3 up, open PATH (fd 3), fork;
 *                         the child writes one line to fd 3 and exits 0:
 *                         fd=, child_write= (ok or the errno), child_exit=
 *   threads N             N short-lived threads, one at a time, then count
 *                         the open fds and VmSize growth: failed=, fds=,
 *                         vm_growth_kb=
 *   hold T F              keep T threads alive, then open F more fds (of
 *                         /dev/null): threads=, opened=, emfile= (1 if any
 *                         pthread_create or open failed with EMFILE)
 *   forkreuse N           map, write and unmap N 1 MiB regions; fork a child
 *                         that exits at once, and one that maps N/2 1 MiB
 *                         regions (checking they read zero) and exits
 *                         without unmapping (exit 1 if any did not):
 *                         children=, failed=
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"

static const char line[] = "data-from-the-program\n";

static int count_fds(void)
{
	int n = dir_entries("/proc/self/fd");
	return n < 0 ? n : n - 1; /* the directory's own fd */
}

static long vmsize_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char buf[256];
	long v = -1;
	if (!f)
		return -1;
	while (fgets(buf, sizeof buf, f))
		if (!strncmp(buf, "VmSize:", 7))
			v = atol(buf + 7);
	fclose(f);
	return v;
}

static int cmd_fd2file(const char *path)
{
	int fd;
	close(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf("fd=%d\n", fd);
	fflush(stdout);
	if (fd < 0 || write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
		return 1;
	return 0; /* exit with the data file still open as fd 2 */
}

static int cmd_epipe(int code)
{
	int p[2];
	signal(SIGPIPE, SIG_DFL); /* as most programs have it */
	if (pipe(p) != 0)
		return 99;
	close(p[0]); /* the reader is gone */
	dup2(p[1], 2);
	close(p[1]);
	return code;
}

static void close_from_3(void)
{
	struct rlimit rl;
	int i, max = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536)
		max = (int)rl.rlim_cur;
	for (i = 3; i < max; i++)
		close(i);
}

static int cmd_closefork(char **argv, const char *path)
{
	int fd, st;
	pid_t c;
	if (!argv[3]) {
		/* Start again with only fds 0 to 2 open, as from a login shell,
		 * so that whatever a preloaded library opens at start gets the
		 * lowest numbers, whatever the test harness had open. */
		char *args[] = { argv[0], argv[1], argv[2], "clean", NULL };
		close_from_3();
		execv("/proc/self/exe", args);
		return 126;
	}
	close_from_3(); /* closefrom(3), as daemons and shells do */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf("fd=%d\n", fd);
	fflush(stdout);
	c = fork();
	if (c == 0) {
		ssize_t n = write(fd, line, sizeof line - 1);
		if (n == (ssize_t)(sizeof line - 1))
			printf("child_write=ok\n");
		else
			printf("child_write=%s\n", n < 0 ? strerror(errno) : "short");
		exit(0);
	}
	if (c < 0 || waitpid(c, &st, 0) != c)
		return 1;
	printf("child_exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

static void *short_life(void *arg)
{
	volatile char buf[256];
	buf[0] = (char)(long)arg;
	return (void *)(long)buf[0];
}

static int cmd_threads(int n)
{
	long before = vmsize_kb();
	int i, failed = 0;
	for (i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_life, (void *)(long)i) != 0) {
			failed++;
			continue;
		}
		pthread_join(t, NULL);
	}
	printf("failed=%d fds=%d vm_growth_kb=%ld\n", failed, count_fds(), vmsize_kb() - before);
	return 0;
}

static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_done;

static void *hold_wait(void *arg)
{
	pthread_mutex_lock(&hold_mu);
	while (!hold_done)
		pthread_cond_wait(&hold_cv, &hold_mu);
	pthread_mutex_unlock(&hold_mu);
	return arg;
}

static int cmd_hold(int nt, int nf)
{
	pthread_t *t = calloc((size_t)nt + 1, sizeof *t);
	int i, made = 0, opened = 0, emfile = 0, r;
	for (i = 0; i < nt; i++) {
		r = pthread_create(&t[i], NULL, hold_wait, NULL);
		if (r != 0) {
			emfile |= r == EMFILE;
			break;
		}
		made++;
	}
	for (i = 0; i < nf; i++) {
		if (open("/dev/null", O_RDONLY) < 0) {
			emfile |= errno == EMFILE;
			break;
		}
		opened++;
	}
	printf("threads=%d opened=%d emfile=%d\n", made, opened, emfile);
	fflush(stdout);
	pthread_mutex_lock(&hold_mu);
	hold_done = 1;
	pthread_cond_broadcast(&hold_cv);
	pthread_mutex_unlock(&hold_mu);
	for (i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	free(t);
	return made == nt && opened == nf ? 0 : 1;
}

static char *map1m(void)
{
	char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int cmd_forkreuse(int n)
{
	char *v[256];
	long nonzero = 0;
	int i, st, kids = 0, failed = 0;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), k;
	pid_t c;
	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++) {
		v[i] = map1m();
		if (v[i])
			memset(v[i], 0x5a, 1 << 20);
	}
	for (i = 0; i < n; i++)
		if (v[i])
			munmap(v[i], 1 << 20);
	fflush(stdout);
	c = fork();
	if (c == 0)
		exit(0); /* inherits the unmapped regions, uses none */
	kids += c > 0;
	c = fork();
	if (c == 0) {
		for (i = 0; i < n / 2; i++) {
			char *p = map1m();
			for (k = 0; p && k < (1 << 20); k += pg)
				nonzero += p[k] != 0;
		}
		exit(nonzero ? 1 : 0); /* keeps what it mapped */
	}
	kids += c > 0;
	for (i = 0; i < kids; i++)
		if (wait(&st) > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			failed++;
	printf("children=%d failed=%d\n", kids, failed);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "fd2file"))
		return cmd_fd2file(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "epipe"))
		return cmd_epipe(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "closefork"))
		return cmd_closefork(argv, argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "threads"))
		return cmd_threads(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "hold"))
		return cmd_hold(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "forkreuse"))
		return cmd_forkreuse(atoi(argv[2]));
	fprintf(stderr, "usage: ioprobe fd2file PATH | epipe CODE | closefork PATH | threads N | hold T F | forkreuse N\n");
	return 2;
}
