/* ranges.h: address ranges that do not overlap, kept in order: the one
 * sorted-range helper (the shim's tracked regions, recycle's kept regions,
 * the profile's live mappings).
 *
 * A top-down splay tree keyed by start: every operation is O(log n)
 * amortised, whatever the number of ranges, and a program that maps and
 * unmaps near the same addresses (most do) finds them near the root.  Nodes
 * are embedded in the caller's records (put the rnode first) and come from
 * a slab that grows with sys_mmap, never malloc.  No locking: each table is
 * guarded by its owner's lock.  Calls only glue.h.
 */
#ifndef PREFAULT_RANGES_H
#define PREFAULT_RANGES_H
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

/* Fixed-size records, from 64 KiB chunks mapped on demand; a free list of
 * records given back.  Memory is never returned to the system (it is
 * reused), and a fork child has its own copy. */
struct slab {
	size_t size;          /* record size, set before first use */
	void *free;
	char *cur, *end;
	size_t chunks;
};
void *slab_get(struct slab *s); /* NULL if the system has no memory */
void slab_put(struct slab *s, void *p);
#endif
