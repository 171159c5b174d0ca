/* pool.h: one large populate split over several threads (pool.c). */
#ifndef PREFAULT_POOL_H
#define PREFAULT_POOL_H
#include <stddef.h>
#include <stdint.h>

/* Populate [start, start+len) with up to `threads` threads, the caller
 * among them; returns the madvise result of the caller's part (0 or -1) and
 * adds the helpers' faults to *helper_faults. */
int pool_populate(uintptr_t start, size_t len, int advice, unsigned threads, uint64_t *helper_faults);

/* The first chunk both ways (a rule's hugepage_check, and the learner):
 * [s, e) lies in a mapping [adv_lo, adv_hi) that nothing has advised yet.
 * Populate [s, a) with small pages, a the end of the first whole huge
 * page, timed; advise huge pages over the whole mapping (never a part of
 * it: a mapping split in two would make the program's mremap of it fail,
 * where without us it works); populate the next huge page, timed.  The
 * faster a page is kept: if small pages won, the advice is taken back
 * (MADV_NOHUGEPAGE: where THP is in madvise mode, what the kernel does by
 * default anyway).  Returns the end of what was populated, or s when [s, e)
 * holds no two whole chunks (then nothing was done).  Only where THP is in
 * madvise mode: with THP always on, small pages cannot be had to compare. */
struct hcheck {
	uint64_t small_ns, small_pages, huge_ns, huge_pages;
	int huge; /* huge pages kept */
};
/* For the tests: what every check finds (1 huge pages win, -1 small, 0
 * measured; 2 huge pages win the first check of a mapping and lose when
 * the learner judges them again), from PREFAULT_TEST_HUGE. */
extern int pool_test_huge __attribute__((visibility("hidden")));
uintptr_t pool_huge_check(uintptr_t s, uintptr_t e, uintptr_t adv_lo, uintptr_t adv_hi, int advice, struct hcheck *h);
/* Huge pages kept, judged again (the learner): both sides in a scratch
 * mapping of our own, at the same moment: a quarter of a huge page's worth
 * of small pages (advised against huge pages), then one whole huge page,
 * populated and timed, and unmapped.  What the kernel and the host charge
 * for each just now, never touching the program's memory or its advice
 * (taking that back to measure small pages in place would give the
 * program's own faults meanwhile small pages, and a page table that keeps
 * a whole huge page of it small).  The caller charges the budget for it
 * (1.25 huge pages, for a moment).  h->huge: huge pages won.  -1 if no
 * scratch mapping could be had: nothing judged. */
int pool_huge_recheck(struct hcheck *h);
void pool_atfork(int who);
/* From the constructor, for the largest `threads = N` of the policy: see
 * glue_warm_add. */
void pool_warm(unsigned threads);
#endif
