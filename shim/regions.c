/* regions.c: see regions.h. */
#include "regions.h"
#include "lock.h"
#include <sched.h>
#include <string.h>

#define REG_MAX 16384
#define BLK_MAX 16384 /* power of two */

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

void budget_set(uint64_t limit)
{
	__atomic_store_n(&b_limit, limit, __ATOMIC_RELAXED);
	__atomic_store_n(&b_state, 2, __ATOMIC_RELEASE);
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

/* ---- mapped regions: sorted, non-overlapping ---- */

static spin_t reg_lock;
static struct region reg[REG_MAX];
static size_t nreg;

/* First index whose end is above addr. */
static size_t reg_lower(uintptr_t addr)
{
	size_t lo = 0, hi = nreg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (reg[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t reg_forget_locked(uintptr_t start, uintptr_t end)
{
	uint64_t released = 0;
	size_t i = reg_lower(start);
	while (i < nreg && reg[i].start < end) {
		struct region *r = &reg[i];
		uintptr_t os = r->start > start ? r->start : start;
		uintptr_t oe = r->end < end ? r->end : end;
		uint64_t len = r->end - r->start;
		/* The charge of the overlap, in proportion (regions are charged
		 * per byte, so this is exact unless a charge was partial). */
		uint64_t part = (uint64_t)((unsigned __int128)r->charged * (oe - os) / len);
		if (os == r->start && oe == r->end) {
			released += r->charged;
			memmove(r, r + 1, (nreg - i - 1) * sizeof *r);
			__atomic_store_n(&nreg, nreg - 1, __ATOMIC_RELAXED);
			continue;
		}
		r->flags &= (uint16_t)~RF_RECYCLE; /* no longer the region that was mapped */
		if (os == r->start) {
			r->start = oe;
		} else if (oe == r->end) {
			r->end = os;
		} else if (nreg < REG_MAX) { /* a hole in the middle: split */
			memmove(r + 1, r, (nreg - i) * sizeof *r);
			__atomic_store_n(&nreg, nreg + 1, __ATOMIC_RELAXED);
			r->end = os;
			r[1].start = oe;
			r[1].charged = (uint64_t)((unsigned __int128)r->charged * (r[1].end - oe) / len);
			r->charged = r->charged - part - r[1].charged;
			released += part;
			i += 2;
			continue;
		} else { /* no room to split: give the whole charge back */
			released += r->charged;
			memmove(r, r + 1, (nreg - i - 1) * sizeof *r);
			__atomic_store_n(&nreg, nreg - 1, __ATOMIC_RELAXED);
			continue;
		}
		r->charged -= part;
		released += part;
		i++;
	}
	return released;
}

int regions_add(uintptr_t start, size_t len, int rule, unsigned flags, uint64_t charged)
{
	size_t i;
	spin_lock(&reg_lock);
	budget_release(reg_forget_locked(start, start + len)); /* stale entries */
	if (nreg == REG_MAX) {
		spin_unlock(&reg_lock);
		return -1;
	}
	i = reg_lower(start);
	memmove(&reg[i + 1], &reg[i], (nreg - i) * sizeof reg[0]);
	reg[i].start = start;
	reg[i].end = start + len;
	reg[i].charged = charged;
	reg[i].rule = (uint16_t)rule;
	reg[i].flags = (uint16_t)flags;
	reg[i].prot = 0;
	reg[i].mflags = 0;
	__atomic_store_n(&nreg, nreg + 1, __ATOMIC_RELAXED);
	spin_unlock(&reg_lock);
	return 0;
}

void regions_set_mmap(uintptr_t start, int prot, int mflags)
{
	size_t i;
	spin_lock(&reg_lock);
	i = reg_lower(start);
	if (i < nreg && reg[i].start == start) {
		reg[i].prot = prot;
		reg[i].mflags = mflags;
	}
	spin_unlock(&reg_lock);
}

int regions_take_exact(uintptr_t start, size_t len, struct region *out)
{
	size_t i;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return 0;
	spin_lock(&reg_lock);
	i = reg_lower(start);
	if (i < nreg && reg[i].start == start && reg[i].end == start + len) {
		*out = reg[i];
		memmove(&reg[i], &reg[i + 1], (nreg - i - 1) * sizeof reg[0]);
		__atomic_store_n(&nreg, nreg - 1, __ATOMIC_RELAXED);
		spin_unlock(&reg_lock);
		return 1;
	}
	spin_unlock(&reg_lock);
	return 0;
}

void regions_uncharge(uintptr_t start, size_t len)
{
	uint64_t released = 0;
	size_t i;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return;
	spin_lock(&reg_lock);
	for (i = reg_lower(start); i < nreg && reg[i].start < start + len; i++) {
		uintptr_t os = reg[i].start > start ? reg[i].start : start;
		uintptr_t oe = reg[i].end < start + len ? reg[i].end : start + len;
		uint64_t part = (uint64_t)((unsigned __int128)reg[i].charged * (oe - os) / (reg[i].end - reg[i].start));
		reg[i].charged -= part;
		released += part;
	}
	spin_unlock(&reg_lock);
	budget_release(released);
}

void regions_clear_flag(uintptr_t start, size_t len, unsigned flag)
{
	size_t i;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return;
	spin_lock(&reg_lock);
	for (i = reg_lower(start); i < nreg && reg[i].start < start + len; i++)
		reg[i].flags &= (uint16_t)~flag;
	spin_unlock(&reg_lock);
}

uint64_t regions_forget(uintptr_t start, size_t len)
{
	uint64_t released;
	if (__atomic_load_n(&nreg, __ATOMIC_RELAXED) == 0)
		return 0; /* the common case, no lock */
	spin_lock(&reg_lock);
	released = reg_forget_locked(start, start + len);
	spin_unlock(&reg_lock);
	budget_release(released);
	return released;
}

size_t regions_count(void) { return __atomic_load_n(&nreg, __ATOMIC_RELAXED); }

/* ---- malloc blocks: open addressing, linear probing, backward-shift delete ---- */

struct block {
	const void *key;
	struct region r;
};
static spin_t blk_lock;
static struct block blk[BLK_MAX];
static size_t nblk;

static size_t blk_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (BLK_MAX - 1);
}

int blocks_add(const void *p, uintptr_t start, size_t len, int rule, unsigned flags, uint64_t charged)
{
	size_t i;
	spin_lock(&blk_lock);
	if (nblk >= BLK_MAX * 3 / 4) {
		spin_unlock(&blk_lock);
		return -1;
	}
	for (i = blk_hash(p); blk[i].key && blk[i].key != p; i = (i + 1) & (BLK_MAX - 1))
		;
	if (!blk[i].key)
		__atomic_store_n(&nblk, nblk + 1, __ATOMIC_RELAXED);
	blk[i].key = p;
	blk[i].r.start = start;
	blk[i].r.end = start + len;
	blk[i].r.charged = charged;
	blk[i].r.rule = (uint16_t)rule;
	blk[i].r.flags = (uint16_t)flags;
	spin_unlock(&blk_lock);
	return 0;
}

int blocks_take(const void *p, struct region *out)
{
	size_t i, j;
	if (__atomic_load_n(&nblk, __ATOMIC_RELAXED) == 0)
		return 0;
	spin_lock(&blk_lock);
	for (i = blk_hash(p); blk[i].key; i = (i + 1) & (BLK_MAX - 1))
		if (blk[i].key == p)
			break;
	if (!blk[i].key) {
		spin_unlock(&blk_lock);
		return 0;
	}
	*out = blk[i].r;
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (j = (i + 1) & (BLK_MAX - 1); blk[j].key; j = (j + 1) & (BLK_MAX - 1)) {
		size_t h = blk_hash(blk[j].key);
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

void regions_lock_all(void)
{
	spin_lock(&reg_lock);
	spin_lock(&blk_lock);
}

void regions_unlock_all(void)
{
	spin_unlock(&blk_lock);
	spin_unlock(&reg_lock);
}

void regions_reset(void)
{
	/* The child inherited the parent's mappings and their charges: keep the
	 * tables (they describe the child's memory too) but nothing else. */
	spin_init(&reg_lock);
	spin_init(&blk_lock);
}
