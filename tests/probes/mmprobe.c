/* mmprobe: programs that hold the shim to "the program behaves exactly as
 * it does without the shim" at the edges of memory management (issue 14,
 * findings 13-27 and 31).  Each subcommand does what a real program may do
 * and prints key=value lines of what it saw (return values, errno, memory
 * contents), so a test can compare a run with the shim to the plain one.
 *
 *   roread SIZE          mmap SIZE PROT_READ, read it, munmap, map it again
 *                        PROT_READ, read it: nonzero= (bytes not zero)
 *   churn32 SIZE N       N times mmap SIZE MAP_32BIT, touch a byte, munmap:
 *                         lowest= highest= of the addresses (hex)
 *   map32 SIZE           mmap SIZE, touch, munmap, then mmap SIZE MAP_32BIT:
 *                        below2g= (1 if the mapping ends below 2 GiB)
 *   mseal SIZE           mmap SIZE, touch, mseal it, munmap it (munmap_rc=,
 *                        munmap_errno=), then mmap SIZE and mprotect the new
 *                        region read-only (mprotect_rc=, mprotect_errno=);
 *                        mseal_errno= is not 0 where mseal is not available
 *   staleremap SIZE      mmap SIZE, write, munmap, then mremap the unmapped
 *                        range to the same size (mremap_errno=); then owns a
 *                        region (the remapped one if mremap succeeded, a new
 *                        one otherwise), fills it, maps SIZE once more:
 *                        same_addr= (the new mapping is the owned one),
 *                        intact= (the owned region still holds what the
 *                        program wrote)
 *   aslimit MODE N       map N 1 MiB regions, touch, unmap them all; then
 *                        MODE malloc: RLIMIT_AS 256 MiB, malloc of 256 MiB
 *                        less VmSize at start less 24 MiB (malloc_errno=);
 *                        MODE thread: RLIMIT_AS VmSize at start plus 24 MiB,
 *                        pthread_create with the default stack
 *                        (create_errno=)
 *   cgchurn N GROW       map N 1 MiB regions, touch, unmap them all, then
 *                        malloc GROW and write every page: ok=1
 *   bigalloc SIZE        malloc SIZE and mmap SIZE, each written:
 *                        malloc_errno=, mmap_errno=
 *   mlockown MAPPED OWN  mmap MAPPED and touch it (a rule may act on it),
 *                        then mmap OWN and mlock it: mlock_errno=
 *   dontneed SIZE        mmap SIZE, write it, madvise(MADV_DONTNEED):
 *                        madvise_errno=, nonzero= (bytes not zero after)
 *   unshare SIZE         mmap SIZE, write every page, wait (at most 3 s)
 *                        for the process to be single-threaded, then
 *                        unshare(CLONE_NEWUSER): threads=, unshare_errno=
 *   ownstack SIZE GUARD  mmap SIZE, mprotect the lowest GUARD bytes
 *                        PROT_NONE, pthread_attr_setstack over the whole
 *                        region, run a thread on it: ran=1
 *   smallstack STACK SIZE  a thread with a STACK-byte stack maps SIZE, mallocs
 *                        SIZE, writes both and calls exit(0) itself
 *                        (thread_done=1 first)
 *   cowfile PATH SIZE    write SIZE bytes of 'A' to PATH, mmap it
 *                        PROT_READ|PROT_WRITE MAP_PRIVATE, read every page,
 *                        pwrite 'B' over the file through another fd, read
 *                        again: pages=, seen_new= (pages showing 'B')
 *   hugetlb N SIZE       N times: mmap SIZE MAP_HUGETLB and touch it, until
 *                        one fails: fit=, errno=
 *   caller LIBA LIBB     dlopen LIBA, call its lib_map (an mmap of 1 MiB),
 *                        dlclose it, dlopen LIBB (at most 8 tries to get it
 *                        at LIBA's old base), call LIBB's lib_map:
 *                        same_base=, a_ok=, b_ok=
 *   manymaps N SIZE      keep N mappings of SIZE live, each written:
 *                        failed=, vmas= (lines of /proc/self/maps)
 *   lockmove SIZE OWN    mmap 3*SIZE, munmap its middle third, mremap the
 *                        first third to 2*SIZE in place (filling the hole),
 *                        then mmap OWN and mlock it: merged= (1 if the
 *                        three thirds are one mapping), vmlck_kb=,
 *                        mlock_errno=
 *   lockgrow SIZE NEW    mmap SIZE, write it, mremap it to NEW
 *                        (MREMAP_MAYMOVE): mremap_errno=, vmlck_kb=
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "probe.h"

#ifndef MAP_32BIT
#define MAP_32BIT 0x40
#endif
#ifndef SYS_mseal
#define SYS_mseal 462 /* x86_64, Linux 6.10+ */
#endif

