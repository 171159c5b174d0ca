/* recycle.c: keeping freed regions for reuse.
 *
 * When the program unmaps exactly a region that a recycle rule mapped, the
 * shim keeps the mapping instead, and a later mmap under the same rule with
 * the same length, protection and flags gets it back, zero-filled as a
 * fresh mapping would be.  The pages stay mapped: CPython's arenas are
 * mapped and unmapped hundreds of times a second, and every fresh one faults
 * page by page.
 *
 * Only writable anonymous private regions are kept (a read-only one cannot
 * be zero-filled by a store, and has nothing to gain).  A region is not kept
 * when the kernel would not let the program change it any more (mseal: the
 * real munmap must fail with EPERM), when RLIMIT_AS or RLIMIT_DATA is set
 * (kept regions would count against the program's own mappings), or when
 * memory is short.  None of this is asked of the kernel per call: the shim
 * learns of seals, limits and foreign mappings over a region when they
 * happen, through the calls that make them (prefault.c, interpose.c: mseal
 * and syscall(SYS_mseal), setrlimit and prlimit, shmat, a raw mmap through
 * syscall(), userfaultfd's register ioctl), so keeping a region costs no
 * system call and reusing one at most one (the mincore below).  Only a
 * system call made with inline assembly slips past (README, Limits).  Where memory is tight (less room, in MemAvailable or
 * under the cgroup's limit, than eight times what the cache may hold), a
 * kept region is handed to the kernel with MADV_FREE: its pages stay while
 * memory lasts and are reclaimed, without swap, when the program needs the
 * room, so keeping never gets it OOM-killed.  Where memory is plentiful
 * they are kept as they are: on a virtual machine with shadow paging the
 * first write to each page after MADV_FREE traps to the hypervisor, which
 * made CPython's arena reuse 30 times dearer here.
 *
 * Zeroing costs in proportion to the pages the program really touched:
 * mincore says which are resident, only those are cleared (the others read
 * zero when next touched; with swap on, non-resident runs are dropped with
 * MADV_DONTNEED as well).  A region touched in many scattered places is
 * dropped whole with MADV_DONTNEED, one call instead of many.  Eager
 * whole-region zeroing of sparse memory is what made an emulator five
 * times slower than Linux on sparse mappings; this never does it.  A region
 * that was resident whole when last seen (populated, or found so by
 * mincore: a CPython arena is) and still is (no swap, not handed to
 * MADV_FREE, no MADV_DONTNEED of the program's since) is cleared whole
 * without asking: no system call at all.  Clearing whole is always correct
 * (every byte reads zero after it); asking only saves faulting in pages the
 * program never touched, so the hint can cost time when wrong, never data.
 *
 * Asking in batches: a mincore costs about as much to enter as to walk a
 * 256 KiB region (on this guest 0.75 us, and 1.9 in all for 256 KiB against
 * 3.9 for 1 MiB: BENCHMARKS.md, "Recycle"), so where sparse regions of one
 * key are kept side by side, one mincore asks about up to BATCH of them
 * (256 pages), and each remembers what it found (a bit a page): it is
 * then taken, later, without asking.  Nothing touches a kept region, so
 * what was resident stays so or is dropped (to reclaim: then refaulting as
 * zero on the clearing store, which is correct); what was learned for a
 * region that was given back and kept anew meanwhile is refused by its
 * generation.  Where the program keeps one such region at a time (the
 * zero-fill article's churn), its next requests are left to the kernel,
 * with a hint beside the kept ones, until BATCH are kept side by side: at
 * most 2 * BATCH - 1 of them between whole batches (decline_locked says
 * when more), never past 4 * BATCH kept, the cap or the budget.  With swap
 * on, nothing is remembered (a page not resident may hold swapped data:
 * zero_window drops those).
 *
 * Stock (carve.c): the slices of a huge-page reserve a carve rule mapped,
 * kept as regions that were never the program's.  They read zero, so the
 * next request takes one without clearing; they hold none of the program's
 * memory, so they count neither against recycle_max nor as kept; for the
 * rest they are kept regions: given back when the range is wanted, when
 * memory is short, at exit.  Kept regions that touch are given back in one
 * munmap, so a reserve whose slices are all free goes back whole.
 *
 * Kept regions are charged to the budget and limited by recycle_max per
 * rule; they are given back (unmapped) when memory gets short, when an mmap
 * fails with ENOMEM (then retried), and at exit.  A kept range is, to the
 * program, free address space: any call on it gives it back first
 * (release_range).  Lookups are O(log n) (ranges.h) for ranges and O(1) for
 * reuse (a LIFO list per key: the most recently kept is reused first).
 */
#include "recycle.h"
#include "defs.h"
#include "fork.h"
#include "glue.h"
#include "lock.h"
#include "os.h"
#include "ranges.h"
#include "regions.h"
#include "stats.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define SCATTERED_RUNS 32     /* more resident runs than this: drop the region whole */
/* A region this small is cleared whole rather than asked about: storing to
 * it costs less than the mincore (on this guest 32 KiB of stores took about
 * 0.2 us, a mincore 0.9 to 1.4 us: BENCHMARKS.md, "Recycle").  In bytes, not
 * pages: what the stores cost goes by bytes. */
