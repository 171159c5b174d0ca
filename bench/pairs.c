/* pairs: malloc/free pairs on T threads beside one large block.
 *
 *   pairs T N SIZE BIG
 * mallocs BIG (a rule such as `call = malloc, size = >=4M` tracks it), then
 * T threads each do N pairs of malloc(SIZE) and free, at once.  Prints the
 * wall time per pair per thread in ns.  Before issue 18, one tracked block
 * made every free in the process take a global lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long n;
static size_t size;

static void *work(void *arg)
{
	long i;
	(void)arg;
	for (i = 0; i < n; i++) {
		void *p = malloc(size);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 2, k;
	pthread_t tid[64];
	struct timespec a, b;
	void *big;
	n = argc > 2 ? atol(argv[2]) : 10000000;
	size = argc > 3 ? (size_t)atol(argv[3]) : 64;
	big = malloc(argc > 4 ? (size_t)atol(argv[4]) : 8 << 20);
	if (t > 64)
		t = 64;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (k = 0; k < t; k++)
		pthread_create(&tid[k], NULL, work, NULL);
	for (k = 0; k < t; k++)
		pthread_join(tid[k], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	free(big);
	return 0;
}
