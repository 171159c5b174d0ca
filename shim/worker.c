/* worker.c: background prefaulting.
 *
 * A `background` rule's range is queued and the program's call returns at
 * once.  Worker threads take chunks of the oldest job and populate them with
 * MADV_POPULATE_*, which maps pages without writing them: a worker never
 * stores into program memory, so it cannot race the program's own stores,
 * and it fails harmlessly if the range was unmapped or remapped meanwhile.
 * munmap, mremap, mprotect, MAP_FIXED and free cut the affected part out of
 * a queued job, and wait for a chunk a worker is populating there to be
 * done: once the program's call returns, no worker touches that range, so
 * a file it maps there next is never written to by MADV_POPULATE_WRITE.
 *
 * The worker never competes for the pages the program is faulting.  Two
 * threads faulting the same page both take the fault, and a worker that
 * trails the program through a buffer doubles its faults instead of saving
 * them.  So a job goes front to back, with a mincore before each chunk: a
 * resident page in it means the program has overtaken the worker.  Then the
 * chunk is left to the program and the job turns round: from then on chunks
 * are taken from the far end, backwards, so that worker and program (which,
 * like most, fills its buffer from the start) meet once, in the middle of
 * what was left, instead of walking side by side.  Going down, a resident
 * page in the chunk or the one below it means they have met: the rest is
 * the program's.  The job also turns early when, while a worker populated a
 * chunk, the program's threads took many faults (a quarter of the chunk's
 * pages, or one huge page's worth): a huge page the program is faulting
 * shows nothing to mincore until it is done.  Several workers share one job
 * chunk by chunk (a cursor at each end, moved under the job lock), so there
 * is no gap and no overlap, and two cores fill a buffer faster.  Chunks of
 * a huge-page job are whole, aligned huge pages.  bench/bgstrat.c compared
 * this ("farsig") with trailing, skipping, leaping strides and the plain far
 * end (BENCHMARKS.md, "Background"): it took the fewest faults twice.
 *
 * The report's figure for faults taken twice is an upper bound: for each
 * chunk, the worker's own faults (RUSAGE_THREAD) or the faults the
 * program's threads took meanwhile (RUSAGE_SELF, less the workers'),
 * whichever is smaller.  rusage cannot say where a fault fell, so the
 * program's faults elsewhere count too: the bound is honest, not tight.
 * The benchmark measures the true figure (every fault against the pages).
 *
 * Workers start on first need, block every signal, sleep on a futex while
 * the queue is empty, and leave after IDLE_NS with nothing to do (and at
 * once when glue_quiesce asks), so that an idle process is single-threaded
 * again.  Exit never waits for them.  A fork child starts with an empty
 * queue and no workers.
 */
#include "worker.h"
#include "defs.h"
#include "fork.h"
#include "glue.h"
#include "lock.h"
#include "os.h"
#include "pool.h"
#include "stats.h"
#include <string.h>
#include <sys/mman.h>

#define JOBS 256
#define IDLE_NS (200ull * 1000 * 1000)
#define STACK (128u << 10)

struct job {
	uintptr_t lo, hi;    /* what is left: [lo, hi) */
	uint64_t seq;        /* queue order; a split keeps its parent's */
	size_t chunk;
	int rule, advice;
	int active;
	int backward;        /* the program overtook: take chunks from hi down */
	int huge;            /* chunks are whole, aligned huge pages */
	int check;           /* the first chunk is populated both ways (W_CHECK) */
	uintptr_t adv_lo, adv_hi; /* the mapping the check advises */
};

static struct job jobs[JOBS];
/* The module's state, in one place (its tables stand apart). */
static struct {
	spin_t jlock;
	int nactive; /* jobs with work left; read without the lock */
	uint64_t next_seq;
	uint32_t wake; /* futex word: bumped when work arrives */
	int nworkers;
	int want_workers;
	int strategy;
	int busy; /* workers populating a chunk now */
	int ninflight; /* how many; read without the lock */
	uint64_t worker_faults; /* every worker's faults, published after each chunk */
} S = { .want_workers = 1 };
#define INFLIGHT 64
static uintptr_t inflight[INFLIGHT][2]; /* chunks being populated (jlock) */
static struct { int rule; size_t len; } inflight_of[INFLIGHT]; /* their rules and lengths (jlock) */

