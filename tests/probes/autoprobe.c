/* autoprobe: programs whose memory use the learner (PREFAULT_POLICY=auto)
 * should recognise, each from its own call site, printing what the kernel
 * says happened (getrusage, mincore, VmHWM):
 *
 *   churn N SIZE        N times: mmap SIZE, write every page, munmap;
 *                       late_faults= the process's faults over the second
 *                       half of the loop (after warm-up)
 *   sparse N SIZE STRIDE [vary]  N times: mmap SIZE, write every STRIDE-th
 *                       page, munmap (vary: SIZE plus i pages the i-th time,
 *                       never one length twice: so not churn);
 *                       populated= mappings that came back from mmap with
 *                       any page resident, vmhwm_kb=
 *   turn N1 N2 SIZE     N1 dense then N2 sparse (one page in 100) mappings
 *                       from one site, never of one length twice (SIZE plus
 *                       i pages the i-th time: so not churn), each written,
 *                       then unmapped; dense_populated= of the last 8 dense
 *                       ones, how many came back resident from mmap,
 *                       late_populated= the same of the last 20 sparse ones
 *   sizes ROUNDS N MAX [THREADS]  a 32 MiB working set, then ROUNDS times
 *                       through N lengths, MAX, MAX/2, MAX/4, ... (each its
 *                       own size class, each churning): mmap, write every
 *                       page, munmap (in THREADS threads at once, each the
 *                       same: their keeps and the learner's trims race);
 *                       vmhwm_kb=
 *   fill SIZE MS [malloc|mmap [US]]  map SIZE (or malloc it), work MS
 *                       ms, then write every page from the front (one
 *                       every US microseconds if given, so that the
 *                       learner's helpers keep pace however loaded the
 *                       machine); fill_faults= this
 *                       thread's faults in the fill; mapping=B,A: the
 *                       mapping the buffer lies in starts B bytes before
 *                       it and ends A after it (as without the shim, unless
 *                       something split it)
 *   ends SIZE FRONT BACK US  map SIZE, write FRONT bytes from the front,
 *                       then BACK bytes from the end down, one page every
 *                       US microseconds both ways (as sort fills its
 *                       buffer: text first, its line table from the end;
 *                       paced, so that the learner's looks see the front
 *                       move however loaded the machine); back_faults=
 *                       this thread's faults in the back
 *   part SIZE FILL US   map SIZE, write FILL bytes from the front, one page
 *                       every US microseconds, then stop for 400 ms (what
 *                       the learner queued ahead lands); vmhwm_kb=
 *   expire              a 32 MiB working set and a 64 MiB mapping with
 *                       1 MiB of it written (site A); for 2 s, 16 1 MiB
 *                       mappings written whole and unmapped (site B: kept);
 *                       then A's mapping unmapped and at once eight 3 MiB
 *                       ones mapped (site C, too small to watch), then
 *                       written whole (A's untouched part had long stopped
 *                       counting as coming: taken off again, C went
 *                       uncounted, and what B kept stayed); rounds= of B,
 *                       late_round_faults= B's faults a round in its last
 *                       0.4 s (A's untouched part counts as coming for 0.5
 *                       to 1 s: what is kept makes room for it meanwhile),
 *                       vmhwm_kb=
 *   refill [malloc]     a 32 MiB working set and a 64 MiB buffer written
 *                       whole (site A); for 2 s, 16 1 MiB mappings
 *                       written whole and unmapped (site B: kept); then the
 *                       buffer unmapped, a second one (site A2) mapped and
 *                       written whole, and B's churn for 0.4 s more (as a
 *                       program that reads one file after another);
 *                       steady_faults= and after_faults=, B's faults per
 *                       round in the last 0.4 s before and in that 0.4 s,
 *                       first_after= those of its first round
 *                       (each round maps 256 KiB and more anew, too: the
 *                       learner weighs its budget then; the first buffer, touched whole, stops counting as
 *                       coming; taken for coming again when RSS fell at its
 *                       unmap, B's cache closed until that went); malloc:
 *                       the two buffers malloc'd and freed (glibc maps and
 *                       unmaps them itself)
 *   late MS             a 32 MiB working set; for 1.5 s, site B's churn
 *                       as in expire (kept); then eight 3 MiB mappings
 *                       (site C, too small to watch), B's churn for MS ms
 *                       more, and C written whole, with no call between
 *                       (what B kept meanwhile was still there when C's
 *                       pages came, and nothing looked, until room was
 *                       made at each look for what counted as coming for
 *                       10 ms: BENCHMARKS.md "touched later"); vmhwm_kb=
 *   idle MS             site B's churn (kept) for 0.5 s, then asleep MS
 *                       ms; threads= at the end (the learner's guard:
 *                       tests/auto.bats)
 *   grow HOW [MIB [paced]]
 *                       a 32 MiB working set; for 1.5 s, site B's churn
 *                       as in expire (kept); then 24 MiB (MIB) more touched with
 *                       no mmap or munmap (paced: 256 KiB at a time, 0.5 ms
 *                       apart, at most half a MiB a ms: the growth the
 *                       default budget's looks keep up with; else as fast
 *                       as pages fault), and grow_ms= what it took,
 *                       HOW: sbrk (the heap), mprotect
 *                       (a PROT_NONE reserve made at the start, opened),
 *                       old (a mapping made at the start, untouched until
 *                       now), fork (the working set cut to 8 MiB first, a
 *                       child then mallocs and writes it: child_vmhwm_kb=
 *                       the child's); vmhwm_kb= (README, "Bounded": what
 *                       the default budget cannot see, and hard)
 *   strided             a 64 MiB heap (sbrk, written), then a 64 MiB
 *                       mapping filled 1 MiB from the front, slowly (the
 *                       learner advises huge pages), and after 0.3 s one
 *                       byte written every 2 MiB of the rest; vmhwm_kb=
 *                       (helper-27's hs: advised whole, each byte was a
 *                       huge page)
 *   moved HOW           a 64 MiB heap (sbrk, written), then an 8 MiB
 *                       buffer filled 2 MiB from the front, slowly (the
 *                       learner advises huge pages), grown to 256 MiB
 *                       (HOW: mmap, by mremap; malloc, by realloc) and a
 *                       byte written every 2 MiB of what it gained;
 *                       moved=ok (or the errno) intact= (the front's bytes
 *                       as written) vmhwm_kb=
 *   arenas ROUNDS [grow]  a 32 MiB working set, then ROUNDS rounds of 16
 *                       1 MiB mappings from one site written whole and
 *                       unmapped (CPython's arenas: hard carves them);
 *                       late_faults= this thread's faults over the second
 *                       half of the rounds; grow: then one more from the
 *                       site, grown by mremap to 256 MiB and a byte written
 *                       every 2 MiB of what it gained (a carved slice's
 *                       advice must not go with it), moved=ok; vmhwm_kb=
 *   shrunk N            N 1 MiB mappings written and unmapped, twice (the
 *                       learner keeps some: a peak of N MiB, then little),
 *                       then a fork: child_vmhwm_kb= the child's
 *
 * Sizes take K, M, G suffixes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "probe.h"

static size_t pg;

static long faults_of(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/* The mapping of /proc/self/maps that p lies in, as "B,A": how far it
 * starts before p and ends after p+n (-1,-1 if none). */
