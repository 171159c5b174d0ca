/* pool.h: one large populate split over several threads (pool.c). */
#ifndef PREFAULT_POOL_H
#define PREFAULT_POOL_H
#include <stddef.h>
#include <stdint.h>

/* Populate [start, start+len) with up to `threads` threads, the caller
 * among them; returns the madvise result of the caller's part (0 or -1) and
 * adds the helpers' faults to *helper_faults. */
int pool_populate(uintptr_t start, size_t len, int advice, unsigned threads, uint64_t *helper_faults);
void pool_atfork(int who);
/* From the constructor, for the largest `threads = N` of the policy: see
 * glue_warm. */
void pool_warm(unsigned threads);
#endif
