/* prefault.h: carrying out a rule's actions on a range.
 *
 * The contract with the program: nothing it can observe changes.  Actions
 * are advice (MADV_*), population (MADV_POPULATE_*, which maps pages without
 * writing to them), or locking; errno is saved and restored around them by
 * the caller.  Everything that makes memory resident is charged to the
 * budget first, and skipped (and counted) when the budget is spent.
 */
#ifndef PREFAULT_PREFAULT_H
#define PREFAULT_PREFAULT_H
#include <stddef.h>
#include <stdint.h>
#include "glue.h"
#include "match.h"
#include "os.h"
#include "stats.h"

#define HPAGE (2ul << 20) /* the PMD size on x86-64 and arm64 with 4 KiB pages */

extern size_t pf_page;        /* sysconf(_SC_PAGESIZE), from the start of shim_init */
extern int pf_populate_ok;    /* MADV_POPULATE_* works on this kernel */
extern int pf_thp_ok;         /* transparent huge pages can be had */

/* What the shim decided before the real call, and what it has spent. */
struct plan {
	int rule;
	unsigned actions;
	uint64_t charge;       /* reserved before the call (map-populate) */
	int extra_flags;       /* added to the mmap flags */
	int align_huge;        /* place the mapping on a 2 MiB boundary */
	int recyclable;        /* a recycle rule on a plain anonymous private request */
	size_t recycled_resident; /* pages of a reused region already resident, or ~0 if fresh */
	uint64_t t0;
	struct faults f0;
};

void pf_init(const struct policy *pol);
/* Before an mmap: decide map-populate (reserving its budget) and placement. */
void pf_plan(const struct request *rq, int rule, struct plan *pl);
/* mmap on a 2 MiB boundary: reserve HPAGE more and trim both ends. */
void *pf_mmap_huge(mmap_fn f, size_t len, int prot, int flags, int fd, off_t off);
/* After a successful call: act on [start, start+len).  `key` is the pointer a
 * malloc-family call returned (NULL for mmap). */
void pf_apply(const struct request *rq, struct plan *pl, void *start, size_t len, const void *key);
/* The call failed: give back what pf_plan reserved. */
void pf_cancel(struct plan *pl);
/* The program is giving memory back, or changing it. */
void pf_unmapped(void *addr, size_t len);
/* munmap: 1 if the region was kept for recycling (do not unmap it). */
int pf_munmap(void *addr, size_t len);
void pf_reprotected(void *addr, size_t len);
void pf_advised(void *addr, size_t len, int advice);
/* The program wants this range of address space (MAP_FIXED, hints, mremap). */
void pf_claim_range(void *addr, size_t len);
void pf_freed(void *p);
/* Huge pages gained by populating `bytes` with `faults` faults. */
void pf_count_huge(struct rule_stats *rs, uint64_t bytes, uint64_t faults);
#endif
