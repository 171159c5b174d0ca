/* worker.c: background prefaulting.
 *
 * A `background` rule's range is queued and the program's call returns at
 * once.  Worker threads take the oldest job and populate it in chunks, front
 * to back, because programs fill buffers from the start.  A worker never
 * stores into program memory: MADV_POPULATE_* maps pages without writing
 * them, so it cannot race the program's own stores, and it fails harmlessly
 * if the range was unmapped or remapped meanwhile.  munmap, mremap, mprotect,
 * MAP_FIXED and free cut the affected part out of a queued job.
 *
 * Workers start on first need (never at exit; exit never waits for them),
 * block every signal, and sleep on a futex when the queue is empty.  A fork
 * child starts with an empty queue and no workers.
 */
#include "glue.h"
#include "worker.h"
#include "lock.h"
#include "os.h"
#include "prefault.h"
#include "shim.h"
#include "stats.h"
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define JOBS 256

struct job {
	uintptr_t cur, end;  /* what is left: [cur, end) */
	uint64_t seq;        /* queue order; a split keeps its parent's */
	size_t chunk;
	int rule;
	int advice;
	int active;
};

static struct job jobs[JOBS];
static spin_t jlock;
static int nactive;           /* jobs with work left; read without the lock */
static uint64_t next_seq;
static uint32_t wake;         /* futex word: bumped when work arrives */
static int nworkers, want_workers = 1, starting;

static void futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 64, NULL, NULL, 0);
}

static void futex_wait(uint32_t *w, uint32_t seen)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

/* The oldest job with work left, or NULL.  Called with jlock held. */
static struct job *oldest(void)
{
	struct job *best = NULL;
	int i;
	for (i = 0; i < JOBS; i++)
		if (jobs[i].active && jobs[i].cur < jobs[i].end && (!best || jobs[i].seq < best->seq))
			best = &jobs[i];
	return best;
}

static void retire(struct job *j)
{
	j->active = 0;
	__atomic_store_n(&nactive, nactive - 1, __ATOMIC_RELAXED);
}

static void *worker_main(void *arg)
{
	(void)arg;
	shim_guard = 1; /* everything this thread calls passes straight through */
	for (;;) {
		uint32_t seen = __atomic_load_n(&wake, __ATOMIC_ACQUIRE);
		struct job *j;
		uintptr_t s, e;
		int rule, advice, r;
		size_t before;
		struct faults f0, f1;
		struct rule_stats *rs;
		spin_lock(&jlock);
		j = oldest();
		if (!j) {
			spin_unlock(&jlock);
			futex_wait(&wake, seen);
			continue;
		}
		s = j->cur;
		e = s + j->chunk < j->end ? s + j->chunk : j->end;
		j->cur = e;
		rule = j->rule;
		advice = j->advice;
		if (j->cur >= j->end)
			retire(j);
		spin_unlock(&jlock);

		rs = &g_stats.rules[rule];
		before = os_resident_pages(s, e, pf_page);
		os_faults_thread(&f0);
		r = sys_madvise((void *)s, e - s, advice);
		os_faults_thread(&f1);
		st_add(&g_stats.pf_minor, f1.minor - f0.minor);
		st_add(&g_stats.pf_major, f1.major - f0.major);
		st_add(&rs->faults, f1.minor - f0.minor + f1.major - f0.major);
		st_add(&rs->program_first_bytes, before * pf_page);
		if (r == 0) {
			st_add(&rs->background_bytes, e - s);
			st_add(&rs->prefaulted_bytes, e - s - before * pf_page);
			pf_count_huge(rs, e - s - before * pf_page, f1.minor - f0.minor);
		} else {
			st_add(&rs->cancelled_bytes, e - s);
		}
	}
	return NULL;
}

void shim_spawn(void *(*fn)(void *), size_t stack, int *count, int want)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		(int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))real_fn(R_PTHREAD_CREATE);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	/* A sanitizer must see our threads start (through its interceptor,
	 * which then reaches our wrapper with the guard up, and glibc). */
	create = pthread_create;
