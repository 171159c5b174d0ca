/* stack.c: prefaulting thread stacks.
 *
 * glibc maps thread stacks with its internal mmap, which no preload sees, so
 * a `call = stack` rule works through pthread_create: the new thread starts
 * in a trampoline that prefaults the top `depth` bytes of its own stack (the
 * part below its stack pointer, unused until the program's deep calls reach
 * it), then calls the program's start routine.
 *
 * A new thread's stack is one mapping, whole: it is populated with
 * MADV_POPULATE_WRITE from the top down, a chunk at a time, and the first
 * chunk the kernel refuses ends it.  That is how a guard the program placed
 * itself (pthread_attr_setstack over a region whose bottom it made
 * PROT_NONE) stops us instead of crashing the program.  The main thread's
 * stack grows on demand and has nothing mapped below its current extent to
 * populate, so there the pages are touched, within RLIMIT_STACK, less a
 * margin.  The trampolines are a fixed pool: no malloc in pthread_create.
 */
#include "stack.h"
#include "glue.h"
#include "match.h"
#include "os.h"
#include "profile.h"
#include "regions.h"
#include "stats.h"
#include <alloca.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define TRAMPS 256
/* Under ThreadSanitizer a new thread must start in its runtime, which sets
 * the thread up; our trampoline would run first.  A TSan build of the shim
 * leaves threads alone (no stack rules, no per-thread fault sampling)
 * rather than crash them. */
#if defined(__SANITIZE_THREAD__)
#define TRAMPOLINES 0
#else
#define TRAMPOLINES 1
#endif
#define MARGIN (32u << 10)  /* left alone above the bottom of a stack */
#define STEP (64u << 10)    /* populate chunk, top down */

struct tramp {
	void *(*fn)(void *);
	void *arg;
	size_t size; /* the stack's size, as the program asked or glibc's default */
	int rule;
	int used;
};
static struct tramp tramps[TRAMPS];
static const struct policy *pol;

void stack_setup(const struct policy *p) { pol = p; }

