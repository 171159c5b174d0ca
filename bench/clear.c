/* clear: three ways to hand a reused region back zero-filled (issue 18).
 *
 *   clear SIZE_KIB ROUNDS TOUCH_PAGES
 * A region of SIZE is written whole once.  Then each round the program
 * "uses" it (writes one byte in each of the first TOUCH_PAGES pages: a
 * dense CPython arena touches them all) and the region is cleared for the
 * next use, one of three ways:
 *   memset   clear every page, no system call (prefault: a region last seen
 *            resident whole)
 *   mincore  ask which pages are resident, clear those (prefault: any other
 *            region)
 *   dontneed MADV_DONTNEED the whole region: one call, and the program's
 *            next touches fault the pages in again, zero-filled by the kernel
 * Prints ns per round (use plus clear) for each, interleaved ABC over the
 * rounds so that drift falls on all three alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t size = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 10, pg = (size_t)sysconf(_SC_PAGESIZE), i;
	long rounds = argc > 2 ? atol(argv[2]) : 2000, touch = argc > 3 ? atol(argv[3]) : -1, r;
	size_t pages = size / pg;
	unsigned char *vec = malloc(pages);
	char *p[3];
	double t[3] = { 0, 0, 0 };
	int m;
	if (touch < 0 || (size_t)touch > pages)
		touch = (long)pages;
	for (m = 0; m < 3; m++) {
		p[m] = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(p[m], 1, size);
	}
	for (r = 0; r < rounds; r++) {
		for (m = 0; m < 3; m++) {
			int k = (int)((m + r) % 3);
			double a = now();
			for (i = 0; i < (size_t)touch; i++)
				p[k][i * pg] = 1;
			if (k == 0) {
				memset(p[k], 0, size);
			} else if (k == 1) {
				mincore(p[k], size, vec);
				for (i = 0; i < pages; i++)
					if (vec[i] & 1)
						memset(p[k] + i * pg, 0, pg);
			} else {
				madvise(p[k], size, MADV_DONTNEED);
			}
			__asm__ volatile("" : : "r"(p[k]) : "memory");
			t[k] += now() - a;
		}
	}
	printf("region %zu KiB, %ld pages touched a round: memset %.0f ns, mincore %.0f ns, dontneed %.0f ns a round\n",
	       size >> 10, touch, t[0] / rounds, t[1] / rounds, t[2] / rounds);
	return 0;
}
