/* regions.h: what the shim holds on the program's behalf, and the budget.
 *
 * Two tables: mapped regions the shim acted on (sorted by address, so that
 * munmap, mremap, MAP_FIXED and madvise over any part of one can find it),
 * and malloc blocks it prefaulted (hashed by pointer, so free is one probe).
 * Each entry carries the bytes charged to the budget; the charge comes back
 * when the memory goes away.  The budget bounds what is prefaulted and still
 * live, not the total ever prefaulted: a program that maps and unmaps the
 * same arena a million times may populate it a million times.
 */
#ifndef PREFAULT_REGIONS_H
#define PREFAULT_REGIONS_H
#include <stddef.h>
#include <stdint.h>

enum {
	RF_LOCKED = 1,  /* the shim mlocked it */
	RF_RECYCLE = 2, /* mapped by a recycle rule and still exactly as mapped */
};

struct region {
	uintptr_t start, end;
	uint64_t charged;
	uint16_t rule;
	uint16_t flags;
	int prot, mflags;       /* of the mmap call, for recycling */
};

/* Budget */
void budget_set(uint64_t limit);
/* The limit comes from compute(), called once, on first use. */
void budget_set_lazy(uint64_t (*compute)(void));
uint64_t budget_limit(void);
int budget_reserve(uint64_t n);   /* 1 if granted */
void budget_release(uint64_t n);
uint64_t budget_used(void);
uint64_t budget_peak(void);

/* Mapped regions.  regions_add returns 0, or -1 when the table is full. */
int regions_add(uintptr_t start, size_t len, int rule, unsigned flags, uint64_t charged);
/* The mmap arguments of the region just added at start (for recycling). */
void regions_set_mmap(uintptr_t start, int prot, int mflags);
/* Remove the entry covering exactly [start, start+len); 1 and *out if found.
 * Its charge is the caller's to give back. */
int regions_take_exact(uintptr_t start, size_t len, struct region *out);
/* Give back the charge of [start, start+len) but keep the entries
 * (MADV_DONTNEED: the range stays mapped, its pages are gone). */
void regions_uncharge(uintptr_t start, size_t len);
/* Clear `flag` on every entry overlapping the range (mprotect: no longer
 * "exactly as mapped"). */
void regions_clear_flag(uintptr_t start, size_t len, unsigned flag);
/* Forget [start, start+len): entries are trimmed or split; the charge of the
 * forgotten part is released.  Returns the number of bytes released. */
uint64_t regions_forget(uintptr_t start, size_t len);
size_t regions_count(void);

/* Malloc blocks, keyed by the pointer malloc returned. */
int blocks_add(const void *p, uintptr_t start, size_t len, int rule, unsigned flags, uint64_t charged);
/* Removes the block; returns 1 and fills *out if it was tracked. */
int blocks_take(const void *p, struct region *out);
size_t blocks_count(void);

/* fork: hold every lock across it. */
void regions_lock_all(void);
void regions_unlock_all(void);
void regions_reset(void); /* in a fork child that starts afresh */
#endif