static size_t pg;

static void *map_anon(size_t len, int prot)
{
	return mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void touch(void *p, size_t len, int byte)
{
	size_t off;
	for (off = 0; off < len; off += pg)
		((volatile char *)p)[off] = (char)byte;
}

static size_t count_nonzero(const void *p, size_t len)
{
	const volatile unsigned char *c = p;
	size_t i, n = 0;
	for (i = 0; i < len; i++)
		n += c[i] != 0;
	return n;
}

static int cmd_roread(size_t size)
{
	char *p = map_anon(size, PROT_READ), *q;
	volatile unsigned long sum = 0;
	size_t off;
	if (p == MAP_FAILED)
		return 3;
	for (off = 0; off < size; off += pg)
		sum += (unsigned char)p[off];
	munmap(p, size);
	q = map_anon(size, PROT_READ);
	if (q == MAP_FAILED)
		return 4;
	printf("reused=%d\n", q == p);
	printf("nonzero=%zu sum=%lu\n", count_nonzero(q, size), sum);
	return 0;
}

static int cmd_map32(size_t size)
{
	char *p = map_anon(size, PROT_READ | PROT_WRITE), *q;
	if (p == MAP_FAILED)
		return 3;
	touch(p, size, 1);
	munmap(p, size);
	q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (q == MAP_FAILED) {
		printf("map32_errno=%d\n", errno);
		return 0;
	}
	printf("addr=%p below2g=%d\n", (void *)q, (uintptr_t)q + size <= (1ull << 31));
	return 0;
}

static int cmd_churn32(size_t size, int n)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int i;
	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (p == MAP_FAILED) {
			printf("map32_errno=%d\n", errno);
			return 0;
		}
		p[0] = 1;
		munmap(p, size);
		lo = (uintptr_t)p < lo ? (uintptr_t)p : lo;
		hi = (uintptr_t)p > hi ? (uintptr_t)p : hi;
	}
	printf("lowest=%#lx highest=%#lx\n", (unsigned long)lo, (unsigned long)hi);
	return 0;
}

static int cmd_mseal(size_t size)
{
	char *p = map_anon(size, PROT_READ | PROT_WRITE), *q;
	int r;
	if (p == MAP_FAILED)
		return 3;
	touch(p, size, 1);
	if (syscall(SYS_mseal, p, size, 0) != 0) {
		printf("mseal_errno=%d\n", errno);
		return 0;
	}
	printf("mseal_errno=0\n");
	errno = 0;
	r = munmap(p, size);
	printf("munmap_rc=%d munmap_errno=%d\n", r, r ? errno : 0);
	q = map_anon(size, PROT_READ | PROT_WRITE);
	if (q == MAP_FAILED)
		return 4;
	errno = 0;
	r = mprotect(q, size, PROT_READ);
	printf("same_addr=%d mprotect_rc=%d mprotect_errno=%d\n", q == p, r, r ? errno : 0);
	return 0;
}

static int cmd_staleremap(size_t size)
{
	char *p = map_anon(size, PROT_READ | PROT_WRITE), *own, *r;
	size_t i, bad = 0;
	if (p == MAP_FAILED)
		return 3;
	memset(p, 0x11, size);
	munmap(p, size);
	own = mremap(p, size, size, 0);
	printf("mremap_errno=%d\n", own == MAP_FAILED ? errno : 0);
	if (own == MAP_FAILED)
		own = map_anon(size, PROT_READ | PROT_WRITE);
	if (own == MAP_FAILED)
		return 4;
	memset(own, 0x5a, size);
	r = map_anon(size, PROT_READ | PROT_WRITE);
	if (r == MAP_FAILED)
		return 5;
	for (i = 0; i < size; i++)
		bad += (unsigned char)own[i] != 0x5a;
	printf("same_addr=%d intact=%d\n", r == own, bad == 0);
	return 0;
}

