/* regions.c: see regions.h. */
#include "regions.h"
#include "fork.h"
#include "glue.h"
#include "lock.h"
#include "ranges.h"
#include <string.h>
#include <sys/mman.h>

/* The records of the two tables. */
struct reg {
	struct rnode node; /* first: the tree's node is the record */
	uint64_t charged;
	uint16_t rule, flags;
	int prot, mflags;
	uint32_t epoch;
	uint16_t weight;
};

struct block {
	const void *key; /* written and read atomically (probes run unlocked) */
	uintptr_t start, end;
	uint64_t charged;
	uint16_t rule, flags;
	uint32_t epoch;
	uint16_t weight;
};
struct btab {
	size_t cap; /* a power of two */
	struct block slot[];
};

/* The module's state, in one place. */
static struct {
	/* the budget */
	uint64_t b_limit, b_used, b_peak;
	uint64_t b_cap; /* a second limit, set as it goes (budget_set_cap) */
	uint64_t (*b_compute)(void);
	int b_state; /* 0: not yet known, 1: being published, 2: known */
	/* mapped regions */
	spin_t reg_lock;
	struct rtree reg_tree;
	struct slab reg_slab;
	size_t nreg;  /* read without the lock: zero means nothing to look up */
	int nlocked;  /* regions and blocks with RF_LOCKED, roughly: a hint */
	/* malloc blocks */
	spin_t blk_lock;
	struct btab *table; /* in use (published with release) */
	size_t nblk;
	uint32_t blk_seq;   /* odd while the table changes */
	struct backoff blk_fail; /* a bigger table could not be mapped (backoff.h) */
} S = { .b_limit = UINT64_MAX, .b_cap = UINT64_MAX, .reg_slab = { sizeof(struct reg), NULL, NULL, NULL, 0, NULL, 1 } };

/* ---- the budget ---- */


/* The limit is worked out on first use: most processes of a tree never
 * prefault anything, and reading /proc and the cgroup files costs each of
 * them a dozen system calls at start. */
void budget_set_lazy(uint64_t (*compute)(void))
{
	S.b_compute = compute;
	__atomic_store_n(&S.b_state, 0, __ATOMIC_RELEASE);
}

/* Never waits for another thread: it may be stopped, be the code a signal
 * handler interrupted, have been cancelled, or not exist (a fork child).
 * Each thread that finds the limit unknown works it out itself (a dozen
 * small reads, once or twice per process), and the first publishes it.
 * While the memory cgroup's files are still being found by another thread
 * the answer is 0 for now: nothing is prefaulted on a guess. */
uint64_t budget_limit(void)
{
	uint64_t l;
	int expect = 0;
	if (__atomic_load_n(&S.b_state, __ATOMIC_ACQUIRE) == 2 || !S.b_compute)
		return __atomic_load_n(&S.b_limit, __ATOMIC_RELAXED);
	l = S.b_compute();
	if (l == BUDGET_UNKNOWN)
		return 0;
	if (__atomic_compare_exchange_n(&S.b_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&S.b_limit, l, __ATOMIC_RELAXED);
		__atomic_store_n(&S.b_state, 2, __ATOMIC_RELEASE);
	}
	return l;
}
int budget_known(void)
{
	return !S.b_compute || __atomic_load_n(&S.b_state, __ATOMIC_ACQUIRE) == 2;
}
uint64_t budget_used(void) { return __atomic_load_n(&S.b_used, __ATOMIC_RELAXED); }
uint64_t budget_peak(void) { return __atomic_load_n(&S.b_peak, __ATOMIC_RELAXED); }

void budget_set_cap(uint64_t cap) { __atomic_store_n(&S.b_cap, cap, __ATOMIC_RELAXED); }

