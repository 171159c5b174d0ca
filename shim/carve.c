/* carve.c: huge pages for mappings smaller than a huge page.
 *
 * CPython maps its arenas (1 MiB from 3.10, 256 KiB before) one at a time.
 * A transparent huge page needs an aligned huge-page-sized range inside one
 * mapping when the first fault comes, and a lone arena never has one: with
 * THP `always`, or MADV_HUGEPAGE on each arena, arenas get small pages, and
 * once arenas mapped side by side have merged, the page table for the range
 * exists already and later faults get small pages too (issue 20).  Carving
 * serves such requests from reserves instead: mappings of whole huge pages,
 * placed on a huge page boundary and advised MADV_HUGEPAGE, cut into slices
 * of the request's length.  The first touch of a slice faults in a huge page
 * (which the next slice shares), and what was one fault per base page is one
 * per huge page.
 *
 * A reserve is stock for recycle.c: its slices go into recycle's cache as
 * regions kept for this rule, length, protection and flags, marked clean
 * (never the program's, so they read zero and are handed out without
 * clearing), and from there on everything is recycling: a slice the program
 * unmaps is kept and handed back to the next request zeroed in proportion to
 * what was touched; a slice that cannot be kept (recycle_max reached, memory
 * short, a limit set, reprotected, sealed, registered with userfaultfd,
 * unmapped in part, moved) is really unmapped, a hole in the reserve as in
 * any mapping; any call of the program's on the range of a kept or stocked
 * slice gives it back first, so the kernel answers as it would without us;
 * an mmap that fails with ENOMEM gives them all back and is tried again.
 * Kept slices that touch are given back in one munmap, so a reserve whose
 * slices are all free goes back whole when memory is short.  What the
 * program sees is recycle's, and, from the reserve: slices of one reserve
 * are neighbours in one mapping, and the pages of a slice come a huge page
 * at a time (a slice may be resident, reading zero, before it is touched;
 * README, "What each action makes observable").
 *
 * The huge page size is the system's (hpage_pmd_size), never assumed: where
 * it is unknown, or THP cannot give it with MADV_HUGEPAGE, carving is off,
 * and where it is not a multiple of a request's length (a 768 KiB request,
 * or a 512 MiB huge page on 64 KiB-page arm64 beside an odd size), or more
 * than CARVE_SLICES_MAX times it (defs.h: RSS would come in steps of 32 or
 * 512 MiB for 1 MiB arenas on arm64's 16 and 64 KiB pages), that request is
 * not carved; either way the rule recycles instead, and the
 * report says so.
 *
 * Memory is bounded: each reserve is charged to the budget whole when it is
 * mapped (its slices stay charged while free, and their charge is given
 * back as the program takes them: then they are the program's), reserves
 * grow from four huge pages to the rule's `reserve` by doubling, so a small
 * process maps little, and the report gives each rule's reserves' Rss and
 * AnonHugePages at exit (read from /proc/self/smaps then, never before).
 * No system call in the cycle of a slice: the reserve costs an mmap and a
 * madvise (and two munmaps for its alignment on a kernel older than 6.7,
 * which does not place it on a boundary itself), once for many slices.
 */
#include "carve.h"
#include "defs.h"
#include "fork.h"
#include "glue.h"
#include "lock.h"
#include "os.h"
#include "recycle.h"
#include "regions.h"
#include "settings.h"
#include "stats.h"
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define RESERVES CARVE_RESERVES_MAX /* at least 8 GiB of live reserves at 2 MiB huge pages */

/* A reserve as the report knows it: a range, or end 0 for a free slot. */
struct reserve {
	uintptr_t start, end;
	int rule;
};

enum { HP_UNREAD, HP_READING, HP_READ };