static void *idle_thread(void *arg)
{
	return arg;
}

static int cmd_aslimit(const char *mode, int n)
{
	char **r = calloc((size_t)n, sizeof *r);
	long base_kb = status_kb("VmSize:");
	size_t mib = 1 << 20;
	struct rlimit rl;
	int i;
	if (!r || base_kb <= 0)
		return 3;
	for (i = 0; i < n; i++) {
		r[i] = map_anon(mib, PROT_READ | PROT_WRITE);
		if (r[i] == MAP_FAILED)
			return 4;
		touch(r[i], mib, 1);
	}
	for (i = 0; i < n; i++)
		munmap(r[i], mib);
	printf("base_kb=%ld after_kb=%ld\n", base_kb, status_kb("VmSize:"));
	if (!strcmp(mode, "malloc")) {
		size_t big = (256ul << 20) - (size_t)base_kb * 1024 - (24ul << 20);
		void *b;
		rl.rlim_cur = rl.rlim_max = 256ul << 20;
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			return 5;
		b = malloc(big);
		printf("big_mib=%zu malloc_errno=%d\n", big >> 20, b ? 0 : errno);
		return 0;
	}
	if (!strcmp(mode, "thread")) {
		pthread_t t;
		int e;
		rl.rlim_cur = rl.rlim_max = (rlim_t)base_kb * 1024 + (24ul << 20);
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			return 5;
		e = pthread_create(&t, NULL, idle_thread, NULL);
		if (e == 0)
			pthread_join(t, NULL);
		printf("create_errno=%d\n", e);
		return 0;
	}
	return 2;
}

static int cmd_cgchurn(int n, size_t grow)
{
	char **r = calloc((size_t)n, sizeof *r), *g;
	size_t mib = 1 << 20;
	int i;
	if (!r)
		return 3;
	for (i = 0; i < n; i++) {
		r[i] = map_anon(mib, PROT_READ | PROT_WRITE);
		if (r[i] == MAP_FAILED)
			return 4;
		touch(r[i], mib, 1);
	}
	for (i = 0; i < n; i++)
		munmap(r[i], mib);
	g = malloc(grow);
	if (!g)
		return 5;
	touch(g, grow, 1);
	printf("ok=1\n");
	return 0;
}

static int cmd_bigalloc(size_t size)
{
	char *m = malloc(size), *p;
	int me = m ? 0 : errno, pe;
	if (m)
		touch(m, size, 1);
	p = map_anon(size, PROT_READ | PROT_WRITE);
	pe = p == MAP_FAILED ? errno : 0;
	if (p != MAP_FAILED)
		touch(p, size, 1);
	printf("malloc_errno=%d mmap_errno=%d\n", me, pe);
	return 0;
}

static int cmd_mlockown(size_t mapped, size_t own)
{
	char *m = map_anon(mapped, PROT_READ | PROT_WRITE), *o;
	int r;
	if (m == MAP_FAILED)
		return 3;
	touch(m, mapped, 1);
	o = map_anon(own, PROT_READ | PROT_WRITE);
	if (o == MAP_FAILED)
		return 4;
	r = mlock(o, own);
	printf("vmlck_kb=%ld mlock_errno=%d\n", status_kb("VmLck:"), r ? errno : 0);
	return 0;
}

static int cmd_dontneed(size_t size)
{
	char *p = map_anon(size, PROT_READ | PROT_WRITE);
	int r;
	if (p == MAP_FAILED)
		return 3;
	memset(p, 0x5a, size);
	r = madvise(p, size, MADV_DONTNEED);
	printf("madvise_errno=%d\n", r ? errno : 0);
	printf("nonzero=%zu\n", count_nonzero(p, size));
	return 0;
}

static int cmd_unshare(size_t size)
{
	char *p = map_anon(size, PROT_READ | PROT_WRITE);
	struct timespec ms = { 0, 10 * 1000 * 1000 };
	long threads = 0;
	int i, r;
	if (p == MAP_FAILED)
		return 3;
	touch(p, size, 1);
	/* The program's mapping work is done: give helper threads a moment to
	 * finish (a bounded wait for a condition, not a measurement). */
	for (i = 0; i < 300 && (threads = status_kb("Threads:")) > 1; i++)
		nanosleep(&ms, NULL);
	r = unshare(CLONE_NEWUSER);
	printf("threads=%ld unshare_errno=%d\n", threads, r ? errno : 0);
	return 0;
}

