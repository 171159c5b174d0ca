/* regions.c: see regions.h. */
#include "regions.h"
#include "fork.h"
#include "glue.h"
#include "lock.h"
#include "ranges.h"
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

/* ---- the budget ---- */

static uint64_t b_limit = UINT64_MAX, b_used, b_peak;
static uint64_t (*b_compute)(void);
static int b_state; /* 0: not yet computed, 1: computing, 2: known */

/* The limit is worked out on first use: most processes of a tree never
 * prefault anything, and reading /proc and the cgroup files costs each of
 * them a dozen system calls at start. */
void budget_set_lazy(uint64_t (*compute)(void))
{
	b_compute = compute;
	__atomic_store_n(&b_state, 0, __ATOMIC_RELEASE);
}

uint64_t budget_limit(void)
{
	int st = __atomic_load_n(&b_state, __ATOMIC_ACQUIRE);
	if (st != 2 && b_compute) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&b_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&b_limit, b_compute(), __ATOMIC_RELAXED);
			__atomic_store_n(&b_state, 2, __ATOMIC_RELEASE);
		} else {
			while (__atomic_load_n(&b_state, __ATOMIC_ACQUIRE) != 2)
				sched_yield(); /* another thread is reading a few small files */
		}
	}
	return __atomic_load_n(&b_limit, __ATOMIC_RELAXED);
}
int budget_known(void)
{
	return !b_compute || __atomic_load_n(&b_state, __ATOMIC_ACQUIRE) == 2;
}
uint64_t budget_used(void) { return __atomic_load_n(&b_used, __ATOMIC_RELAXED); }
uint64_t budget_peak(void) { return __atomic_load_n(&b_peak, __ATOMIC_RELAXED); }