#define CLEAR_WHOLE_BYTES (32u << 10)
#define PRESSURE_NS 100000000 /* look at free memory at most every 100 ms */
#define BATCH_PAGES 256       /* one mincore asks about this many pages at most */
#define BATCH 4               /* regions asked about at once, at most */
#define NOT_ASKED ((size_t)-1)
#define RETRY_ASKS 1024       /* asks short of a batch before declining is tried again */
#define KNOWN_PAGES 128       /* a region remembers which of its pages are resident up to this size */
#define BUCKETS 64

struct kclass; /* the regions of one key, most recently kept first */

struct kept {
	struct rnode node; /* first: [addr, addr + len) */
	struct kept *prev, *next;
	struct kclass *cls;
	unsigned char full;  /* every page resident when kept (a hint) */
	unsigned char clean; /* stocked, never the program's: reads zero (carve.c) */
	unsigned char slice; /* a slice of a carve reserve (stocked, or kept since) */
	unsigned char known; /* which pages are resident is below (asked with others) */
	uint64_t res[KNOWN_PAGES / 64]; /* bit i: page i resident */
	uint32_t gen;        /* set when kept: tells a region kept anew from the one asked about */
	uint32_t epoch;      /* the learner's, of the mapping it was (struct region): auto_taken */
};

struct kclass {
	int rule, prot, flags;
	size_t len;
	unsigned declined;   /* requests left to the kernel since the last whole batch */
	unsigned short_asks; /* and asks short of a whole batch since then */
	struct kept *top;
	struct kclass *next; /* in its bucket */
};

/* The module's state, in one place (its tables stand apart). */
static struct {
	spin_t klock;
	struct rtree tree;
	struct slab kslab;
	struct slab cslab;
	size_t nkept; /* read without the lock */
	uint64_t kept_total;
	uint64_t cache_max; /* all rules together */
	uint64_t total_cap; /* the most all rules may keep: the learner's budget */
	uint64_t kept_peak; /* the most all rules kept at once */
	uint64_t giving;    /* taken out of kept_total, their munmap not yet done */
	uint64_t given;     /* of the kept bytes given back so far, the resident (munmaps done; never falls) */
	int count_given;    /* given is wanted (the learner): regions not known resident are asked */
	uint64_t last_check;
	uint32_t gen;
	int swap_on;
	int was_short;
	int tight;
	int limited;
} S = {
	.kslab = { sizeof(struct kept), NULL, NULL, NULL, 0, NULL, 1 },
	.cslab = { sizeof(struct kclass), NULL, NULL, NULL, 0, NULL, 1 },
	.swap_on = -1,
	.total_cap = UINT64_MAX,
};
static struct kclass *buckets[BUCKETS];
/* Tables, apart from the state above (their pages are touched only when
 * used): per rule, the bytes kept and the most it may keep. */
static uint64_t kept_bytes[POL_MAX_RULES], rule_max[POL_MAX_RULES];
/* per rule, regions not kept because the learner's budget (total_cap) had
 * no room: of recycle_dropped */
static uint64_t capped[POL_MAX_RULES];
/* per rule, kept regions the learner's budget gave back (recycle_trim):
 * kept, never to be reused, and not the rule's doing */
static uint64_t trimmed[POL_MAX_RULES];

void recycle_setup(const struct policy *pol)
{
	int i;
	for (i = 0; pol && i < pol->nrules; i++) {
		rule_max[i] = pol->rules[i].recycle_max ? pol->rules[i].recycle_max : RECYCLE_MAX_DEFAULT;
		if (pol->rules[i].actions & A_RECYCLE)
			S.cache_max += rule_max[i];
	}
}

int recycle_any(void) { return __atomic_load_n(&S.nkept, __ATOMIC_RELAXED) != 0; }

