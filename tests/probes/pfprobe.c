/* pfprobe: a small program whose memory behaviour the tests observe.
 *
 * Every subcommand prints key=value lines measured from the kernel's point
 * of view (mincore residency, getrusage faults, /proc/self/status and smaps),
 * so a test can assert what the shim really did to the process.
 *
 *   alloc ENTRY SIZE [file=PATH] [prot=r|rw|none] [noreserve] [shared]
 *        ENTRY: mmap mmap64 malloc calloc realloc posix_memalign
 *               aligned_alloc memalign valloc pvalloc
 *        prints resident (of the page-aligned interior right after the call),
 *        pages, touch_faults (faults while writing each page), zero (1 if
 *        all bytes read as zero before the program wrote anything)
 *   errno                 failing and succeeding calls, with errno
 *   vmlck SIZE            mmap, then VmLck in kB
 *   thp SIZE [wait]       mmap, then AnonHugePages of that mapping in kB (wait:
 *                         once background work has made it all resident)
 *   exit MODE CODE        MODE: _exit _Exit exit return
 *   fork N                N children, each maps, touches, exits i+1
 *   vfork                 vfork+_exit, then vfork+exec of /bin/true
 *   exec PROG [ARGS]      map, then execv
 *   file PATH SIZE        file mapping of a cold file: resident at once and
 *                         after up to 2 s
 *   keep N SIZE           map N regions of SIZE, touch, keep them
 *   churn N SIZE          N times: mmap SIZE, touch every page, munmap
 *   free N SIZE           N times: malloc SIZE, touch, free
 *   threads T N SIZE      T threads, each N times: mmap or malloc SIZE, check
 *                         residency and zero fill, scribble, release; prints
 *                         bad= (blocks not resident or not zero)
 *   race ROUNDS SIZE      map SIZE and at once write a pattern over it from the
 *                         end backwards (a worker goes front to back), then
 *                         check every byte: lost=
 *   unmaprace ROUNDS SIZE map SIZE, then at once munmap, mremap, mprotect or
 *                         MAP_FIXED over it; check the new contents: bad=
 *   forkbusy SIZE         map SIZE, fork at once; the child maps too and exits
 *                         7 while its worker is busy; the parent exits 3
 *   bgwork SIZE MS        map SIZE, work MS ms on the CPU, then write every
 *                         page: map_ns, loop_faults
 *   bgahead DECOY SIZE    map DECOY (a worker starts on it), then SIZE, and at
 *                         once write the front half of SIZE; then wait (up to
 *                         60 s) until the back half is resident, but for 2 MiB:
 *                         front_faults=
 *                         (the program's, writing the front half), waited_ms=
 *   bgfill SIZE           map SIZE, touch nothing, wait (up to 60 s) until it is
 *                         all resident: waited_ms=, resident=
 *   nothp CMD...          exec CMD with transparent huge pages disabled
 *   zerostress T N        T threads, each N rounds: map 256 KiB or 1 MiB, check
 *                         every word reads zero, scribble over a random part
 *                         (sparse or dense), then give it back whole, in
 *                         halves, after mremap, or after MADV_DONTNEED/FREE:
 *                         nonzero= (words that were not zero on arrival)
 *   sparsezero T N [SIZE] T threads, each N rounds: map SIZE (or 128 or 256
 *                         KiB at random), check
 *                         the words of every resident page read zero (mincore:
 *                         the others read zero anyway, and reading them would
 *                         make them resident), write one to three random pages,
 *                         unmap; every 7th round takes the range back at once
 *                         with MAP_FIXED_NOREPLACE (a kept region there is
 *                         given back while others may be asked about):
 *                         nonzero=
 *   reclaim               the program unmaps and then wants the same address
 *                         range back (MAP_FIXED_NOREPLACE, a hint, mprotect,
 *                         madvise and in-place mremap growth on it): prints
 *                         what each returned, to compare with no shim
 *   forkrecycle N         unmap N 1 MiB regions, fork; parent and child each
 *                         map N again, check zero, scribble: nonzero=
 *   cycle N SIZE          N times: mmap, note residency, write every page,
 *                         munmap: min_resident=, loop_faults=
 *   pressure LIVE N GROW  keep LIVE MiB touched, map and touch N 1 MiB regions,
 *                         unmap them, wait 200 ms, touch GROW MiB more, unmap
 *                         one more 1 MiB region (memory is now short in a
 *                         small cgroup)
 *   mixed                 three mapping sites in their own functions: dense
 *                         (8 x 4 MiB, every page written), sparse (8 x 8 MiB,
 *                         one page each), churn (64 x 1 MiB mapped, written,
 *                         unmapped); prints peak RSS: vmhwm_kb=
 *   storm T SECONDS [MIN] T threads for SECONDS, and each for MIN rounds at
 *                         least (a loaded machine, a sanitizer: the work
 *                         a test counts on is done, however slowly): map
 *                         (64 KiB to 16 MiB), check
 *                         zero, write a pattern, and then at random: unmap
 *                         whole or in part, mremap, mprotect, MADV_DONTNEED,
 *                         check the pattern survived (until released); also
 *                         malloc/realloc/free: bad= (zero or pattern broken)
 *   spawnbusy N SIZE      N times: map SIZE (a worker starts on it), then at
 *                         once fork, vfork+exec, posix_spawn: ok=
 *   forkfault N           one thread faulting without pause (map, write every
 *                         page, unmap) while the main thread forks N times
 *   term SIZE             map SIZE and spin until killed
 *   fileremap N SIZE PATH N times: map SIZE of PATH (2 x SIZE long or more)
 *                         read-only and private, read every page, grow it to
 *                         2 x SIZE with mremap (it may move), read every page
 *                         again, unmap
 *   killself SIG SIZE S [fork]  map and write SIZE, then wait (up to S
 *                         seconds, writing a page of another mapping every
 *                         20 ms) for a profile snapshot taken after that
 *                         (the file PREFAULT_PROFILE names, %p its pid: its
 *                         "snapshot" record's CLOCK_MONOTONIC time), and
 *                         kill itself with signal SIG: snapshot=1 (or 0: none
 *                         came).  fork: a forked child does it first (the
 *                         parent waits for it): child_snapshot=
 *   burn MS               MS ms of arithmetic, no memory to speak of
 *   fail CODE             map and touch 4 MiB, then exit CODE
 *   stack KB              a new thread's first call uses KB of stack: faults=
 *   stackmain KB          the same in the main thread
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <spawn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "probe.h"

#define UNUSED __attribute__((unused))

static size_t pg;

static long thread_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static size_t resident(void *p, size_t len)
{
	static unsigned char vec[1 << 20];
	size_t n = len / pg, i, r = 0;
	if (n == 0 || n > sizeof vec)
		return 0;
	if (mincore(p, len, vec) != 0)
		return 0;
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

static void interior(void *p, size_t size, char **s, size_t *len)
{
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t b = ((uintptr_t)p + size) & ~(pg - 1);
	*s = (char *)a;
	*len = b > a ? b - a : 0;
}

static int cmd_alloc(int argc, char **argv)
{
	const char *entry = argv[2], *file = NULL;
	size_t size = parse_size(argv[3]), len, i, res;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS, fd = -1, a, zero = 1;
	void *p = NULL;
	char *s;
	long f0;
	for (a = 4; a < argc; a++) {
		if (!strncmp(argv[a], "file=", 5))
			file = argv[a] + 5;
		else if (!strcmp(argv[a], "prot=r"))
			prot = PROT_READ;
		else if (!strcmp(argv[a], "prot=none"))
			prot = PROT_NONE;
		else if (!strcmp(argv[a], "noreserve"))
			flags |= MAP_NORESERVE;
		else if (!strcmp(argv[a], "shared"))
			flags = (flags & ~MAP_PRIVATE) | MAP_SHARED;
	}
	if (file) {
		fd = open(file, O_RDWR);
		if (fd < 0) {
			perror(file);
			return 1;
		}
		flags &= ~MAP_ANONYMOUS;
	}
	if (!strcmp(entry, "mmap"))
		p = mmap(NULL, size, prot, flags, fd, 0);
	else if (!strcmp(entry, "mmap64"))
		p = mmap64(NULL, size, prot, flags, fd, 0);
	else if (!strcmp(entry, "malloc"))
		p = malloc(size);
	else if (!strcmp(entry, "calloc"))
		p = calloc(size / 16, 16);
	else if (!strcmp(entry, "realloc")) {
		p = malloc(size / 8);
		if (p)
			memset(p, 0, size / 8);
		p = realloc(p, size);
		/* only the grown part is ours to judge: the start was written */
	} else if (!strcmp(entry, "posix_memalign")) {
		if (posix_memalign(&p, 64, size))
			p = NULL;
	} else if (!strcmp(entry, "aligned_alloc"))
		p = aligned_alloc(4096, size);
	else if (!strcmp(entry, "memalign"))
		p = memalign(4096, size);
	else if (!strcmp(entry, "valloc"))
		p = valloc(size);
	else if (!strcmp(entry, "pvalloc"))
		p = pvalloc(size);
	else {
		fprintf(stderr, "unknown entry %s\n", entry);
		return 2;
	}
	if (!p || p == MAP_FAILED) {
		printf("failed errno=%d\n", errno);
		return 1;
	}
	interior(p, size, &s, &len);
	if (!strcmp(entry, "realloc")) { /* judge the grown part only */
		char *g = (char *)p + size / 8;
		interior(g, size - size / 8, &s, &len);
	}
	res = resident(s, len);
	if (prot == PROT_NONE) {
		printf("resident=%zu pages=%zu\n", res, len / pg);
		return 0;
	}
	f0 = thread_faults();
	if (prot & PROT_WRITE) {
		for (i = 0; i < len; i += pg)
			((volatile char *)s)[i] = ((volatile char *)s)[i];
	} else {
		for (i = 0; i < len; i += pg)
			(void)((volatile char *)s)[i];
	}
	f0 = thread_faults() - f0;
	if (!file && strcmp(entry, "malloc") && strcmp(entry, "realloc") && strcmp(entry, "posix_memalign") &&
	    strcmp(entry, "aligned_alloc") && strcmp(entry, "memalign") && strcmp(entry, "valloc") &&
	    strcmp(entry, "pvalloc")) {
		for (i = 0; i < size; i++)
			if (((volatile char *)p)[i]) {
				zero = 0;
				break;
			}
	} else {
		zero = -1; /* not defined for this entry */
	}
	printf("resident=%zu pages=%zu touch_faults=%ld zero=%d\n", res, len / pg, f0, zero);
	return 0;
}

