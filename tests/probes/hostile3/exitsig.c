/* exitsig: threads, each armed with a one-shot timer aimed at itself that
 * fires while it exits (in its destructors and after them), whose SIGUSR1
 * handler (fork) forks once, the child leaving with _exit(0), the pattern
 * of a crash or diagnostic handler, or (map) maps and unmaps 64 KiB
 * (helper-32: the shim's thread-exit destructor held its counts' lock with
 * no guard, and fork's handlers waited for it, 8 runs of 8; the handler's
 * maps counted in a block being folded went missing).
 *
 *   exitsig fork|map N NS   N threads, timers within 200 + NS ns; prints
 *                           forks= and maps= (what the program made)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static __thread volatile int exiting;
static int do_fork;
static long forks, maps, interval_ns;

static void map_one(void)
{
	void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		__atomic_add_fetch(&maps, 1, __ATOMIC_RELAXED);
		munmap(p, 65536);
	}
}

static void handler(int sig)
{
	pid_t p;
	(void)sig;
	if (!exiting)
		return;
	exiting = 0;
	if (!do_fork) {
		map_one();
		return;
	}
	if ((p = fork()) == 0)
		_exit(0);
	if (p > 0) {
		waitpid(p, NULL, 0);
		__atomic_add_fetch(&forks, 1, __ATOMIC_RELAXED);
	}
}

static void *thread(void *arg)
{
	timer_t *t = arg;
	struct sigevent ev;
	struct itimerspec it;
	map_one();
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, t) != 0)
		return NULL;
	memset(&it, 0, sizeof it);
	it.it_value.tv_nsec = 200 + rand() % interval_ns;
	exiting = 1;
	timer_settime(*t, 0, &it, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 3000, i;
	struct sigaction sa;
	do_fork = argc > 1 && !strcmp(argv[1], "fork");
	interval_ns = argc > 3 ? atol(argv[3]) : 20000;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < n; i++) {
		pthread_t th;
		timer_t t;
		if (pthread_create(&th, NULL, thread, &t) != 0 || pthread_join(th, NULL) != 0)
			return 1;
		timer_delete(t);
	}
	printf("forks=%ld maps=%ld\n", forks, maps);
	return 0;
}
