/* recycle.c: keeping freed regions for reuse.
 *
 * When the program unmaps exactly a region that a recycle rule mapped, the
 * shim keeps the mapping instead, and a later mmap of the same length, prot
 * and flags under the same rule gets it back, zero-filled as a fresh mapping
 * would be.  The point is that the pages stay mapped: CPython's arenas are
 * mapped and unmapped hundreds of times a second, and every fresh one faults
 * page by page.
 *
 * Zeroing costs in proportion to the pages the program really touched:
 * mincore says which are resident, only those are cleared (the others are
 * zero when next touched, unless swapped: with swap on, non-resident runs
 * are dropped with MADV_DONTNEED so no swapped data can come back).  A region
 * touched in many scattered places is dropped whole with MADV_DONTNEED, one
 * call instead of many.  Eager whole-region zeroing is what made an emulator
 * five times slower than Linux on sparse mappings; this never does it.
 *
 * Kept regions are charged to the budget and limited by recycle_max per rule;
 * they are given back (unmapped) when memory gets short, when an mmap fails
 * with ENOMEM (then retried), and at exit.  A kept range is, to the program,
 * free address space: a MAP_FIXED, a hint, MREMAP_FIXED or an in-place mremap
 * growth that wants it gets it (release_range).
 */
#include "glue.h"
#include "recycle.h"
#include "lock.h"
#include "os.h"
#include "prefault.h"
#include "regions.h"
#include "stats.h"
#include <string.h>
#include <sys/mman.h>

#define KEPT_MAX 4096
#define SCATTERED_RUNS 32     /* more resident runs than this: drop the region whole */
#define PRESSURE_NS 100000000 /* look at free memory at most every 100 ms */

struct kept {
	uintptr_t addr;
	size_t len;
	int rule, prot, flags;
};

static spin_t klock;
static struct kept kept[KEPT_MAX]; /* a stack: the most recently kept is reused first */
static int nkept;
static uint64_t kept_bytes[POL_MAX_RULES], kept_total;
static uint64_t rule_max[POL_MAX_RULES];
static uint64_t last_check;
static int swap_on;

void recycle_setup(const struct policy *pol)
{
	int i;
	for (i = 0; pol && i < pol->nrules; i++)
		rule_max[i] = pol->rules[i].recycle_max ? pol->rules[i].recycle_max : 64ull << 20;
	swap_on = -1; /* looked up at the first reuse */
}

/* Is there swap?  (Then a page that is not resident may hold swapped data.) */
static int swap_in_use(void)
{
	char buf[2048]; /* SwapTotal is in the first 20 lines */
	const char *p;
	int on = __atomic_load_n(&swap_on, __ATOMIC_RELAXED);
	if (on >= 0)
		return on;
	if (os_read_file("/proc/meminfo", buf, sizeof buf) > 0 && (p = strstr(buf, "SwapTotal:")))
		on = p[strspn(p + 10, " ") + 10] != '0';
	else
		on = 1; /* unknown: assume swap, the safe side */
	__atomic_store_n(&swap_on, on, __ATOMIC_RELAXED);
	return on;
}

/* Flags that make two anonymous mappings interchangeable. */
static int key_flags(int flags)
{
	return flags & (MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_LOCKED | MAP_HUGETLB |
	                MAP_STACK | MAP_GROWSDOWN | (int)(0x3fu << 26) /* MAP_HUGE_SHIFT bits */);
}

static void drop_locked(int i, uintptr_t *a, size_t *l)
{
	*a = kept[i].addr;
	*l = kept[i].len;
	/* (read without the lock by memory_short and the report) */
	__atomic_fetch_sub(&kept_bytes[kept[i].rule], kept[i].len, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&kept_total, kept[i].len, __ATOMIC_RELAXED);
	memmove(&kept[i], &kept[i + 1], (size_t)(nkept - i - 1) * sizeof kept[0]);
	__atomic_store_n(&nkept, nkept - 1, __ATOMIC_RELAXED);
}

void recycle_flush(void)
{
	uintptr_t a;
	size_t l;
	if (!__atomic_load_n(&nkept, __ATOMIC_RELAXED))
		return;
	spin_lock(&klock);
	while (nkept > 0) {
		drop_locked(nkept - 1, &a, &l);
		spin_unlock(&klock); /* never hold the lock across a system call */
		sys_munmap((void *)a, l);
		budget_release(l);
		spin_lock(&klock);
	}
	spin_unlock(&klock);
}

void recycle_release_range(uintptr_t start, size_t len)
{
	uintptr_t end = start + len;
	int i;
	if (!__atomic_load_n(&nkept, __ATOMIC_RELAXED))
		return;
	spin_lock(&klock);
	for (i = nkept - 1; i >= 0; i--) {
		uintptr_t a;
		size_t l;
		if (kept[i].addr >= end || kept[i].addr + kept[i].len <= start)
			continue;
		drop_locked(i, &a, &l);
		spin_unlock(&klock);
		sys_munmap((void *)a, l);
		budget_release(l);
		spin_lock(&klock);
		if (i > nkept)
			i = nkept;
	}
	spin_unlock(&klock);
}

