/* mincore: what asking the kernel which pages are resident costs here.
 *
 *   mincore SIZE_KIB [N]
 * maps SIZE_KIB, writes its first page, then times N mincore calls over it,
 * N getppid calls (a system call that does nothing), and N cycles of the
 * kernel's own mmap, one write, munmap of the same size.  Prints ns per
 * call of each.  recycle asks mincore once for each region it reuses (or
 * once for up to four kept side by side: shim/recycle.c), so this is what
 * its cycle costs against the kernel's (BENCHMARKS.md, issue 18).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)atol(argc > 1 ? argv[1] : "256") << 10;
	long n = argc > 2 ? atol(argv[2]) : 100000, i;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(len / pg + 1);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0, t1, t2, t3;
	if (p == MAP_FAILED || !vec || len < pg)
		return 1;
	p[0] = 1;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		mincore(p, len, vec);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		getppid();
	t2 = now_ns();
	for (i = 0; i < n; i++) {
		char *q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			return 1;
		q[0] = 1;
		munmap(q, len);
	}
	t3 = now_ns();
	printf("size_kib=%zu mincore_ns=%.0f getppid_ns=%.0f kernel_cycle_ns=%.0f\n", len >> 10, (t1 - t0) / n,
	       (t2 - t1) / n, (t3 - t2) / n);
	return 0;
}
