/* overhead: the shim's cost on a program it does not act on.
 *
 * The loop of issue 2: mmap 64 KiB, touch every page, munmap, plus a small
 * malloc/free, ITER times.  Prints ns per iteration.  bench/overhead.sh runs
 * it with and without the shim (a policy whose rules match nothing),
 * alternating, and reports the median ratio.
 *
 *   overhead [ITER] [touch|calls|malloc]
 * "calls" skips the page touches (and so the faults), leaving only the four
 * intercepted calls per iteration; "malloc" is malloc(48)/free alone, no
 * system call at all: the wrappers' own cost in absolute terms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long iter = argc > 1 ? atol(argv[1]) : 20000, i;
	int touch = !(argc > 2 && argv[2][0] == 'c');
	int maponly = !(argc > 2 && argv[2][0] == 'm');
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 64 << 10, k;
	struct timespec a, b;
	long warm = iter / 10;
	/* A tenth of the iterations untimed: the first ones pay for cold
	 * page tables and per-CPU page lists, in both runs alike. */
	for (i = -warm; i < iter; i++) {
		if (i == 0)
			clock_gettime(CLOCK_MONOTONIC, &a);
		char *m;
		if (maponly) {
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			for (k = 0; touch && k < len; k += pg)
				p[k] = (char)k;
			munmap(p, len);
		}
		m = malloc(48);
		m[0] = 1;
		free(m);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (iter <= 0)
		return 1;
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iter);
	return 0;
}
