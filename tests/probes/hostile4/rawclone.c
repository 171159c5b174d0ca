/* Threads churn 1 MiB slices (the recycle cache's lock is taken on every call) while the main
 * thread forks with a raw clone system call (no atfork handlers run), and the child maps and
 * unmaps a slice.  A lock held by a parent thread at the clone stays held in the child. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define M (1 << 20)
static void *churn(void *a)
{
	(void)a;
	for (;;) {
		char *p = mmap(NULL, M, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p[0] = 1;
		munmap(p, M);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	for (int i = 0; i < n; i++) {
		long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		if (pid == 0) {
			char *p = mmap(NULL, M, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			p[0] = 1;
			munmap(p, M);
			syscall(SYS_exit_group, 0);
		}
		int st, waited = 0;
		while (waitpid(pid, &st, WNOHANG) == 0) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
			if (++waited == 2000) { /* 2 s */
				printf("child %d hung after clone %d\n", (int)pid, i);
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				return 1;
			}
		}
	}
	printf("%d raw clones, no hang\n", n);
	return 0;
}