static void mapping_of(const char *p, size_t n, char *out, size_t cap)
{
	char line[512];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	snprintf(out, cap, "-1,-1");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= (unsigned long)p && hi > (unsigned long)p)
			snprintf(out, cap, "%lu,%ld", (unsigned long)p - lo, (long)(hi - (unsigned long)(p + n)));
	fclose(f);
}

/* Any page of [p, p+n) resident? */
static int any_resident(char *p, size_t n)
{
	static unsigned char vec[1 << 16];
	size_t pages = n / pg, i;
	if (pages > sizeof vec)
		pages = sizeof vec;
	if (mincore(p, pages * pg, vec) != 0)
		return 0;
	for (i = 0; i < pages; i++)
		if (vec[i] & 1)
			return 1;
	return 0;
}

struct sizes {
	long rounds, n;
	size_t max;
};

static void write_pages(char *p, size_t n, size_t stride);

static void *sizes_loop(void *arg)
{
	const struct sizes *z = arg;
	long r, k;
	for (r = 0; r < z->rounds; r++)
		for (k = 0; k < z->n; k++) {
			size_t len = ((z->max >> k) + pg - 1) & ~(pg - 1);
			char *p = probe_map(len);
			write_pages(p, len, 1);
			munmap(p, len);
		}
	return NULL;
}

