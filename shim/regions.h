/* regions.h: what the shim holds on the program's behalf, and the budget.
 *
 * Two tables: mapped regions the shim acted on (ordered by address, so that
 * munmap, mremap, MAP_FIXED and madvise over any part of one find it), and
 * malloc blocks it acted on (hashed by pointer, so free is one probe).  Both
 * grow on demand from mmap'd memory, so a program with 256k live mappings
 * is tracked whole at O(log n) a call (ranges.h); only when the system has
 * no memory left is a request skipped (table_full, with a note).  Each entry
 * carries the bytes charged to the budget; the charge comes back when the
 * memory goes away.  The budget bounds what is prefaulted and still live,
 * not the total ever prefaulted.
 */
#ifndef PREFAULT_REGIONS_H
#define PREFAULT_REGIONS_H
#include <stddef.h>
#include <stdint.h>

enum {
	RF_LOCKED = 1,  /* the shim mlocked it (and the program has not locked it since) */
	RF_RECYCLE = 2, /* mapped by a recycle rule and still exactly as mapped */
	RF_FULL = 4,    /* every page was resident when last seen (a cost hint for
	                 * recycling: see recycle.c; never needed for correctness) */
	RF_MADE = 8,    /* the shim made pages of it resident (populated, locked,
	                 * queued, or a reused region it cleared): see pf_uffd */
	RF_SHARED = 16, /* a shared mapping: its pages are the file's (see pf_uffd) */
	RF_AUTO = 32,   /* the learner watches it (auto.c): no rule, no charge;
	                 * `rule` holds its site */
	RF_CARVED = 64, /* a slice of a carve reserve, with the reserve's huge-page
	                 * advice, which the program has not advised itself: a
	                 * mremap that moves or grows it takes the advice off */
	RF_UNADVISED = 128, /* the program's mapping, moved from a slice, that the
	                 * shim gave MADV_NOHUGEPAGE (pf_mremap): the program's
	                 * MADV_COLLAPSE there works as it would without us */
};

/* A tracked region, as the tables hand it out. */
struct region {
	uintptr_t start, end;
	uint64_t charged;
	int rule;
	unsigned flags;
	int prot, mflags;       /* of the mmap call, for recycling */
	uint32_t epoch;         /* the request's (struct request): the learner's count of its age */
	uint16_t weight;        /* the request's: what of it the learner counts as coming, per 1024 */
};

/* Budget.  The limit comes from compute(), called on first use (it returns
 * BUDGET_UNKNOWN when it cannot tell yet: see budget_limit). */
#define BUDGET_UNKNOWN (UINT64_MAX - 1)
void budget_set_lazy(uint64_t (*compute)(void));
uint64_t budget_limit(void);
/* Whether the limit has been worked out (by a prefault that needed it).  The
 * report prints an unknown limit as such rather than reading the files at
 * exit: most processes never need it. */
int budget_known(void);
int budget_reserve(uint64_t n);   /* 1 if granted */
/* A second limit, lowered or raised as it goes (the learner's hard bound:
 * auto.c); what is charged already stays so.  UINT64_MAX: none. */
void budget_set_cap(uint64_t cap);
void budget_release(uint64_t n);
uint64_t budget_used(void);
uint64_t budget_peak(void);

/* Mapped regions.  regions_add returns 0, or -1 when there is no memory to
 * track it (the caller gives the charge back). */
int regions_add(const struct region *r);
/* Remove the entry covering exactly [start, start+len); 1 and *out if found.
 * Its charge is the caller's to give back. */
int regions_take_exact(uintptr_t start, size_t len, struct region *out);
/* Give back the charge of [start, start+len) but keep the entries
 * (MADV_DONTNEED: the range stays mapped, its pages are gone). */
void regions_uncharge(uintptr_t start, size_t len);
/* Clear `flag` on every entry overlapping the range. */
void regions_clear_flag(uintptr_t start, size_t len, unsigned flag);
/* Forget [start, start+len): entries are trimmed or split; the charge of the
 * forgotten part is released.  Returns the number of bytes released. */
uint64_t regions_forget(uintptr_t start, size_t len);
/* munlock what the shim locked inside [start, start+len) (len 0: every
 * region and block); returns the bytes unlocked. */
uint64_t regions_unlock(uintptr_t start, size_t len);
/* The shim has locked something that is still locked. */
int regions_any_locked(void);
/* Up to max regions and blocks the shim locked that overlap [start,
 * start+len), whole, into out (flags kept): for an unlock and re-lock
 * around the program's own call.  Returns how many. */
int regions_locked_in(uintptr_t start, size_t len, uintptr_t (*out)[2], int max);
/* Up to max regions (not blocks) overlapping [start, start+len) that have
 * all the flags in `flags`, whole, into out: [0] start, [1] end, [2] flags.
 * Returns how many. */
int regions_with(uintptr_t start, size_t len, unsigned flags, uintptr_t (*out)[3], int max);
/* The program has locked everything itself (mlockall): no lock is the
 * shim's to undo any more. */
void regions_disown_locks(void);

/* Malloc blocks, keyed by the pointer malloc returned.  free() must look
 * at p only if p - blocks_lo < blocks_span: every tracked block lies in
 * there (read without a lock: regions.c says why that is safe). */
extern uintptr_t blocks_lo __attribute__((visibility("hidden")));
extern uintptr_t blocks_span __attribute__((visibility("hidden")));
/* From now on free looks at every pointer (the profile follows blocks). */
void blocks_watch_all(void);
int blocks_add(const void *p, const struct region *r);
/* Removes the block; returns 1 and fills *out if it was tracked. */
int blocks_take(const void *p, struct region *out);
size_t blocks_count(void);

void regions_atfork(int who);
/* The pages a malloc block of `size` bytes at key lies on, for advice over
 * it: advice over part of a mapping splits it, and glibc's realloc of a
 * block it mmapped (mremap of that whole mapping) would then fail and fall
 * back to copying, where without the shim it works.  A block glibc mmapped
 * says so in the two words before it (IS_MMAPPED in its size word, the
 * alignment offset before that), read only when they share key's page:
 * then its mapping exactly, checked to be whole pages around the block
 * (size may stop short of the block's end by less than a page).
 * Any other block: the whole pages it covers.  Returns 1 for the first (a
 * mapping of the block's own), 0 for the second.  No system call. */
int block_pages(const void *key, size_t size, uintptr_t *lo, uintptr_t *hi);
#endif
