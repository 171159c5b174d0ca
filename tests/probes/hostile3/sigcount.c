/* sigcount: main maps and unmaps in a loop while a timer's handler (every
 * US microseconds) maps and unmaps 1 MiB too; many land while the shim is
 * in the main loop's call (helper-32: those went uncounted in the report).
 *
 *   sigcount N US    prints maps= (the program's, handler's included) and
 *                    handler= */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>

static volatile long in_handler, in_main;

static void handler(int sig)
{
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	(void)sig;
	if (p != MAP_FAILED) {
		((char *)p)[0] = 1;
		munmap(p, 1 << 20);
	}
	in_handler++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000, i;
	int us = argc > 2 ? atoi(argv[2]) : 200;
	struct sigaction sa;
	struct itimerval it = { { 0, us }, { 0, us } }, off;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < n; i++) {
		size_t len = (size_t)65536 << (i % 3);
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			p[0] = 1;
			munmap(p, len);
		}
		in_main++;
	}
	memset(&off, 0, sizeof off);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("maps=%ld handler=%ld\n", in_main + in_handler, in_handler);
	return 0;
}