#endif
	if (!create || pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, stack);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (__atomic_load_n(count, __ATOMIC_RELAXED) < want) {
		pthread_t t;
		if (create(&t, &attr, fn, NULL) != 0)
			break;
		__atomic_fetch_add(count, 1, __ATOMIC_RELEASE);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

static void start_workers(void)
{
	if (__atomic_exchange_n(&starting, 1, __ATOMIC_ACQUIRE))
		return; /* another thread is starting them */
	shim_spawn(worker_main, 256 << 10, &nworkers, want_workers);
	__atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
}

void worker_setup(unsigned workers)
{
	want_workers = workers ? (int)workers : 1;
}

int worker_enqueue(uintptr_t start, size_t len, int rule, size_t chunk, int advice)
{
	int i;
	if (chunk < pf_page)
		chunk = 2 << 20;
	chunk &= ~(pf_page - 1);
	spin_lock(&jlock);
	for (i = 0; i < JOBS && jobs[i].active; i++)
		;
	if (i == JOBS) {
		spin_unlock(&jlock);
		return -1;
	}
	jobs[i].cur = start;
	jobs[i].end = start + len;
	jobs[i].seq = next_seq++;
	jobs[i].chunk = chunk;
	jobs[i].rule = rule;
	jobs[i].advice = advice;
	jobs[i].active = 1;
	__atomic_store_n(&nactive, nactive + 1, __ATOMIC_RELAXED);
	spin_unlock(&jlock);
	st_add(&g_stats.rules[rule].queued_bytes, len);
	__atomic_fetch_add(&wake, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&nworkers, __ATOMIC_ACQUIRE) < want_workers)
		start_workers();
	futex_wake(&wake);
	return 0;
}

void worker_cancel(uintptr_t a, size_t len)
{
	uintptr_t b = a + len;
	int i;
	if (!__atomic_load_n(&nactive, __ATOMIC_RELAXED))
		return;
	spin_lock(&jlock);
	for (i = 0; i < JOBS; i++) {
		struct job *j = &jobs[i];
		uintptr_t old_end;
		if (!j->active || b <= j->cur || a >= j->end)
			continue;
		old_end = j->end;
		if (a <= j->cur) { /* the front goes */
			uintptr_t cut = b < old_end ? b : old_end;
			st_add(&g_stats.rules[j->rule].cancelled_bytes, cut - j->cur);
			j->cur = cut;
		} else { /* the tail from a goes; what lies past b stays queued */
			j->end = a;
			st_add(&g_stats.rules[j->rule].cancelled_bytes, (b < old_end ? b : old_end) - a);
			if (b < old_end) {
				int k;
				for (k = 0; k < JOBS && jobs[k].active; k++)
					;
				if (k < JOBS) {
					jobs[k] = *j;
					jobs[k].cur = b;
					jobs[k].end = old_end;
					__atomic_store_n(&nactive, nactive + 1, __ATOMIC_RELAXED);
				} else {
					st_add(&g_stats.rules[j->rule].cancelled_bytes, old_end - b);
				}
			}
		}
		if (j->cur >= j->end)
			retire(j);
	}
	spin_unlock(&jlock);
}

uint64_t worker_left_bytes(int rule)
{
	uint64_t n = 0;
	int i;
	spin_lock(&jlock);
	for (i = 0; i < JOBS; i++)
		if (jobs[i].active && jobs[i].rule == rule)
			n += jobs[i].end - jobs[i].cur;
	spin_unlock(&jlock);
	return n;
}

void worker_lock(void) { spin_lock(&jlock); }
void worker_unlock(void) { spin_unlock(&jlock); }

void worker_fork_child(void)
{
	/* The parent's workers do not exist here, and its queue is its own. */
	memset(jobs, 0, sizeof jobs);
	nactive = 0;
	nworkers = 0;
	starting = 0;
	spin_init(&jlock);
}
