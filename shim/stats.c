/* stats.c: see stats.h. */
#include "stats.h"
#include "fork.h"
#include "lock.h"
#include <pthread.h>
#include <stddef.h>
#include <string.h>

struct stats g_stats;
uint64_t stats_malloc_from = UINT64_MAX;
/* A thread's counts: plain stores by its owner, read by the report. */
struct tstats {
	uint64_t calls[E_COUNT];
	uint64_t n[2], b[2];
	struct hist h[2];
};

/* The blocks live in a static table, never in the thread's TLS: a thread
 * whose first counted call comes after its destructors ran (the last round
 * of the program's own key destructors, a signal handler while it exits:
 * tests/probes/hostile3/latethread.c) keeps its block for good, and a block
 * in its TLS, still listed, was then a dangling pointer into a stack that
 * the next thread reuses (it listed the same block again: a cycle, and the
 * report at exit looped for ever) or that was unmapped (a crash).  A block
 * kept so is only memory (its counts are still summed); once the table is
 * full, threads count in the globals.  Taken and given back under tlock.
 * Few: a policy's mlockall makes the whole table resident (512 blocks, 1.2
 * MiB, took a realtime program past its RSS in CI of 6c69224), and threads
 * past them only count with atomic adds. */
#define TBLOCKS 32
static struct tstats blocks[TBLOCKS];
static uint8_t used[TBLOCKS]; /* (apart: a fork child clears these, not the blocks' pages) */

/* The module's state, in one place (its tables stand apart). */
static struct {
	int nrules; /* rules[] beyond these are never written */
	int hi;     /* blocks ever used */
	spin_t tlock;
	pthread_key_t tkey;
	int tkey_ok;
} S;

/* This thread's: its block, or NULL; without one, state 0 new, 2 counts
 * in the globals (its block folded in at its exit, or none to be had), 3
 * taking one. */
static TLS struct {
	struct tstats *b;
	int state;
} tl;

void stats_setup(uint64_t malloc_from, int rules)
{
	stats_malloc_from = malloc_from;
	S.nrules = rules;
}