static volatile int stack_ran;

static void *stack_thread(void *arg)
{
	volatile char buf[256];
	buf[0] = 1;
	stack_ran = buf[0];
	return arg;
}

static int cmd_ownstack(size_t size, size_t guard)
{
	char *s = map_anon(size, PROT_READ | PROT_WRITE);
	pthread_attr_t a;
	pthread_t t;
	int e;
	if (s == MAP_FAILED)
		return 3;
	if (mprotect(s, guard, PROT_NONE) != 0)
		return 4;
	pthread_attr_init(&a);
	if ((e = pthread_attr_setstack(&a, s, size)) != 0) {
		printf("setstack_errno=%d\n", e);
		return 5;
	}
	e = pthread_create(&t, &a, stack_thread, NULL);
	if (e == 0)
		pthread_join(t, NULL);
	printf("create_errno=%d ran=%d\n", e, stack_ran);
	return 0;
}

static size_t small_size;

static void *small_thread(void *arg)
{
	static const char done[] = "thread_done=1\n";
	char *p = map_anon(small_size, PROT_READ | PROT_WRITE), *m;
	if (p == MAP_FAILED)
		_exit(3);
	p[0] = 1;
	m = malloc(small_size);
	if (!m)
		_exit(4);
	m[0] = 1;
	if (write(1, done, sizeof done - 1) < 0)
		_exit(5);
	exit(0);
	return arg;
}

static int cmd_smallstack(size_t stack, size_t size)
{
	pthread_attr_t a;
	pthread_t t;
	int e;
	small_size = size;
	pthread_attr_init(&a);
	if ((e = pthread_attr_setstacksize(&a, stack)) != 0) {
		printf("setstacksize_errno=%d\n", e);
		return 6;
	}
	if ((e = pthread_create(&t, &a, small_thread, NULL)) != 0) {
		printf("create_errno=%d\n", e);
		return 7;
	}
	pthread_join(t, NULL);
	return 8; /* the thread exits the process */
}

static int cmd_cowfile(const char *path, size_t size)
{
	char *buf = malloc(size), *p;
	volatile unsigned long sum = 0;
	size_t off, seen = 0;
	int fd, fd2;
	if (!buf)
		return 3;
	memset(buf, 'A', size);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pwrite(fd, buf, size, 0) != (ssize_t)size)
		return 4;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 5;
	for (off = 0; off < size; off += pg)
		sum += (unsigned char)p[off];
	fd2 = open(path, O_WRONLY);
	memset(buf, 'B', size);
	if (fd2 < 0 || pwrite(fd2, buf, size, 0) != (ssize_t)size)
		return 6;
	close(fd2);
	for (off = 0; off < size; off += pg)
		seen += p[off] == 'B';
	printf("pages=%zu seen_new=%zu\n", size / pg, seen);
	return 0;
}

static int cmd_hugetlb(int n, size_t size)
{
	int fit = 0, e = 0;
	while (fit < n) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p == MAP_FAILED) {
			e = errno;
			break;
		}
		p[0] = 1;
		fit++;
	}
	printf("fit=%d errno=%d\n", fit, e);
	return 0;
}

typedef void *(*lib_map_fn)(size_t);

static void *lib_load(const char *path, uintptr_t *base, lib_map_fn *fn)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !(*fn = (lib_map_fn)dlsym(h, "lib_map"))) {
		fprintf(stderr, "mmprobe: %s: %s\n", path, dlerror());
		exit(3);
	}
	*base = lm->l_addr;
	return h;
}

static int cmd_caller(const char *liba, const char *libb)
{
	uintptr_t base_a, base_b = 0;
	lib_map_fn fa, fb;
	void *ha = lib_load(liba, &base_a, &fa), *hb = NULL, *pa, *pb = MAP_FAILED;
	int i;
	pa = fa(1 << 20);
	dlclose(ha);
	for (i = 0; i < 8; i++) {
		hb = lib_load(libb, &base_b, &fb);
		if (base_b == base_a)
			break;
		dlclose(hb);
	}
	if (base_b == base_a)
		pb = fb(1 << 20);
	printf("same_base=%d a_ok=%d b_ok=%d\n", base_b == base_a, pa != MAP_FAILED, pb != MAP_FAILED);
	return 0;
}