static void write_pages(char *p, size_t n, size_t stride)
{
	size_t i;
	for (i = 0; i < n; i += stride * pg)
		p[i] = 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Write a byte at q, then wait ms (busy, as a program filling at that pace). */
static void write_paced(char *q, double ms)
{
	double t;
	*q = 1;
	for (t = now_ms(); now_ms() < t + ms;)
		;
}

/* 16 mappings of one bytes from one call site, written whole, then
 * unmapped (expire's and refill's site B), all but the first if keep is
 * given (it goes there).  Nonzero if an mmap failed. */
static __attribute__((noinline)) int round16_keep(size_t one, char **keep)
{
	char *b[16];
	int k;
	for (k = 0; k < 16; k++) {
		b[k] = mmap(NULL, one, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b[k] == MAP_FAILED)
			return 1;
		write_pages(b[k], one, 1);
	}
	for (k = keep ? 1 : 0; k < 16; k++)
		munmap(b[k], one);
	if (keep)
		*keep = b[0];
	return 0;
}
static int round16(size_t one) { return round16_keep(one, NULL); }

static long refill_n;
/* refill: for MS ms, rounds of 16 mappings of one bytes written whole and
 * unmapped; into *faults and *rounds, those of the last LAST ms, and into
 * *first the faults of the first round of those.  Nonzero if an mmap
 * failed. */
static int refill_churn(size_t one, double ms, double last, long *faults, long *rounds, long *first)
{
	double end = now_ms() + ms;
	while (now_ms() < end) {
		int counted = end - now_ms() <= last;
		long f0;
		/* (and one mapping anew a round, never of one length twice, as a
		 * program maps besides: the learner looks at its budget then) */
		size_t dl = (256u << 10) + (size_t)(++refill_n % 4096) * pg;
		char *d = mmap(NULL, dl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (d == MAP_FAILED)
			return 1;
		write_pages(d, dl, 1);
		munmap(d, dl);
		f0 = faults_of(RUSAGE_THREAD);
		if (round16(one))
			return 1;
		if (counted) {
			if (!*rounds)
				*first = faults_of(RUSAGE_THREAD) - f0;
			*faults += faults_of(RUSAGE_THREAD) - f0;
			(*rounds)++;
		}
		usleep(20 * 1000); /* (a look at the next call) */
	}
	return 0;
}

int main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	if (argc >= 4 && !strcmp(argv[1], "churn")) {
		long n = atol(argv[2]), i, f = 0;
		size_t size = parse_size(argv[3]);
		for (i = 0; i < n; i++) {
			char *p;
			if (i == n / 2)
				f = faults_of(RUSAGE_SELF);
			p = probe_map(size);
			write_pages(p, size, 1);
			munmap(p, size);
		}
		printf("late_faults=%ld\n", faults_of(RUSAGE_SELF) - f);
	} else if (argc >= 5 && !strcmp(argv[1], "sparse")) {
		long n = atol(argv[2]), i, populated = 0;
		size_t size = parse_size(argv[3]), stride = (size_t)atol(argv[4]);
		int vary = argc >= 6 && !strcmp(argv[5], "vary");
		for (i = 0; i < n; i++) {
			size_t len = size + (vary ? (size_t)(i + 1) * pg : 0);
			char *p = probe_map(len);
			populated += any_resident(p, len);
			write_pages(p, len, stride);
			munmap(p, len);
		}
		printf("populated=%ld vmhwm_kb=%ld\n", populated, status_kb("VmHWM:"));
	} else if (argc >= 5 && !strcmp(argv[1], "turn")) {
		long n1 = atol(argv[2]), n2 = atol(argv[3]), i, dense = 0, late = 0;
		size_t size = parse_size(argv[4]);
		for (i = 0; i < n1 + n2; i++) {
			size_t len = size + (size_t)(i + 1) * pg;
			char *p = probe_map(len);
			int res = any_resident(p, len);
			if (i < n1 && i >= n1 - 8)
				dense += res;
			if (i >= n1 + n2 - 20)
				late += res;
			write_pages(p, len, i < n1 ? 1 : 100);
			munmap(p, len);
		}
		printf("dense_populated=%ld late_populated=%ld\n", dense, late);
	} else if (argc >= 5 && !strcmp(argv[1], "sizes")) {
		struct sizes z = { atol(argv[2]), atol(argv[3]), parse_size(argv[4]) };
		long nt = argc >= 6 ? atol(argv[5]) : 1, t;
		size_t work = 32u << 20;
		pthread_t th[16];
		char *w = probe_map(work);
		write_pages(w, work, 1);
		if (nt < 1 || nt > 16) {
			fprintf(stderr, "autoprobe: sizes: 1 to 16 threads\n");
			return 2;
		}
		for (t = 1; t < nt; t++)
			if (pthread_create(&th[t], NULL, sizes_loop, &z) != 0) {
				fprintf(stderr, "autoprobe: sizes: no thread\n");
				return 1;
			}
		sizes_loop(&z);
		for (t = 1; t < nt; t++)
			pthread_join(th[t], NULL);
		printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
		munmap(w, work);
	} else if (argc >= 4 && !strcmp(argv[1], "fill")) {
		size_t size = parse_size(argv[2]);
		double work = atof(argv[3]), t0;
		double pace = argc >= 6 ? atof(argv[5]) / 1000 : 0;
		int use_malloc = argc >= 5 && !strcmp(argv[4], "malloc");
		volatile unsigned long x = 0;
		char *p = use_malloc ? malloc(size) : probe_map(size), where[64];
		long f;
		unsigned long i;
		if (!p)
			return 1;
		t0 = now_ms();
		while (now_ms() < t0 + work)
			for (i = 0; i < 1000; i++)
				x += i * x + 1;
		f = faults_of(RUSAGE_THREAD);
		if (pace > 0)
			for (i = 0; i < size; i += pg)
				write_paced(p + i, pace);
		else
			write_pages(p, size, 1);
		f = faults_of(RUSAGE_THREAD) - f;
		mapping_of(p, size, where, sizeof where);
		printf("fill_faults=%ld mapping=%s\n", f, where);
	} else if (argc >= 6 && !strcmp(argv[1], "ends")) {
		size_t size = parse_size(argv[2]), front = parse_size(argv[3]), back = parse_size(argv[4]), i;
		double us = atof(argv[5]) / 1000;
		char *p = probe_map(size);
		long f;
		for (i = 0; i < front; i += pg)
			write_paced(p + i, us);
		f = faults_of(RUSAGE_THREAD);
		for (i = pg; i <= back; i += pg)
			write_paced(p + size - i, us);
		printf("back_faults=%ld\n", faults_of(RUSAGE_THREAD) - f);
	} else if (argc >= 5 && !strcmp(argv[1], "part")) {
		size_t size = parse_size(argv[2]), fill = parse_size(argv[3]), i;
		double us = atof(argv[4]) / 1000;
		char *p = probe_map(size);
		for (i = 0; i < fill; i += pg)
			write_paced(p + i, us);
		usleep(400 * 1000);
		printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	} else if (argc >= 2 && !strcmp(argv[1], "expire")) {
		size_t work = 32u << 20, big = 64u << 20, one = 1u << 20, part = 3u << 20;
		double end;
		char *b[16], *c[8], *w = probe_map(work), *a;
		int k;
		long rounds = 0, late = 0, late_f = 0;
		write_pages(w, work, 1);
		a = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED)
			return 1;
		write_pages(a, one, 1);
		/* (A stops counting as coming 0.5 to 1 s after it is mapped; the
		 * late rounds, the last 0.4 s, begin 0.6 s after that: with 0.1 s,
		 * a loaded machine's rounds were still in it, CI of df86b2e under
		 * UBSan while a tester ran beside) */
		for (end = now_ms() + 2000; now_ms() < end;) {
			int counted = end - now_ms() <= 400;
			long f0 = faults_of(RUSAGE_THREAD);
			if (round16(one))
				return 1;
			if (counted) {
				late_f += faults_of(RUSAGE_THREAD) - f0;
				late++;
			}
			usleep(20 * 1000); /* (a look at the next call) */
			rounds++;
		}
		/* right after a look (at B's unmap), A goes and C comes */
		b[0] = mmap(NULL, one, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b[0] == MAP_FAILED)
			return 1;
		munmap(b[0], one);
		munmap(a, big);
		for (k = 0; k < 8; k++) {
			c[k] = mmap(NULL, part, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (c[k] == MAP_FAILED)
				return 1;
		}
		for (k = 0; k < 8; k++)
			write_pages(c[k], part, 1);
		printf("rounds=%ld late_round_faults=%ld vmhwm_kb=%ld\n", rounds, late ? late_f / late : -1, status_kb("VmHWM:"));
	} else if (argc >= 2 && !strcmp(argv[1], "refill")) {
		size_t work = 32u << 20, big = 64u << 20, one = 1u << 20;
		char *w = probe_map(work), *a, *a2;
		long steady = 0, after = 0, n_steady = 0, n_after = 0, first = -1, unused;
		int heap = argc >= 3 && !strcmp(argv[2], "malloc");
		write_pages(w, work, 1);
		a = heap ? malloc(big) : mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!a || a == MAP_FAILED)
			return 1;
		write_pages(a, big, 1);
		if (refill_churn(one, 2000, 400, &steady, &n_steady, &unused))
			return 1;
		if (heap)
			free(a);
		else
			munmap(a, big);
		a2 = heap ? malloc(big) : mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!a2 || a2 == MAP_FAILED)
			return 1;
		write_pages(a2, big, 1);
		if (refill_churn(one, 400, 400, &after, &n_after, &first))
			return 1;
		printf("steady_faults=%ld after_faults=%ld first_after=%ld rounds=%ld\n", n_steady ? steady / n_steady : -1,
		       n_after ? after / n_after : -1, first, n_after);
	} else if (argc >= 3 && !strcmp(argv[1], "late")) {
		size_t work = 32u << 20, one = 1u << 20, part = 3u << 20;
		char *c[8], *w = probe_map(work);
		long unused = 0, n = 0, first;
		int k;
		write_pages(w, work, 1);
		if (refill_churn(one, 1500, 0, &unused, &n, &first))
			return 1;
		for (k = 0; k < 8; k++)
			if ((c[k] = mmap(NULL, part, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
				return 1;
		if (refill_churn(one, atof(argv[2]), 0, &unused, &n, &first))
			return 1;
		for (k = 0; k < 8; k++)
			write_pages(c[k], part, 1);
		printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	} else if (argc >= 3 && !strcmp(argv[1], "idle")) {
		long unused = 0, n = 0, first;
		if (refill_churn(1u << 20, 500, 0, &unused, &n, &first))
			return 1;
		usleep((useconds_t)(atof(argv[2]) * 1000));
		printf("threads=%d\n", dir_entries("/proc/self/task"));
	} else if (argc >= 3 && !strcmp(argv[1], "grow")) {
		size_t work = 32u << 20, one = 1u << 20, more = (argc >= 4 ? (size_t)atoi(argv[3]) : 24u) << 20;
		const char *how = argv[2];
		char *w = probe_map(work), *r = NULL;
		long unused = 0, n = 0, first;
		write_pages(w, work, 1);
		if (!strcmp(how, "mprotect"))
			r = mmap(NULL, more, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		else if (!strcmp(how, "old"))
			r = probe_map(more);
		if (r == MAP_FAILED)
			return 1;
		if (refill_churn(one, 1500, 0, &unused, &n, &first))
			return 1;
		if (!strcmp(how, "sbrk")) {
			if ((r = sbrk((intptr_t)more)) == (void *)-1)
				return 1;
		} else if (!strcmp(how, "mprotect")) {
			if (mprotect(r, more, PROT_READ | PROT_WRITE))
				return 1;
		} else if (!strcmp(how, "fork")) {
			pid_t c;
			int st;
			munmap(w + (8u << 20), work - (8u << 20));
			if (refill_churn(one, 100, 0, &unused, &n, &first))
				return 1;
			fflush(stdout);
			if ((c = fork()) < 0)
				return 1;
			if (!c) {
				if (!(r = malloc(more)))
					_exit(1);
				write_pages(r, more, 1);
				printf("child_vmhwm_kb=%ld\n", status_kb("VmHWM:"));
				fflush(stdout);
				_exit(0);
			}
			if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
				return 1;
		} else if (strcmp(how, "old")) {
			return 2;
		}
		if (r) {
			double t = now_ms();
			size_t at, step = argc >= 5 && !strcmp(argv[4], "paced") ? 256u << 10 : more;
			for (at = 0; at < more; at += step) {
				write_pages(r + at, more - at < step ? more - at : step, 1);
				if (step < more)
					usleep(500);
			}
			printf("grow_ms=%.3f ", now_ms() - t);
		}
		printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	} else if (argc >= 2 && !strcmp(argv[1], "strided")) {
		size_t heap = 64u << 20, len = 64u << 20, front = 1u << 20, i;
		char *h = sbrk((intptr_t)heap), *p;
		if (h == (void *)-1)
			return 1;
		write_pages(h, heap, 1);
		if ((p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			return 1;
		for (i = 0; i < front; i += pg) {
			p[i] = 1;
			if (!(i & ((64u << 10) - 1)))
				usleep(300);
		}
		usleep(300 * 1000);
		for (i = front + (2u << 20); i < len; i += 2u << 20)
			p[i] = 2;
		printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	} else if (argc >= 3 && !strcmp(argv[1], "moved")) {
		size_t heap = 64u << 20, len = 8u << 20, big = 256u << 20, front = 2u << 20, i;
		int heap_block = !strcmp(argv[2], "malloc"), ok = 1;
		char *h = sbrk((intptr_t)heap), *p, *q;
		if (h == (void *)-1)
			return 1;
		write_pages(h, heap, 1);
		p = heap_block ? malloc(len) : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!p || p == MAP_FAILED)
			return 1;
		for (i = 0; i < front; i += pg) {
			p[i] = (char)(i / pg);
			if (!(i & ((64u << 10) - 1)))
				usleep(500);
		}
		usleep(100 * 1000);
		q = heap_block ? realloc(p, big) : mremap(p, len, big, MREMAP_MAYMOVE);
		if (!q || q == MAP_FAILED) {
			printf("moved=%d\n", errno);
			return 0;
		}
		for (i = 0; i < front; i += pg)
			ok &= q[i] == (char)(i / pg);
		for (i = len; i < big; i += 2u << 20)
			q[i] = 2;
		printf("moved=ok intact=%d vmhwm_kb=%ld\n", ok, status_kb("VmHWM:"));
	} else if (argc >= 3 && !strcmp(argv[1], "arenas")) {
		long n = atol(argv[2]), r, f = 0;
		char *w = probe_map(32u << 20), *g, *q;
		size_t i, big = 256u << 20;
		write_pages(w, 32u << 20, 1);
		for (r = 0; r < n; r++) {
			if (r == n / 2)
				f = faults_of(RUSAGE_THREAD);
			if (round16(1u << 20))
				return 1;
		}
		printf("late_faults=%ld\n", faults_of(RUSAGE_THREAD) - f);
		if (argc >= 4 && !strcmp(argv[3], "grow")) {
			if (round16_keep(1u << 20, &g))
				return 1;
			if ((q = mremap(g, 1u << 20, big, MREMAP_MAYMOVE)) == MAP_FAILED) {
				printf("moved=%d\n", errno);
				return 1;
			}
			for (i = 1u << 20; i < big; i += 2u << 20)
				q[i] = 1;
			printf("moved=ok\n");
		}
		printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	} else if (argc >= 3 && !strcmp(argv[1], "shrunk")) {
		int n = atoi(argv[2]), r, i, st;
		char **v = calloc((size_t)n, sizeof *v);
		pid_t c;
		if (!v)
			return 1;
		for (r = 0; r < 2; r++) {
			for (i = 0; i < n; i++) {
				if ((v[i] = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
					return 1;
				write_pages(v[i], 1u << 20, 1);
			}
			for (i = 0; i < n; i++)
				munmap(v[i], 1u << 20);
		}
		fflush(stdout);
		if ((c = fork()) < 0)
			return 1;
		if (!c) {
			printf("child_vmhwm_kb=%ld\n", status_kb("VmHWM:"));
			fflush(stdout);
			_exit(0);
		}
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	} else {
		fprintf(stderr, "usage: autoprobe churn|sparse|turn|sizes|fill|ends|part|expire|refill|late|idle|grow|strided|moved|arenas|shrunk ... (see autoprobe.c)\n");
		return 2;
	}
	return 0;
}