static size_t default_stack(void)
{
	struct rlimit rl;
	if (sys_getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return (size_t)rl.rlim_cur;
	return 8u << 20;
}

static int stack_rule(size_t size, const void *ret)
{
	struct request rq;
	match_anon_request(&rq, CALL_STACK, size, ret);
	return match_request(&rq);
}

static void __attribute__((noinline)) touch_below(size_t depth)
{
	volatile char *buf = alloca(depth);
	size_t i;
	for (i = 0; i < depth; i += page_size)
		buf[depth - 1 - i] = 0; /* from the top down, as the stack grows */
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* Populate [top - depth, top) from the top down; returns the bytes done. */
static size_t populate_down(uintptr_t top, size_t depth)
{
	size_t done = 0;
	while (done < depth) {
		size_t n = depth - done < STEP ? depth - done : STEP;
		if (sys_madvise((void *)(top - done - n), n, MADV_POPULATE_WRITE) != 0) {
			stats_note(N_STACK_GUARD);
			break;
		}
		done += n;
	}
	return done;
}

/* This thread's stack: how much lies below here, less the margin, and
 * where here is (page-aligned down).  A new thread's from its size (size):
 * glibc puts the thread's descriptor at the top of its stack (x86_64 and
 * arm64 alike, its own stack or the program's), so the bottom lies at most
 * a descriptor's size above pthread_self() less the size; the margin covers
 * that, and a page refused below ends the populate anyway.  Never
 * pthread_getattr_np there: it mallocs in the new thread (a thread that
 * never used malloc then frees at its exit, where a handler's fork waits
 * for malloc's lock: helper-32).  The main thread's from glibc (it reads
 * /proc/self/maps), at start-up. */
static size_t room_below(uintptr_t *top, size_t size)
{
	pthread_attr_t attr;
	void *lo;
	char here;
	size_t room = 0;
	*top = PAGE_DOWN((uintptr_t)&here);
	if (size) {
		uintptr_t self = (uintptr_t)pthread_self();
		if (self > size && *top > self - size)
			room = (size_t)(*top - (self - size));
	} else {
		if (pthread_getattr_np(pthread_self(), &attr) != 0)
			return 0;
		if (pthread_attr_getstack(&attr, &lo, &size) == 0 && *top > (uintptr_t)lo)
			room = (size_t)(*top - (uintptr_t)lo);
		pthread_attr_destroy(&attr);
	}
	return room > MARGIN ? room - MARGIN : 0;
}

/* Returns the bytes charged to the budget (given back when the thread's
 * start routine returns; the main thread keeps its charge).  size: a new
 * thread's stack size, 0 for the main thread (room_below). */
static uint64_t prefault_self(int rule, int main_thread, size_t size)
{
	const struct pol_rule *r = &pol->rules[rule];
	struct figs_rule *rs = &g_stats.rules[rule];
	size_t depth = r->depth, room, done = 0;
	uintptr_t top;
	struct meter m;
	struct faults f;
	uint64_t ns;
	struct guard g = guard_enter();
	meter_start(&m, 1);
	room = room_below(&top, size);
	if (depth > room)
		depth = room;
	depth &= ~(page_size - 1);
	if (depth && !budget_reserve(depth)) {
		st_add(&rs->skip_budget, 1);
		stats_note(N_BUDGET);
		depth = 0;
	}
	if (depth && (r->actions & A_POPULATE)) {
		if (main_thread) {
			touch_below(depth);
			done = depth;
		} else {
			done = populate_down(top, depth);
		}
	}
	if (done < depth) {
		budget_release(depth - done);
		depth = done;
	}
	meter_read(&m, &f, &ns);
	stats_count_request(rs, depth);
	st_add(&rs->prefaulted_bytes, done);
	st_add(&rs->ns, ns);
	stats_prefault_faults(rs, f.minor, f.major);
	guard_leave(g);
	return depth;
}

static void *trampoline(void *p)
{
	struct tramp *t = p;
	void *(*fn)(void *) = t->fn;
	void *arg = t->arg;
	int rule = t->rule;
	size_t size = t->size;
	uint64_t charged;
	void *ret;
	__atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
	if (profiling) {
		struct guard g = guard_enter();
		profile_thread_start();
		guard_leave(g);
	}
	charged = rule >= 0 ? prefault_self(rule, 0, size) : 0;
	ret = fn(arg);
	budget_release(charged); /* (a thread ending in pthread_exit keeps it) */
	return ret;
}

int stack_wrap(void *(**fn)(void *), void **arg, const pthread_attr_t *attr, const void *ret)
{
	size_t size = 0;
	int rule, i;
	if (!TRAMPOLINES)
		return 0;
	if (attr) {
		pthread_attr_getstacksize(attr, &size);
	} else {
		pthread_attr_t d; /* (glibc's default, as pthread_setattr_default_np left it) */
		if (pthread_getattr_default_np(&d) == 0) {
			pthread_attr_getstacksize(&d, &size);
			pthread_attr_destroy(&d);
		}
	}
	if (!size)
		size = default_stack();
	rule = stack_rule(size, ret);
	if (rule < 0 && !profiling)
		return 0; /* (profiling needs every thread: it opens its fault event) */
	for (i = 0; i < TRAMPS; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&tramps[i].used, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			tramps[i].fn = *fn;
			tramps[i].arg = *arg;
			tramps[i].rule = rule;
			tramps[i].size = size;
			*fn = trampoline;
			*arg = &tramps[i];
			return 1;
		}
	}
	stats_note(N_TRAMPOLINES);
	return 0; /* all trampolines in flight: this thread goes without */
}

void stack_unwrap(void *arg)
{
	__atomic_store_n(&((struct tramp *)arg)->used, 0, __ATOMIC_RELEASE);
}

void stack_main(void)
{
	int rule;
	if (!pol)
		return;
	rule = stack_rule(default_stack(), NULL);
	if (rule >= 0)
		prefault_self(rule, 1, 0);
}
