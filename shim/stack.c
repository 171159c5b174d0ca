/* stack.c: prefaulting thread stacks.
 *
 * glibc maps thread stacks with its internal mmap, which no preload sees, so
 * a `call = stack` rule works through pthread_create: the new thread starts
 * in a trampoline that touches the top `depth` bytes of its own stack (the
 * part below its stack pointer, unused until the program's deep calls reach
 * it), then calls the program's start routine.  Touching, not
 * MADV_POPULATE: the main thread's stack grows on demand and has no mapping
 * below its current extent to populate.  The trampolines are a fixed pool:
 * no malloc in pthread_create.
 */
#include "glue.h"
#include "stack.h"
#include "match.h"
#include "os.h"
#include "prefault.h"
#include "profile.h"
#include "regions.h"
#include "shim.h"
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
#define MARGIN (32u << 10) /* left untouched above the guard page */

struct tramp {
	void *(*fn)(void *);
	void *arg;
	int rule;
	int used;
};
static struct tramp tramps[TRAMPS];

static size_t default_stack(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return (size_t)rl.rlim_cur;
	return 8u << 20;
}

static int stack_rule(size_t size, const void *ret)
{
	struct request rq;
	match_anon_request(&rq, E_PTHREAD_CREATE, CALL_STACK, size, ret);
	return match_request(&rq);
}

static void __attribute__((noinline)) touch_below(size_t depth)
{
	volatile char *buf = alloca(depth);
	size_t i;
	for (i = 0; i < depth; i += pf_page)
		buf[depth - 1 - i] = 0; /* from the top down, as the stack grows */
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* How much of this thread's stack lies below here, less a margin. */
static size_t room_below(void)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;
	char here;
	size_t room = 0;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	if (pthread_attr_getstack(&attr, &lo, &size) == 0 && (char *)&here > (char *)lo)
		room = (size_t)(&here - (char *)lo);
	pthread_attr_destroy(&attr);
	return room > MARGIN ? room - MARGIN : 0;
}

/* Returns the bytes charged to the budget (given back when the thread's
 * start routine returns; the main thread keeps its charge). */
static uint64_t prefault_self(int rule)
{
	const struct pol_rule *r = &shim_policy()->rules[rule];
	struct rule_stats *rs = &g_stats.rules[rule];
	size_t depth = r->depth, room;
	struct faults f0, f1;
	uint64_t t0 = os_now_ns();
	shim_guard++;
	room = room_below();
	if (depth > room)
		depth = room;
	depth &= ~(pf_page - 1);
	if (depth && !budget_reserve(depth)) {
		st_add(&rs->skipped[SK_BUDGET], 1);
		stats_note(N_BUDGET);
		depth = 0;
	}
	os_faults_thread(&f0);
	if (depth && (r->actions & A_POPULATE))
		touch_below(depth);
	os_faults_thread(&f1);
	stats_count_request(rs, depth);
	st_add(&rs->prefaulted_bytes, (r->actions & A_POPULATE) ? depth : 0);
	st_add(&rs->ns, os_now_ns() - t0);
	st_add(&rs->faults, f1.minor - f0.minor + f1.major - f0.major);
	st_add(&g_stats.pf_minor, f1.minor - f0.minor);
	st_add(&g_stats.pf_major, f1.major - f0.major);
	shim_guard--;
	return depth;
}

static void *trampoline(void *p)
{
	struct tramp *t = p;
	void *(*fn)(void *) = t->fn;
	void *arg = t->arg;
	int rule = t->rule;
	uint64_t charged;
	void *ret;
	__atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
	if (profiling) {
		shim_guard++;
		profile_thread_start();
		shim_guard--;
	}
	charged = rule >= 0 ? prefault_self(rule) : 0;
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
	if (attr)
		pthread_attr_getstacksize(attr, &size);
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
			*fn = trampoline;
			*arg = &tramps[i];
			return 1;
		}
	}
	return 0; /* all trampolines in flight: this thread goes without */
}

void stack_unwrap(void *arg)
{
	__atomic_store_n(&((struct tramp *)arg)->used, 0, __ATOMIC_RELEASE);
}

void stack_main(void)
{
	int rule = stack_rule(default_stack(), NULL);
	if (rule >= 0)
		prefault_self(rule);
}
