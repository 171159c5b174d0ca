/* scale: the cost of one mapping call with many mappings live (issue 14 #31).
 *
 *   scale LIVE ITER [SIZE]
 * Maps LIVE regions of 16 KiB and keeps them (alternately read-write and
 * read-only, so the kernel cannot merge them into a few VMAs), then times
 * ITER rounds of mmap(SIZE, 16 KiB by default) + munmap of one more
 * read-write region.  Prints ns per round and the VMA count.  Under a
 * policy that populates 16 KiB mappings, every live region is tracked by
 * the shim; a timed 16 KiB region is tracked too (added, then removed),
 * one of another size is only looked up at munmap.  bench/scale.sh runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;
	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	long live = argc > 1 ? atol(argv[1]) : 1000, iter = argc > 2 ? atol(argv[2]) : 20000, i;
	size_t len = 16 << 10, tlen = argc > 3 ? (size_t)atol(argv[3]) << 10 : len;
	double t0, t;
	for (i = 0; i < live; i++) {
		void *p = mmap(NULL, len, PROT_READ | (i & 1 ? 0 : PROT_WRITE), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "scale: mmap %ld failed (vm.max_map_count?)\n", i);
			return 1;
		}
	}
	for (i = 0; i < iter / 10; i++) { /* warm up */
		void *p = mmap(NULL, tlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, tlen);
	}
	t0 = now();
	for (i = 0; i < iter; i++) {
		void *p = mmap(NULL, tlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, tlen);
	}
	t = now() - t0;
	printf("live=%ld ns_per_call_pair=%.0f vmas=%ld\n", live, t / iter, vmas());
	return 0;
}
