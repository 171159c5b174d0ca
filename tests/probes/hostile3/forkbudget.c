/* N times: a child process starts a thread whose mmap is the process's
 * first prefault (it works out the budget) and forks at once; the
 * grandchild maps and populates too, and exits 0 (issue 22 #4: a fork while
 * another thread was working out the budget left the grandchild spinning
 * forever).  Prints how many grandchildren finished within 10 s each. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static pid_t grandchild;
static void timeout(int s)
{
	(void)s;
	kill(grandchild, SIGKILL); /* it hung: no process is left behind */
	_exit(2);
}
static void *first(void *a)
{
	(void)a;
	mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return NULL;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, i, ok = 0;
	for (i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0) {
			pthread_t t;
			pid_t g;
			int st;
			struct timespec a, b;
			long wait_ns = (long)(i * 7919 % 150) * 1000; /* 0 to 149 us: the first mmap is somewhere in there */
			pthread_create(&t, NULL, first, NULL);
			clock_gettime(CLOCK_MONOTONIC, &a);
			do
				clock_gettime(CLOCK_MONOTONIC, &b);
			while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < wait_ns);
			g = fork();
			if (g == 0) {
				char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				_exit(p == MAP_FAILED);
			}
			grandchild = g;
			signal(SIGALRM, timeout);
			alarm(10);
			if (waitpid(g, &st, 0) != g)
				_exit(2);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 3);
		} else {
			int st;
			waitpid(c, &st, 0);
			ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
	}
	printf("finished %d of %d\n", ok, n);
	return ok != n;
}