#define SHOW(name, expr) do { long r_; errno = 0; r_ = (long)(expr); printf("%s ret=%ld errno=%d\n", name, r_, errno); } while (0)

static int cmd_errno(void)
{
	void *p, *q;
	int r;
	volatile size_t big = SIZE_MAX / 2; /* opaque, so the compiler does not object */
	SHOW("mmap-badflags", mmap(NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	SHOW("mmap-zero", mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	SHOW("mmap-badfd", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 12345, 0) == MAP_FAILED);
	SHOW("mmap-huge", mmap(NULL, (size_t)1 << 62, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	SHOW("mmap64-badflags", mmap64(NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	SHOW("munmap-unaligned", munmap((void *)1, 4096));
	SHOW("mremap-bad", mremap((void *)1, 4096, 8192, 0) == MAP_FAILED);
	SHOW("malloc-huge", malloc(SIZE_MAX / 2) == NULL);
	SHOW("calloc-overflow", calloc(big, 4) == NULL);
	SHOW("realloc-huge", ({ void *m = malloc(16); void *n = realloc(m, SIZE_MAX / 2); int f = n == NULL; free(n ? n : m); f; }));
	errno = 0;
	r = posix_memalign(&p, 3, 64);
	printf("posix_memalign-badalign ret=%d errno=%d\n", r, errno);
	SHOW("aligned_alloc-badalign", aligned_alloc(3, 64) == NULL);
	SHOW("memalign-huge", memalign(64, SIZE_MAX / 2) == NULL);
	/* Success must leave errno alone. */
	errno = 4242;
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap-ok keeps errno=%d\n", errno);
	errno = 4242;
	munmap(p, 1 << 20);
	printf("munmap-ok keeps errno=%d\n", errno);
	errno = 4242;
	q = malloc(1 << 20);
	printf("malloc-ok keeps errno=%d\n", errno);
	errno = 4242;
	free(q);
	printf("free keeps errno=%d\n", errno);
	errno = 4242;
	q = calloc(1, 1 << 20);
	q = realloc(q, 2 << 20);
	free(q);
	printf("calloc-realloc-ok keeps errno=%d\n", errno);
	return 0;
}

static long smaps_field(void *addr, const char *key)
{
	char line[512];
	long v = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t a = (uintptr_t)addr;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, key, strlen(key))) {
			v = atol(line + strlen(key) + 1);
			break;
		}
	}
	if (f)
		fclose(f);
	return v;
}

__attribute__((noinline)) void *map_touch(size_t size)
{
	size_t i;
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < size; i += pg)
		p[i] = 1;
	return p;
}

static int cmd_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), i;
	char buf[65536];
	size_t done = 0, r0;
	void *p;
	memset(buf, 'x', sizeof buf);
	while (done < size) {
		size_t n = size - done < sizeof buf ? size - done : sizeof buf;
		if (write(fd, buf, n) != (ssize_t)n)
			return 1;
		done += n;
	}
	fsync(fd);
	posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_DONTNEED); /* make it cold */
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	r0 = resident(p, size);
	for (i = 0; i < 200 && resident(p, size) < size / pg; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	printf("resident_at_once=%zu resident_later=%zu pages=%zu\n", r0, resident(p, size), size / pg);
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmd_race(int rounds, size_t size)
{
	long lost = 0;
	int r;
	for (r = 0; r < rounds; r++) {
		uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t n = size / 8, i;
		if (p == MAP_FAILED)
			return 1;
		for (i = n; i-- > 0;)
			p[i] = (uint64_t)i * 2654435761u + (uint64_t)r;
		for (i = 0; i < n; i++)
			lost += p[i] != (uint64_t)i * 2654435761u + (uint64_t)r;
		munmap(p, size);
	}
	printf("rounds=%d lost=%ld\n", rounds, lost);
	return 0;
}

static int cmd_unmaprace(int rounds, size_t size)
{
	long bad = 0;
	int r;
	for (r = 0; r < rounds; r++) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
		size_t i;
		if (p == MAP_FAILED)
			return 1;
		switch (r % 4) {
		case 0: /* unmap, and map a shared region there with contents */
			munmap(p, size);
			q = mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (q == MAP_FAILED)
				q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
			memset(q, 0x11, size);
			for (i = 0; i < size; i += 4096)
				bad += q[i] != 0x11;
			munmap(q, size);
			break;
		case 1: /* move it elsewhere, bigger */
			q = mremap(p, size, size * 2, MREMAP_MAYMOVE);
			memset(q, 0x22, size * 2);
			for (i = 0; i < size * 2; i += 4096)
				bad += q[i] != 0x22;
			munmap(q, size * 2);
			break;
		case 2: /* make it read-only at once: must still read zero */
			mprotect(p, size, PROT_READ);
			for (i = 0; i < size; i += 4096)
				bad += p[i] != 0;
			munmap(p, size);
			break;
		case 3: /* replace it with MAP_FIXED, then write */
			q = mmap(p, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			memset(q, 0x33, size);
			for (i = 0; i < size; i += 4096)
				bad += q[i] != 0x33;
			munmap(q, size);
			break;
		}
	}
	printf("rounds=%d bad=%ld\n", rounds, bad);
	return 0;
}

static void burn_ms(double ms)
{
	double end = now_ns() + ms * 1e6;
	volatile unsigned long x = 0;
	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i * x + 1;
}

static void *deep(int kb)
{
	volatile char buf[1024];
	buf[0] = (char)kb;
	buf[1023] = 1;
	if (kb > 1)
		return deep(kb - 1);
	return (void *)(uintptr_t)buf[0];
}

static void *stack_thread(void *arg)
{
	long f = thread_faults();
	deep((int)(intptr_t)arg);
	f = thread_faults() - f;
	return (void *)f;
}

static int zs_rounds;
static long zs_nonzero;

static void *zs_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
	int r;
	for (r = 0; r < zs_rounds; r++) {
		size_t size = (rand_r(&seed) & 1) ? 1 << 20 : 256 << 10, n = size / 8, i, k;
		uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long bad = 0;
		if (p == MAP_FAILED) {
			__atomic_fetch_add(&zs_nonzero, 1, __ATOMIC_RELAXED);
			continue;
		}
		for (i = 0; i < n; i++)
			bad += p[i] != 0;
		if (bad)
			__atomic_fetch_add(&zs_nonzero, bad, __ATOMIC_RELAXED);
		/* scribble: dense (every word) or sparse (a few pages) */
		if (rand_r(&seed) & 1) {
			for (i = 0; i < n; i++)
				p[i] = 0xdeadbeefcafef00dull ^ i;
		} else {
			for (k = 0; k < 5; k++)
				p[(rand_r(&seed) % n)] = 0x5555555555555555ull;
		}
		switch (rand_r(&seed) % 5) {
		case 0:
		case 1:
			munmap(p, size);
			break;
		case 2: /* in halves */
			munmap(p, size / 2);
			munmap((char *)p + size / 2, size / 2);
			break;
		case 3: { /* moved first */
			void *q = mremap(p, size, size, MREMAP_MAYMOVE);
			munmap(q, size);
			break;
		}
		case 4: /* pages dropped, then unmapped */
			madvise(p, size, (rand_r(&seed) & 1) ? MADV_DONTNEED : MADV_FREE);
			munmap(p, size);
			break;
		}
	}
	return NULL;
}

