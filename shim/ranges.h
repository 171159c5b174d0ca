/* ranges.h: address ranges that do not overlap, kept in order: the one
 * sorted-range helper (the shim's tracked regions, recycle's kept regions,
 * the profile's live mappings).
 *
 * A top-down splay tree keyed by start: every operation is O(log n)
 * amortised, whatever the number of ranges, and a program that maps and
 * unmaps near the same addresses (most do) finds them near the root.  Nodes
 * are embedded in the caller's records (put the rnode first) and come from
 * a slab that grows with sys_mmap, never malloc.  No locking: each table is
 * guarded by its owner's lock, and the slab never makes a system call
 * under it (slab_refill maps with no lock held).  Calls only glue.h and
 * lock.h.
 */
#ifndef PREFAULT_RANGES_H
#define PREFAULT_RANGES_H
#include "backoff.h"
#include "lock.h"
#include <stddef.h>
#include <stdint.h>

struct rnode {
	uintptr_t start, end; /* [start, end) */
	struct rnode *left, *right;
};

struct rtree {
	struct rnode *root;
	size_t n;
};

/* The first range with end > addr (the first that could overlap a range
 * starting at addr), or NULL. */
struct rnode *rt_first(struct rtree *t, uintptr_t addr);
/* The range after n, or NULL. */
struct rnode *rt_next(struct rtree *t, const struct rnode *n);
/* The range starting exactly at start, or NULL. */
struct rnode *rt_find(struct rtree *t, uintptr_t start);
/* n must not overlap any range in t. */
void rt_insert(struct rtree *t, struct rnode *n);
void rt_remove(struct rtree *t, struct rnode *n);

/* Fixed-size records, from 64 KiB chunks; a free list of records given
 * back.  Memory is never returned to the system (it is reused), and a fork
 * child has its own copy.  A chunk is mapped ahead, with no lock held: a
 * system call under a lock a wrapper takes would make every other thread
 * that wants it spin for as long as the kernel takes (mmap waits for the
 * address space's lock, which a populate on a worker can hold for
 * milliseconds). */
struct slab {
	size_t size;          /* record size, set before first use */
	void *free;
	char *cur, *end;
	size_t chunks;
	char *spare;          /* the next chunk, mapped by slab_refill */
	int want;             /* slab_get took the spare, or found none (atomic) */
	struct backoff fail;  /* after a failed map (backoff.h) */
};
/* Under the owner's lock; never a system call.  NULL when the records and
 * the spare chunk are used up: then the caller releases its lock, calls
 * slab_refill and may try again. */
void *slab_get(struct slab *s);
void slab_put(struct slab *s, void *p);
/* With no lock held (lock: the owner's): maps the spare chunk slab_get
 * asked for.  One relaxed load when none is asked for, so callers make it
 * after every unlock that followed a slab_get.  0, or -1 if the system has
 * no memory (or, after a failure, for a while: backoff.h). */
int slab_refill(struct slab *s, spin_t *lock);
#endif