/* The module's state, in one place (its tables stand apart). */
static struct {
	spin_t lock;
	const struct policy *pol; /* NULL: no carve rule */
	const char *test_hpage;   /* the test setting, or NULL */
	int hstate;               /* HP_*: the huge page size is read at the first request */
	size_t hpage;             /* the huge page size carving goes by; 0: carving is off */
	int nres;                 /* slots ever used (free ones among them have end 0) */
	int slots;                /* the table's size: RESERVES, fewer in a test */
} S;
/* Tables: the reserves made, as far as they may still be live (for the
 * report at exit: it has no other use), and per rule the size of its next
 * reserve and of its largest. */
static struct reserve reserves[RESERVES];
static uint64_t next_size[POL_MAX_RULES], max_size[POL_MAX_RULES];
static uint8_t small_won[POL_MAX_RULES]; /* hugepage_check: carving off for good */
static uint8_t rss_reached[POL_MAX_RULES]; /* carve_min_rss: reached (for good) */

void carve_setup(const struct policy *pol, const struct settings *set)
{
	int i;
	for (i = 0; pol && i < pol->nrules; i++)
		if (pol->rules[i].actions & A_CARVE)
			S.pol = pol;
	S.test_hpage = set->test_hpage;
	S.slots = RESERVES;
	if (set->test_carve_slots) {
		uint64_t n = 0;
		if (!parse_size(set->test_carve_slots, strlen(set->test_carve_slots), &n) && n >= 1 && n < RESERVES)
			S.slots = (int)n;
	}
}

/* The huge page size, read at the first request of a carve rule (a process
 * that makes none never reads sysfs): 0 where carving is off, (size_t)-1
 * while another thread is still reading it. */
