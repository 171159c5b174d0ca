/* A program that forks from a signal handler (a crash reporter, a watchdog
 * taking a snapshot) while its main loop maps and unmaps memory.  fork is
 * async-signal-safe; mmap and munmap hold no lock in libc. */
#define _GNU_SOURCE
#include <stdio.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
static volatile int forks;
static void on_alarm(int s)
{
	(void)s;
	pid_t c = fork();
	if (c == 0) _exit(0);
	if (c > 0) waitpid(c, NULL, 0);
	/* (the timer stops itself at 300: on a loaded machine a handler slower
	 * than its 2 ms period runs back to back and the main loop never gets
	 * to see the count, with or without the shim: only sooner with it, as
	 * its fork costs page faults more) */
	if (++forks >= 300)
		setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
}
int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; forks < 300; i++) {
		void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, 1 << 20);
	}
	printf("forks %d\n", forks);
	return 0;
}
