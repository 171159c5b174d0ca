/* lock.h: a tiny spinlock for the shim's own tables.
 *
 * Held only around a few loads and stores, never across a call that could
 * re-enter the shim or block, so it cannot deadlock with the program.  A
 * signal handler that maps memory while its thread holds the lock sees the
 * thread's re-entrancy guard and passes straight through (interpose.c);
 * fork takes every lock first and releases it in both processes (init.c).
 */
#ifndef PREFAULT_LOCK_H
#define PREFAULT_LOCK_H
#include "glue.h"

typedef struct { int v; } spin_t;

#ifdef PF_LOCK_CHECK
/* Checking builds (the sanitizers', make test-sanitize): the locks this
 * thread holds.  sys_n stops the process, naming the call, if the shim
 * makes a system call with one held (the contract above), so the whole
 * suite looks for the class on every path it runs. */
extern TLS int glue_locks_held;
#define LOCK_HELD(d) (glue_locks_held += (d))
/* A fork child's hooks set the locks its parent's prepare took back with
 * spin_init (one thread left: nothing to wait for), so the count is
 * turned off while they run and starts from zero after them. */
#define LOCK_HELD_SET(n) (glue_locks_held = (n))
#else
#define LOCK_HELD(d) ((void)0)
#define LOCK_HELD_SET(n) ((void)0)
#endif

static inline void spin_lock(spin_t *l)
{
	unsigned n = 0;
	while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) {
			if (++n > 64)
				sys_sched_yield(); /* the holder may be preempted; let it run */
#if defined(__x86_64__) || defined(__i386__)
			else
				__builtin_ia32_pause();
#endif
		}
	}
	LOCK_HELD(1);
}

static inline void spin_unlock(spin_t *l)
{
	LOCK_HELD(-1);
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/* For the report at exit, which may run in a signal handler that
 * interrupted the lock's holder on this very thread: take the lock if it
 * is free now, or (may_wait) within a bounded number of tries; 1 if taken.
 * A caller that did not get it reads without it: a figure a little off is
 * better than a process that never exits. */
static inline int spin_lock_bounded(spin_t *l, int may_wait)
{
	unsigned n;
	for (n = 0; n < (may_wait ? 100000u : 1u); n++) {
		if (!__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)) {
			LOCK_HELD(1);
			return 1;
		}
		if (n > 64)
			sys_sched_yield();
	}
	return 0;
}
/* A lock no wrapper ever takes (a helper thread's, against the exit and
 * fork hooks): it may be held across a system call, so it is not counted. */
static inline void slow_lock(spin_t *l)
{
	spin_lock(l);
	LOCK_HELD(-1);
}
static inline void slow_unlock(spin_t *l)
{
	LOCK_HELD(1);
	spin_unlock(l);
}
static inline int slow_lock_bounded(spin_t *l, int may_wait)
{
	int r = spin_lock_bounded(l, may_wait);
	if (r)
		LOCK_HELD(-1);
	return r;
}
static inline void spin_init(spin_t *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELAXED); }
#endif
