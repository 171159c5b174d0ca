/* backoff.h: a call the shim makes for its own sake, that failed, is not
 * made again on every wrapper call.
 *
 * Some of the shim's system calls are made from a wrapper when it needs
 * something: a chunk of records (ranges.c), a bigger blocks table
 * (regions.c), a helper thread (glue.c).  When the system refuses (no
 * memory, RLIMIT_AS or RLIMIT_NPROC, a seccomp filter), the same call
 * would fail again on the next wrapper call, and the next: a failing
 * system call on every mmap or malloc of a program short of memory.  After
 * a failure the next 16 asks give up at once, then 32 after the next
 * failure, and so on up to 4,096; a success starts again from nothing.
 * What the call was for is bookkeeping or help: the program's own call
 * goes on either way (untracked, or not helped), as it does when the call
 * fails.  Lock-free; two threads racing may each try once.
 */
#ifndef PREFAULT_BACKOFF_H
#define PREFAULT_BACKOFF_H

#define BACKOFF_FIRST 16u
#define BACKOFF_MAX 4096u

struct backoff {
	unsigned skip; /* asks that give up at once (atomic) */
	unsigned next; /* what the next failure sets skip to (atomic) */
};

/* 1: give up now, without the call. */
static inline int backoff_skip(struct backoff *b)
{
	unsigned k = __atomic_load_n(&b->skip, __ATOMIC_RELAXED);
	while (k && !__atomic_compare_exchange_n(&b->skip, &k, k - 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return k != 0;
}

static inline void backoff_failed(struct backoff *b)
{
	unsigned n = __atomic_load_n(&b->next, __ATOMIC_RELAXED);
	n = n ? (n < BACKOFF_MAX ? 2 * n : BACKOFF_MAX) : BACKOFF_FIRST;
	__atomic_store_n(&b->next, n, __ATOMIC_RELAXED);
	__atomic_store_n(&b->skip, n, __ATOMIC_RELAXED);
}

static inline void backoff_ok(struct backoff *b)
{
	if (__atomic_load_n(&b->next, __ATOMIC_RELAXED))
		__atomic_store_n(&b->next, 0, __ATOMIC_RELAXED);
}
#endif