void worker_setup(unsigned workers, int strat)
{
	S.want_workers = workers ? (int)workers : 1;
	S.strategy = strat;
}

/* The oldest job with work left, or NULL.  Called with jlock held. */
static struct job *oldest(void)
{
	struct job *best = NULL;
	int i;
	for (i = 0; i < JOBS; i++)
		if (jobs[i].active && jobs[i].lo < jobs[i].hi && (!best || jobs[i].seq < best->seq))
			best = &jobs[i];
	return best;
}

static void retire(struct job *j)
{
	j->active = 0;
	__atomic_store_n(&S.nactive, S.nactive - 1, __ATOMIC_RELAXED);
}

/* A chunk of work, claimed under the lock. */
struct claim {
	uintptr_t s, e;
	int slot;            /* in inflight[], while it is populated */
	uintptr_t floor;     /* the job's low end: below it is done, or the program's */
	int rule, advice, backward;
	uint64_t seq;
	int check;           /* this claim is the job's check */
	uintptr_t adv_lo, adv_hi;
};

static int claim(struct claim *c)
{
	struct job *j;
	spin_lock(&S.jlock);
	j = oldest();
	if (!j) {
		spin_unlock(&S.jlock);
		return 0;
	}
	c->check = j->check;
	if (c->check) {
		/* The check: its two chunks at the front, and in flight over the
		 * whole mapping it advises (a cancel there waits for it). */
		uintptr_t two = ((j->lo + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1)) + 2 * hpage_size;
		c->s = j->lo;
		c->e = two <= j->hi ? two : j->hi;
		c->adv_lo = j->adv_lo;
		c->adv_hi = j->adv_hi;
		j->lo = c->e;
		j->check = 0;
	} else if (j->backward) {
		c->e = j->hi;
		c->s = j->hi - j->lo > j->chunk ? j->hi - j->chunk : j->lo;
		if (j->huge && (c->s & (hpage_size - 1)) && (c->s & ~(uintptr_t)(hpage_size - 1)) >= j->lo)
			c->s &= ~(uintptr_t)(hpage_size - 1); /* end on a huge-page boundary */
		j->hi = c->s;
	} else {
		c->s = j->lo;
		c->e = j->hi - j->lo > j->chunk ? j->lo + j->chunk : j->hi;
		if (j->huge && (c->e & (hpage_size - 1)) && ((c->e + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1)) <= j->hi)
			c->e = (c->e + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1);
		j->lo = c->e;
	}
	for (c->slot = 0; c->slot < INFLIGHT && inflight[c->slot][1]; c->slot++)
		;
	if (c->slot < INFLIGHT) {
		inflight[c->slot][0] = c->check ? c->adv_lo : c->s;
		inflight[c->slot][1] = c->check ? c->adv_hi : c->e;
		inflight_of[c->slot].rule = j->rule;
		inflight_of[c->slot].len = c->e - c->s;
		__atomic_store_n(&S.ninflight, S.ninflight + 1, __ATOMIC_RELAXED);
	}
	c->floor = j->lo;
	c->rule = j->rule;
	c->advice = j->advice;
	c->backward = j->backward;
	c->seq = j->seq;
	if (j->lo >= j->hi)
		retire(j);
	spin_unlock(&S.jlock);
	return 1;
}

/* The program is ahead of a forward claim: turn its job around (the chunk
 * itself is left to the program); or, behind a backward one, they have met:
 * end the job. */
static void overtaken(const struct claim *c, struct figs_rule *rs)
{
	int i;
	spin_lock(&S.jlock);
	for (i = 0; i < JOBS; i++) {
		struct job *j = &jobs[i];
		if (!j->active || j->seq != c->seq || j->rule != c->rule)
			continue;
		if (c->backward) {
			if (j->hi == c->s) { /* what is left below: the program's */
				st_add(&rs->program_first_bytes, j->hi - j->lo);
				j->lo = j->hi;
				retire(j);
			}
		} else if (!j->backward && j->lo == c->e) {
			j->backward = 1;
			st_add(&rs->leaps, 1);
		}
	}
	spin_unlock(&S.jlock);
}

/* Nobody has claimed below a backward claim since: the job's top is still
 * where the claim began.  (Then what is resident there is the program's;
 * once another worker has claimed it, it may be that worker's.) */
