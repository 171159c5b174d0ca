/* pool.c: one large populate split over several threads.
 *
 * Helpers are created on the first batch and then sleep on a futex:
 * creating a thread takes the mmap lock that every faulting thread needs,
 * so creating them per request would slow exactly the work they are meant
 * to speed up (QEMU's preallocation learned this).  They leave after
 * IDLE_NS without a batch, or when glue_quiesce asks, so an idle process is
 * single-threaded again.  As QEMU does, at most one thread per 64 MiB and
 * never more than the online CPUs.  Slices are cut on huge-page boundaries so
 * huge pages stay whole.  One batch at a time: a second caller arriving
 * meanwhile does its work alone.
 */
#include "pool.h"
#include "defs.h"
#include "fork.h"
#include "glue.h"
#include "os.h"
#include "stats.h"
#include <string.h>
#include <sys/mman.h>

#define MAX_HELPERS 63
#define PER_THREAD (64ull << 20)
#define IDLE_NS (200ull * 1000 * 1000)
#define STACK (64u << 10)

struct slice { uintptr_t s, e; };

/* The module's state, in one place (its tables stand apart). */
static struct {
	int busy; /* a batch is in progress */
	int nhelpers; /* running helpers */
	uint32_t go; /* futex: bumped to start a batch */
	uint32_t left; /* futex: slices not finished */
	uint64_t claims;
	struct slice slices[MAX_HELPERS + 1];
	int batch_advice;
	uint64_t batch_faults; /* helpers' faults, added before they finish a slice */
} S;
/* Claims: one word, (generation << 32) | (next << 16) | count, so a helper
 * still finishing an old batch can never take a slice of a new one without
 * seeing its count. */

