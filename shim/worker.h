/* worker.h: background prefaulting (worker.c). */
#ifndef PREFAULT_WORKER_H
#define PREFAULT_WORKER_H
#include <stddef.h>
#include <stdint.h>

/* workers: threads per process (1 to 64).  strategy: see worker.c. */
void worker_setup(unsigned workers, int strategy);
enum { BG_LEAP, BG_TRAIL }; /* BG_TRAIL: the old front-to-back walk, for benchmarks only */
/* Queue [start, start+len) for rule; 0, or -1 if the queue is full.
 * W_HUGE: it is to get huge pages (chunks are whole huge pages).  W_CHECK:
 * the first chunk is populated both ways (pool_huge_check), advising huge
 * pages over [adv_lo, adv_hi), the mapping it lies in, and the faster is
 * kept for the rest; the figures go to the rule's hugepage_check.  A change
 * to that mapping before the check ran (munmap, mprotect, ...) drops the
 * check: nothing is advised, the job goes on with small pages. */
enum { W_HUGE = 1, W_CHECK = 2 };
int worker_enqueue(uintptr_t start, size_t len, int rule, size_t chunk, int advice, int flags, uintptr_t adv_lo,
                   uintptr_t adv_hi);
/* The range is going away or changing: drop it from queued jobs. */
void worker_cancel(uintptr_t start, size_t len);
/* What is still queued for rule (for the report: see spin_lock_bounded). */
uint64_t worker_left_bytes(int rule, int may_wait);
/* What the rules in the mask (bit r: rule r, under 64) have queued that is
 * not populated yet: still queued, and the chunks being populated now. */
uint64_t worker_pending_bytes(uint64_t rules);
void worker_atfork(int who);
/* From the constructor, when a rule may queue work: see glue_warm_add. */
void worker_warm(void);
/* From the constructor, once threads may start: start workers for what was
 * queued before it. */
void worker_kick(void);
#endif