static int below_unclaimed(const struct claim *c)
{
	int i, r = 0;
	spin_lock(&S.jlock);
	for (i = 0; i < JOBS; i++)
		if (jobs[i].active && jobs[i].seq == c->seq && jobs[i].rule == c->rule && jobs[i].hi == c->s)
			r = 1;
	spin_unlock(&S.jlock);
	return r;
}

/* The program is at this chunk (or, going down, at the one below it). */
static int program_near(const struct claim *c)
{
	size_t len = c->e - c->s;
	if (os_resident_pages(c->s, c->e, page_size))
		return 1;
	/* Going down, the chunk below too, if it is still the job's: with the
	 * program in it, populating this one would meet it mid-way.  Another
	 * worker may have claimed it meanwhile and be populating it: its pages
	 * are not the program's, and taking them for the program's dropped
	 * this chunk, a gap never populated (seen once under TSan, where the
	 * workers are slow enough to interleave so). */
	if (c->backward && c->s >= c->floor + len && os_resident_pages(c->s - len, c->s, page_size))
		return below_unclaimed(c);
	return 0;
}

/* The job's check: both ways, then the rest with the faster.  (No slot in
 * flight: then the check is not made, the chunk is populated plainly.) */
static int check_chunk(const struct claim *c, struct figs_rule *rs)
{
	struct hcheck h;
	struct meter m;
	struct faults f;
	uintptr_t end;
	int i;
	if (c->slot >= INFLIGHT)
		return 0;
	meter_start(&m, 1);
	end = pool_huge_check(c->s, c->e, c->adv_lo, c->adv_hi, c->advice, &h);
	meter_read(&m, &f, NULL);
	if (end == c->s)
		return 0;
	stats_prefault_faults(rs, f.minor, f.major);
	__atomic_add_fetch(&S.worker_faults, f.minor + f.major, __ATOMIC_ACQ_REL);
	stats_count_check(rs, h.small_ns, h.small_pages, h.huge_ns, h.huge_pages, h.huge);
	st_add(&rs->background_bytes, end - c->s);
	st_add(&rs->prefaulted_bytes, end - c->s);
	stats_count_huge(rs, h.huge_pages * page_size, f.minor > h.small_pages ? f.minor - h.small_pages : 0);
	if (!h.huge) { /* small pages won: the rest of the job takes them */
		spin_lock(&S.jlock);
		for (i = 0; i < JOBS; i++)
			if (jobs[i].active && jobs[i].seq == c->seq && jobs[i].rule == c->rule)
				jobs[i].huge = 0;
		spin_unlock(&S.jlock);
	}
	return 1;
}

static void do_chunk(const struct claim *c)
{
	struct figs_rule *rs = &g_stats.rules[c->rule];
	size_t len = c->e - c->s, resident = 0, pages = len / page_size;
	struct faults self0, self1, mine;
	struct meter m;
	uint64_t others, own, wf0, wf1;
	int r, alone;
	if (c->check && check_chunk(c, rs))
		return;
	if (S.strategy != BG_TRAIL) {
		if (program_near(c)) { /* the program is here: leave the chunk to it */
			st_add(&rs->program_first_bytes, len);
			overtaken(c, rs);
			return;
		}
	} else {
		resident = os_resident_pages(c->s, c->e, page_size);
		st_add(&rs->program_first_bytes, resident * page_size);
	}
	alone = __atomic_add_fetch(&S.busy, 1, __ATOMIC_ACQ_REL) == 1;
	wf0 = __atomic_load_n(&S.worker_faults, __ATOMIC_ACQUIRE);
	os_faults_self(&self0);
	meter_start(&m, 1);
	r = sys_madvise((void *)c->s, len, c->advice);
	meter_read(&m, &mine, NULL);
	os_faults_self(&self1);
	own = mine.minor + mine.major;
	wf1 = __atomic_add_fetch(&S.worker_faults, own, __ATOMIC_ACQ_REL);
	alone &= __atomic_sub_fetch(&S.busy, 1, __ATOMIC_ACQ_REL) == 0 && wf1 - wf0 == own;
	stats_prefault_faults(rs, mine.minor, mine.major);
	/* The program's threads' faults meanwhile: everyone's, less the workers'. */
	others = (self1.minor + self1.major) - (self0.minor + self0.major);
	others = others > wf1 - wf0 ? others - (wf1 - wf0) : 0;
	st_add(&rs->twice_max, others < own ? others : own);
	/* The early turn: the program faulted a lot while we populated.  Small
	 * pages: only when no other worker's faults are mixed in (another
	 * worker's chunk adds its faults to worker_faults only when it is
	 * done, so hundreds of them can look like the program's).  Huge pages:
	 * another worker's chunk is one fault, so with others at work the
	 * program must have taken more than one fault per other worker.
	 * Without this, two workers on a huge-page job ran beside the program
	 * for chunk after chunk (up to 1.2 faults per huge page in all). */
	if (S.strategy != BG_TRAIL && !c->backward && others) {
		int huge = own * 8 < pages;
		int nw = __atomic_load_n(&S.nworkers, __ATOMIC_RELAXED);
		uint64_t extra = alone || nw < 2 ? 0 : (uint64_t)(nw - 1);
		if (huge ? others >= 1 + extra : alone && others * 4 >= pages)
			overtaken(c, rs);
	}
	if (r == 0) {
		st_add(&rs->background_bytes, len);
		st_add(&rs->prefaulted_bytes, len - resident * page_size);
		stats_count_huge(rs, len - resident * page_size, mine.minor);
	} else {
		st_add(&rs->cancelled_bytes, len);
	}
}