static size_t carve_hpage(void)
{
	int st = __atomic_load_n(&S.hstate, __ATOMIC_ACQUIRE), i;
	uint64_t h = 0;
	if (st == HP_READ)
		return S.hpage;
	if (st == HP_READING || !__atomic_compare_exchange_n(&S.hstate, &st, HP_READING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return (size_t)-1;
	if (S.test_hpage) {
		if (parse_size(S.test_hpage, strlen(S.test_hpage), &h) || h % page_size)
			h = 0;
	} else if ((h = os_thp_pmd_size()) == (size_t)-1) { /* (os.c's reader is busy: try again later) */
		__atomic_store_n(&S.hstate, HP_UNREAD, __ATOMIC_RELEASE);
		return (size_t)-1;
	}
	S.hpage = (size_t)h;
	if (!h)
		stats_note(N_CARVE_NO_THP);
	for (i = 0; h && i < S.pol->nrules; i++) {
		uint64_t want = S.pol->rules[i].reserve ? S.pol->rules[i].reserve : CARVE_RESERVE_DEFAULT;
		max_size[i] = (want + h - 1) / h * h;
		next_size[i] = 4 * h < max_size[i] ? 4 * h : max_size[i];
	}
	__atomic_store_n(&S.hstate, HP_READ, __ATOMIC_RELEASE);
	return S.hpage;
}

int carve_fits(int rule, size_t len, int flags)
{
	size_t h = carve_hpage();
	int even = h && h != (size_t)-1 && len < h && h % len == 0 && (uint64_t)len * CARVE_SLICES_MAX >= h;
	if (even && !(flags & ~(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)) && !__atomic_load_n(&small_won[rule], __ATOMIC_RELAXED))
		return 1;
	st_add(&g_stats.rules[rule].carve_uncarved, 1);
	if (h && h != (size_t)-1 && !even)
		stats_note(N_CARVE_UNEVEN);
	return 0;
}

void carve_small_won(int rule)
{
	__atomic_store_n(&small_won[rule], 1, __ATOMIC_RELAXED);
	st_add(&g_stats.rules[rule].carve_uncarved, 1); /* (the request judged on: recycled too) */
	stats_note(N_CARVE_SMALL_WON);
}

int carve_rss_reached(int rule)
{
	uint64_t min = S.pol ? S.pol->rules[rule].carve_min_rss : 0;
	if (!min || __atomic_load_n(&rss_reached[rule], __ATOMIC_RELAXED))
		return 1;
	if (os_peak_rss() >= min) { /* (0 where it cannot be read: not reached) */
		__atomic_store_n(&rss_reached[rule], 1, __ATOMIC_RELAXED);
		return 1;
	}
	st_add(&g_stats.rules[rule].carve_uncarved, 1);
	st_add(&g_stats.rules[rule].carve_waited, 1);
	return 0;
}

/* A fresh mapping of size bytes on a huge page boundary (the program's
 * prot and flags), through the next mmap as the program's own would go; 0
 * if there is no room.  Where the kernel places it (Linux 6.7+), a reserve
 * lies right below the last and merges with it once advised: one VMA for
 * many reserves, not one each (helper-31: 45,500 reserves, 300 forks 81 s). */
static uintptr_t map_aligned(size_t size, int prot, int flags)
{
	__typeof__(mmap) *f = (__typeof__(mmap) *)real_fn(E_mmap);
	/* (glue_map_aligned marks its calls FORWARD: an interposer behind us
	 * that maps with syscall() would otherwise have the reserve taken for
	 * a call under the guard, and forgotten as a nested change at the
	 * guard's end: a reserve a cycle) */
	char *a = glue_map_aligned(f ? f : sys_mmap, size, S.hpage, prot, flags, -1, 0, f != NULL);
	return a == MAP_FAILED ? 0 : (uintptr_t)a;
}

/* ---- the reserves table ----
 *
 * For the report alone.  Reserves die as their slices are unmapped for good,
 * and their addresses are mapped again, by the next reserve or anything
 * else; nothing tells this module (a slice goes through recycle.c and the
 * program's calls).  A new reserve's range is dead for every older slot
 * (the kernel just handed it out: nothing was mapped there), so slots are
 * trimmed to what is outside it, and freed when nothing is left: a reused
 * address is never counted twice.  A full table costs the report, never the
 * carving: a reserve with no slot is made all the same and counted as
 * untracked (carve.untracked; the report says its figures leave them out).
 * (The table filled for good after 1,024 reserves, and carving stopped: a
 * churn past recycle_max makes one every few rounds.  Freeing dead slots by
 * reading smaps, tried first, put up to 190 ms into a program's mmap with
 * 50,000 mappings, a descriptor into fork children, 4 KiB on a wrapper's
 * stack, and a read at every refusal once all were live: helper-31.) */

/* A free slot, taken (the table grows to S.slots), or -1.  Under S.lock. */
static int free_slot_locked(void)
{
	int j;
	for (j = 0; j < S.nres; j++)
		if (!reserves[j].end)
			return j;
	return S.nres < S.slots ? S.nres++ : -1;
}

/* Trim slot i to what is outside [a, b); the part after it goes to a free
 * slot if there is one (else it is left out: the report counts less).
 * Under S.lock. */
static void trim_locked(int i, uintptr_t a, uintptr_t b)
{
	struct reserve *r = &reserves[i];
	uintptr_t s = r->start, e = r->end;
	int j;
	if (e <= a || s >= b)
		return;
	if (e > b && s < a && (j = free_slot_locked()) >= 0) { /* a hole in the middle: the tail moves out */
		reserves[j].rule = r->rule;
		reserves[j].start = b;
		__atomic_store_n(&reserves[j].end, e, __ATOMIC_RELEASE);
	}
	if (s < a)
		__atomic_store_n(&r->end, a, __ATOMIC_RELEASE);
	else if (e > b)
		r->start = b; /* (end stays: a reader sees the old start or the new, both inside) */
	else
		__atomic_store_n(&r->end, 0, __ATOMIC_RELEASE);
}

/* Record [a, b) for rule; 0 if the table is full. */
static int record(uintptr_t a, uintptr_t b, int rule)
{
	int i, slot;
	spin_lock(&S.lock);
	for (i = 0; i < S.nres; i++)
		if (reserves[i].end)
			trim_locked(i, a, b);
	if ((slot = free_slot_locked()) >= 0) {
		reserves[slot].rule = rule;
		reserves[slot].start = a;
		__atomic_store_n(&reserves[slot].end, b, __ATOMIC_RELEASE);
	}
	spin_unlock(&S.lock);
	return slot >= 0;
}

uintptr_t carve_take(int rule, size_t len, int prot, int flags, size_t *resident)
{
	struct figs_rule *rs = &g_stats.rules[rule];
	uint64_t size;
	uintptr_t r;
	size_t n;
	if (!recycle_stock_ok()) {
		st_add(&rs->carve_uncarved, 1);
		return 0;
	}
	size = __atomic_load_n(&next_size[rule], __ATOMIC_RELAXED);
	if (!budget_reserve(size)) {
		st_add(&rs->skip_budget, 1);
		stats_note(N_BUDGET);
		return 0;
	}
	if (!(r = map_aligned((size_t)size, prot, flags))) {
		budget_release(size);
		return 0;
	}
	sys_madvise((void *)r, (size_t)size, MADV_HUGEPAGE);
	if (!record(r, r + size, rule)) {
		st_add(&rs->carve_untracked, 1);
		stats_note(N_CARVE_UNTRACKED);
	}
	st_add(&rs->carve_reserves, 1);
	st_add(&rs->carve_reserved_bytes, size);
	if (size < max_size[rule]) /* (two threads may both double it: the cap holds) */
		__atomic_store_n(&next_size[rule], 2 * size < max_size[rule] ? 2 * size : max_size[rule], __ATOMIC_RELAXED);
	n = recycle_stock(r, (size_t)size, len, rule, prot, flags);
	if (n * len < size) { /* no memory to track the rest */
		sys_munmap((void *)r, (size_t)size - n * len);
		budget_release(size - n * len);
	}
	return recycle_take(rule, len, prot, flags, resident, NULL, NULL, NULL);
}

/* ---- the report: what the reserves hold at exit ---- */

static struct figs_rule *report_rules;

/* A mapping of smaps: each reserve it overlaps, its resident bytes from
 * mincore over the overlap (exact: reserves merge with their neighbours,
 * a mapping of the program's own advised huge pages among them, and a
 * share by length counted 7.7 MB for a reserve holding one 2 MiB huge
 * page), its huge bytes a share of the mapping's by length (nothing tells
 * them apart but the kernel's page flags); a reserve given back and mapped
 * again by someone else is told apart by the advice, as far as it can be. */
static void count_vma(void *arg, const struct os_vma *v)
{
	int i, n = *(const int *)arg;
	if (!v->advised || v->end <= v->start || !v->rss)
		return;
	for (i = 0; i < n; i++) {
		const struct reserve *r = &reserves[i];
		uintptr_t end = __atomic_load_n(&r->end, __ATOMIC_ACQUIRE); /* (0: a slot still being filled) */
		uintptr_t lo = r->start > v->start ? r->start : v->start, hi = end < v->end ? end : v->end;
		double part;
		if (lo >= hi)
			continue;
		part = (double)(hi - lo) / (double)(v->end - v->start);
		report_rules[r->rule].carve_resident_bytes += (uint64_t)os_resident_pages(lo, hi, page_size) * page_size;
		report_rules[r->rule].carve_huge_bytes += (uint64_t)((double)v->anon_huge * part);
	}
}

void carve_report(struct figs_rule *rules)
{
	int n = __atomic_load_n(&S.nres, __ATOMIC_ACQUIRE);
	if (!n)
		return;
	report_rules = rules;
	os_smaps_walk(count_vma, &n);
}

void carve_atfork(int who)
{
	if (who == FORK_PREPARE)
		spin_lock(&S.lock);
	else if (who == FORK_PARENT)
		spin_unlock(&S.lock);
	else { /* the child has the same reserves: its own now */
		spin_init(&S.lock);
		if (S.hstate == HP_READING) /* (a thread of the parent's was reading it) */
			S.hstate = HP_UNREAD;
	}
}