/* Take and do slices until none are left; returns -1 if any madvise failed. */
static int drain(int helper)
{
	int r = 0;
	for (;;) {
		uint64_t c = __atomic_load_n(&S.claims, __ATOMIC_ACQUIRE);
		unsigned next = (unsigned)(c >> 16) & 0xffff, n = (unsigned)c & 0xffff;
		struct meter m;
		struct faults f;
		if (next >= n)
			return r;
		if (!__atomic_compare_exchange_n(&S.claims, &c, c + (1u << 16), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		meter_start(&m, 1);
		if (sys_madvise((void *)S.slices[next].s, S.slices[next].e - S.slices[next].s, S.batch_advice) != 0)
			r = -1;
		meter_read(&m, &f, NULL);
		if (helper) /* the caller's own faults are counted by its caller */
			__atomic_fetch_add(&S.batch_faults, f.minor + f.major, __ATOMIC_RELAXED);
		if (__atomic_sub_fetch(&S.left, 1, __ATOMIC_ACQ_REL) == 0)
			glue_wake(&S.left);
	}
}

static void *helper_main(void *arg)
{
	uint32_t seen = (uint32_t)(uintptr_t)arg;
	for (;;) {
		uint32_t now = __atomic_load_n(&S.go, __ATOMIC_ACQUIRE);
		if (glue_leaving())
			break;
		if (now == seen) {
			if (glue_wait(&S.go, seen, IDLE_NS) < 0 && __atomic_load_n(&S.go, __ATOMIC_ACQUIRE) == seen)
				break; /* idle */
			continue;
		}
		seen = now;
		drain(1);
	}
	__atomic_sub_fetch(&S.nhelpers, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

int pool_populate(uintptr_t start, size_t len, int advice, unsigned threads, uint64_t *helper_faults)
{
	unsigned n = threads, cpus = (unsigned)os_online_cpus(), i;
	uint64_t gen;
	uintptr_t s;
	size_t per;
	int r;
	if (n > cpus)
		n = cpus;
	if (n > len / PER_THREAD)
		n = (unsigned)(len / PER_THREAD);
	if (n > MAX_HELPERS + 1)
		n = MAX_HELPERS + 1;
	if (n <= 1 || __atomic_exchange_n(&S.busy, 1, __ATOMIC_ACQUIRE))
		return sys_madvise((void *)start, len, advice);
	/* A new helper must not take the batch about to be published for an
	 * old one: it starts from the current generation. */
	if (glue_spawn_upto(&S.nhelpers, (int)n - 1, helper_main, (void *)(uintptr_t)__atomic_load_n(&S.go, __ATOMIC_ACQUIRE),
	                    STACK, &S.go) < 0)
		stats_note(N_NO_THREAD);
	per = (len / n + hpage_size - 1) & ~(size_t)(hpage_size - 1);
	for (i = 0, s = start; i < n && s < start + len; i++, s += per) {
		S.slices[i].s = s;
		S.slices[i].e = s + per < start + len ? s + per : start + len;
	}
	S.batch_advice = advice;
	__atomic_store_n(&S.batch_faults, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&S.left, i, __ATOMIC_RELEASE);
	gen = (__atomic_load_n(&S.claims, __ATOMIC_RELAXED) >> 32) + 1;
	__atomic_store_n(&S.claims, (gen << 32) | i, __ATOMIC_RELEASE); /* publishes the slices */
	__atomic_fetch_add(&S.go, 1, __ATOMIC_RELEASE);
	glue_wake(&S.go);
	/* The caller takes slices too: if every helper has left (idle, or
	 * quiesced), it simply does them all itself. */
	r = drain(0);
	for (;;) { /* wait for the helpers' slices */
		uint32_t l = __atomic_load_n(&S.left, __ATOMIC_ACQUIRE);
		if (l == 0)
			break;
		glue_wait(&S.left, l, 0);
	}
	*helper_faults += __atomic_load_n(&S.batch_faults, __ATOMIC_ACQUIRE);
	__atomic_store_n(&S.busy, 0, __ATOMIC_RELEASE);
	return r;
}

void pool_warm(unsigned threads)
{
	unsigned n = threads, cpus = (unsigned)os_online_cpus();
	if (n > cpus)
		n = cpus;
	if (n > MAX_HELPERS + 1)
		n = MAX_HELPERS + 1;
	if (n > 1)
		glue_warm_add((int)n - 1, STACK);
}

int pool_test_huge;

uintptr_t pool_huge_check(uintptr_t s, uintptr_t e, uintptr_t adv_lo, uintptr_t adv_hi, int advice, struct hcheck *h)
{
	uintptr_t a = ((s + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1)) + hpage_size;
	uint64_t t0, t1, t2;
	memset(h, 0, sizeof *h);
	if (a < s || e < a + hpage_size || e < s)
		return s;
	t0 = os_now_ns();
	sys_madvise((void *)s, a - s, advice);
	t1 = os_now_ns();
	sys_madvise((void *)adv_lo, adv_hi - adv_lo, MADV_HUGEPAGE);
	sys_madvise((void *)a, hpage_size, advice);
	t2 = os_now_ns();
	h->small_ns = t1 - t0;
	h->small_pages = (a - s) / page_size;
	h->huge_ns = t2 - t1;
	h->huge_pages = hpage_size / page_size;
	/* ns a page, compared as cross products */
	h->huge = (unsigned __int128)h->huge_ns * h->small_pages <= (unsigned __int128)h->small_ns * h->huge_pages;
	if (pool_test_huge)
		h->huge = pool_test_huge > 0;
	if (!h->huge)
		sys_madvise((void *)adv_lo, adv_hi - adv_lo, MADV_NOHUGEPAGE);
	return a + hpage_size;
}

int pool_huge_recheck(struct hcheck *h)
{
	size_t small = hpage_size / 4;
	uintptr_t m = (uintptr_t)sys_mmap(NULL, 2 * hpage_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), a, s;
	uint64_t t0, t1, t2;
	memset(h, 0, sizeof *h);
	if ((void *)m == MAP_FAILED)
		return -1;
	a = (m + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1); /* the whole huge page inside */
	s = a - m >= small ? a - small : a + hpage_size;         /* and small pages beside it */
	sys_madvise((void *)m, 2 * hpage_size, MADV_NOHUGEPAGE);
	t0 = os_now_ns();
	sys_madvise((void *)s, small, MADV_POPULATE_WRITE);
	t1 = os_now_ns();
	sys_madvise((void *)a, hpage_size, MADV_HUGEPAGE);
	sys_madvise((void *)a, hpage_size, MADV_POPULATE_WRITE);
	t2 = os_now_ns();
	sys_munmap((void *)m, 2 * hpage_size);
	h->small_ns = t1 - t0;
	h->small_pages = small / page_size;
	h->huge_ns = t2 - t1;
	h->huge_pages = hpage_size / page_size;
	h->huge = (unsigned __int128)h->huge_ns * h->small_pages <= (unsigned __int128)h->small_ns * h->huge_pages;
	if (pool_test_huge)
		h->huge = pool_test_huge == 1;
	return 0;
}

void pool_atfork(int who)
{
	if (who == FORK_CHILD) {
		S.nhelpers = 0;
		S.busy = 0;
	}
}