int budget_reserve(uint64_t n)
{
	uint64_t cur = __atomic_load_n(&S.b_used, __ATOMIC_RELAXED), lim = budget_limit(), peak;
	uint64_t cap = __atomic_load_n(&S.b_cap, __ATOMIC_RELAXED);
	if (cap < lim)
		lim = cap;
	do {
		if (n > lim || cur > lim - n)
			return 0;
	} while (!__atomic_compare_exchange_n(&S.b_used, &cur, cur + n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	peak = __atomic_load_n(&S.b_peak, __ATOMIC_RELAXED);
	while (cur + n > peak &&
	       !__atomic_compare_exchange_n(&S.b_peak, &peak, cur + n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return 1;
}

void budget_release(uint64_t n)
{
	if (n)
		__atomic_fetch_sub(&S.b_used, n, __ATOMIC_RELAXED);
}

/* ---- mapped regions ---- */



static uint64_t part_of(uint64_t charged, uintptr_t os, uintptr_t oe, uintptr_t s, uintptr_t e)
{
	/* The charge of the overlap, in proportion (regions are charged per
	 * byte, so this is exact unless a charge was partial). */
	return (uint64_t)((unsigned __int128)charged * (oe - os) / (e - s));
}

static void drop(struct reg *r)
{
	if (r->flags & RF_LOCKED)
		__atomic_fetch_sub(&S.nlocked, 1, __ATOMIC_RELAXED);
	rt_remove(&S.reg_tree, &r->node);
	slab_put(&S.reg_slab, r);
	__atomic_store_n(&S.nreg, S.reg_tree.n, __ATOMIC_RELAXED);
}

static uint64_t forget_locked(uintptr_t start, uintptr_t end)
{
	uint64_t released = 0;
	struct rnode *n = rt_first(&S.reg_tree, start);
	while (n && n->start < end) {
		struct reg *r = (struct reg *)n;
		uintptr_t os = n->start > start ? n->start : start;
		uintptr_t oe = n->end < end ? n->end : end;
		uint64_t part = part_of(r->charged, os, oe, n->start, n->end);
		struct rnode *next = rt_next(&S.reg_tree, n);
		if (os == n->start && oe == n->end) {
			released += r->charged;
			drop(r);
			n = next;
			continue;
		}
		r->flags &= (uint16_t)~RF_RECYCLE; /* no longer the region that was mapped */
		if (os == n->start) {
			n->start = oe;
		} else if (oe == n->end) {
			n->end = os;
		} else { /* a hole in the middle: split */
			struct reg *tail = slab_get(&S.reg_slab);
			if (!tail) { /* no memory to split: give the whole charge back */
				released += r->charged;
				drop(r);
				n = next;
				continue;
			}
			*tail = *r;
			tail->node.start = oe;
			tail->node.end = n->end;
			tail->charged = part_of(r->charged, oe, n->end, n->start, n->end);
			r->charged -= part + tail->charged;
			n->end = os;
			if (tail->flags & RF_LOCKED)
				__atomic_fetch_add(&S.nlocked, 1, __ATOMIC_RELAXED);
			rt_insert(&S.reg_tree, &tail->node);
			__atomic_store_n(&S.nreg, S.reg_tree.n, __ATOMIC_RELAXED);
			released += part;
			n = rt_next(&S.reg_tree, &tail->node);
			continue;
		}
		r->charged -= part;
		released += part;
		n = next;
	}
	return released;
}

int regions_add(const struct region *in)
{
	struct reg *r;
	int tries;
	for (tries = 0;; tries++) {
		spin_lock(&S.reg_lock);
		budget_release(forget_locked(in->start, in->end)); /* stale entries */
		if ((r = slab_get(&S.reg_slab)))
			break;
		/* out of records: a chunk mapped with no lock held (ranges.h) */
		spin_unlock(&S.reg_lock);
		if (tries || slab_refill(&S.reg_slab, &S.reg_lock) != 0)
			return -1;
	}
	r->node.start = in->start;
	r->node.end = in->end;
	r->charged = in->charged;
	r->rule = (uint16_t)in->rule;
	r->flags = (uint16_t)in->flags;
	r->prot = in->prot;
	r->mflags = in->mflags;
	r->epoch = in->epoch;
	r->weight = in->weight;
	rt_insert(&S.reg_tree, &r->node);
	__atomic_store_n(&S.nreg, S.reg_tree.n, __ATOMIC_RELAXED);
	if (in->flags & RF_LOCKED)
		__atomic_fetch_add(&S.nlocked, 1, __ATOMIC_RELAXED);
	spin_unlock(&S.reg_lock);
	slab_refill(&S.reg_slab, &S.reg_lock);
	return 0;
}

static void out_of(const struct reg *r, struct region *out)
{
	out->start = r->node.start;
	out->end = r->node.end;
	out->charged = r->charged;
	out->rule = r->rule;
	out->flags = r->flags;
	out->prot = r->prot;
	out->mflags = r->mflags;
	out->epoch = r->epoch;
	out->weight = r->weight;
}

int regions_take_exact(uintptr_t start, size_t len, struct region *out)
{
	struct rnode *n;
	if (__atomic_load_n(&S.nreg, __ATOMIC_RELAXED) == 0)
		return 0;
	spin_lock(&S.reg_lock);
	n = rt_find(&S.reg_tree, start);
	if (n && n->end == start + len) {
		out_of((struct reg *)n, out);
		drop((struct reg *)n);
		spin_unlock(&S.reg_lock);
		return 1;
	}
	spin_unlock(&S.reg_lock);
	return 0;
}

void regions_uncharge(uintptr_t start, size_t len)
{
	uint64_t released = 0;
	struct rnode *n;
	if (__atomic_load_n(&S.nreg, __ATOMIC_RELAXED) == 0)
		return;
	spin_lock(&S.reg_lock);
	for (n = rt_first(&S.reg_tree, start); n && n->start < start + len; n = rt_next(&S.reg_tree, n)) {
		struct reg *r = (struct reg *)n;
		uintptr_t os = n->start > start ? n->start : start;
		uintptr_t oe = n->end < start + len ? n->end : start + len;
		uint64_t part = part_of(r->charged, os, oe, n->start, n->end);
		r->charged -= part;
		released += part;
	}
	spin_unlock(&S.reg_lock);
	budget_release(released);
}

void regions_clear_flag(uintptr_t start, size_t len, unsigned flag)
{
	struct rnode *n;
	if (__atomic_load_n(&S.nreg, __ATOMIC_RELAXED) == 0)
		return;
	spin_lock(&S.reg_lock);
	for (n = rt_first(&S.reg_tree, start); n && n->start < start + len; n = rt_next(&S.reg_tree, n)) {
		struct reg *r = (struct reg *)n;
		if ((flag & RF_LOCKED) && (r->flags & RF_LOCKED))
			__atomic_fetch_sub(&S.nlocked, 1, __ATOMIC_RELAXED);
		r->flags &= (uint16_t)~flag;
	}
	spin_unlock(&S.reg_lock);
}

uint64_t regions_forget(uintptr_t start, size_t len)
{
	uint64_t released;
	if (__atomic_load_n(&S.nreg, __ATOMIC_RELAXED) == 0)
		return 0; /* the common case, no lock */
	spin_lock(&S.reg_lock);
	released = forget_locked(start, start + len);
	spin_unlock(&S.reg_lock);
	slab_refill(&S.reg_slab, &S.reg_lock); /* (a split may have used the spare) */
	budget_release(released);
	return released;
}

/* ---- malloc blocks: open addressing, linear probing, backward-shift delete ---- */

/* free() of a block the shim does not track must cost the program next to
 * nothing, from any thread, while other threads add and take blocks.  So:
 *  - blocks_lo and blocks_span bound every tracked pointer, and free looks
 *    no further for a pointer outside them (a subtraction and a compare).
 *    They only widen while blocks are tracked.  A widening stores the new
 *    span (large enough for the old low end too) before the new low end,
 *    with release: a free that reads the new low end reads a span that
 *    covers everything, and one that reads the old low end a span at least
 *    as large as before, so no tracked block ever falls outside.  (The
 *    block being added is not the program's yet: its free comes after.)
 *  - inside them, blocks_take probes without the lock, under a sequence
 *    count that every change makes odd while it works: a probe that saw no
 *    change and no key is an answer; otherwise it takes the lock.  A table
 *    outgrown is never unmapped (a probe may still be reading it): the
 *    tables double, so what is kept is less than the table in use. */
uintptr_t blocks_lo, blocks_span;

static size_t blk_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static const void *key_of(const struct block *b) { return __atomic_load_n(&b->key, __ATOMIC_RELAXED); }
static void set_key(struct block *b, const void *k) { __atomic_store_n(&b->key, k, __ATOMIC_RELAXED); }
static void put(struct block *dst, const struct block *src)
{
	dst->start = src->start;
	dst->end = src->end;
	dst->charged = src->charged;
	dst->rule = src->rule;
	dst->flags = src->flags;
	dst->epoch = src->epoch;
	dst->weight = src->weight;
	set_key(dst, key_of(src));
}

/* The table changes (lock held): odd on entry, even on leaving. */
static void change_begin(void)
{
	__atomic_store_n(&S.blk_seq, S.blk_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}
static void change_end(void) { __atomic_store_n(&S.blk_seq, S.blk_seq + 1, __ATOMIC_RELEASE); }

static void blk_place(struct btab *t, const struct block *b)
{
	size_t i;
	for (i = blk_hash(b->key, t->cap); key_of(&t->slot[i]) && key_of(&t->slot[i]) != b->key; i = (i + 1) & (t->cap - 1))
		;
	put(&t->slot[i], b);
}

#define BLK_FIRST 1024 /* the first table's slots; each growth doubles them */

/* A table of cap slots, in bytes: what is mapped and unmapped for it. */
static size_t btab_bytes(size_t cap) { return sizeof(struct btab) + cap * sizeof(((struct btab *)0)->slot[0]); }

/* A table of cap slots holding what S.table holds, mapped with no lock
 * held (a system call under blk_lock would make every free of a tracked
 * block wait for the kernel); MAP_FAILED if there is no memory.  The copy
 * is made under the lock by blk_swap. */
static struct btab *blk_map(size_t cap)
{
	/* A table that grows is populated: blk_swap copies the old one into
	 * it under blk_lock, where a fault would be a wait in the kernel with
	 * every tracked free waiting on us.  The first (BLK_FIRST) is not:
	 * it starts empty, and most processes never fill it. */
	struct btab *t = sys_mmap(NULL, btab_bytes(cap), PROT_READ | PROT_WRITE,
	                          MAP_PRIVATE | MAP_ANONYMOUS | (cap > BLK_FIRST ? MAP_POPULATE : 0), -1, 0);
	if (t != MAP_FAILED) {
		t->cap = cap;
		glue_own_add((int64_t)btab_bytes(cap));
	}
	return t;
}

/* blk_lock held: does the table need to grow before one more block? */
static int blk_full(void) { return !S.table || (S.nblk + 1) * 4 > S.table->cap * 3; }
static size_t blk_next_cap(void) { return S.table ? S.table->cap * 2 : BLK_FIRST; }

/* blk_lock held: t (blk_map) takes the table's place if it is the size
 * wanted now; returns t if it did not (the caller unmaps it). */
static struct btab *blk_swap(struct btab *t)
{
	size_t i;
	if (!blk_full() || t->cap != blk_next_cap())
		return t; /* (another thread grew it meanwhile) */
	for (i = 0; S.table && i < S.table->cap; i++)
		if (S.table->slot[i].key)
			blk_place(t, &S.table->slot[i]);
	__atomic_store_n(&S.table, t, __ATOMIC_RELEASE); /* the old one stays mapped: see above */
	return NULL;
}

/* Widen the published bounds to take in p (lock held). */
static void bounds_take_in(const void *p)
{
	uintptr_t a = (uintptr_t)p, lo = blocks_lo, hi = lo + blocks_span;
	if (blocks_span == UINTPTR_MAX)
		return; /* everything is looked at already */
	if (!blocks_span)
		lo = hi = a;
	if (a < lo)
		lo = a;
	if (a >= hi)
		hi = a + 1;
	__atomic_store_n(&blocks_span, hi - lo, __ATOMIC_RELAXED);
	__atomic_store_n(&blocks_lo, lo, __ATOMIC_RELEASE);
}

void blocks_watch_all(void)
{
	spin_lock(&S.blk_lock);
	__atomic_store_n(&blocks_span, UINTPTR_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&blocks_lo, 0, __ATOMIC_RELEASE);
	spin_unlock(&S.blk_lock);
}

int blocks_add(const void *p, const struct region *r)
{
	struct block b;
	spin_lock(&S.blk_lock);
	while (blk_full()) { /* (grown with the lock let go) */
		struct btab *t;
		size_t cap = blk_next_cap();
		spin_unlock(&S.blk_lock);
		if (backoff_skip(&S.blk_fail)) /* (no failing mmap on every call) */
			return -1;
		if ((t = blk_map(cap)) == MAP_FAILED) {
			backoff_failed(&S.blk_fail);
			return -1;
		}
		backoff_ok(&S.blk_fail);
		spin_lock(&S.blk_lock);
		if ((t = blk_swap(t))) {
			spin_unlock(&S.blk_lock);
			glue_own_add(-(int64_t)btab_bytes(t->cap));
			sys_munmap(t, btab_bytes(t->cap));
			spin_lock(&S.blk_lock);
		}
	}
	b.key = p;
	b.start = r->start;
	b.end = r->end;
	b.charged = r->charged;
	b.rule = (uint16_t)r->rule;
	b.flags = (uint16_t)r->flags;
	b.epoch = r->epoch;
	b.weight = r->weight;
	change_begin();
	{
		size_t i;
		for (i = blk_hash(p, S.table->cap); S.table->slot[i].key && S.table->slot[i].key != p; i = (i + 1) & (S.table->cap - 1))
			;
		if (!S.table->slot[i].key)
			__atomic_store_n(&S.nblk, S.nblk + 1, __ATOMIC_RELAXED);
		put(&S.table->slot[i], &b);
	}
	change_end();
	bounds_take_in(p);
	if (r->flags & RF_LOCKED)
		__atomic_fetch_add(&S.nlocked, 1, __ATOMIC_RELAXED);
	spin_unlock(&S.blk_lock);
	return 0;
}

/* Is p in the table?  Without the lock: 0 or 1, or -1 if the table
 * changed meanwhile (then ask again under the lock). */
static int probe(const void *p)
{
	uint32_t seq = __atomic_load_n(&S.blk_seq, __ATOMIC_ACQUIRE);
	const struct btab *t = __atomic_load_n(&S.table, __ATOMIC_ACQUIRE);
	const void *k;
	size_t i;
	int found = 0;
	if ((seq & 1) || !t)
		return -1;
	for (i = blk_hash(p, t->cap); (k = key_of(&t->slot[i])); i = (i + 1) & (t->cap - 1))
		if (k == p) {
			found = 1;
			break;
		}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&S.blk_seq, __ATOMIC_RELAXED) == seq ? found : -1;
}

int blocks_take(const void *p, struct region *out)
{
	size_t i, j, mask;
	struct block *blk;
	if (__atomic_load_n(&S.nblk, __ATOMIC_RELAXED) == 0 || probe(p) == 0)
		return 0;
	spin_lock(&S.blk_lock);
	blk = S.table->slot;
	mask = S.table->cap - 1;
	for (i = blk_hash(p, S.table->cap); blk[i].key; i = (i + 1) & mask)
		if (blk[i].key == p)
			break;
	if (!blk[i].key) {
		spin_unlock(&S.blk_lock);
		return 0;
	}
	out->start = blk[i].start;
	out->end = blk[i].end;
	out->charged = blk[i].charged;
	out->rule = blk[i].rule;
	out->flags = blk[i].flags;
	out->prot = out->mflags = 0;
	out->epoch = blk[i].epoch;
	out->weight = blk[i].weight;
	if (blk[i].flags & RF_LOCKED)
		__atomic_fetch_sub(&S.nlocked, 1, __ATOMIC_RELAXED);
	change_begin();
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (j = (i + 1) & mask; blk[j].key; j = (j + 1) & mask) {
		size_t h = blk_hash(blk[j].key, S.table->cap);
		/* Move j into the hole at i if its home slot is not in (i, j]. */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			put(&blk[i], &blk[j]);
			i = j;
		}
	}
	set_key(&blk[i], NULL);
	__atomic_store_n(&S.nblk, S.nblk - 1, __ATOMIC_RELAXED);
	change_end();
	/* None left: free need look at nothing again (a free reading the old
	 * bounds only looks for nothing). */
	if (!S.nblk && blocks_span != UINTPTR_MAX)
		__atomic_store_n(&blocks_span, 0, __ATOMIC_RELAXED);
	spin_unlock(&S.blk_lock);
	return 1;
}

size_t blocks_count(void) { return __atomic_load_n(&S.nblk, __ATOMIC_RELAXED); }

/* ---- the shim's locks, given back ---- */

int regions_any_locked(void) { return __atomic_load_n(&S.nlocked, __ATOMIC_RELAXED) > 0; }

#define BATCH 16

/* Collect up to BATCH regions or blocks the shim locked that overlap
 * [s, e) (all of them: e == 0), whole, clearing their flag; the munlock
 * calls are made with no lock held.  (Unlocking more than the range asked
 * is harmless: the lock was only ever the shim's.) */
static int collect_locked(uintptr_t s, uintptr_t e, uintptr_t (*out)[2])
{
	int k = 0;
	size_t i;
	struct rnode *n;
	spin_lock(&S.reg_lock);
	for (n = rt_first(&S.reg_tree, e ? s : 0); n && (!e || n->start < e) && k < BATCH; n = rt_next(&S.reg_tree, n)) {
		struct reg *r = (struct reg *)n;
		if (!(r->flags & RF_LOCKED))
			continue;
		out[k][0] = n->start;
		out[k][1] = n->end;
		r->flags &= (uint16_t)~RF_LOCKED;
		__atomic_fetch_sub(&S.nlocked, 1, __ATOMIC_RELAXED);
		k++;
	}
	spin_unlock(&S.reg_lock);
	spin_lock(&S.blk_lock);
	for (i = 0; S.table && i < S.table->cap && k < BATCH; i++) {
		struct block *b = &S.table->slot[i];
		if (!b->key || !(b->flags & RF_LOCKED) || (e && (b->end <= s || b->start >= e)))
			continue;
		out[k][0] = b->start;
		out[k][1] = b->end;
		b->flags &= (uint16_t)~RF_LOCKED;
		__atomic_fetch_sub(&S.nlocked, 1, __ATOMIC_RELAXED);
		k++;
	}
	spin_unlock(&S.blk_lock);
	return k;
}

int regions_locked_in(uintptr_t start, size_t len, uintptr_t (*out)[2], int max)
{
	int k = 0;
	size_t i;
	struct rnode *n;
	uintptr_t end = start + len;
	if (!regions_any_locked())
		return 0;
	spin_lock(&S.reg_lock);
	for (n = rt_first(&S.reg_tree, start); n && n->start < end && k < max; n = rt_next(&S.reg_tree, n)) {
		if (((struct reg *)n)->flags & RF_LOCKED) {
			out[k][0] = n->start;
			out[k][1] = n->end;
			k++;
		}
	}
	spin_unlock(&S.reg_lock);
	spin_lock(&S.blk_lock);
	for (i = 0; S.table && i < S.table->cap && k < max; i++) {
		const struct block *b = &S.table->slot[i];
		if (b->key && (b->flags & RF_LOCKED) && b->end > start && b->start < end) {
			out[k][0] = b->start;
			out[k][1] = b->end;
			k++;
		}
	}
	spin_unlock(&S.blk_lock);
	return k;
}

int regions_with(uintptr_t start, size_t len, unsigned flags, uintptr_t (*out)[3], int max)
{
	int k = 0;
	struct rnode *n;
	if (__atomic_load_n(&S.nreg, __ATOMIC_RELAXED) == 0)
		return 0;
	spin_lock(&S.reg_lock);
	for (n = rt_first(&S.reg_tree, start); n && n->start < start + len && k < max; n = rt_next(&S.reg_tree, n)) {
		const struct reg *r = (const struct reg *)n;
		if ((r->flags & flags) != flags)
			continue;
		out[k][0] = n->start;
		out[k][1] = n->end;
		out[k][2] = r->flags;
		k++;
	}
	spin_unlock(&S.reg_lock);
	return k;
}

void regions_disown_locks(void)
{
	struct rnode *n;
	size_t i;
	spin_lock(&S.reg_lock);
	for (n = rt_first(&S.reg_tree, 0); n; n = rt_next(&S.reg_tree, n))
		((struct reg *)n)->flags &= (uint16_t)~RF_LOCKED;
	spin_unlock(&S.reg_lock);
	spin_lock(&S.blk_lock);
	for (i = 0; S.table && i < S.table->cap; i++)
		S.table->slot[i].flags &= (uint16_t)~RF_LOCKED;
	spin_unlock(&S.blk_lock);
	__atomic_store_n(&S.nlocked, 0, __ATOMIC_RELAXED);
}

uint64_t regions_unlock(uintptr_t start, size_t len)
{
	uintptr_t pieces[BATCH][2];
	uint64_t bytes = 0;
	int k, i;
	if (!regions_any_locked())
		return 0;
	do { /* every round clears the flags it collects: it ends */
		k = collect_locked(start, len ? start + len : 0, pieces);
		for (i = 0; i < k; i++) {
			sys_munlock((void *)pieces[i][0], pieces[i][1] - pieces[i][0]);
			bytes += pieces[i][1] - pieces[i][0];
		}
	} while (k == BATCH);
	return bytes;
}

void regions_atfork(int who)
{
	if (who == FORK_PREPARE) {
		spin_lock(&S.reg_lock);
		spin_lock(&S.blk_lock);
	} else if (who == FORK_PARENT) {
		spin_unlock(&S.blk_lock);
		spin_unlock(&S.reg_lock);
	} else {
		/* The child inherited the parent's mappings and their charges:
		 * the tables describe its memory too, and stay.  mlock is not
		 * inherited across fork: nothing of it is locked. */
		struct rnode *n;
		size_t i;
		spin_init(&S.reg_lock);
		spin_init(&S.blk_lock);
		/* (a thread that was publishing the budget is gone) */
		if (S.b_state == 1)
			S.b_state = 0;
		for (n = rt_first(&S.reg_tree, 0); n; n = rt_next(&S.reg_tree, n))
			((struct reg *)n)->flags &= (uint16_t)~RF_LOCKED;
		for (i = 0; S.table && i < S.table->cap; i++)
			S.table->slot[i].flags &= (uint16_t)~RF_LOCKED;
		S.nlocked = 0;
	}
}

/* (the words before a block are the allocator's: a sanitizer's redzone there is no error of ours) */
UNSANITIZED int block_pages(const void *key, size_t size, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t k = (uintptr_t)key;
	*lo = PAGE_DOWN(k);
	*hi = PAGE_UP(k + size);
	if ((k & (page_size - 1)) >= 2 * sizeof(size_t)) {
		const size_t *w = (const size_t *)key;
		size_t head = w[-1], off = w[-2], total = off + (head & ~(size_t)7);
		uintptr_t map = k - 2 * sizeof(size_t) - off;
		/* (IS_MMAPPED alone among the flag bits; whole pages; the block
		 * inside, with at most two pages to spare: the header's, and
		 * glibc's rounding, or a size given as far as the last whole page) */
		if ((head & 7) == 2 && off < page_size && !(map & (page_size - 1)) && !(total & (page_size - 1)) &&
		    map <= *lo && total >= size && map + total >= k + size && map + total <= *hi + 2 * page_size) {
			*lo = map;
			*hi = map + total;
			return 1;
		}
	}
	return 0;
}
