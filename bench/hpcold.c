/* hpcold: what a huge page's first touch costs here, fresh and reused.
 *
 *   hpcold [SIZE_MIB [ROUNDS [GAP_MS]]]     (64, 7, 3000)
 *   hpcold -w SIZE_MIB
 *
 * Each round, after GAP_MS of sleep: populates SIZE_MIB with small pages,
 * then with huge pages in a fresh mapping, then unmaps it and populates a
 * new one with huge pages at once (the blocks just given back), each with
 * MADV_POPULATE_WRITE, and prints the medians in ns per small page.
 *
 * Why: on a guest that hands its free 2 MiB blocks back to the host (this
 * machine: virtio-balloon free page reporting at order 9, at once), a huge
 * page the process has not used before is backed anew by the host when it
 * is first touched, while small pages come from blocks the guest kept.  The
 * gap lets the blocks go back.  -w populates SIZE_MIB with huge pages and
 * exits, timing nothing: the blocks it gives back are warm for a process
 * started just after (bench/pysides.sh's PRE, to see what huge pages do
 * where the host keeps the memory backed).  Huge pages in a short-lived process (carving,
 * issue 20; the learner's check, issue 21) are then dearer than small
 * ones, and in a process that reuses its memory, cheaper.  BENCHMARKS.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAXR 64

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static size_t hpage(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* kB of AnonHugePages in the process (smaps_rollup) */
static long huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "AnonHugePages: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* ns a small page to populate len bytes, huge pages or not; *hkb: kB of
 * them the kernel gave */
static double populate(size_t len, size_t hp, int huge, long *hkb)
{
	char *m = mmap(NULL, len + hp, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;
	double t0, t1;
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	a = (char *)(((unsigned long)m + hp - 1) & ~(unsigned long)(hp - 1));
	madvise(a, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	t0 = now_ns();
	if (madvise(a, len, MADV_POPULATE_WRITE) != 0) {
		perror("madvise(MADV_POPULATE_WRITE)");
		exit(1);
	}
	t1 = now_ns();
	*hkb = huge_kb();
	munmap(m, len + hp);
	return (t1 - t0) / (double)(len / (size_t)sysconf(_SC_PAGESIZE));
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	long kb;
	if (argc > 2 && !strcmp(argv[1], "-w")) {
		size_t hp = hpage(), n = (size_t)atol(argv[2]) << 20;
		if (hp)
			populate((n + hp - 1) / hp * hp, hp, 1, &kb);
		return 0;
	}
	size_t len = (size_t)atol(argc > 1 ? argv[1] : "64") << 20, hp = hpage();
	int rounds = argc > 2 ? atoi(argv[2]) : 7, gap = argc > 3 ? atoi(argv[3]) : 3000, r;
	double small[MAXR], fresh[MAXR], again[MAXR];
	long k1 = 0, k2 = 0, k0 = 0;
	if (!hp) {
		printf("hpcold: no transparent huge pages here\n");
		return 0;
	}
	if (rounds > MAXR)
		rounds = MAXR;
	len = (len + hp - 1) / hp * hp;
	for (r = 0; r < rounds; r++) {
		usleep((useconds_t)gap * 1000);
		small[r] = populate(len, hp, 0, &k0);
		fresh[r] = populate(len, hp, 1, &k1);
		again[r] = populate(len, hp, 1, &k2);
		printf("hpcold: round %d: small %.0f, huge fresh %.0f, huge again at once %.0f ns a page (huge pages %ld and %ld kB)\n",
		       r + 1, small[r], fresh[r], again[r], k1, k2);
	}
	printf("hpcold: %zu MiB, %d rounds %d ms apart, ns a %ld-byte page, medians: small %.0f, huge fresh %.0f, huge again at once %.0f\n",
	       len >> 20, rounds, gap, sysconf(_SC_PAGESIZE), median(small, rounds), median(fresh, rounds), median(again, rounds));
	return 0;
}
