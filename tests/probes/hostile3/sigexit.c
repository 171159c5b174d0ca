/* A timer's signal handler leaves with _exit(0), the usual way to stop on
 * SIGALRM, while the main thread maps and unmaps under a background rule
 * (issue 22 #3: the handler's exit-time report waited for the background
 * queue's lock, held by the munmap it had interrupted).  Each run picks a
 * different delay; the test runs it many times. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>
static void leave(int s)
{
	(void)s;
	_exit(0);
}
int main(int argc, char **argv)
{
	struct itimerval it;
	long us = argc > 1 ? atol(argv[1]) : 3000;
	memset(&it, 0, sizeof it);
	it.it_value.tv_usec = us;
	signal(SIGALRM, leave);
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		char *p = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 8 << 20);
	}
}
