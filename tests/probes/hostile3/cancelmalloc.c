/* A thread with a pending cancellation mallocs 4 MiB (a populate rule
 * matches it: the first prefault works out the budget), then reaches a
 * cancellation point; another thread mallocs 4 MiB after it (issue 22 #2:
 * the budget's file reads were cancellation points, malloc never returned
 * and the next thread spun forever).  Then a thread in asynchronous
 * cancellation mode maps, unmaps, mallocs and frees in a loop and is
 * cancelled, twenty times: the shim must never be left holding a lock. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static void *pending(void *a)
{
	char *p;
	(void)a;
	pthread_cancel(pthread_self());
	p = malloc(4 << 20);
	printf("malloc returned %s\n", p ? "a block" : "NULL");
	fflush(stdout);
	pthread_testcancel();
	return NULL;
}
static void *later(void *a)
{
	char *p = malloc(4 << 20);
	(void)a;
	if (p)
		memset(p, 1, 4 << 20);
	printf("second malloc %s\n", p ? "ok" : "failed");
	free(p);
	return NULL;
}
static void *async_loop(void *a)
{
	(void)a;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (;;) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *b = malloc(4 << 20);
		if (m != MAP_FAILED) {
			m[0] = 1;
			munmap(m, 1 << 20);
		}
		free(b);
	}
	return NULL;
}
int main(void)
{
	pthread_t t;
	int i;
	void *r;
	pthread_create(&t, NULL, pending, NULL);
	pthread_join(t, &r);
	printf("first thread %s\n", r == PTHREAD_CANCELED ? "cancelled" : "returned");
	pthread_create(&t, NULL, later, NULL);
	pthread_join(t, NULL);
	for (i = 0; i < 20; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 + i * 137 * 1000 };
		pthread_create(&t, NULL, async_loop, NULL);
		nanosleep(&ts, NULL);
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	later(NULL);
	printf("async cancellations: 20\n");
	return 0;
}