/* S.limited: 1 a limit (recycle_limited), 2 new exec rules (recycle_never) */
void recycle_limited(int on)
{
	if (!on) {
		__atomic_fetch_and(&S.limited, ~1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_or(&S.limited, 1, __ATOMIC_RELAXED);
	recycle_flush();
}

void recycle_never(void)
{
	__atomic_fetch_or(&S.limited, 2, __ATOMIC_RELAXED);
	stats_note(N_EXEC_RULES);
	recycle_flush();
}

/* Is there swap?  (Then a page that is not resident may hold swapped data.) */
static int swap_in_use(void)
{
	char buf[1024]; /* SwapTotal is in the first 20 lines */
	const char *p;
	int on = __atomic_load_n(&S.swap_on, __ATOMIC_RELAXED);
	if (on >= 0)
		return on;
	if (os_read_file("/proc/meminfo", buf, sizeof buf) > 0 && (p = strstr(buf, "SwapTotal:")))
		on = p[strspn(p + 10, " ") + 10] != '0';
	else
		on = 1; /* unknown: assume swap, the safe side */
	__atomic_store_n(&S.swap_on, on, __ATOMIC_RELAXED);
	return on;
}

static struct kclass **bucket_of(int rule, size_t len, int prot, int flags)
{
	uint64_t h = (uint64_t)len * (uint64_t)0x9e3779b97f4a7c15ull ^ (uint64_t)(rule * 131 + prot * 7 + flags);
	return &buckets[(h >> 32) % BUCKETS];
}

static struct kclass *class_of(int rule, size_t len, int prot, int flags, int make)
{
	struct kclass **b = bucket_of(rule, len, prot, flags), *c;
	for (c = *b; c; c = c->next)
		if (c->rule == rule && c->len == len && c->prot == prot && c->flags == flags)
			return c;
	if (!make || !(c = slab_get(&S.cslab)))
		return NULL;
	c->rule = rule;
	c->len = len;
	c->prot = prot;
	c->flags = flags;
	c->top = NULL;
	c->declined = c->short_asks = 0;
	c->next = *b;
	*b = c;
	return c;
}

/* After klock is let go: map the chunks slab_get asked for (ranges.h). */
static int refill(void)
{
	return slab_refill(&S.kslab, &S.klock) | slab_refill(&S.cslab, &S.klock);
}

/* Take k out of the tree and its list (lock held); its bytes are no longer
 * kept.  The caller unmaps or reuses it. */
static uint64_t unlink_locked(struct kept *k)
{
	int rule = k->cls->rule;
	size_t len = k->node.end - k->node.start;
	rt_remove(&S.tree, &k->node);
	if (k->prev)
		k->prev->next = k->next;
	else
		k->cls->top = k->next;
	if (k->next)
		k->next->prev = k->prev;
	__atomic_store_n(&S.nkept, S.tree.n, __ATOMIC_RELAXED);
	if (k->clean) /* (stock is not counted as kept: it holds no memory of the program's) */
		return 0;
	/* (read without the lock by memory_short and the report) */
	__atomic_store_n(&kept_bytes[rule], kept_bytes[rule] - len, __ATOMIC_RELAXED);
	/* (release: see recycle_held_total) */
	__atomic_store_n(&S.kept_total, S.kept_total - len, __ATOMIC_RELEASE);
	return len;
}

#define RES_UNKNOWN UINT64_MAX

/* Take k out to be given back (lock held), and free its node: its bytes
 * count as being given back (giving) until gave(), after its munmap.
 * Returns the kept bytes it held; into *res (if not RES_UNKNOWN already)
 * adds its resident bytes: all when it was kept resident whole, its pages
 * known resident, none for stock; else *res becomes RES_UNKNOWN (the caller
 * asks the kernel before the munmap). */
static uint64_t out_locked(struct kept *k, uint64_t *res)
{
	uint64_t counted, len = k->node.end - k->node.start;
	size_t i;
	if (!k->clean) /* (before kept_total falls: see recycle_held_total) */
		__atomic_add_fetch(&S.giving, len, __ATOMIC_RELAXED);
	if (!k->clean && *res != RES_UNKNOWN) {
		if (k->full) {
			*res += len;
		} else if (k->known) {
			for (i = 0; i < KNOWN_PAGES / 64; i++)
				*res += (uint64_t)__builtin_popcountll(k->res[i]) * page_size;
		} else {
			*res = RES_UNKNOWN;
		}
	}
	counted = unlink_locked(k);
	slab_put(&S.kslab, k);
	return counted;
}

/* The resident bytes of [a, b), as the learner wants them (S.count_given:
 * else 0), res if known, else asked: one mincore per 256 pages.  Asked for
 * most regions the learner's rules give back (trims, also from a grows()
 * inside the program's mmap; range releases; exit): a region is known only
 * once asked about in a batch or populated whole, and the learner's are
 * mostly neither.  Against the munmap that follows, which frees what is
 * resident, a small cost; none in observe mode or under a policy file. */
static uint64_t resident_of(uintptr_t a, uintptr_t b, uint64_t res)
{
	if (!__atomic_load_n(&S.count_given, __ATOMIC_RELAXED))
		return 0;
	if (res != RES_UNKNOWN)
		return res;
	/* (a failed ask counts too little: the learner's guess too high, the safe side) */
	return (uint64_t)os_resident_pages(a, b, page_size) * page_size;
}

/* The munmaps of regions out_locked took out, holding counted kept bytes,
 * resident of them, are done: given rises, then giving falls, with release
 * (a look that reads giving fallen reads RSS after the munmaps). */
static void gave(uint64_t counted, uint64_t resident)
{
	if (resident)
		__atomic_add_fetch(&S.given, resident, __ATOMIC_RELEASE);
	if (counted)
		__atomic_sub_fetch(&S.giving, counted, __ATOMIC_RELEASE);
}

/* Give back up to max (at most 16) runs of kept regions overlapping [s, e)
 * (all: e == 0), regions that touch each other unmapped in one call (a
 * carved reserve all free goes back whole), with no lock held.  Returns how
 * many runs: max means there may be more.  With keep_out, the part inside
 * [s, e) is not unmapped: the kernel has unmapped it already, and what is
 * there now is not ours (recycle_forget_range).  kept_gone (if not null)
 * has the kept bytes taken out of the total added to it. */
static int give_back_x(uintptr_t s, uintptr_t e, int max, int keep_out, uint64_t *kept_gone)
{
	uintptr_t out[16][2];
	uint64_t gone = 0, res[16], resident = 0;
	int k = 0, i;
	struct rnode *n;
	spin_lock(&S.klock);
	n = rt_first(&S.tree, e ? s : 0);
	while (n && (!e || n->start < e) && k < max) {
		struct rnode *next = rt_next(&S.tree, n);
		if (k && out[k - 1][1] == n->start) {
			out[k - 1][1] = n->end;
		} else if (k == 16) { /* (max is at most 16) */
			break;
		} else {
			out[k][0] = n->start;
			out[k][1] = n->end;
			res[k] = 0;
			k++;
		}
		if (kept_gone) /* (a trim's) */
			__atomic_add_fetch(&trimmed[((struct kept *)n)->cls->rule], 1, __ATOMIC_RELAXED);
		gone += out_locked((struct kept *)n, &res[k - 1]);
		n = next;
	}
	spin_unlock(&S.klock);
	if (kept_gone)
		*kept_gone += gone;
	for (i = 0; i < k; i++) { /* never hold the lock across a system call */
		uintptr_t a = out[i][0], b = out[i][1];
		if (!keep_out) {
			resident += resident_of(a, b, res[i]);
			sys_munmap((void *)a, b - a);
		} else {
			/* (the kernel has unmapped the part inside already: what of
			 * it was resident is known, or taken for none) */
			resident += res[i] != RES_UNKNOWN ? resident_of(a, b, res[i]) : 0;
			if (a < s)
				sys_munmap((void *)a, s - a);
			if (e && b > e)
				sys_munmap((void *)e, b - e);
		}
		budget_release(b - a);
	}
	gave(gone, resident);
	return k;
}
static int give_back_n(uintptr_t s, uintptr_t e, int max) { return give_back_x(s, e, max, 0, 0); }

/* 1 if there may be more. */
static int give_back(uintptr_t s, uintptr_t e) { return give_back_n(s, e, 16) == 16; }

uint64_t recycle_trim(uint64_t most)
{
	uint64_t gone = 0;
	while (__atomic_load_n(&S.kept_total, __ATOMIC_RELAXED) > most && give_back_x(0, 0, 1, 0, &gone))
		;
	return gone;
}

void recycle_flush(void)
{
	while (recycle_any() && give_back(0, 0))
		;
}

void recycle_release_range(uintptr_t start, size_t len)
{
	if (!recycle_any() || !len)
		return;
	while (give_back(start, start + len))
		;
}

void recycle_forget_range(uintptr_t start, size_t len)
{
	if (!recycle_any() || !len)
		return;
	while (give_back_x(start, start + len, 16, 1, 0) == 16)
		;
}

/* Is memory short?  (And is it tight: see the top.)  Looked at no more
 * than every 100 ms. */
static int memory_short(void)
{
	uint64_t now = os_coarse_ns(), avail, room, kb, least; /* (a coarse clock read: no system call) */
	uint64_t last = __atomic_load_n(&S.last_check, __ATOMIC_RELAXED);
	if (now - last < PRESSURE_NS && last)
		return __atomic_load_n(&S.was_short, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&S.last_check, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return __atomic_load_n(&S.was_short, __ATOMIC_RELAXED);
	if (!os_cgroup_init()) { /* (another thread is finding the cgroup: look again next time) */
		__atomic_store_n(&S.last_check, 0, __ATOMIC_RELAXED);
		return 1;
	}
	avail = os_mem_available();
	room = os_cgroup_room();
	kb = __atomic_load_n(&S.kept_total, __ATOMIC_RELAXED);
	least = avail && avail < room ? avail : room;
	/* Short: what is kept would be a large share of what is left. */
	__atomic_store_n(&S.was_short, (avail && avail < 4 * kb + (64ull << 20)) || room < 4 * kb + (16ull << 20),
	                 __ATOMIC_RELAXED);
	{
		uint64_t most = __atomic_load_n(&S.total_cap, __ATOMIC_RELAXED);
		__atomic_store_n(&S.tight, least / 8 < (most < S.cache_max ? most : S.cache_max), __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&S.was_short, __ATOMIC_RELAXED);
}

/* k holds [addr, addr + len) of class c, on top of its list (lock held). */
static void push_locked(struct kclass *c, struct kept *k, uintptr_t addr, size_t len, int full, int clean, int slice)
{
	k->node.start = addr;
	k->node.end = addr + len;
	k->cls = c;
	k->full = (unsigned char)full;
	k->epoch = 0;
	k->clean = (unsigned char)clean;
	k->slice = (unsigned char)slice;
	k->known = 0;
	k->gen = ++S.gen;
	k->prev = NULL;
	k->next = c->top;
	if (c->top)
		c->top->prev = k;
	c->top = k;
	rt_insert(&S.tree, &k->node);
	__atomic_store_n(&S.nkept, S.tree.n, __ATOMIC_RELAXED);
}

int recycle_keep(uintptr_t addr, size_t len, int rule, int prot, int flags, int full, int slice, uint32_t epoch)
{
	struct figs_rule *rs = &g_stats.rules[rule];
	struct kclass *c;
	struct kept *k;
	int free_it, tries, limited;
	if (!(prot & PROT_WRITE)) /* nothing to gain, and it could not be zeroed */
		return 0;
	if ((limited = __atomic_load_n(&S.limited, __ATOMIC_RELAXED))) { /* kept regions would count against it */
		st_add(&rs->recycle_dropped, 1);
		if (limited & 1)
			stats_note(N_RECYCLE_LIMIT);
		return 0;
	}
	if (memory_short()) {
		st_add(&rs->recycle_dropped, 1);
		recycle_flush();
		return 0;
	}
	/* (A sealed region, or one a file or shared memory was mapped over,
	 * lost its RF_RECYCLE flag when that happened: the caller never asks.) */
	if (!budget_reserve(len)) {
		st_add(&rs->recycle_dropped, 1);
		stats_note(N_BUDGET);
		return 0;
	}
	free_it = __atomic_load_n(&S.tight, __ATOMIC_RELAXED);
	/* Reclaimable while kept, where memory is tight: under pressure the
	 * kernel takes the pages back by itself (they then read zero).  Where
	 * it refuses (a locked region, an old kernel), the region is not kept.
	 * Done first, with no lock held; if the cache then has no room, the
	 * region is unmapped all the same. */
	if (free_it && sys_madvise((void *)addr, len, MADV_FREE) != 0) {
		budget_release(len);
		st_add(&rs->recycle_dropped, 1);
		return 0;
	}
	for (tries = 0;; tries++) {
		spin_lock(&S.klock);
		if (kept_bytes[rule] + len > rule_max[rule] || S.kept_total + len > S.total_cap) {
			if (kept_bytes[rule] + len <= rule_max[rule])
				__atomic_add_fetch(&capped[rule], 1, __ATOMIC_RELAXED);
			c = NULL;
			k = NULL;
			break;
		}
		c = class_of(rule, len, prot, flags, 1);
		k = c ? slab_get(&S.kslab) : NULL;
		if (k || tries)
			break;
		/* out of records: a chunk mapped with no lock held (ranges.h) */
		spin_unlock(&S.klock);
		if (refill() != 0) {
			budget_release(len);
			st_add(&rs->recycle_dropped, 1);
			return 0;
		}
	}
	if (!k) {
		spin_unlock(&S.klock);
		refill();
		budget_release(len);
		st_add(&rs->recycle_dropped, 1);
		return 0;
	}
	/* (written under the lock, read without it) */
	__atomic_store_n(&kept_bytes[rule], kept_bytes[rule] + len, __ATOMIC_RELAXED);
	__atomic_store_n(&S.kept_total, S.kept_total + len, __ATOMIC_RELEASE); /* (see recycle_held_total) */
	if (S.kept_total > S.kept_peak)
		__atomic_store_n(&S.kept_peak, S.kept_total, __ATOMIC_RELAXED);
	/* MADV_FREE lets the kernel take the pages: then nothing is known. */
	push_locked(c, k, addr, len, full && !free_it, 0, slice);
	k->epoch = epoch;
	if (kept_bytes[rule] > st_get(&rs->recycle_peak_bytes))
		__atomic_store_n(&rs->recycle_peak_bytes, kept_bytes[rule], __ATOMIC_RELAXED);
	spin_unlock(&S.klock);
	refill();
	st_add(&rs->recycle_kept, 1);
	return 1;
}

int recycle_stock_ok(void)
{
	return !__atomic_load_n(&S.limited, __ATOMIC_RELAXED) && !memory_short();
}

size_t recycle_stock(uintptr_t start, size_t total, size_t len, int rule, int prot, int flags)
{
	struct kclass *c;
	size_t n = 0;
	int more;
	/* From the top down, each on top of the list: the lowest is handed out
	 * first, so a reserve fills up from its start.  Out of records: the
	 * lock is let go while a chunk is mapped (ranges.h), and taken again. */
	do {
		more = 0;
		spin_lock(&S.klock);
		if ((c = class_of(rule, len, prot, flags, 1))) {
			while ((n + 1) * len <= total) {
				struct kept *k = slab_get(&S.kslab);
				if (!k) {
					more = 1;
					break;
				}
				n++;
				push_locked(c, k, start + total - n * len, len, 0, 1, 1);
			}
		} else {
			more = 1; /* (no record for the class either) */
		}
		spin_unlock(&S.klock);
	} while (refill() == 0 && more && (n + 1) * len <= total);
	return n;
}

/* The resident runs of vec[0, pages), up to max of them: returns how many,
 * or max + 1 if there are more (the region is scattered). */
static int resident_runs(const unsigned char *vec, size_t pages, size_t (*run)[2], int max)
{
	const uint64_t bits = 0x0101010101010101ull; /* bit 0 of each byte: resident */
	size_t i = 0, j;
	int n = 0;
	while (i < pages) {
		uint64_t w;
		if (!(vec[i] & 1)) { /* most of a sparse region: skip it a word at a time */
			while (i + 8 <= pages && (memcpy(&w, vec + i, 8), !(w & bits)))
				i += 8;
			while (i < pages && !(vec[i] & 1))
				i++;
			continue;
		}
		for (j = i + 1; j < pages && (vec[j] & 1); j++)
			;
		if (n == max)
			return max + 1;
		run[n][0] = i;
		run[n][1] = j;
		n++;
		i = j;
	}
	return n;
}

/* A scattered region dropped whole: what vec says was resident left RSS by
 * the cache's doing, given as a region given back is (the learner's look
 * took the fall for the program's, then the program's touches that
 * faulted it back for nothing new, and counted half of each 8 MiB region
 * of autoprobe sparse 400 8M 2 as coming for good).  In auto mode only. */
static void dropped(const unsigned char *vec, size_t pages)
{
	size_t i, n = 0;
	if (!__atomic_load_n(&S.count_given, __ATOMIC_RELAXED))
		return;
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	if (n)
		__atomic_add_fetch(&S.given, (uint64_t)n * page_size, __ATOMIC_RELEASE);
}

/* Zero the pages of [base, base + pages pages) that vec says are
 * resident (with swap on, drop the others: they may hold swapped-out
 * data); scattered, drop it all in one call.  Returns the pages resident
 * (and so again, now zero). */
static size_t zero_window(uintptr_t base, const unsigned char *vec, size_t pages, int swap)
{
	size_t run[SCATTERED_RUNS][2], resident = 0, gap = 0;
	int n = resident_runs(vec, pages, run, SCATTERED_RUNS), r;
	if (n > SCATTERED_RUNS) { /* many places: one call drops them all */
		sys_madvise((void *)base, pages * page_size, MADV_DONTNEED);
		dropped(vec, pages);
		return 0;
	}
	for (r = 0; r <= n; r++) {
		size_t end = r < n ? run[r][0] : pages;
		if (swap && end > gap)
			sys_madvise((void *)(base + gap * page_size), (end - gap) * page_size, MADV_DONTNEED);
		if (r < n) {
			memset((void *)(base + run[r][0] * page_size), 0, (run[r][1] - run[r][0]) * page_size);
			resident += run[r][1] - run[r][0];
			gap = run[r][1];
		}
	}
	return resident;
}

/* Zero what the program touched; returns the number of pages that were
 * resident (and so are again, now zero). */
static size_t zero_touched(uintptr_t s, size_t len, int swap)
{
	unsigned char vec[256];
	size_t resident = 0, done = 0;
	while (done < len) {
		size_t pages = (len - done) / page_size;
		uintptr_t base = s + done;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (sys_mincore((void *)base, pages * page_size, vec) != 0) {
			/* cannot tell: drop it all, which is always correct */
			sys_madvise((void *)base, len - done, MADV_DONTNEED);
			return resident;
		}
		resident += zero_window(base, vec, pages, swap);
		done += pages * page_size;
	}
	return resident;
}

/* Zero the runs of resident pages of [a, a + pages pages) that res marks;
 * returns how many pages. */
static size_t zero_known(uintptr_t a, size_t pages, const uint64_t *res)
{
	size_t i = 0, j, n = 0;
	while (i < pages) {
		if (!(res[i / 64] >> (i % 64) & 1)) {
			i++;
			continue;
		}
		for (j = i + 1; j < pages && (res[j / 64] >> (j % 64) & 1); j++)
			;
		memset((void *)(a + i * page_size), 0, (j - i) * page_size);
		n += j - i;
		i = j;
	}
	return n;
}

/* Must k be asked about before it is handed out? */
static int needs_asking(const struct kept *k)
{
	size_t len = k->node.end - k->node.start;
	return !k->clean && !k->full && !k->known && len > CLEAR_WHOLE_BYTES;
}

/* The top region of c (the most recently kept), or where it would have to
 * be asked about, one near it that was asked about with others: else, the
 * others would be asked about again before they are used (lock held). */
static struct kept *pick_locked(struct kclass *c)
{
	struct kept *k;
	int n;
	if (!needs_asking(c->top))
		return c->top;
	for (k = c->top->next, n = 1; k && n < 2 * BATCH; k = k->next, n++)
		if (k->known)
			return k;
	return c->top;
}

/* How many regions a batch of c's may hold (1: no batches). */
static int batch_of(const struct kclass *c)
{
	size_t pages = c->len / page_size, most = BATCH_PAGES / pages;
	if (pages > KNOWN_PAGES)
		return 1;
	return most >= BATCH ? BATCH : (int)most;
}

/* Should this request be left to the kernel, so that the region it gets
 * is kept beside c's and a batch forms?  Only while no batch of c's lies
 * side by side (among the 2 * BATCH most recently kept), at most 2 * BATCH
 * - 1 times between whole batches (or RETRY_ASKS asks short of one), with
 * fewer than 4 * BATCH kept, and only where the cap lets one more be kept
 * (lock held).  Returns where the new region would extend the longest
 * such run downward (the caller's hint to the kernel: the first region
 * may lie in a hole of the address space, or have the shim's own memory
 * below it), or 0: take one now. */
static uintptr_t decline_locked(struct kclass *c)
{
	uintptr_t st[2 * BATCH], x, low = 0;
	int want = batch_of(c), n = 0, i, j, run = 0, best = 0;
	const struct kept *k;
	if (want < 2 || c->declined >= 2u * (unsigned)want - 1 ||
	    kept_bytes[c->rule] + c->len > rule_max[c->rule] || S.kept_total + c->len > S.total_cap)
		return 0;
	for (k = c->top; k && n < 2 * want; k = k->next)
		st[n++] = k->node.start;
	for (i = n; k && i < 4 * want; k = k->next)
		i++;
	if (i == 4 * want) /* kept enough already: more would only grow the cache */
		return 0;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && st[j - 1] > st[j]; j--) {
			x = st[j];
			st[j] = st[j - 1];
			st[j - 1] = x;
		}
	for (i = 0; i < n; i++) {
		run = i && st[i - 1] + c->len == st[i] ? run + 1 : 1;
		if (run > best) {
			best = run;
			low = st[i - run + 1];
		}
	}
	if (best >= want || low < c->len)
		return 0;
	c->declined++;
	return low - c->len;
}

/* Take t (lock held, released here) and ask about it together with the
 * regions of its key kept right beside it, in one mincore; they remember
 * what it said.  Returns t's pages resident, zeroed, or NOT_ASKED: t is
 * the caller's, to ask about alone (no batch here, or a neighbour went
 * meanwhile). */
static size_t zero_batch(struct kclass *c, struct kept *t, int swap)
{
	struct {
		struct kept *k;
		uintptr_t start;
		uint32_t gen;
	} b[2 * BATCH], x;
	unsigned char vec[BATCH_PAGES];
	size_t run[SCATTERED_RUNS][2], len = c->len, per = len / page_size;
	uintptr_t lo, hi, ts = t->node.start;
	struct kept *k;
	int n = 0, seen = 0, i, j, want = batch_of(c), r;
	if (want < 2 || swap) {
		unlink_locked(t);
		slab_put(&S.kslab, t);
		spin_unlock(&S.klock);
		return NOT_ASKED;
	}
	/* t (the top) and the others to ask about among the most recently
	 * kept, by address */
	for (k = c->top; k && seen < 2 * BATCH; k = k->next, seen++)
		if (k == t || needs_asking(k)) {
			b[n].k = k;
			b[n].start = k->node.start;
			b[n].gen = k->gen;
			n++;
		}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && b[j - 1].start > b[j].start; j--) {
			x = b[j];
			b[j] = b[j - 1];
			b[j - 1] = x;
		}
	/* the run of them that touch each other, t's, at most want long */
	for (i = 0; b[i].k != t; i++)
		;
	for (j = i; j + 1 < n && j - i + 2 <= want && b[j + 1].start == b[j].start + len; j++)
		;
	for (; i > 0 && j - i + 2 <= want && b[i - 1].start + len == b[i].start; i--)
		;
	lo = b[i].start;
	hi = b[j].start + len;
	unlink_locked(t); /* ours now; the others stay kept while we ask */
	slab_put(&S.kslab, t);
	spin_unlock(&S.klock);
	if (sys_mincore((void *)lo, hi - lo, vec) != 0) /* (a neighbour gone meanwhile) */
		return NOT_ASKED;
	spin_lock(&S.klock);
	/* A whole batch: should the program take some back, more may be
	 * declined.  Asked about short of one, again and again (the kernel put
	 * the new regions elsewhere, or the program took ranges back): now and
	 * then, again. */
	if (j - i + 1 == want || ++c->short_asks >= RETRY_ASKS) {
		c->declined = 0;
		c->short_asks = 0;
	}
	for (; i <= j; i++) {
		const unsigned char *v = vec + (b[i].start - lo) / page_size;
		if (b[i].start == ts)
			continue;
		k = (struct kept *)rt_find(&S.tree, b[i].start);
		if (k != b[i].k || k->gen != b[i].gen || !needs_asking(k))
			continue; /* given back, or kept anew, meanwhile */
		if (resident_runs(v, per, run, SCATTERED_RUNS) > SCATTERED_RUNS)
			continue; /* scattered: asked about when taken (and dropped whole) */
		memset(k->res, 0, sizeof k->res);
		for (r = 0; r < (int)per; r++)
			k->res[r / 64] |= (uint64_t)(v[r] & 1) << (r % 64);
		k->known = 1;
	}
	spin_unlock(&S.klock);
	return zero_window(ts, vec + (ts - lo) / page_size, per, 0); /* t itself (no swap here) */
}

uintptr_t recycle_take(int rule, size_t len, int prot, int flags, size_t *resident, uintptr_t *beside, uint32_t *epoch, int *slice)
{
	struct figs_rule *rs = &g_stats.rules[rule];
	struct kclass *c;
	struct kept *k = NULL;
	uintptr_t a = 0;
	uint64_t t0;
	int full = 0, clean = 0, known = 0, swap;
	uint64_t res[KNOWN_PAGES / 64];
	if (!recycle_any())
		return 0;
again:
	spin_lock(&S.klock);
	c = class_of(rule, len, prot, flags, 0);
	if (c && c->top)
		k = pick_locked(c);
	/* Swap matters only to a region that must be asked about; it is read
	 * once, and never under the lock (it may open a file). */
	swap = __atomic_load_n(&S.swap_on, __ATOMIC_RELAXED);
	if (k && swap < 0 && needs_asking(k)) {
		spin_unlock(&S.klock);
		swap_in_use();
		k = NULL;
		goto again;
	}
	if (k && beside && !swap && needs_asking(k) && (*beside = decline_locked(c)) != 0)
		k = NULL;
	if (!k) {
		spin_unlock(&S.klock);
		return 0;
	}
	a = k->node.start;
	full = k->full;
	clean = k->clean;
	known = k->known;
	if (epoch)
		*epoch = k->epoch;
	if (slice)
		*slice = k->slice;
	if (needs_asking(k)) {
		/* (zero_batch releases the lock; the budget's charge goes with t) */
		budget_release(len);
		t0 = os_now_ns();
		*resident = zero_batch(c, k, swap);
		if (*resident == NOT_ASKED)
			*resident = zero_touched(a, len, swap);
		goto cleared;
	}
	if (known)
		memcpy(res, k->res, sizeof res);
	unlink_locked(k);
	slab_put(&S.kslab, k);
	spin_unlock(&S.klock);
	budget_release(len);
	if (clean) { /* stock: never written since it was mapped */
		*resident = 0;
		st_add(&rs->carve_fresh, 1);
		return a;
	}
	/* Clearing resident pages takes no fault, so only the time is taken
	 * (a clock read, no system call): the fault meter would be two. */
	t0 = os_now_ns();
	if (full || len <= CLEAR_WHOLE_BYTES) {
		memset((void *)a, 0, len); /* no need to ask: see the top */
		*resident = len / page_size;
	} else { /* known: asked about with others */
		*resident = zero_known(a, len / page_size, res);
	}
cleared:
	st_add(&rs->recycle_zero_ns, os_now_ns() - t0);
	st_add(&rs->recycle_zeroed_bytes, *resident * page_size);
	st_add(&rs->recycle_reused, 1);
	st_add(&rs->recycle_reused_bytes, len);
	return a;
}

uint64_t recycle_kept_bytes(int rule)
{
	return __atomic_load_n(&kept_bytes[rule], __ATOMIC_RELAXED);
}

void recycle_add_rule(int rule, uint64_t max)
{
	spin_lock(&S.klock);
	rule_max[rule] = max;
	S.cache_max += max;
	S.last_check = 0; /* (tight or not: looked at again) */
	spin_unlock(&S.klock);
}

void recycle_cap(uint64_t total) { __atomic_store_n(&S.total_cap, total, __ATOMIC_RELAXED); }
void recycle_cap_below(uint64_t total)
{
	uint64_t c = __atomic_load_n(&S.total_cap, __ATOMIC_RELAXED);
	while (c > total && !__atomic_compare_exchange_n(&S.total_cap, &c, total, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

uint64_t recycle_kept_total(void) { return __atomic_load_n(&S.kept_total, __ATOMIC_RELAXED); }
/* Kept, and being given back: kept_total read first, with acquire, so that
 * a region counted out of it is seen counted into giving (give_back_x adds
 * it there first).  Never low; for a moment high (counted in both). */
uint64_t recycle_held_total(void)
{
	uint64_t k = __atomic_load_n(&S.kept_total, __ATOMIC_ACQUIRE);
	return k + __atomic_load_n(&S.giving, __ATOMIC_ACQUIRE);
}
uint64_t recycle_given_total(void) { return __atomic_load_n(&S.given, __ATOMIC_ACQUIRE); }
void recycle_count_given(void) { __atomic_store_n(&S.count_given, 1, __ATOMIC_RELAXED); }
uint64_t recycle_capped(int rule) { return __atomic_load_n(&capped[rule], __ATOMIC_RELAXED); }
uint64_t recycle_trimmed(int rule) { return __atomic_load_n(&trimmed[rule], __ATOMIC_RELAXED); }
uint64_t recycle_kept_peak(void) { return __atomic_load_n(&S.kept_peak, __ATOMIC_RELAXED); }

void recycle_release_rule(int rule)
{
	for (;;) {
		uintptr_t a = 0;
		size_t len = 0;
		uint64_t counted = 0, res = 0;
		struct kclass *c;
		int b;
		spin_lock(&S.klock);
		for (b = 0; b < BUCKETS && !a; b++)
			for (c = buckets[b]; c && !a; c = c->next)
				if (c->rule == rule && c->top) {
					a = c->top->node.start;
					len = c->top->node.end - c->top->node.start;
					counted = out_locked(c->top, &res); /* (held until the munmap) */
				}
		spin_unlock(&S.klock);
		if (!a)
			return;
		res = resident_of(a, a + len, res);
		sys_munmap((void *)a, len); /* (never with the lock held) */
		gave(counted, res);
		budget_release(len);
	}
}

void recycle_atfork(int who)
{
	struct rnode *n;
	if (who == FORK_PREPARE) {
		spin_lock(&S.klock);
		return;
	}
	if (who == FORK_PARENT) {
		spin_unlock(&S.klock);
		return;
	}
	/* The child has the same mappings, so the cache is its own too.  Its
	 * counts start from zero (stats' hook ran first): what it inherited
	 * counts as kept, so that reuse never exceeds keeping, and as the
	 * cache's starting peak. */
	spin_init(&S.klock);
	memset(capped, 0, sizeof capped); /* (of recycle_dropped, which starts from zero too) */
	for (n = rt_first(&S.tree, 0); n; n = rt_next(&S.tree, n))
		if (!((struct kept *)n)->clean)
			st_add(&g_stats.rules[((struct kept *)n)->cls->rule].recycle_kept, 1);
	{
		int i;
		for (i = 0; i < POL_MAX_RULES; i++)
			if (kept_bytes[i])
				g_stats.rules[i].recycle_peak_bytes = kept_bytes[i];
	}
	S.last_check = 0;
	/* (a give-back in another thread of the parent, mid-way at the fork,
	 * is not finished here: its regions stay mapped, out of the cache) */
	S.giving = 0;
}