static long map_count(void)
{
	char buf[65536];
	long lines = 0;
	ssize_t n, i;
	int fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static int cmd_manymaps(long n, size_t size)
{
	long i, failed = 0;
	for (i = 0; i < n; i++) {
		char *p = map_anon(size, PROT_READ | PROT_WRITE);
		if (p == MAP_FAILED) {
			failed++;
			continue;
		}
		touch(p, size, 1);
	}
	printf("failed=%ld vmas=%ld\n", failed, map_count());
	return 0;
}

static int cmd_lockmove(size_t size, size_t own)
{
	char *m = map_anon(3 * size, PROT_READ | PROT_WRITE), *o;
	int merged, r;
	if (m == MAP_FAILED)
		return 3;
	munmap(m + size, size);
	if (mremap(m, size, 2 * size, 0) == MAP_FAILED)
		return 4;
	merged = maps_entries_in((uintptr_t)m, (uintptr_t)m + 3 * size) == 1;
	o = map_anon(own, PROT_READ | PROT_WRITE);
	if (o == MAP_FAILED)
		return 5;
	r = mlock(o, own);
	printf("merged=%d vmlck_kb=%ld mlock_errno=%d\n", merged, status_kb("VmLck:"), r ? errno : 0);
	return 0;
}

static int cmd_lockgrow(size_t size, size_t newsize)
{
	char *m = map_anon(size, PROT_READ | PROT_WRITE), *r;
	if (m == MAP_FAILED)
		return 3;
	touch(m, size, 1);
	r = mremap(m, size, newsize, MREMAP_MAYMOVE);
	printf("mremap_errno=%d vmlck_kb=%ld\n", r == MAP_FAILED ? errno : 0, status_kb("VmLck:"));
	return 0;
}

int main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: mmprobe COMMAND ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "roread") && argc >= 3)
		return cmd_roread(parse_size(argv[2]));
	if (!strcmp(argv[1], "map32") && argc >= 3)
		return cmd_map32(parse_size(argv[2]));
	if (!strcmp(argv[1], "churn32") && argc >= 4)
		return cmd_churn32(parse_size(argv[2]), atoi(argv[3]));
	if (!strcmp(argv[1], "mseal") && argc >= 3)
		return cmd_mseal(parse_size(argv[2]));
	if (!strcmp(argv[1], "staleremap") && argc >= 3)
		return cmd_staleremap(parse_size(argv[2]));
	if (!strcmp(argv[1], "aslimit") && argc >= 4)
		return cmd_aslimit(argv[2], atoi(argv[3]));
	if (!strcmp(argv[1], "cgchurn") && argc >= 4)
		return cmd_cgchurn(atoi(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "bigalloc") && argc >= 3)
		return cmd_bigalloc(parse_size(argv[2]));
	if (!strcmp(argv[1], "mlockown") && argc >= 4)
		return cmd_mlockown(parse_size(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "dontneed") && argc >= 3)
		return cmd_dontneed(parse_size(argv[2]));
	if (!strcmp(argv[1], "unshare") && argc >= 3)
		return cmd_unshare(parse_size(argv[2]));
	if (!strcmp(argv[1], "ownstack") && argc >= 4)
		return cmd_ownstack(parse_size(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "smallstack") && argc >= 4)
		return cmd_smallstack(parse_size(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "cowfile") && argc >= 4)
		return cmd_cowfile(argv[2], parse_size(argv[3]));
	if (!strcmp(argv[1], "hugetlb") && argc >= 4)
		return cmd_hugetlb(atoi(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "caller") && argc >= 4)
		return cmd_caller(argv[2], argv[3]);
	if (!strcmp(argv[1], "manymaps") && argc >= 4)
		return cmd_manymaps(atol(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "lockmove") && argc >= 4)
		return cmd_lockmove(parse_size(argv[2]), parse_size(argv[3]));
	if (!strcmp(argv[1], "lockgrow") && argc >= 4)
		return cmd_lockgrow(parse_size(argv[2]), parse_size(argv[3]));
	fprintf(stderr, "mmprobe: unknown command or missing arguments: %s\n", argv[1]);
	return 2;
}
