/* worker.h: background prefaulting (worker.c). */
#ifndef PREFAULT_WORKER_H
#define PREFAULT_WORKER_H
#include <stddef.h>
#include <stdint.h>

/* workers: threads per process (1 to 64).  strategy: see worker.c. */
void worker_setup(unsigned workers, int strategy);
enum { BG_LEAP, BG_TRAIL }; /* BG_TRAIL: the old front-to-back walk, for benchmarks only */
/* Queue [start, start+len) for rule (huge: it is to get huge pages); 0, or
 * -1 if the queue is full. */
int worker_enqueue(uintptr_t start, size_t len, int rule, size_t chunk, int advice, int huge);
/* The range is going away or changing: drop it from queued jobs. */
void worker_cancel(uintptr_t start, size_t len);
/* What is still queued for rule (for the report: see spin_lock_bounded). */
uint64_t worker_left_bytes(int rule, int may_wait);
void worker_atfork(int who);
/* From the constructor, when a rule may queue work: see glue_warm. */
void worker_warm(void);
#endif
