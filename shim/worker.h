/* worker.h: background prefaulting (worker.c) and parallel populate (pool.c). */
#ifndef PREFAULT_WORKER_H
#define PREFAULT_WORKER_H
#include <stddef.h>
#include <stdint.h>

/* Start threads running fn until *count reaches want: detached, with a
 * small stack, every signal blocked (signals are the program's business),
 * created with the real pthread_create (never through a stack rule). */
void shim_spawn(void *(*fn)(void *), size_t stack, int *count, int want);

void worker_setup(unsigned workers);
/* Queue [start, start+len) for rule; 0, or -1 if the queue is full. */
int worker_enqueue(uintptr_t start, size_t len, int rule, size_t chunk, int advice);
/* The range is going away or changing: drop it from queued jobs. */
void worker_cancel(uintptr_t start, size_t len);
uint64_t worker_left_bytes(int rule);
void worker_lock(void);
void worker_unlock(void);
void worker_fork_child(void);

/* Populate [start, start+len) with up to `threads` threads, the caller
 * among them; returns the madvise result of the caller's part (0 or -1) and
 * adds the helpers' faults to *helper_faults. */
int pool_populate(uintptr_t start, size_t len, int advice, unsigned threads, uint64_t *helper_faults);
void pool_fork_child(void);
#endif