static void *worker_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t seen = __atomic_load_n(&S.wake, __ATOMIC_ACQUIRE);
		struct claim c;
		if (glue_leaving())
			break;
		if (claim(&c)) {
			do_chunk(&c);
			if (c.slot < INFLIGHT) {
				spin_lock(&S.jlock);
				inflight[c.slot][0] = inflight[c.slot][1] = 0;
				__atomic_store_n(&S.ninflight, S.ninflight - 1, __ATOMIC_RELAXED);
				spin_unlock(&S.jlock);
			}
			continue;
		}
		if (glue_wait(&S.wake, seen, IDLE_NS) < 0 && !__atomic_load_n(&S.nactive, __ATOMIC_ACQUIRE))
			break; /* idle: leave, and come back on the next need */
	}
	__atomic_sub_fetch(&S.nworkers, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

int worker_enqueue(uintptr_t start, size_t len, int rule, size_t chunk, int advice, int flags, uintptr_t adv_lo,
                   uintptr_t adv_hi)
{
	int i, huge = (flags & W_HUGE) != 0;
	if (chunk < page_size)
		chunk = 2 << 20;
	chunk &= ~(page_size - 1);
	if (huge && chunk < hpage_size) /* smaller, and our own huge page would look like the program's */
		chunk = hpage_size;
	spin_lock(&S.jlock);
	for (i = 0; i < JOBS && jobs[i].active; i++)
		;
	if (i == JOBS) {
		spin_unlock(&S.jlock);
		return -1;
	}
	jobs[i].lo = start;
	jobs[i].hi = start + len;
	jobs[i].seq = S.next_seq++;
	jobs[i].chunk = chunk;
	jobs[i].rule = rule;
	jobs[i].advice = advice;
	jobs[i].backward = 0;
	jobs[i].huge = huge;
	jobs[i].check = (flags & W_CHECK) != 0;
	jobs[i].adv_lo = adv_lo;
	jobs[i].adv_hi = adv_hi;
	jobs[i].active = 1;
	__atomic_store_n(&S.nactive, S.nactive + 1, __ATOMIC_RELAXED);
	spin_unlock(&S.jlock);
	st_add(&g_stats.rules[rule].queued_bytes, len);
	__atomic_fetch_add(&S.wake, 1, __ATOMIC_RELEASE);
	if (glue_spawn_upto(&S.nworkers, S.want_workers, worker_main, NULL, STACK, &S.wake) < 0)
		stats_note(N_NO_THREAD);
	glue_wake(&S.wake);
	return 0;
}

void worker_warm(void) { glue_warm_add(S.want_workers, STACK); }

void worker_kick(void)
{
	if (!__atomic_load_n(&S.nactive, __ATOMIC_ACQUIRE))
		return;
	if (glue_spawn_upto(&S.nworkers, S.want_workers, worker_main, NULL, STACK, &S.wake) < 0)
		stats_note(N_NO_THREAD);
	glue_wake(&S.wake);
}

void worker_cancel(uintptr_t a, size_t len)
{
	uintptr_t b = a + len;
	int i;
	if (!__atomic_load_n(&S.nactive, __ATOMIC_RELAXED) && !__atomic_load_n(&S.ninflight, __ATOMIC_RELAXED))
		return;
	spin_lock(&S.jlock);
	for (i = 0; i < JOBS; i++) {
		struct job *j = &jobs[i];
		uintptr_t old_hi;
		if (j->active && j->check && b > j->adv_lo && a < j->adv_hi)
			j->check = j->huge = 0; /* never advise a mapping that changed */
		if (!j->active || b <= j->lo || a >= j->hi)
			continue;
		old_hi = j->hi;
		if (a <= j->lo) { /* the front goes */
			uintptr_t cut = b < old_hi ? b : old_hi;
			st_add(&g_stats.rules[j->rule].cancelled_bytes, cut - j->lo);
			j->lo = cut;
		} else { /* the tail from a goes; what lies past b stays queued */
			j->hi = a;
			st_add(&g_stats.rules[j->rule].cancelled_bytes, (b < old_hi ? b : old_hi) - a);
			if (b < old_hi) {
				int k;
				for (k = 0; k < JOBS && jobs[k].active; k++)
					;
				if (k < JOBS) {
					jobs[k] = *j;
					jobs[k].lo = b;
					jobs[k].hi = old_hi;
					__atomic_store_n(&S.nactive, S.nactive + 1, __ATOMIC_RELAXED);
				} else {
					st_add(&g_stats.rules[j->rule].cancelled_bytes, old_hi - b);
				}
			}
		}
		if (j->lo >= j->hi)
			retire(j);
	}
	/* A chunk being populated there now finishes first. */
	for (;;) {
		for (i = 0; i < INFLIGHT; i++)
			if (inflight[i][1] > a && inflight[i][0] < b)
				break;
		spin_unlock(&S.jlock);
		if (i == INFLIGHT)
			return;
		sys_sched_yield();
		spin_lock(&S.jlock);
	}
}

/* What the jobs of the rules in the mask have left (jlock held, or given
 * up on: see spin_lock_bounded). */
static uint64_t left_of(uint64_t rules)
{
	uint64_t n = 0;
	int i;
	for (i = 0; i < JOBS; i++)
		if (__atomic_load_n(&jobs[i].active, __ATOMIC_RELAXED) && jobs[i].rule >= 0 && jobs[i].rule < 64 &&
		    (rules >> jobs[i].rule & 1))
			n += __atomic_load_n(&jobs[i].hi, __ATOMIC_RELAXED) - __atomic_load_n(&jobs[i].lo, __ATOMIC_RELAXED);
	return n;
}

uint64_t worker_left_bytes(int rule, int may_wait)
{
	int locked = spin_lock_bounded(&S.jlock, may_wait);
	uint64_t n = rule >= 0 && rule < 64 ? left_of(1ull << rule) : 0;
	if (locked)
		spin_unlock(&S.jlock);
	return n;
}

uint64_t worker_pending_bytes(uint64_t rules)
{
	int i, locked = spin_lock_bounded(&S.jlock, 1);
	/* (one hold: a chunk moves from its job to inflight[] under the lock,
	 * so it is counted once, queued or in flight) */
	uint64_t n = left_of(rules);
	for (i = 0; i < INFLIGHT; i++)
		if (inflight[i][1] && inflight_of[i].rule >= 0 && inflight_of[i].rule < 64 && (rules >> inflight_of[i].rule & 1))
			n += inflight_of[i].len;
	if (locked)
		spin_unlock(&S.jlock);
	return n;
}

void worker_atfork(int who)
{
	if (who == FORK_PREPARE) {
		spin_lock(&S.jlock);
	} else if (who == FORK_PARENT) {
		spin_unlock(&S.jlock);
	} else {
		/* The parent's workers do not exist here, and its queue is its own.
		 * (Untouched, when nothing was ever queued: no page to copy.) */
		if (S.next_seq)
			memset(jobs, 0, sizeof jobs);
		if (S.ninflight)
			memset(inflight, 0, sizeof inflight);
		S.ninflight = 0;
		S.busy = 0;
		S.nactive = 0;
		S.nworkers = 0;
		spin_init(&S.jlock);
	}
}