static int sz_rounds;
static size_t sz_size;
static long sz_nonzero;

static long sz_check(const uint64_t *p, size_t size)
{
	unsigned char vec[256];
	size_t i, k, n = size / pg;
	long bad = 0;
	if (n > sizeof vec || mincore((void *)p, size, vec) != 0)
		return 1;
	for (i = 0; i < n; i++)
		if (vec[i] & 1)
			for (k = 0; k < pg / 8; k++)
				bad += p[i * pg / 8 + k] != 0;
	return bad;
}

static void sz_scribble(uint64_t *p, size_t size, unsigned *seed)
{
	int k, m = 1 + (int)(rand_r(seed) % 3);
	for (k = 0; k < m; k++)
		p[(size_t)rand_r(seed) % (size / 8)] = 0x5555555555555555ull;
}

static void *sz_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 104729u + 3;
	int r;
	for (r = 0; r < sz_rounds; r++) {
		size_t size = sz_size ? sz_size : (rand_r(&seed) & 1) ? 256 << 10 : 128 << 10;
		uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
		long bad;
		if (p == MAP_FAILED) {
			__atomic_fetch_add(&sz_nonzero, 1, __ATOMIC_RELAXED);
			continue;
		}
		bad = sz_check(p, size);
		sz_scribble(p, size, &seed);
		munmap(p, size);
		if (r % 7 == 6) { /* the same range again, at once */
			q = mmap(p, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (q != MAP_FAILED) {
				bad += q == p ? sz_check(q, size) : 0;
				sz_scribble(q, size, &seed);
				munmap(q, size);
			}
		}
		if (bad)
			__atomic_fetch_add(&sz_nonzero, bad, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int cmd_reclaim(void)
{
	size_t m = 1 << 20;
	char *p, *q, *r;
	int ret;
	/* 1. MAP_FIXED_NOREPLACE on a range the program just unmapped */
	p = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 7, m);
	munmap(p, m);
	q = mmap(p, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("noreplace same=%d zero=%d\n", q == p, q != MAP_FAILED && q[0] == 0 && q[m - 1] == 0);
	if (q != MAP_FAILED)
		munmap(q, m);
	/* 2. a hint at a range just unmapped */
	p = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 1;
	munmap(p, m);
	q = mmap(p, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("hint same=%d zero=%d\n", q == p, q[0] == 0);
	munmap(q, m);
	/* 3. mprotect and madvise on unmapped memory fail with ENOMEM */
	p = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 1;
	munmap(p, m);
	errno = 0;
	ret = mprotect(p, m, PROT_READ);
	printf("mprotect ret=%d errno=%d\n", ret, errno);
	errno = 0;
	ret = madvise(p, m, MADV_DONTNEED);
	printf("madvise ret=%d errno=%d\n", ret, errno);
	/* 4. growing in place over a range just unmapped */
	p = mmap(NULL, 2 * m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(p, 2 * m);
	q = mmap(p, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	r = mmap(p + m, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("adjacent=%d\n", q == p && r == p + m);
	r[0] = 1;
	munmap(r, m);
	r = mremap(q, m, 2 * m, 0);
	printf("grow in place ok=%d\n", r == q);
	return 0;
}

static int cmd_forkrecycle(int n)
{
	size_t m = 1 << 20;
	char *v[256];
	int i, st;
	long bad = 0;
	pid_t c;
	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++) {
		v[i] = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(v[i], 0x77, m);
	}
	for (i = 0; i < n; i++)
		munmap(v[i], m);
	c = fork();
	for (i = 0; i < n; i++) {
		size_t k;
		v[i] = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (k = 0; k < m; k += 64)
			bad += v[i][k] != 0;
		memset(v[i], c == 0 ? 0x11 : 0x22, m);
	}
	for (i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < m; k += 4096)
			bad += v[i][k] != (c == 0 ? 0x11 : 0x22);
		munmap(v[i], m);
	}
	if (c == 0)
		_exit(bad ? 1 : 0);
	waitpid(c, &st, 0);
	printf("nonzero=%ld child_ok=%d\n", bad, WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

__attribute__((noinline)) void *site_dense(void) { return map_touch(4 << 20); }

__attribute__((noinline)) void *site_sparse(void)
{
	char *p = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 1;
	return p;
}

__attribute__((noinline)) void site_churn(void)
{
	void *p = map_touch(1 << 20);
	munmap(p, 1 << 20);
}

/* Maps 8 MiB and touches one page in eight: heavy in faults, but sparse. */
__attribute__((noinline)) void *site_thin(void)
{
	size_t i, size = 8 << 20;
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < size; i += 8 * pg)
		p[i] = 1;
	return p;
}

/* 8 x 4 MiB all touched (site_dense), then 8 x 8 MiB through other. */
static void dense_and(void *(*other)(void))
{
	int i;
	for (i = 0; i < 8; i++)
		site_dense();
	for (i = 0; i < 8; i++)
		other();
}

/* Maps 4 MiB, works ms milliseconds, then touches all of it: a site
 * where background prefaulting has time to get ahead of the program. */
__attribute__((noinline)) void *site_later(double ms)
{
	size_t i, size = 4 << 20;
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	burn_ms(ms);
	for (i = 0; i < size; i += pg)
		p[i] = 1;
	return p;
}

static double storm_end;
static long storm_bad, storm_ops, storm_min;

static void *storm_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 7;
	static const size_t sizes[] = { 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20 };
	long bad = 0, ops = 0;
	while (now_ns() < storm_end || ops < storm_min) {
		size_t size = sizes[rand_r(&seed) % 5], n, i;
		uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), tag;
		char *m;
		if (p == MAP_FAILED) {
			bad++;
			continue;
		}
		n = size / 8;
		for (i = 0; i < n; i += 512) /* one word per page: fresh memory is zero */
			bad += p[i] != 0;
		tag = ((uint64_t)rand_r(&seed) << 32) | (uint64_t)ops;
		for (i = 0; i < n; i += 64)
			p[i] = tag ^ i;
		switch (rand_r(&seed) % 6) {
		case 0:
			munmap(p, size);
			break;
		case 1: /* front half back; then check the rest kept its pattern */
			munmap(p, size / 2);
			for (i = n / 2; i < n; i += 64)
				bad += p[i] != (tag ^ i);
			munmap((char *)p + size / 2, size / 2);
			break;
		case 2: { /* move it; the pattern moves with it */
			uint64_t *q = mremap(p, size, size * 2, MREMAP_MAYMOVE);
			if (q == MAP_FAILED) {
				munmap(p, size);
				break;
			}
			for (i = 0; i < n; i += 64)
				bad += q[i] != (tag ^ i);
			for (i = n; i < 2 * n; i += 512)
				bad += q[i] != 0;
			munmap(q, size * 2);
			break;
		}
		case 3: /* read-only: still readable, pattern intact */
			mprotect(p, size, PROT_READ);
			for (i = 0; i < n; i += 64)
				bad += p[i] != (tag ^ i);
			munmap(p, size);
			break;
		case 4: /* pages dropped: read as zero */
			madvise(p, size, MADV_DONTNEED);
			for (i = 0; i < n; i += 512)
				bad += p[i] != 0;
			munmap(p, size);
			break;
		case 5: /* keep writing a while (a worker may be on it), then check */
			for (i = 0; i < n; i += 8)
				p[i] = tag ^ i;
			for (i = 0; i < n; i += 8)
				bad += p[i] != (tag ^ i);
			munmap(p, size);
			break;
		}
		m = malloc(size / 4);
		if (m) {
			memset(m, 0x3c, size / 4);
			m = realloc(m, size / 2) ? : m;
			bad += m[0] != 0x3c || m[size / 4 - 1] != 0x3c;
			free(m);
		}
		ops++;
	}
	__atomic_fetch_add(&storm_bad, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&storm_ops, ops, __ATOMIC_RELAXED);
	return NULL;
}

static int ff_stop;

static void *ff_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&ff_stop, __ATOMIC_RELAXED)) {
		void *p = map_touch(4 << 20);
		munmap(p, 4 << 20);
	}
	return NULL;
}

static size_t th_size;
static int th_n, th_bad;

static void *th_main(void *arg)
{
	int i;
	size_t k;
	for (i = 0; i < th_n; i++) {
		int use_malloc = (i + (int)(intptr_t)arg) & 1;
		char *p = use_malloc ? malloc(th_size)
		                     : mmap(NULL, th_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *s;
		size_t len;
		if (!p || p == MAP_FAILED) {
			__atomic_fetch_add(&th_bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		interior(p, th_size, &s, &len);
		if (resident(s, len) != len / pg)
			__atomic_fetch_add(&th_bad, 1, __ATOMIC_RELAXED);
		if (!use_malloc)
			for (k = 0; k < th_size; k += 64)
				if (p[k]) {
					__atomic_fetch_add(&th_bad, 1, __ATOMIC_RELAXED);
					break;
				}
		memset(p, 0x5a, th_size);
		if (use_malloc)
			free(p);
		else
			munmap(p, th_size);
	}
	return NULL;
}

static int m_alloc(int argc UNUSED, char **argv UNUSED)
{
	return cmd_alloc(argc, argv);
}

static int m_errno(int argc UNUSED, char **argv UNUSED)
{
	return cmd_errno();
}

static int m_vmlck(int argc UNUSED, char **argv UNUSED)
{
	void *p = mmap(NULL, parse_size(argv[2]), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("vmlck_kb=%ld mapped=%d\n", status_kb("VmLck:"), p != MAP_FAILED);
	return 0;
}

/* Every thread but this one asleep (S): a worker of the shim's that has
 * populated the last page counts it after its madvise returns, so "all
 * resident" comes before the figures the report will show. */
static int others_asleep(void)
{
	char path[64], buf[256], *st;
	struct dirent *e;
	int ok = 1, fd;
	long n;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 1;
	while (ok && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atol(e->d_name) == (long)getpid())
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		st = strrchr(buf, ')');
		ok = !st || st[1] != ' ' || st[2] == 'S';
	}
	closedir(d);
	return ok;
}

static int m_thp(int argc UNUSED, char **argv UNUSED)
{
	size_t size = parse_size(argv[2]);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0 = now_ns();
	/* "thp SIZE wait": for background work, until it is all resident and
	 * the workers are done with it (60 s at most) */
	while (argc >= 4 && !strcmp(argv[3], "wait") && (resident(p, size) < size / pg || !others_asleep()) &&
	       now_ns() - t0 < 60e9)
		usleep(2000);
	printf("anon_huge_kb=%ld resident=%zu pages=%zu\n", smaps_field(p, "AnonHugePages:"), resident(p, size), size / pg);
	return 0;
}

static int m_exit(int argc UNUSED, char **argv UNUSED)
{
	int code = atoi(argv[3]);
	map_touch(1 << 20);
	if (!strcmp(argv[2], "_exit"))
		_exit(code);
	if (!strcmp(argv[2], "_Exit"))
		_Exit(code);
	if (!strcmp(argv[2], "exit"))
		exit(code);
	return code;
}

static int m_fork(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i, st, sum = 0;
	for (i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0) {
			map_touch(1 << 20);
			exit(i + 1);
		}
	}
	for (i = 0; i < n; i++)
		if (wait(&st) > 0 && WIFEXITED(st))
			sum += WEXITSTATUS(st);
	printf("children=%d status_sum=%d\n", n, sum);
	return 0;
}

static int m_vfork(int argc UNUSED, char **argv UNUSED)
{
	int st;
	pid_t c = vfork();
	if (c == 0)
		_exit(7);
	waitpid(c, &st, 0);
	printf("vfork_exit=%d\n", WEXITSTATUS(st));
	c = vfork();
	if (c == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(c, &st, 0);
	printf("vfork_exec=%d\n", WEXITSTATUS(st));
	return 0;
}

static int m_exec(int argc UNUSED, char **argv UNUSED)
{
	map_touch(1 << 20);
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

static int m_file(int argc UNUSED, char **argv UNUSED)
{
	return cmd_file(argv[2], parse_size(argv[3]));
}

static int m_keep(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i, ok = 0;
	for (i = 0; i < n; i++)
		ok += map_touch(parse_size(argv[3])) != NULL;
	printf("kept=%d\n", ok);
	return 0;
}

static int m_churn(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i;
	size_t size = parse_size(argv[3]);
	long f0 = thread_faults();
	for (i = 0; i < n; i++) {
		void *p = map_touch(size);
		munmap(p, size);
	}
	printf("churn_faults=%ld\n", thread_faults() - f0);
	return 0;
}

static int m_free(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i;
	size_t size = parse_size(argv[3]), k;
	for (i = 0; i < n; i++) {
		char *p = malloc(size);
		for (k = 0; k < size; k += pg)
			p[k] = 1;
		free(p);
	}
	printf("freed=%d\n", n);
	return 0;
}

static int m_race(int argc UNUSED, char **argv UNUSED)
{
	return cmd_race(atoi(argv[2]), parse_size(argv[3]));
}

static int m_unmaprace(int argc UNUSED, char **argv UNUSED)
{
	return cmd_unmaprace(atoi(argv[2]), parse_size(argv[3]));
}

static int m_forkbusy(int argc UNUSED, char **argv UNUSED)
{
	size_t size = parse_size(argv[2]);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t c = fork();
	int st;
	if (c == 0) {
		void *q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		((char *)q)[0] = 1;
		((char *)p)[0] = 1;
		exit(7);
	}
	waitpid(c, &st, 0);
	printf("child=%d\n", WEXITSTATUS(st));
	return 3;
}

static int m_bgwork(int argc UNUSED, char **argv UNUSED)
{
	size_t size = parse_size(argv[2]), i;
	double t = now_ns();
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long f;
	t = now_ns() - t;
	burn_ms(atof(argv[3]));
	f = thread_faults();
	for (i = 0; i < size; i += pg)
		p[i] = 1;
	printf("map_ns_per_page=%.1f loop_faults=%ld pages=%zu\n", t / (size / pg), thread_faults() - f, size / pg);
	return 0;
}

static int m_bgahead(int argc UNUSED, char **argv UNUSED)
{
	size_t decoy = parse_size(argv[2]), size = parse_size(argv[3]), i;
	char *d = mmap(NULL, decoy, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0;
	long f = thread_faults();
	for (i = 0; i < size / 2; i += pg)
		p[i] = 1;
	f = thread_faults() - f;
	t0 = now_ns();
	/* all of it, but for the chunk where a worker going down meets the
	 * program (it is left to the program) */
	while (resident(p + size / 2, size / 2) + (2u << 20) / pg < size / 2 / pg && now_ns() - t0 < 60e9)
		usleep(2000);
	printf("front_faults=%ld waited_ms=%.0f back_resident=%zu decoy_resident=%zu\n", f, (now_ns() - t0) / 1e6,
	       resident(p + size / 2, size / 2), resident(d, decoy));
	return 0;
}

static int m_bgfill(int argc UNUSED, char **argv UNUSED)
{
	size_t size = parse_size(argv[2]);
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0 = now_ns();
	while (resident(p, size) < size / pg && now_ns() - t0 < 60e9)
		usleep(2000);
	printf("waited_ms=%.0f resident=%zu pages=%zu\n", (now_ns() - t0) / 1e6, resident(p, size), size / pg);
	usleep(200000); /* the workers count a chunk just after the kernel has it */
	return 0;
}

static int m_nothp(int argc UNUSED, char **argv UNUSED)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

/* T threads (64 at most) of fn, each given its index; returns T. */
static int run_threads(int t, void *(*fn)(void *))
{
	pthread_t tid[64];
	int i;
	if (t > 64)
		t = 64;
	for (i = 0; i < t; i++)
		pthread_create(&tid[i], NULL, fn, (void *)(intptr_t)i);
	for (i = 0; i < t; i++)
		pthread_join(tid[i], NULL);
	return t;
}

static int m_zerostress(int argc UNUSED, char **argv UNUSED)
{
	int t;
	zs_rounds = atoi(argv[3]);
	t = run_threads(atoi(argv[2]), zs_main);
	printf("threads=%d rounds=%d nonzero=%ld\n", t, zs_rounds, zs_nonzero);
	return 0;
}

static int m_sparsezero(int argc UNUSED, char **argv UNUSED)
{
	int t;
	sz_rounds = atoi(argv[3]);
	sz_size = argc > 4 ? parse_size(argv[4]) : 0;
	t = run_threads(atoi(argv[2]), sz_main);
	printf("threads=%d rounds=%d nonzero=%ld\n", t, sz_rounds, sz_nonzero);
	return 0;
}

static int m_pressure(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[3]), i;
	char *v[512];
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	if (n > 512)
		n = 512;
	map_touch(parse_size(argv[2]));
	for (i = 0; i < n; i++)
		v[i] = map_touch(1 << 20);
	for (i = 0; i < n; i++)
		munmap(v[i], 1 << 20);
	nanosleep(&ts, NULL);
	for (i = 0; i < atoi(argv[4]) / 4; i++)
		map_touch(4 << 20);
	nanosleep(&ts, NULL); /* past the shim's 100 ms between looks at memory */
	v[0] = map_touch(1 << 20);
	v[1] = map_touch(1 << 20);
	munmap(v[0], 1 << 20);
	munmap(v[1], 1 << 20);
	printf("done=1\n");
	return 0;
}

static int m_mixed(int argc UNUSED, char **argv UNUSED)
{
	int i;
	dense_and(site_sparse);
	for (i = 0; i < 64; i++)
		site_churn();
	printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	return 0;
}

static int m_densesparse(int argc UNUSED, char **argv UNUSED)
{
	/* 8 x 4 MiB all touched, 8 x 8 MiB one page in eight touched */
	dense_and(site_thin);
	printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	return 0;
}

static int m_worklater(int argc UNUSED, char **argv UNUSED)
{
	/* n times: a 4 MiB site worked on ms after its map, and a 2 MiB one
	 * touched straight after its map (map_touch) */
	int n = atoi(argv[2]), i;
	for (i = 0; i < n; i++) {
		site_later(atof(argv[3]));
		map_touch(2 << 20);
	}
	printf("vmhwm_kb=%ld\n", status_kb("VmHWM:"));
	return 0;
}

static int m_storm(int argc UNUSED, char **argv UNUSED)
{
	int t = atoi(argv[2]), i;
	pthread_t tid[64];
	if (t > 64)
		t = 64;
	storm_end = now_ns() + atof(argv[3]) * 1e9;
	storm_min = argc > 4 ? atol(argv[4]) : 0;
	for (i = 0; i < t; i++)
		pthread_create(&tid[i], NULL, storm_main, (void *)(intptr_t)i);
	for (i = 0; i < t; i++)
		pthread_join(tid[i], NULL);
	printf("threads=%d ops=%ld bad=%ld\n", t, storm_ops, storm_bad);
	return 0;
}

static int m_spawnbusy(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i, ok = 0, st;
	size_t size = parse_size(argv[3]);
	for (i = 0; i < n; i++) {
		char *argv_true[] = { "true", NULL };
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		pid_t c;
		c = fork();
		if (c == 0)
			_exit(((char *)p)[0] == 0 ? 0 : 1);
		ok += waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		c = vfork();
		if (c == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		ok += waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (posix_spawn(&c, "/bin/true", NULL, NULL, argv_true, environ) == 0)
			ok += waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		munmap(p, size);
	}
	printf("ok=%d of %d\n", ok, 3 * n);
	return 0;
}

static int m_forkfault(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i, ok = 0, st;
	pthread_t t;
	pthread_create(&t, NULL, ff_main, NULL);
	for (i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		ok += waitpid(c, &st, 0) == c && WIFEXITED(st);
	}
	__atomic_store_n(&ff_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("forked=%d of %d\n", ok, n);
	return 0;
}

static int m_term(int argc UNUSED, char **argv UNUSED)
{
	size_t size = parse_size(argv[2]), i;
	char *p;
	/* A shell starts background jobs with SIGINT ignored: undo that. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mapped=1\n");
	for (;;)
		for (i = 0; i < size; i += pg)
			p[i]++;
	return 0; /* (never: a signal ends it) */
}

__attribute__((noinline)) int site_fileremap(int fd, size_t size)
{
	volatile char *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0), *q;
	static volatile long sum;
	size_t i;
	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < size; i += pg)
		sum += p[i];
	q = mremap((void *)p, size, 2 * size, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return -1;
	for (i = 0; i < 2 * size; i += pg)
		sum += q[i];
	munmap((void *)q, 2 * size);
	return 0;
}

static int m_fileremap(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i, fd = open(argv[4], O_RDONLY), bad = 0;
	size_t size = parse_size(argv[3]);
	if (fd < 0) {
		perror(argv[4]);
		return 1;
	}
	for (i = 0; i < n; i++)
		bad += site_fileremap(fd, size) < 0;
	close(fd);
	printf("remapped=%d\n", n - bad);
	return bad != 0;
}

__attribute__((noinline)) void *site_killself(size_t size) { return map_touch(size); }

/* The profile file of this process, from PREFAULT_PROFILE's template
 * (%p: the pid; %% a '%'). */
static void profile_path(char *out, size_t cap)
{
	const char *t = getenv("PREFAULT_PROFILE");
	size_t k = 0;
	for (; t && *t && k + 24 < cap; t++) {
		if (t[0] == '%' && t[1] == 'p') {
			k += (size_t)snprintf(out + k, cap - k, "%d", (int)getpid());
			t++;
		} else if (t[0] == '%' && t[1] == '%') {
			out[k++] = '%';
			t++;
		} else {
			out[k++] = *t;
		}
	}
	out[k] = '\0';
}

/* The CLOCK_MONOTONIC time (ns) of the profile snapshot in path, or 0. */
static unsigned long long snapshot_ns(const char *path)
{
	char buf[8192], *p;
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "\nsnapshot\t");
	return p ? strtoull(p + 10, NULL, 10) : 0;
}

static int m_killself(int argc, char **argv)
{
	int sig = atoi(argv[2]), waited, got = 0;
	size_t size = parse_size(argv[3]), spare = 16 << 20;
	double limit = atof(argv[4]);
	char path[4096], *more;
	struct timespec t0;
	unsigned long long after;
	if (argc > 5 && !strcmp(argv[5], "fork")) {
		int fds[2], ws;
		char buf[64] = "";
		pid_t c;
		if (pipe(fds) != 0 || (c = fork()) < 0)
			return 1;
		if (c == 0) {
			dup2(fds[1], 1);
			close(fds[0]);
			argv[5] = "";
			return m_killself(5, argv);
		}
		close(fds[1]);
		if (read(fds[0], buf, sizeof buf - 1) < 0)
			buf[0] = '\0';
		waitpid(c, &ws, 0);
		printf("child_%s", buf);
	}
	site_killself(size);
	profile_path(path, sizeof path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	after = (unsigned long long)t0.tv_sec * 1000000000ull + (unsigned long long)t0.tv_nsec;
	more = mmap(NULL, spare, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (waited = 0; waited * 0.02 < limit && (size_t)waited * pg < spare; waited++) {
		if (path[0] && snapshot_ns(path) > after) {
			got = 1;
			break;
		}
		more[(size_t)waited * pg] = 1; /* something new for the next snapshot */
		usleep(20000);
	}
	printf("snapshot=%d\n", got);
	kill(getpid(), sig);
	return 3; /* (a signal whose default is to go on) */
}

static int m_burn(int argc UNUSED, char **argv UNUSED)
{
	burn_ms(atof(argv[2]));
	return 0;
}

static int m_fail(int argc UNUSED, char **argv UNUSED)
{
	map_touch(4 << 20);
	fprintf(stderr, "pfprobe: failing on purpose\n");
	return atoi(argv[2]);
}

static int m_reclaim(int argc UNUSED, char **argv UNUSED)
{
	return cmd_reclaim();
}

static int m_forkrecycle(int argc UNUSED, char **argv UNUSED)
{
	return cmd_forkrecycle(atoi(argv[2]));
}

static int m_cycle(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i;
	size_t size = parse_size(argv[3]), k, minres = (size_t)-1;
	long f = 0;
	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t r = resident(p, size);
		long f0 = thread_faults();
		if (r < minres)
			minres = r;
		for (k = 0; k < size; k += pg)
			p[k] = 1;
		f += thread_faults() - f0;
		munmap(p, size);
	}
	printf("min_resident=%zu pages=%zu loop_faults=%ld\n", minres, size / pg, f);
	return 0;
}

/* memcalls N: N rounds of every memory call the shim wraps on one 1 MiB
 * mapping (mmap, mprotect, madvise, mlock, munlock, mincore, mremap
 * grown, munmap), each checked: "memcalls=ok" or the first that failed. */
static int m_memcalls(int argc UNUSED, char **argv UNUSED)
{
	int n = atoi(argv[2]), i;
	size_t size = 1 << 20;
	unsigned char v[2 * 256];
	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
		if (p == MAP_FAILED)
			return printf("memcalls=mmap\n"), 1;
		p[0] = 1;
		if (mprotect(p, size, PROT_READ) || mprotect(p, size, PROT_READ | PROT_WRITE))
			return printf("memcalls=mprotect\n"), 1;
		if (madvise(p, size, MADV_DONTNEED) || p[0] != 0)
			return printf("memcalls=madvise\n"), 1;
		if (mlock(p, pg) || munlock(p, pg))
			return printf("memcalls=mlock\n"), 1;
		if (mincore(p, size, v) || !(v[0] & 1))
			return printf("memcalls=mincore\n"), 1;
		q = mremap(p, size, 2 * size, MREMAP_MAYMOVE);
		if (q == MAP_FAILED || q[0] != 0)
			return printf("memcalls=mremap\n"), 1;
		if (munmap(q, 2 * size))
			return printf("memcalls=munmap\n"), 1;
	}
	printf("memcalls=ok\n");
	return 0;
}

static int m_stack(int argc UNUSED, char **argv UNUSED)
{
	pthread_t t;
	void *f;
	pthread_create(&t, NULL, stack_thread, (void *)(intptr_t)atoi(argv[2]));
	pthread_join(t, &f);
	printf("faults=%ld\n", (long)(intptr_t)f);
	return 0;
}

static int m_stackmain(int argc UNUSED, char **argv UNUSED)
{
	printf("faults=%ld\n", (long)(intptr_t)stack_thread((void *)(intptr_t)atoi(argv[2])));
	return 0;
}

static int m_threads(int argc UNUSED, char **argv UNUSED)
{
	int t = atoi(argv[2]), i;
	pthread_t tid[64];
	th_n = atoi(argv[3]);
	th_size = parse_size(argv[4]);
	if (t > 64)
		t = 64;
	for (i = 0; i < t; i++)
		pthread_create(&tid[i], NULL, th_main, (void *)(intptr_t)i);
	for (i = 0; i < t; i++)
		pthread_join(tid[i], NULL);
	printf("threads=%d bad=%d\n", t, th_bad);
	return 0;
}

/* "vmas N SIZE": maps N regions of SIZE, touching nothing, and says how
 * many entries /proc/self/maps gained (neighbours with the same flags
 * merge into one) and how many regions start on a 2 MiB boundary. */
static int m_vmas(int argc UNUSED, char **argv)
{
	int n = atoi(argv[2]), i, aligned = 0;
	size_t size = parse_size(argv[3]);
	long before = maps_entries_in(0, ~0ul);
	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		aligned += !((uintptr_t)p & ((2u << 20) - 1));
	}
	printf("vmas=%ld aligned=%d\n", maps_entries_in(0, ~0ul) - before, aligned);
	return 0;
}

/* The commands: name, the arguments they need (argv[0] and the name
 * included), and the function. */
static const struct command {
	const char *name;
	int argc;
	int (*fn)(int, char **);
} commands[] = {
	{ "alloc", 4, m_alloc },
	{ "errno", 2, m_errno },
	{ "vmlck", 3, m_vmlck },
	{ "thp", 3, m_thp },
	{ "exit", 4, m_exit },
	{ "fork", 3, m_fork },
	{ "vfork", 2, m_vfork },
	{ "exec", 3, m_exec },
	{ "file", 4, m_file },
	{ "keep", 4, m_keep },
	{ "churn", 4, m_churn },
	{ "free", 4, m_free },
	{ "race", 4, m_race },
	{ "unmaprace", 4, m_unmaprace },
	{ "forkbusy", 3, m_forkbusy },
	{ "bgwork", 4, m_bgwork },
	{ "bgahead", 4, m_bgahead },
	{ "bgfill", 3, m_bgfill },
	{ "nothp", 3, m_nothp },
	{ "zerostress", 4, m_zerostress },
	{ "sparsezero", 4, m_sparsezero },
	{ "pressure", 5, m_pressure },
	{ "mixed", 2, m_mixed },
	{ "densesparse", 2, m_densesparse },
	{ "worklater", 4, m_worklater },
	{ "storm", 4, m_storm },
	{ "spawnbusy", 4, m_spawnbusy },
	{ "forkfault", 3, m_forkfault },
	{ "term", 3, m_term },
	{ "fileremap", 5, m_fileremap },
	{ "killself", 5, m_killself },
	{ "burn", 3, m_burn },
	{ "fail", 3, m_fail },
	{ "reclaim", 2, m_reclaim },
	{ "forkrecycle", 3, m_forkrecycle },
	{ "cycle", 4, m_cycle },
	{ "memcalls", 3, m_memcalls },
	{ "stack", 3, m_stack },
	{ "stackmain", 3, m_stackmain },
	{ "threads", 5, m_threads },
	{ "vmas", 4, m_vmas },
};

int main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IONBF, 0);
	/* Where THP is "always", the kernel gives a probe's plain mappings huge
	 * pages on its own: tests that count small-page faults set this. */
	if (getenv("PFPROBE_SMALL_PAGES") && *getenv("PFPROBE_SMALL_PAGES"))
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: pfprobe COMMAND ...\n");
		return 2;
	}
	{
		size_t i;
		for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
			if (!strcmp(argv[1], commands[i].name) && argc >= commands[i].argc)
				return commands[i].fn(argc, argv);
	}
	fprintf(stderr, "pfprobe: bad command\n");
	return 2;
}