int budget_reserve(uint64_t n)
{
	uint64_t cur = __atomic_load_n(&b_used, __ATOMIC_RELAXED), lim = budget_limit(), peak;
	do {
		if (n > lim || cur > lim - n)
			return 0;
	} while (!__atomic_compare_exchange_n(&b_used, &cur, cur + n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	peak = __atomic_load_n(&b_peak, __ATOMIC_RELAXED);
	while (cur + n > peak &&
	       !__atomic_compare_exchange_n(&b_peak, &peak, cur + n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return 1;
}

void budget_release(uint64_t n)
{
	if (n)
		__atomic_fetch_sub(&b_used, n, __ATOMIC_RELAXED);
}

/* ---- mapped regions ---- */

struct reg {
	struct rnode node; /* first: the tree's node is the record */
	uint64_t charged;
	uint16_t rule, flags;
	int prot, mflags;
};

static spin_t reg_lock;
static struct rtree reg_tree;
static struct slab reg_slab = { sizeof(struct reg), NULL, NULL, NULL, 0 };
static size_t nreg;  /* read without the lock: zero means nothing to look up */
static int nlocked;  /* regions and blocks with RF_LOCKED, roughly: a hint */

static uint64_t part_of(uint64_t charged, uintptr_t os, uintptr_t oe, uintptr_t s, uintptr_t e)
{
	/* The charge of the overlap, in proportion (regions are charged per
	 * byte, so this is exact unless a charge was partial). */
	return (uint64_t)((unsigned __int128)charged * (oe - os) / (e - s));
}

static void drop(struct reg *r)
{
	if (r->flags & RF_LOCKED)
		__atomic_fetch_sub(&nlocked, 1, __ATOMIC_RELAXED);
	rt_remove(&reg_tree, &r->node);
	slab_put(&reg_slab, r);
	__atomic_store_n(&nreg, reg_tree.n, __ATOMIC_RELAXED);
}

static uint64_t forget_locked(uintptr_t start, uintptr_t end)
{
	uint64_t released = 0;
	struct rnode *n = rt_first(&reg_tree, start);
	while (n && n->start < end) {
		struct reg *r = (struct reg *)n;
		uintptr_t os = n->start > start ? n->start : start;
		uintptr_t oe = n->end < end ? n->end : end;
		uint64_t part = part_of(r->charged, os, oe, n->start, n->end);
		struct rnode *next = rt_next(&reg_tree, n);
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
			struct reg *tail = slab_get(&reg_slab);
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
				__atomic_fetch_add(&nlocked, 1, __ATOMIC_RELAXED);
			rt_insert(&reg_tree, &tail->node);
			__atomic_store_n(&nreg, reg_tree.n, __ATOMIC_RELAXED);
			released += part;
			n = rt_next(&reg_tree, &tail->node);
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
	spin_lock(&reg_lock);
	budget_release(forget_locked(in->start, in->end)); /* stale entries */
	r = slab_get(&reg_slab);
	if (!r) {
		spin_unlock(&reg_lock);
		return -1;
	}
	r->node.start = in->start;
	r->node.end = in->end;
	r->charged = in->charged;
	r->rule = (uint16_t)in->rule;
	r->flags = (uint16_t)in->flags;
	r->prot = in->prot;
	r->mflags = in->mflags;
	rt_insert(&reg_tree, &r->node);
	__atomic_store_n(&nreg, reg_tree.n, __ATOMIC_RELAXED);
	if (in->flags & RF_LOCKED)
		__atomic_fetch_add(&nlocked, 1, __ATOMIC_RELAXED);
	spin_unlock(&reg_lock);
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
}

int regions_take_exact(uintptr_t start, size_t len, struct region *out)
{
	struct rnode *n;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return 0;
	spin_lock(&reg_lock);
	n = rt_find(&reg_tree, start);
	if (n && n->end == start + len) {
		out_of((struct reg *)n, out);
		drop((struct reg *)n);
		spin_unlock(&reg_lock);
		return 1;
	}
	spin_unlock(&reg_lock);
	return 0;
}

void regions_uncharge(uintptr_t start, size_t len)
{
	uint64_t released = 0;
	struct rnode *n;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return;
	spin_lock(&reg_lock);
	for (n = rt_first(&reg_tree, start); n && n->start < start + len; n = rt_next(&reg_tree, n)) {
		struct reg *r = (struct reg *)n;
		uintptr_t os = n->start > start ? n->start : start;
		uintptr_t oe = n->end < start + len ? n->end : start + len;
		uint64_t part = part_of(r->charged, os, oe, n->start, n->end);
		r->charged -= part;
		released += part;
	}
	spin_unlock(&reg_lock);
	budget_release(released);
}

void regions_clear_flag(uintptr_t start, size_t len, unsigned flag)
{
	struct rnode *n;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return;
	spin_lock(&reg_lock);
	for (n = rt_first(&reg_tree, start); n && n->start < start + len; n = rt_next(&reg_tree, n)) {
		struct reg *r = (struct reg *)n;
		if ((flag & RF_LOCKED) && (r->flags & RF_LOCKED))
			__atomic_fetch_sub(&nlocked, 1, __ATOMIC_RELAXED);
		r->flags &= (uint16_t)~flag;
	}
	spin_unlock(&reg_lock);
}

uint64_t regions_forget(uintptr_t start, size_t len)
{
	uint64_t released;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return 0; /* the common case, no lock */
	spin_lock(&reg_lock);
	released = forget_locked(start, start + len);
	spin_unlock(&reg_lock);
	budget_release(released);
	return released;
}

/* ---- malloc blocks: open addressing, linear probing, backward-shift delete ---- */

struct block {
	const void *key;
	uintptr_t start, end;
	uint64_t charged;
	uint16_t rule, flags;
};
static spin_t blk_lock;
static struct block *blk;
static size_t blk_cap, nblk; /* cap: a power of two */

static size_t blk_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static void blk_place(struct block *t, size_t cap, const struct block *b)
{
	size_t i;
	for (i = blk_hash(b->key, cap); t[i].key && t[i].key != b->key; i = (i + 1) & (cap - 1))
		;
	t[i] = *b;
}

/* Double the table (from 1024 slots); -1 if there is no memory. */
static int blk_grow(void)
{
	size_t cap = blk_cap ? blk_cap * 2 : 1024, i;
	struct block *t = sys_mmap(NULL, cap * sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return -1;
	for (i = 0; i < blk_cap; i++)
		if (blk[i].key)
			blk_place(t, cap, &blk[i]);
	if (blk)
		sys_munmap(blk, blk_cap * sizeof *blk);
	blk = t;
	blk_cap = cap;
	return 0;
}

int blocks_add(const void *p, const struct region *r)
{
	struct block b;
	size_t i;
	spin_lock(&blk_lock);
	if ((nblk + 1) * 4 > blk_cap * 3 && blk_grow() < 0) {
		spin_unlock(&blk_lock);
		return -1;
	}
	b.key = p;
	b.start = r->start;
	b.end = r->end;
	b.charged = r->charged;
	b.rule = (uint16_t)r->rule;
	b.flags = (uint16_t)r->flags;
	for (i = blk_hash(p, blk_cap); blk[i].key && blk[i].key != p; i = (i + 1) & (blk_cap - 1))
		;
	if (!blk[i].key)
		__atomic_store_n(&nblk, nblk + 1, __ATOMIC_RELAXED);
	blk[i] = b;
	if (r->flags & RF_LOCKED)
		__atomic_fetch_add(&nlocked, 1, __ATOMIC_RELAXED);
	spin_unlock(&blk_lock);
	return 0;
}

int blocks_take(const void *p, struct region *out)
{
	size_t i, j, mask;
	if (__atomic_load_n(&nblk, __ATOMIC_RELAXED) == 0)
		return 0;
	spin_lock(&blk_lock);
	mask = blk_cap - 1;
	for (i = blk_hash(p, blk_cap); blk[i].key; i = (i + 1) & mask)
		if (blk[i].key == p)
			break;
	if (!blk[i].key) {
		spin_unlock(&blk_lock);
		return 0;
	}
	out->start = blk[i].start;
	out->end = blk[i].end;
	out->charged = blk[i].charged;
	out->rule = blk[i].rule;
	out->flags = blk[i].flags;
	out->prot = out->mflags = 0;
	if (blk[i].flags & RF_LOCKED)
		__atomic_fetch_sub(&nlocked, 1, __ATOMIC_RELAXED);
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (j = (i + 1) & mask; blk[j].key; j = (j + 1) & mask) {
		size_t h = blk_hash(blk[j].key, blk_cap);
		/* Move j into the hole at i if its home slot is not in (i, j]. */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			blk[i] = blk[j];
			i = j;
		}
	}
	blk[i].key = NULL;
	__atomic_store_n(&nblk, nblk - 1, __ATOMIC_RELAXED);
	spin_unlock(&blk_lock);
	return 1;
}

size_t blocks_count(void) { return __atomic_load_n(&nblk, __ATOMIC_RELAXED); }

/* ---- the shim's locks, given back ---- */

int regions_any_locked(void) { return __atomic_load_n(&nlocked, __ATOMIC_RELAXED) > 0; }

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
	spin_lock(&reg_lock);
	for (n = rt_first(&reg_tree, e ? s : 0); n && (!e || n->start < e) && k < BATCH; n = rt_next(&reg_tree, n)) {
		struct reg *r = (struct reg *)n;
		if (!(r->flags & RF_LOCKED))
			continue;
		out[k][0] = n->start;
		out[k][1] = n->end;
		r->flags &= (uint16_t)~RF_LOCKED;
		__atomic_fetch_sub(&nlocked, 1, __ATOMIC_RELAXED);
		k++;
	}
	spin_unlock(&reg_lock);
	spin_lock(&blk_lock);
	for (i = 0; i < blk_cap && k < BATCH; i++) {
		struct block *b = &blk[i];
		if (!b->key || !(b->flags & RF_LOCKED) || (e && (b->end <= s || b->start >= e)))
			continue;
		out[k][0] = b->start;
		out[k][1] = b->end;
		b->flags &= (uint16_t)~RF_LOCKED;
		__atomic_fetch_sub(&nlocked, 1, __ATOMIC_RELAXED);
		k++;
	}
	spin_unlock(&blk_lock);
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
	spin_lock(&reg_lock);
	for (n = rt_first(&reg_tree, start); n && n->start < end && k < max; n = rt_next(&reg_tree, n)) {
		if (((struct reg *)n)->flags & RF_LOCKED) {
			out[k][0] = n->start;
			out[k][1] = n->end;
			k++;
		}
	}
	spin_unlock(&reg_lock);
	spin_lock(&blk_lock);
	for (i = 0; i < blk_cap && k < max; i++) {
		const struct block *b = &blk[i];
		if (b->key && (b->flags & RF_LOCKED) && b->end > start && b->start < end) {
			out[k][0] = b->start;
			out[k][1] = b->end;
			k++;
		}
	}
	spin_unlock(&blk_lock);
	return k;
}

void regions_disown_locks(void)
{
	struct rnode *n;
	size_t i;
	spin_lock(&reg_lock);
	for (n = rt_first(&reg_tree, 0); n; n = rt_next(&reg_tree, n))
		((struct reg *)n)->flags &= (uint16_t)~RF_LOCKED;
	spin_unlock(&reg_lock);
	spin_lock(&blk_lock);
	for (i = 0; i < blk_cap; i++)
		blk[i].flags &= (uint16_t)~RF_LOCKED;
	spin_unlock(&blk_lock);
	__atomic_store_n(&nlocked, 0, __ATOMIC_RELAXED);
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
		spin_lock(&reg_lock);
		spin_lock(&blk_lock);
	} else if (who == FORK_PARENT) {
		spin_unlock(&blk_lock);
		spin_unlock(&reg_lock);
	} else {
		/* The child inherited the parent's mappings and their charges:
		 * the tables describe its memory too, and stay.  mlock is not
		 * inherited across fork: nothing of it is locked. */
		struct rnode *n;
		size_t i;
		spin_init(&reg_lock);
		spin_init(&blk_lock);
		for (n = rt_first(&reg_tree, 0); n; n = rt_next(&reg_tree, n))
			((struct reg *)n)->flags &= (uint16_t)~RF_LOCKED;
		for (i = 0; i < blk_cap; i++)
			blk[i].flags &= (uint16_t)~RF_LOCKED;
		nlocked = 0;
	}
}