/* Is memory short?  Looked at no more than every 100 ms. */
static int memory_short(void)
{
	uint64_t now = os_now_ns(), avail, room, kb;
	uint64_t last = __atomic_load_n(&last_check, __ATOMIC_RELAXED);
	static int was_short;
	if (now - last < PRESSURE_NS)
		return __atomic_load_n(&was_short, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&last_check, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return __atomic_load_n(&was_short, __ATOMIC_RELAXED);
	avail = os_mem_available();
	room = os_cgroup_room();
	kb = __atomic_load_n(&kept_total, __ATOMIC_RELAXED);
	/* Short: what is kept would be a large share of what is left. */
	__atomic_store_n(&was_short, (avail && avail < 4 * kb + (64ull << 20)) || room < 4 * kb + (16ull << 20),
	                 __ATOMIC_RELAXED);
	return __atomic_load_n(&was_short, __ATOMIC_RELAXED);
}

int recycle_keep(uintptr_t addr, size_t len, int rule, int prot, int flags)
{
	struct rule_stats *rs = &g_stats.rules[rule];
	if (memory_short()) {
		st_add(&rs->recycle_dropped, 1);
		recycle_flush();
		return 0;
	}
	if (!budget_reserve(len)) {
		st_add(&rs->recycle_dropped, 1);
		stats_note(N_BUDGET);
		return 0;
	}
	spin_lock(&klock);
	if (nkept == KEPT_MAX || kept_bytes[rule] + len > rule_max[rule]) {
		spin_unlock(&klock);
		budget_release(len);
		st_add(&rs->recycle_dropped, 1);
		return 0;
	}
	kept[nkept].addr = addr;
	kept[nkept].len = len;
	kept[nkept].rule = rule;
	kept[nkept].prot = prot;
	kept[nkept].flags = key_flags(flags);
	__atomic_store_n(&nkept, nkept + 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&kept_bytes[rule], len, __ATOMIC_RELAXED);
	__atomic_fetch_add(&kept_total, len, __ATOMIC_RELAXED);
	if (kept_bytes[rule] > st_get(&rs->recycle_peak_bytes))
		__atomic_store_n(&rs->recycle_peak_bytes, kept_bytes[rule], __ATOMIC_RELAXED);
	spin_unlock(&klock);
	st_add(&rs->recycle_kept, 1);
	return 1;
}

/* Zero what the program touched; returns the number of pages that were
 * resident (and so are again, now zero). */
static size_t zero_touched(uintptr_t s, size_t len)
{
	unsigned char vec[1024];
	size_t resident = 0, done = 0;
	int swap = swap_in_use();
	while (done < len) {
		size_t pages = (len - done) / pf_page, i, runs = 0, run_start = 0;
		uintptr_t base = s + done;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (mincore((void *)base, pages * pf_page, vec) != 0) {
			/* cannot tell: drop it all, which is always correct */
			sys_madvise((void *)base, len - done, MADV_DONTNEED);
			return resident;
		}
		for (i = 0; i < pages; i++)
			if ((vec[i] & 1) && (i == 0 || !(vec[i - 1] & 1)))
				runs++;
		if (runs > SCATTERED_RUNS) {
			sys_madvise((void *)base, pages * pf_page, MADV_DONTNEED);
		} else {
			for (i = 0; i < pages; i = run_start) {
				int res = vec[i] & 1;
				void *p = (void *)(base + i * pf_page);
				for (run_start = i; run_start < pages && (vec[run_start] & 1) == res; run_start++)
					;
				if (res) {
					memset(p, 0, (run_start - i) * pf_page);
					resident += run_start - i;
				} else if (swap) { /* may hold swapped-out data */
					sys_madvise(p, (run_start - i) * pf_page, MADV_DONTNEED);
				}
			}
		}
		done += pages * pf_page;
	}
	return resident;
}

uintptr_t recycle_take(int rule, size_t len, int prot, int flags, size_t *resident)
{
	struct rule_stats *rs = &g_stats.rules[rule];
	int i, kf = key_flags(flags);
	uintptr_t a = 0;
	size_t l;
	uint64_t t0;
	if (!__atomic_load_n(&nkept, __ATOMIC_RELAXED))
		return 0;
	spin_lock(&klock);
	for (i = nkept - 1; i >= 0; i--) {
		if (kept[i].rule == rule && kept[i].len == len && kept[i].prot == prot && kept[i].flags == kf) {
			drop_locked(i, &a, &l);
			break;
		}
	}
	spin_unlock(&klock);
	if (!a)
		return 0;
	budget_release(len);
	t0 = os_now_ns();
	*resident = zero_touched(a, len);
	st_add(&rs->recycle_zero_ns, os_now_ns() - t0);
	st_add(&rs->recycle_zeroed_bytes, *resident * pf_page);
	st_add(&rs->recycle_reused, 1);
	st_add(&rs->recycle_reused_bytes, len);
	return a;
}

uint64_t recycle_kept_bytes(int rule)
{
	return __atomic_load_n(&kept_bytes[rule], __ATOMIC_RELAXED);
}

void recycle_lock(void) { spin_lock(&klock); }
void recycle_unlock(void) { spin_unlock(&klock); }
void recycle_fork_child(void) { spin_init(&klock); } /* the cache is the child's too: same mappings */