static inline void bump(uint64_t *c, uint64_t v)
{
	/* Only the owner writes; the report may read at the same time. */
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static void fold(struct tstats *t)
{
	int i, k;
	for (i = 0; i < E_COUNT; i++)
		st_add(&g_stats.calls[i], t->calls[i]);
	for (k = 0; k < 2; k++) {
		struct figs_rule *u = &g_stats.unmatched[k];
		st_add(&u->matched, t->n[k]);
		st_add(&u->bytes, t->b[k]);
		for (i = 0; i < SIZE_CLASSES; i++) {
			if (t->h[k].maps[i]) {
				st_add(&u->sizes.maps[i], t->h[k].maps[i]);
				st_add(&u->sizes.bytes[i], t->h[k].bytes[i]);
			}
		}
	}
}

/* The key's destructor, on the exiting thread.  The thread counts in the
 * globals first (a signal handler that lands here and maps must not count
 * in a block being folded, or given back), and the lock is taken under
 * the guard (a handler that forks here must not wait for it: the fork's
 * handlers take it; helper-32). */
static void thread_gone(void *arg)
{
	struct tstats *t = arg;
	struct guard g;
	tl.state = 2;
	__atomic_store_n(&tl.b, NULL, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* (before the fold, for a handler on this thread) */
	g = guard_enter();
	spin_lock(&S.tlock);
	fold(t);
	__atomic_store_n(&used[t - blocks], 0, __ATOMIC_RELEASE);
	spin_unlock(&S.tlock);
	guard_leave(g);
}

void stats_thread_init(void)
{
	if (pthread_key_create(&S.tkey, thread_gone) == 0)
		__atomic_store_n(&S.tkey_ok, 1, __ATOMIC_RELEASE);
}

/* A free block, taken and cleared, or -1.  Under tlock. */
static int take_locked(void)
{
	int i;
	for (i = 0; i < S.hi && used[i]; i++)
		;
	if (i == TBLOCKS)
		return -1;
	if (i == S.hi)
		S.hi++;
	memset(&blocks[i], 0, sizeof blocks[i]); /* (a block given back still has its counts: they were folded) */
	__atomic_store_n(&used[i], 1, __ATOMIC_RELEASE);
	return i;
}

/* This thread's block, or NULL to count in the globals. */
static struct tstats *mine(void)
{
	struct tstats *t = tl.b;
	int i;
	if (likely(t != NULL))
		return t;
	if (tl.state != 0 || !__atomic_load_n(&S.tkey_ok, __ATOMIC_ACQUIRE))
		return NULL;
	/* First call in this thread.  Several wrappers count a call before
	 * their guard (interpose.c), so the guard goes up here: a thread of
	 * asynchronous cancellation type must not be cancelled with the lock
	 * held, and a signal handler that forks or exits meanwhile must not
	 * wait for the lock this thread holds (glue.h, guard_enter; init.c,
	 * fork_nested). */
	tl.state = 3;
	struct guard g = guard_enter();
	spin_lock(&S.tlock);
	i = take_locked();
	spin_unlock(&S.tlock);
	guard_leave(g);
	if (i < 0) {
		tl.state = 2;
		return NULL;
	}
	/* pthread_setspecific allocates for high key numbers, through our
	 * own calloc: state 3 sends those calls to the globals. */
	if (pthread_setspecific(S.tkey, &blocks[i]) != 0) {
		__atomic_store_n(&used[i], 0, __ATOMIC_RELEASE); /* (nothing counted in it yet) */
		tl.state = 0;
		return NULL;
	}
	tl.b = &blocks[i];
	return tl.b;
}

void stats_call(enum entry e)
{
	struct tstats *t = mine();
	if (t)
		bump(&t->calls[e], 1);
	else
		st_add(&g_stats.calls[e], 1);
}

void stats_unmatched(int kind, uint64_t len)
{
	struct tstats *t = mine();
	int k = size_class(len);
	if (!t) {
		stats_count_request(&g_stats.unmatched[kind], len);
		return;
	}
	bump(&t->n[kind], 1);
	bump(&t->b[kind], len);
	bump(&t->h[kind].maps[k], 1);
	bump(&t->h[kind].bytes[k], len);
}

static void add_block(struct stats *o, const struct tstats *t)
{
	int i, k;
	for (i = 0; i < E_COUNT; i++)
		o->calls[i] += __atomic_load_n(&t->calls[i], __ATOMIC_RELAXED);
	for (k = 0; k < 2; k++) {
		o->unmatched[k].matched += __atomic_load_n(&t->n[k], __ATOMIC_RELAXED);
		o->unmatched[k].bytes += __atomic_load_n(&t->b[k], __ATOMIC_RELAXED);
		for (i = 0; i < SIZE_CLASSES; i++) {
			o->unmatched[k].sizes.maps[i] += __atomic_load_n(&t->h[k].maps[i], __ATOMIC_RELAXED);
			o->unmatched[k].sizes.bytes[i] += __atomic_load_n(&t->h[k].bytes[i], __ATOMIC_RELAXED);
		}
	}
}

/* Copy words [from, to) of g_stats, each read whole. */
static void copy_words(struct stats *out, size_t from, size_t to)
{
	const uint64_t *src = (const uint64_t *)&g_stats;
	uint64_t *dst = (uint64_t *)out;
	size_t i;
	for (i = from / sizeof(uint64_t); i < to / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void stats_snapshot(struct stats *out, int may_wait)
{
	int locked, i, n;
	/* The rules the policy has, not all POL_MAX_RULES: the rest were never
	 * written, and reading 80 KiB of them (and writing the copy) cost every
	 * process's report 40 page faults, about 0.4 ms here. */
	copy_words(out, 0, offsetof(struct stats, rules) + (size_t)S.nrules * sizeof(struct figs_rule));
	copy_words(out, offsetof(struct stats, unmatched), sizeof(struct stats));
	/* (Without the lock a thread's block can be missed or seen twice while
	 * its thread starts or ends: only when the report runs in a signal
	 * handler that interrupted the shim.) */
	locked = spin_lock_bounded(&S.tlock, may_wait);
	n = __atomic_load_n(&S.hi, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (__atomic_load_n(&used[i], __ATOMIC_ACQUIRE))
			add_block(out, &blocks[i]);
	if (locked)
		spin_unlock(&S.tlock);
}

const char *const note_texts[N_COUNT] = {
	"kernel lacks MADV_POPULATE_READ/WRITE (Linux < 5.14): populated by touching pages instead",
	"mlock or mlockall was refused (raise RLIMIT_MEMLOCK, ulimit -l)",
	"no memory to track a region: some requests were not prefaulted",
	"budget spent: some requests were not prefaulted (raise budget in [global])",
	"transparent huge pages are unavailable (THP set to never, or disabled for this process): hugepage fell back to small pages",
	"the kernel gave small pages where huge pages were asked for (memory fragmented, or THP defrag off): fell back to small pages",
	"background queue full: some requests were not queued",
	"mlockall future was not applied: RLIMIT_MEMLOCK is limited, and locking every future mapping would make the program's large mappings fail (ulimit -l unlimited, or CAP_IPC_LOCK, to have it)",
	"the shim gave back memory it had locked, so that the program's own mlock (or its madvise of a locked range) works as without it",
	"recycle is off: RLIMIT_AS or RLIMIT_DATA is set, and kept regions would count against it",
	"a stack rule stopped at memory it could not populate (a guard the program placed): the rest of that stack was left alone",
	"too many threads starting at once: some went without their stack rule",
	"more than 1024 calling objects (libraries loaded and unloaded): later ones match no caller rule",
	"the policy's mlockall was given back: the program dropped the privilege to lock without limit, or a call of its own failed for want of locked memory (what it locked itself was locked again)",
	"carving is off: no transparent huge page of hpage_pmd_size comes with MADV_HUGEPAGE here (THP never, disabled for this process, or no hpage_pmd_size): carve rules recycled instead",
	"carving is off for some requests: the huge page size is not a multiple of their size (or not larger, or more than " DEFS_STR(CARVE_SLICES_MAX) " times larger): they were recycled instead",
	"carving is off for a rule: its hugepage_check found small pages faster here than huge ones (hugepage_check in the rule's figures): its requests were recycled instead",
	"carving made more reserves than the report tracks (" DEFS_STR(CARVE_RESERVES_MAX) " at once): carve.resident_bytes and huge_bytes leave out the rest (carve.untracked)",
	"auto: every rule was taken (64): later sites were left alone",
	"auto: more call sites than the learner's table holds: later ones were left alone",
	"the system refused the shim a helper thread (RLIMIT_NPROC, or no memory): background work waited for a later try, parallel populate and the learner's watch ran on fewer threads",
	"the system refused the shim memory for a table (RLIMIT_AS, or none left): caller rules matched nothing, or the learner left its sites alone, or the profile went without some threads or ranges",
	"recycle and carve are off: the program changed its persona (personality) or refused writable code (PR_SET_MDWE) while it ran, and a region kept from before would have come back as the old rules made it",
};

void stats_count_request(struct figs_rule *rs, uint64_t len)
{
	int k = size_class(len);
	st_add(&rs->matched, 1);
	st_add(&rs->bytes, len);
	st_add(&rs->sizes.maps[k], 1);
	st_add(&rs->sizes.bytes[k], len);
}

void stats_count_check(struct figs_rule *rs, uint64_t small_ns, uint64_t small_pages, uint64_t huge_ns,
                       uint64_t huge_pages, int huge_won)
{
	st_add(&rs->hc_checks, 1);
	st_add(&rs->hc_huge_won, huge_won != 0);
	st_add(&rs->hc_small_ns, small_ns);
	st_add(&rs->hc_small_pages, small_pages);
	st_add(&rs->hc_huge_ns, huge_ns);
	st_add(&rs->hc_huge_pages, huge_pages);
}

void stats_rules(int n)
{
	if (n > __atomic_load_n(&S.nrules, __ATOMIC_RELAXED))
		__atomic_store_n(&S.nrules, n, __ATOMIC_RELAXED);
}

void stats_prefault_faults(struct figs_rule *rs, uint64_t minor, uint64_t major)
{
	st_add(&rs->faults, minor + major);
	st_add(&g_stats.pf_minor, minor);
	st_add(&g_stats.pf_major, major);
}

uint64_t stats_count_huge(struct figs_rule *rs, uint64_t bytes, uint64_t faults)
{
	/* h huge and s small pages populated: faults = h + s and
	 * pages = h * (HPAGE / page) + s, so h = (pages - faults) / (HPAGE / page - 1),
	 * rounded to the nearest: a fault or two of the thread's own beside the
	 * populate (a sanitizer's shadow memory) must not cost a whole huge page
	 * of the count, as flooring did (29 of 32 under ThreadSanitizer). */
	uint64_t pages = bytes / page_size, per = hpage_size / page_size, h;
	if (per > 1 && pages > faults) {
		h = (pages - faults + (per - 1) / 2) / (per - 1);
		if (h > pages / per)
			h = pages / per;
		st_add(&rs->huge_bytes, h * hpage_size);
		return h * hpage_size;
	}
	return 0;
}

int stats_note(enum note n)
{
	uint64_t bit = 1ull << n;
	return !(__atomic_fetch_or(&g_stats.notes, bit, __ATOMIC_RELAXED) & bit);
}

void stats_atfork(int who)
{
	if (who == FORK_PREPARE) {
		spin_lock(&S.tlock);
		return;
	}
	if (who == FORK_PARENT) {
		spin_unlock(&S.tlock);
		return;
	}
	/* The child: only this thread exists, and it counts from zero.  Only
	 * what can have been written is cleared: a fork is cheaper when the
	 * child does not touch (and so copy or fault in) pages it need not. */
	memset(g_stats.calls, 0, sizeof g_stats.calls);
	memset(g_stats.failed, 0, sizeof g_stats.failed);
	memset(g_stats.rules, 0, (size_t)S.nrules * sizeof g_stats.rules[0]);
	memset(g_stats.unmatched, 0, sizeof g_stats.unmatched);
	g_stats.pf_minor = g_stats.pf_major = g_stats.notes = 0;
	spin_init(&S.tlock);
	memset(used, 0, (size_t)S.hi); /* (the other threads' blocks: free, cleared when taken) */
	if (tl.b) {
		memset(tl.b, 0, sizeof *tl.b);
		used[tl.b - blocks] = 1;
	}
}
