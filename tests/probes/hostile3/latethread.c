/* latethread: a thread whose first call of mmap comes after the shim's
 * thread-exit destructor can run: in the last round of the program's own
 * pthread key destructors (one that sets its key again, to run last, as
 * libraries do), or in a signal handler that lands while the thread exits.
 * Then threads that reuse its stack (glibc's cache) map and unmap too.
 *
 * The shim kept a per-thread block of counts in each thread's TLS, listed
 * for the report, and unlisted by a destructor that, here, never ran: the
 * next thread on the same stack listed the same block again (a cycle), and
 * the report at exit looped for ever (or read a stack unmapped meanwhile:
 * a crash, 1 run in 8 of a program whose SIGALRM handler maps).
 *
 *   latethread N     N rounds of such a thread and one after it; prints
 *                    maps= (the calls of mmap the program made), exits 0
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static pthread_key_t key;
static long maps;

static void map_one(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		__atomic_add_fetch(&maps, 1, __ATOMIC_RELAXED);
		munmap(p, 4096);
	}
}

static void last(void *v)
{
	long round = (long)v;
	if (round < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(key, (void *)(round + 1)); /* run again, after the others */
		return;
	}
	map_one(); /* the thread's first call of the shim's: no round after this one */
}

static void *late(void *arg)
{
	pthread_setspecific(key, (void *)1L);
	return arg;
}

static void *plain(void *arg)
{
	map_one();
	return arg;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t;
	if (pthread_key_create(&key, last) != 0)
		return 1;
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, late, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (pthread_create(&t, NULL, plain, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	printf("maps=%ld\n", maps);
	return 0;
}
