/* auto.c: the learner (see auto.h): no policy file; the shim decides per
 * call site, online, from what it measures in this very run, and backs off
 * where it measures no gain.
 *
 * A site is the return address of the call (in its object), the call (mmap
 * or the malloc family) and the size class.  Only what a rule could act on
 * is looked at: anonymous private read-write mmaps of 64 KiB or more that
 * leave the address to the kernel (no MAP_FIXED, no hint, no reservation),
 * and malloc blocks of AUTO_BLOCK_MIN or more.  A request the learner has
 * no rule for is tracked (the regions table, flag RF_AUTO, its site in the
 * rule field: no system call) so that its unmap or free can teach:
 *
 *  - Churn.  The program unmaps, exactly as mapped, a third mapping of one
 *    length within a second (a site tells 4 lengths apart): the site gets
 *    `recycle` for that length (and up to 3 more).  A populated site that
 *    turns out to churn is switched to it.
 *  - Density.  At the unmap or free, mincore says how much the program
 *    touched (a site's first 4, then every 16th: one to eight calls each).
 *    Three that came back 90% touched or more: `populate`, with huge pages
 *    from two huge pages up where THP can be had, the first chunk measured
 *    both ways and the faster kept (hugepage_check).  Under 25%: left alone, and said.
 *  - First touch.  A mapping of 4 MiB or more is also watched by a helper
 *    thread, with mincore of its front every 1 to 4 ms: when the program
 *    first touched it, and whether it fills it from the front.  A dense site
 *    first touched 5 ms or more after the map gets `background` instead of
 *    `populate`; one touched at once, never.
 *  - The front.  A watched mapping the program fills from its start (256
 *    KiB in a row) is helped while it fills, the one thing learnt from the
 *    mapping itself rather than from the site's earlier ones (a buffer
 *    mapped once): huge pages are advised over it where THP can be had, the
 *    program's own fill rate measured before and after, the faster kept
 *    (and judged again every 16 MiB of the front while huge pages stay;
 *    where the program fills from the end down too, that end is judged by
 *    what small and huge pages cost just now, in a scratch mapping);
 *    and the worker populates two windows ahead of the program (each what
 *    it fills in 30 ms, at most half the budget), a huge page apart, as
 *    far as the budget allows.  The site gets a rule for its
 *    next mappings: populate, or background where the first touch came
 *    late.
 *  - Back-off.  A populated site leaves one mapping in 2^k to the program
 *    (a probe, k from 3, at most one in 256) and measures it: under 80%
 *    touched, the site goes back to observing.  A recycled site whose
 *    regions were mostly dropped, or mostly never used again, goes back
 *    too, and its kept regions are given back.  Every decision has a
 *    reason, and the report prints it.
 *
 * The budget (below, "set-up and the budget"): RSS never more than the
 * program's own peak and the lesser of PERCENT of it and CAP (10% and 256
 * MiB, or PREFAULT_AUTO_BUDGET), never less than 2 MiB or one huge page;
 * what the program mapped and has not touched yet counts as coming for 0.5
 * to 1 s, and kept regions make room for it and for the shim's own memory;
 * while they fill the room below the peak, the watcher looks every 1 to 10
 * ms too, as the room left asks, for growth with no call (what grows faster
 * passes the line: README, "Bounded").  Hard
 * (PREFAULT_AUTO_BUDGET=hard): all the shim makes resident for the program
 * and its own memory within the extra, wherever RSS is.  Populate holds
 * nothing the program would not touch: it acts on sites 90% touched, and
 * backs off under 80%.
 *
 * Locks: S.lock (sites' learning, rules) and S.wlock (the watches), never
 * held across a system call or a call into the loader (dladdr).  Lookups
 * of a site take no lock.
 */
#include "auto.h"
#include "defs.h"
#include "fork.h"
#include "glue.h"
#include "lock.h"
#include "match.h"
#include "os.h"
#include "pool.h"
#include "recycle.h"
#include "regions.h"
#include "sbuf.h"
#include "settings.h"
#include "stats.h"
#include "worker.h"
#include <string.h>
#include <sys/mman.h>

#define SITES 1024
#define LENS 4                          /* lengths a site's churn is told apart by */
#define AUTO_MMAP_MIN (64u << 10)
#define CHURN_N 3                       /* unmaps of one length ... */
#define CHURN_NS 1000000000ull          /* ... within this: churn */
#define DENSE_PM 900                    /* per mille touched: populate */
#define BACKOFF_PM 800                  /* a probe under this: back off */
#define SPARSE_PM 250                   /* under this: left alone, said */
#define MEASURE_FIRST 4                 /* a site's first unmaps measured */
#define MEASURE_EVERY 16                /* then every 16th */
#define NEED_MEASURED 3
#define PROBE_FIRST 8
#define PROBE_STEP_MAX 256
#define HUGE_FROM (2 * hpage_size)      /* huge pages from here (two chunks to compare) */
#define POOL_FROM (64ull << 20)         /* populate on threads from here */
#define WATCH_MIN (4ull << 20)
#define WATCH_MAX 32
#define LATE_NS (5ull * 1000 * 1000)
#define GIVEUP_NS (10ull * 1000 * 1000 * 1000)
#define STALL_NS (200ull * 1000 * 1000) /* a front that stops this long is left */
#define POLL_MIN_NS (1ull * 1000 * 1000)
#define POLL_MAX_NS (4ull * 1000 * 1000)
/* An untouched mapping is looked at every POLL_MIN_NS this long: the
 * example streamer first touches its buffer 2 to 4 ms after the map when
 * the host backs the guest's memory, 18 to 23 ms when it does not (the
 * asset before it faulting cold); looked at every 4 ms by then, it had
 * filled 1.2 MiB of its buffer alone, against 0.5 at every 1 ms.  A look
 * is one mincore on the learner's thread. */
#define EARLY_NS (100ull * 1000 * 1000)
#define FRONT_MIN (256u << 10)
#define PASSED_PAGES 16 /* hard: the program is through a window when this many pages past it are resident */
#define REJUDGE (8 * hpage_size)        /* kept huge pages: judged again every so much of the front */
#define LEAD_MAX (64ull << 20)
#define LEAD_NS (30ull * 1000 * 1000)   /* a window: what the program fills in 30 ms */
#define IDLE_NS (200ull * 1000 * 1000)
#define BUDGET_FLOOR (hpage_size > (2ull << 20) ? hpage_size : (2ull << 20)) /* one huge page at least */
#define RSS_EVERY_NS (10ull * 1000 * 1000)
#define OWN_NS (100ull * 1000 * 1000)  /* soft: the shim's own memory read again so often at most */
#define IDLE_TRIM_NS (1000ull * 1000 * 1000) /* soft: the guard's program reused nothing so long: trimmed to the extra */
#define GUARD_LOOK 2                   /* rss_refresh's force: the guard's */
#define GUARD_NS RSS_EVERY_NS          /* soft: RSS looked at at least so often while the cache is past the extra (auto_kept) */
#define GUARD_MIN_NS (1000ull * 1000)  /* ... and at most so often: guard_every */
#define GROWN_NS (10ull * 1000 * 1000)   /* with no look to count from, what was mapped counts so long */
#define UNTOUCHED_NS (500ull * 1000 * 1000) /* what is left of grown goes at the first look after 1 to 2 of these */
#define FRESH_NS (10ull * 1000 * 1000)  /* what was mapped so lately may be being touched: not yet late */
#define STACK (64u << 10)

enum { AS_OBSERVE, AS_DECIDING, AS_RECYCLE, AS_POPULATE, AS_BACKGROUND, AS_FRONT, AS_OFF };

struct asite {
	uintptr_t ret;          /* 0: a free slot (published last, with release) */
	uint32_t call, klass;
	int state;              /* AS_* (read without the lock) */
	int rule;               /* its rule, or -1 */
	uint64_t len[LENS];     /* recycle: the lengths it recycles (0: none) */
	uint64_t size_min, size_max;
	uint64_t maps;          /* requests (atomic) */
	uint64_t next_probe, probe_step;
	/* what it learnt (S.lock) */
	uint64_t gone, win_len[LENS], win_t0[LENS];
	uint32_t win_n[LENS];
	uint64_t measured, pages, touched;
	uint32_t pm_max;        /* the most one of them came back touched, per mille (weight_of) */
	uint32_t firsts, lates, scattered, untouched;
	uint64_t late_ns;
	/* for the report */
	int listed;
	uint32_t why, off;
	uint64_t why_a, why_b, why_c, off_a, off_b, since_ns, off_ns;
	uint64_t f_at;          /* the program's faults at the decision */
	uint64_t saved_pages;   /* the front: pages filled with huge pages, or populated ahead */
	uint64_t held_peak;
	const char *object;
	uintptr_t base;
};

struct watch {
	uintptr_t start, end;
	int site, live, busy;
	int phase;              /* WP_* */
	int cut;                /* the budget left no room for the next window (counted once) */
	uint64_t t_cut;         /* when it last found none */
	uint64_t t_map, t_next, t_prev, period, t_moved;
	uint64_t t_touch;       /* the last look that found it untouched */
	uintptr_t front;        /* [start, front) touched, in a row */
	uint64_t t_mark;        /* the fill rate is measured from here */
	uintptr_t f_mark;
	uint64_t small_ns, small_bytes;
	uint64_t rate;          /* the program's fill rate, bytes a ms */
	int advised, huge_kept, marked; /* marked: 1 the span judged starts at f_mark; 2 it will, once the front is there (huge_late) */
	uintptr_t adv_lo, adv_hi; /* what advice may cover: the mapping, or the block's whole pages */
	uintptr_t hp_hi, hp_lo;   /* advised now: [adv_lo, hp_hi) and [hp_lo, adv_hi) (advise_near) */
	int ahead_charged;        /* a huge page past the front's is charged, and advised (advise_near) */
	int back_charged;         /* the back's huge page is charged (advise_near) */
	uintptr_t back;         /* [back, end) touched in a row from the end down */
	uintptr_t b_mark;       /* the back at the last judgement */
	uint64_t t_bmoved;      /* the back last moved */
	uint32_t b_judged;      /* judgements of the back */
	int judge;              /* J_*: the back's next, measured between looks */
	struct hcheck jh;       /* (J_DONE: what it found) */
	struct faults jf;
	uintptr_t ahead;        /* a window queued for the worker ends here */
	uint64_t window;        /* its length, charged until the program goes through it */
	uintptr_t ahead2;       /* the next, queued behind it past a huge page (0: none) */
	uint64_t window2;
	uint64_t held;          /* charged to the budget */
};
enum { WP_WAIT, WP_FILL, WP_HUGE, WP_AHEAD };
enum { J_NONE, J_WANTED, J_DONE, J_NO_ROOM };

int auto_on;
static struct asite *sites; /* SITES of them, mapped by auto_setup (glue_table) */
static struct watch watches[WATCH_MAX];
static struct policy P;                      /* the learner's rules */
static int rule_site[POL_MAX_RULES];
static int listed[FIGS_MAX_AUTO];
/* The module's state, in one place (its tables stand apart). */
static struct {
	spin_t lock;
	int nsites, nlisted;
	uint64_t t0;
	uint64_t pct, cap;       /* the budget's terms */
	int hard;                /* all held within the extra, wherever RSS is (below) */
	uint64_t shim_own;       /* the shim's own memory at the last look (hard_cap; soft, at most every OWN_NS) */
	uint64_t own_read;       /* when (own_refresh) */
	uint64_t prog_peak, held_peak, over_peak;
	uint64_t rss, rss_at;    /* RSS at the last look, and when */
	int64_t grown;           /* mapped anew by the program, not yet seen resident, less what it unmapped */
	uint64_t grown_old;      /* of grown, what is left from before old_until was set: goes then */
	uint64_t old_gone;       /* of that, unmapped since the last look (shrinks) */
	uint64_t old_until;
	uint32_t epoch;          /* counts the times grown_old was set: a mapping's age (auto_epoch) */
	uint64_t own, own_at;    /* the program's own making resident (own_rss), at the last look counted */
	uint64_t fallen;         /* of the program's unmaps of mappings no longer counted, the resident (munmaps done; never falls) */
	uint64_t fresh[2];       /* of grown, what was counted in the slot of FRESH_NS ... */
	uint64_t slot[2];        /* ... numbered so (time / FRESH_NS; even slots in [0]) */
	uint64_t stale;          /* of grown at the last look counted, what is not fresh */
	spin_t glock;            /* the counting of grown at a look (a look's tried, never waited for) */
	uint64_t added;          /* since: populated ahead by us */
	uint64_t front_held;     /* the watches' charges */
	uint64_t front_rules;    /* the rules windows were queued for (bits; the watcher's) */
	uint64_t cut;            /* windows cut short by the budget (the watcher's) */
	int thp;                 /* os_thp_mode() */
	int ncpu;
	spin_t wlock;
	uint32_t wword;          /* the watcher's futex word */
	int nwatchers, nwatch;
	int rss_fell;            /* an unmap took resident pages out since the last look (grows) */
	int guarding;            /* soft: the watcher looks at RSS every GUARD_NS while the cache is past the extra (auto_kept) */
	int huge_live;           /* soft: a live front is advised huge pages (huge_hold; the watcher's) */
	uint64_t guard_looks;    /* the guard's looks at RSS */
	uint64_t huge_holds;     /* times huge_live was set */
} S;

/* ---- set-up and the budget ----
 *
 * The bound: the process's RSS (the program's own and what the learner
 * holds) never more than the program's own peak and the extra (the lesser
 * of PERCENT of that peak and CAP, never less than 2 MiB or one huge page).  Keeping a
 * region the program unmaps leaves RSS as it was (an arena the program
 * freed was in its peak already): so keeping is allowed while RSS is under
 * that top, and what is kept is given back (trimmed) as soon as the
 * program grows past it by other means, or has mapped, and not yet
 * touched, what would take it past (count_grown: the program may touch it
 * with no call between, and no look sees RSS rise until it has).
 * Populating ahead of the program adds to RSS: it must fit under the top
 * as it is.
 *
 * RSS is read (statm; the program's own is that less what the learner
 * holds; its peak the most seen so, or getrusage's peak less the most the
 * learner held, whichever is more) while the learner holds something: at
 * most every 10 ms, and again once the program has mapped as much as the
 * extra anew, and on the watcher before each window ahead of a buffer's
 * front (the program's peak grows as it fills the buffer, and the extra
 * with it).  Four system calls a time (twice that when it trims), none
 * when nothing is held.  A look
 * sees what the workers have populated of the windows queued before it:
 * what they have not is added (worker_pending_bytes). */

static uint64_t program_faults(void)
{
	struct faults f;
	uint64_t ours = st_get(&g_stats.pf_minor) + st_get(&g_stats.pf_major);
	os_faults_self(&f);
	return f.minor + f.major > ours ? f.minor + f.major - ours : 0;
}

/* (regions being given back count until their munmap is done: see rss_refresh.
 * Hard, all the budget's charges: populated mappings, whole, while they live) */
static uint64_t held(void)
{
	uint64_t h = recycle_held_total() + __atomic_load_n(&S.front_held, __ATOMIC_RELAXED), b;
	if (S.hard && (b = budget_used()) > h)
		h = b;
	return h;
}

static void atomic_max(uint64_t *v, uint64_t x)
{
	uint64_t cur = __atomic_load_n(v, __ATOMIC_RELAXED);
	while (x > cur && !__atomic_compare_exchange_n(v, &cur, x, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void note_held(void)
{
	uint64_t h = held(), k = recycle_kept_peak();
	atomic_max(&S.held_peak, k > h ? k : h); /* (kept regions may have peaked between two looks) */
}

/* What RSS may have over a program peak of p.  (The peak is read once by
 * each caller: other threads raise it meanwhile, and a limit and a peak
 * from two reads do not go together.) */
static uint64_t extra_of(uint64_t p)
{
	uint64_t b = p / 100 * S.pct;
	if (b > S.cap)
		b = S.cap;
	return b < BUDGET_FLOOR && S.cap >= BUDGET_FLOOR ? BUDGET_FLOOR : b;
}

static uint64_t prog_peak(void) { return __atomic_load_n(&S.prog_peak, __ATOMIC_RELAXED); }
static uint64_t extra(void) { return extra_of(prog_peak()); }

/* Hard: everything the shim makes resident for the program is charged to
 * the budget first (kept regions, populated mappings while they live,
 * windows ahead), and the charges and the shim's own memory (its object,
 * tables and helpers' stacks, read at each look) never add up to more
 * than the extra of the peak seen so far: RSS is never more than the
 * program's own peak and that, whatever the program does without a call
 * (the peak only rises).  Populating a mapping charges all of it while it
 * lives: what of it the program has touched since cannot be told from
 * what it has not, short of asking the kernel page by page. */
static void hard_cap(void)
{
	uint64_t e, own;
	if (!S.hard)
		return;
	e = extra();
	own = __atomic_load_n(&S.shim_own, __ATOMIC_RELAXED);
	budget_set_cap(e > own ? e - own : 0);
}

/* The shim's own memory now: its object's resident pages, its tables and
 * helpers' stacks. */
static uint64_t shim_own_now(void) { return os_image_resident(page_size) + glue_own_bytes(); }

/* At each look under hard; soft, every OWN_NS (a mincore per 256 pages of
 * the object, four here, at each of the guard's 100 looks a second was
 * 400 of its 970 system calls a second; the figure moves slowly) */
static void own_refresh(void)
{
	uint64_t now = os_now_ns(), last = __atomic_load_n(&S.own_read, __ATOMIC_RELAXED);
	if (!S.hard && last && now >= last && now - last < OWN_NS)
		return;
	__atomic_store_n(&S.own_read, now, __ATOMIC_RELAXED);
	__atomic_store_n(&S.shim_own, shim_own_now(), __ATOMIC_RELAXED);
}

/* Soft: what may be kept with no guard, the extra less what is populated
 * ahead and the shim's own: kept within it, a program growing back to its
 * peak with no call cannot pass the line.  past_extra: the cache is over
 * it, and the guard looks (auto_kept); an idle one is trimmed to it. */
static uint64_t guard_room(void)
{
	uint64_t e = extra(), o = __atomic_load_n(&S.front_held, __ATOMIC_RELAXED) +
	                          __atomic_load_n(&S.shim_own, __ATOMIC_RELAXED);
	return e > o ? e - o : 0;
}
static int past_extra(void) { return recycle_kept_total() > guard_room(); }

/* What is kept, less `over` (what a trim keeps to be that much lower). */
static uint64_t kept_less(uint64_t over)
{
	uint64_t k = recycle_kept_total();
	return k > over ? k - over : 0;
}

/* Soft, while a front the program fills is advised huge pages: its faults
 * there are 2 MiB each, a hundred times faster than the rate the guard's
 * looks are timed for (guard_every), and no call comes for the old
 * mapping's (helper-28's old mapping written in 40 ms beside a kept churn:
 * VmHWM 3.3 MB past the line, RSS up 6 MiB between two looks).  The cache
 * stays within the room meanwhile: what the program grows cannot take it
 * past the line with the cache's help.  (A cap, and a trim only when over
 * it: loads otherwise.) */
static void huge_hold(void)
{
	uint64_t r = guard_room();
	if (!__atomic_load_n(&S.huge_live, __ATOMIC_RELAXED))
		return;
	recycle_cap_below(r); /* (a look may have shut the cache: not opened) */
	if (recycle_kept_total() > r)
		recycle_trim(r);
}
/* The top for a program peak of p: p and its extra. */
static uint64_t top_of(uint64_t p)
{
	return p + extra_of(p);
}
static uint64_t top(void)
{
	return top_of(prog_peak());
}

/* The line a look holds RSS to, for a program peak of p: the top, and
 * soft, less the shim's own memory (see rss_refresh). */
static uint64_t line_of(uint64_t p)
{
	uint64_t t = top_of(p), own;
	if (S.hard)
		return t;
	own = __atomic_load_n(&S.shim_own, __ATOMIC_RELAXED);
	return t > own ? t - own : 0;
}

/* Soft: how often the guard looks, from the room under the line at the
 * last look: what the program can grow in that time with no call, at 1
 * MiB a ms (a fresh page's first touch, 1.5 to 10 us here, at 4 us), so
 * that it looks again before it can pass the line; every GUARD_NS with
 * room for 10 ms of that, every GUARD_MIN_NS at the line.  (Every 10 ms
 * alone: 16 MiB grown by sbrk in 40 ms went 2.2 to 2.9 MB past, an old
 * mapping written at once 3.5; a perf page-fault event that signalled the
 * watcher instead, helper-29: sigtimedwait takes the program's own
 * process-directed signals of that number too, and its descriptor is one
 * the program can see and run out of.) */
static uint64_t guard_every(void)
{
	uint64_t t = line_of(prog_peak()), rss = __atomic_load_n(&S.rss, __ATOMIC_RELAXED), left, ns;
	left = t > rss ? t - rss : 0;
	ns = left / (1u << 20) * 1000 * 1000; /* (1 MiB a ms) */
	return ns < GUARD_MIN_NS ? GUARD_MIN_NS : ns > GUARD_NS ? GUARD_NS : ns;
}

/* The program's peak, at least getrusage's less the most the learner held. */
static void peak_from_rusage(void)
{
	uint64_t top_rss = os_peak_rss(), hp = __atomic_load_n(&S.held_peak, __ATOMIC_RELAXED);
	if (S.hard)
		hp += __atomic_load_n(&S.shim_own, __ATOMIC_RELAXED); /* (see measure) */
	if (top_rss) /* (0: unread) */
		atomic_max(&S.prog_peak, top_rss > hp ? top_rss - hp : 0);
	hard_cap();
}

/* RSS now, the program's peak raised by what of it is the program's, and
 * that peak (*peak); *over, what RSS has over the program's peak.  What the
 * learner holds is read before and after RSS:
 *  - the more of the two is taken off for the program's peak: a region
 *    being given back leaves it only once its munmap is done
 *    (recycle_held_total), and one kept or a window charged while RSS is
 *    read is in the second; so whatever of ours RSS counts is in it, and
 *    the program's peak is never taken too high (it stays so: a maximum);
 *    too low for a moment at most, which the next look mends;
 *  - RSS is over the program's peak by no more than the less of the two:
 *    a region the program takes back from the cache while RSS is read is
 *    the program's, and counted over its peak it would be the program's
 *    own growth said to be ours (CI of c1d77cc: a region over). */
static uint64_t measure(uint64_t *peak, uint64_t *over)
{
	uint64_t h = held(), rss = os_rss_now(), h2 = held(), lo = h < h2 ? h : h2, hi = h < h2 ? h2 : h;
	own_refresh();
	if (S.hard) /* (not the program's either; soft, in the peak: see rss_refresh) */
		hi += __atomic_load_n(&S.shim_own, __ATOMIC_RELAXED);
	atomic_max(&S.prog_peak, rss > hi ? rss - hi : 0);
	peak_from_rusage();
	*peak = prog_peak();
	*over = rss > *peak ? rss - *peak : 0;
	if (*over > lo)
		*over = lo;
	return rss;
}

/* Of a mapping of len, what is counted as coming: weight per 1024 of it
 * (weight_of: as much as the site's earlier mappings came back touched). */
static uint64_t counted(uint64_t len, unsigned weight) { return len / page_size * weight / 1024 * page_size; }

/* What is counted is fresh for 10 to 20 ms: it goes in its slot of
 * FRESH_NS (the clock is read without a system call), and a look counts as
 * fresh the slot it is in and the one before.  A slot's figure is begun
 * under the look's lock, tried once: another thread's add then goes into
 * the slot before, which goes earlier (the safe side: counted stale). */
static void fresh_add(uint64_t x)
{
	uint64_t s;
	int i;
	if (!x)
		return;
	s = os_now_ns() / FRESH_NS;
	i = (int)(s & 1);
	/* (only ever forward: a thread that read its clock before another
	 * began a later slot here would empty that one) */
	if (__atomic_load_n(&S.slot[i], __ATOMIC_ACQUIRE) < s && spin_lock_bounded(&S.glock, 0)) {
		if (S.slot[i] < s) {
			__atomic_store_n(&S.fresh[i], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&S.slot[i], s, __ATOMIC_RELEASE);
		}
		spin_unlock(&S.glock);
	}
	__atomic_add_fetch(&S.fresh[i], x, __ATOMIC_RELAXED);
}

/* Of grown, what is fresh at now (look's lock held): slots older than the
 * one before now's are emptied. */
static uint64_t fresh_now(uint64_t now)
{
	uint64_t s = now / FRESH_NS, f = 0;
	int i;
	for (i = 0; i < 2; i++) {
		if (S.slot[i] + 1 < s)
			__atomic_store_n(&S.fresh[i], 0, __ATOMIC_RELAXED);
		f += __atomic_load_n(&S.fresh[i], __ATOMIC_RELAXED);
	}
	return f;
}

/* Takes up to x out of what counts as fresh (the later slot's first).
 * Under S.glock. */
static void fresh_take(uint64_t x)
{
	int k, later = S.slot[1] > S.slot[0];
	for (k = 0; k < 2 && x; k++) {
		int i = k ? !later : later;
		uint64_t cur = __atomic_load_n(&S.fresh[i], __ATOMIC_RELAXED), t;
		do
			t = cur < x ? cur : x;
		while (t && !__atomic_compare_exchange_n(&S.fresh[i], &cur, cur - t, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		x -= t;
	}
}

/* What the program mapped anew and has not made resident yet (grown), as
 * of a look that read own: RSS, plus what the cache has given back (of it,
 * what was resident), plus what the program's unmaps of mappings no longer
 * counted freed (fallen, see shrinks), less what the watches hold
 * (charged) of what they populate ahead.  Between two looks own moves by what the program itself
 * made resident or gave up (keeping a region and taking one back leave it
 * as it is; a window dips it from its charge until populated: an open
 * defect, see the note on issue 21), so its rise is what of the new
 * mappings the program touched since: that leaves grown (RSS has it now),
 * and no more.  A look used to forget all that was mapped 10 to 20 ms
 * before; with four threads each filling 8 MiB cold at once, a fill took
 * longer than that, the rest of it went uncounted, and peak RSS went past
 * the top (CI of 224560a).
 *
 * Growth of the program's the learner does not see (brk, small or file
 * mappings) takes grown down too, never under 0: then what is counted is
 * too little, as it was before.  What the program gives up unseen (a heap
 * trimmed, an unmap of a mapping not tracked) raises it, too much: the
 * safe side, for a while.
 *
 * A mapping only reserved, never touched, would keep the cache closed for
 * good: grown is in two parts by age, what was mapped before old_until was
 * last set (grown_old) and since, and the old part goes at the first look
 * after old_until (UNTOUCHED_NS; GROWN_NS where there is no look to count
 * from: a fork child's first); the rest becomes the old.  Each time is an
 * epoch: a mapping remembers the one it was counted in, so that its unmap
 * takes it out of the part it is in, or not at all once that part went
 * (shrinks).  What is touched is taken from the new part first.  Taken
 * from the old first (before this), the program's churn of new mappings
 * (touched whole, unmapped) drained the old part faster than it could go,
 * a 64 MiB mapping 1 MiB touched stayed counted for as long as the churn
 * went on, and the cache stayed closed (autoprobe expire: 6 regions kept
 * against 1,072).  Touches of a mapping of the old part thus taken from
 * the new make the old too much and the new too little by as much, until
 * the old goes; its unmap takes its length out of the old (shrinks), which
 * mends most of it.
 *
 * Of what is left, what was counted in the last 10 to 20 ms is fresh (it
 * may be being touched now); the rest (stale) has room made for it at the
 * look, kept regions given back (rss_refresh).  Touches and unmaps take
 * from the fresh first too: what they take from grown was mostly mapped
 * lately.  A mapping counts as much of its length as its site's earlier
 * ones came back touched (weight_of).
 *
 * A look that cannot have the lock at once, or counts after a later one,
 * leaves it: the next look's figure has its part (own is a running
 * total). */
static void count_grown(uint64_t now, uint64_t own)
{
	int64_t g, d;
	uint64_t old, gone;
	if (!spin_lock_bounded(&S.glock, 0))
		return;
	if (now < S.own_at) {
		spin_unlock(&S.glock);
		return;
	}
	gone = S.old_gone;
	S.old_gone = 0;
	old = S.grown_old > gone ? S.grown_old - gone : 0;
	if (S.own_at) {
		d = (int64_t)(own - S.own);
		g = __atomic_sub_fetch(&S.grown, d, __ATOMIC_RELEASE); /* (after S.rss: see rss_guess) */
		if (d > 0) { /* (touched: the new part first) */
			int64_t before = g + d;
			uint64_t fresh = before > (int64_t)old ? (uint64_t)before - old : 0;
			if ((uint64_t)d > fresh)
				old = old > (uint64_t)d - fresh ? old - ((uint64_t)d - fresh) : 0;
			fresh_take((uint64_t)d); /* (and of what was counted lately first) */
		}
	} else {
		g = __atomic_load_n(&S.grown, __ATOMIC_RELAXED);
		old = g > 0 ? (uint64_t)g : 0;
		S.old_until = now + GROWN_NS;
		__atomic_store_n(&S.epoch, S.epoch + 1, __ATOMIC_RELEASE);
	}
	S.own = own;
	S.own_at = now;
	if (g < 0) { /* (of the figure read: what other threads add meanwhile stays) */
		__atomic_sub_fetch(&S.grown, g, __ATOMIC_RELAXED);
		g = 0;
	}
	if (now >= S.old_until) {
		if (old > (uint64_t)g)
			old = (uint64_t)g;
		__atomic_sub_fetch(&S.grown, (int64_t)old, __ATOMIC_RELAXED);
		g -= (int64_t)old;
		old = (uint64_t)g;
		S.old_until = now + UNTOUCHED_NS;
		/* (after grown fell: a mapping counted since reads this
		 * epoch or the one before, the safe side: see shrinks) */
		__atomic_store_n(&S.epoch, S.epoch + 1, __ATOMIC_RELEASE);
	}
	S.grown_old = old < (uint64_t)g ? old : (uint64_t)g;
	{
		uint64_t f = fresh_now(now);
		__atomic_store_n(&S.stale, (uint64_t)g > f ? (uint64_t)g - f : 0, __ATOMIC_RELAXED);
	}
	spin_unlock(&S.glock);
}

/* RSS read again if older than 10 ms, or the program has mapped the extra
 * anew since (or now: force).  Over the top: kept regions go back, and no
 * more are kept until the next look finds room.  GUARD_LOOK (force): the
 * watcher's look while regions are kept (auto_kept), for growth that came
 * with no call; not for what may come: a 64 MiB buffer mapped and being
 * written whole was stale at the guard's looks, and the churn beside lost
 * its cache for nothing, 1 run of 2 (autoprobe refill); calls look for
 * that, as before. */
static void rss_refresh(uint64_t now, int force)
{
	uint64_t last = __atomic_load_n(&S.rss_at, __ATOMIC_RELAXED), rss, p, t, over, fh, given, stale, want;
	/* (now older than the last look: another thread looked since this
	 * one read its clock; that look is fresh) */
	if (!force && last && (now < last || now - last < RSS_EVERY_NS))
		return;
	if (!__atomic_compare_exchange_n(&S.rss_at, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	note_held();
	fh = __atomic_load_n(&S.front_held, __ATOMIC_RELAXED);
	/* (both before RSS, with acquire: an unmap they count is done, and
	 * RSS is without it; one done before RSS but counted after shows as
	 * a fall for one look, mended at the next) */
	given = recycle_given_total() + __atomic_load_n(&S.fallen, __ATOMIC_ACQUIRE);
	rss = measure(&p, &over);
	__atomic_store_n(&S.rss, rss, __ATOMIC_RELAXED); /* (before grown falls: a guess between, high) */
	if (S.hard) { /* (the shim's own grew past what the charges left it: kept regions go first) */
		uint64_t e = extra_of(p), u = budget_used() + __atomic_load_n(&S.shim_own, __ATOMIC_RELAXED);
		if (u > e)
			recycle_trim(kept_less(u - e));
	}
	count_grown(now, rss + given - fh);
	__atomic_store_n(&S.added, 0, __ATOMIC_RELAXED);
	/* (soft: the program's peak has the shim's own memory in it, which
	 * the front's windows count on at a small peak, a huge page of room
	 * in the extra's 2 MiB; what is kept makes room for it: bench/py/
	 * phase.py, VmHWM 27.7 MB against 25.4 without the shim and a line
	 * of 27.9, 28.7 without this.  A sanitizer build's own, 3.1 MiB under
	 * ASan, is more than a small program's extra: nothing kept there) */
	t = line_of(p);
	/* What was mapped a while ago and is still untouched may be touched
	 * with no call between (autoprobe late): kept regions make room for
	 * it too.  Not what was mapped lately: a churn's own mappings, made,
	 * touched and unmapped between two looks, would shut the cache at
	 * every look (autoprobe expire).  Less what the windows hold:
	 * resident, and in grown still. */
	stale = force == GUARD_LOOK ? 0 : __atomic_load_n(&S.stale, __ATOMIC_RELAXED);
	want = (rss > fh ? rss - fh : 0) + stale;
	if (want < rss)
		want = rss;
	if (want > t) {
		uint64_t most = kept_less(want - t);
		/* (first: no region kept while the trim runs; past the top
		 * already, none kept until a look finds room, the program grew
		 * back by other means than reusing) */
		recycle_cap(rss > t ? 0 : most);
		/* Measured again, not worked out: other threads keep, take and
		 * give back meanwhile, and a kept region need not be all
		 * resident. */
		if (recycle_trim(most)) {
			rss = measure(&p, &over);
			__atomic_store_n(&S.rss, rss, __ATOMIC_RELAXED);
		}
	} else {
		recycle_cap(UINT64_MAX);
	}
	huge_hold();
	atomic_max(&S.over_peak, over);
}

/* The program maps len anew (not a reused region): taken as resident at
 * once (its touches are not seen), RSS may pass the top before the next
 * look, so what is kept over it goes back now (no system call but the
 * munmaps of what goes). */
static uint64_t rss_guess(void)
{
	/* (grown first, with acquire: a look stores RSS before grown falls,
	 * so a guess between reads it high, never low) */
	int64_t g = __atomic_load_n(&S.grown, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&S.rss, __ATOMIC_RELAXED) + (uint64_t)(g > 0 ? g : 0) + __atomic_load_n(&S.added, __ATOMIC_RELAXED);
}

static void grows(uint64_t len)
{
	uint64_t t, now;
	/* (first: a look counts what was touched before this; at once if RSS
	 * fell since the last: that look's RSS has what was unmapped since in
	 * it, and the guess below would give the cache back for it: a 64 MiB
	 * buffer unmapped and another mapped at once, the churn beside lost
	 * its cache whenever the last look was one of the guard's, autoprobe
	 * refill 3 runs of 4) */
	if (held())
		rss_refresh(os_now_ns(), __atomic_load_n(&S.rss_fell, __ATOMIC_ACQUIRE) &&
		                         __atomic_exchange_n(&S.rss_fell, 0, __ATOMIC_ACQ_REL));
	__atomic_add_fetch(&S.grown, (int64_t)len, __ATOMIC_RELAXED);
	fresh_add(len);
	if (!held())
		return;
	t = top();
	now = rss_guess();
	if (now > t) {
		uint64_t most = kept_less(now - t);
		recycle_cap(most); /* (first: no region kept while the trim runs) */
		/* What went back is not taken off the last look's RSS: it may
		 * have been partly resident, or kept since that look, or another
		 * look may have read RSS without it already; taken off all the
		 * same, RSS would read low and let windows past the top.  A look
		 * now instead (only when a trim gave something back: its munmaps
		 * are system calls already). */
		if (recycle_trim(most)) {
			rss_refresh(os_now_ns(), 1);
			if (rss_guess() > top()) /* (the look opened the cache: with the mapping, still over) */
				recycle_cap(recycle_kept_total());
		}
	}
}

static uint32_t auto_epoch(void) { return __atomic_load_n(&S.epoch, __ATOMIC_ACQUIRE); }

/* The program gives a mapping [start, start+len) back (unmaps or frees
 * it, and it is not kept), still mapped, counted in grown at epoch e (read
 * before it was added: an epoch too old, never too new), as much as it
 * counted (weight).  Of the new part: that comes out (what of it was
 * touched comes back to grown when a look sees RSS fall).  Of the old,
 * the same, less what was touched, asked (below).  Once its part went, not again: a
 * later mapping would go uncounted (autoprobe expire: peak RSS 9 MiB past
 * the top); but what of it was touched would still come back when RSS
 * falls, counted as coming when nothing is (a 256 MiB buffer used for 2 s
 * and unmapped: the cache trimmed and closed for up to a second).  So for
 * such a mapping, and one of the old part, returns its resident bytes
 * (mincore: one system call per 256 pages, only for a mapping in use
 * across a turn of the epoch, every 0.5 to 1 s, or older), which
 * auto_unmapped counts as fallen once its munmap is done.  Under the
 * look's lock: an epoch that turns between the read and the count would
 * leave the old part too much, and take too much out when it goes.
 * Waited for (two threads' unmaps each lost when tried): a look holds it
 * briefly, with no system call, and no wrapper takes it twice (the guard). */
static uint64_t shrinks(uintptr_t start, uint64_t len, uint32_t e, unsigned weight, int unmap)
{
	uint64_t c = counted(len, weight), res;
	uint32_t now;
	spin_lock(&S.glock);
	now = S.epoch;
	if (now == e || (now - e == 1 && !unmap)) {
		__atomic_sub_fetch(&S.grown, (int64_t)c, __ATOMIC_RELAXED);
		fresh_take(c);
		if (now != e)
			S.old_gone += c;
		spin_unlock(&S.glock);
		return 0;
	}
	spin_unlock(&S.glock);
	if (!unmap)
		return 0;
	res = (uint64_t)os_resident_pages(start, start + len, page_size) * page_size;
	if (now - e == 1) {
		/* Of the old part.  What of it was touched left grown when a look
		 * saw RSS rise, from either part (the new first), and its fall
		 * at the munmap would come back to the new part: taking its
		 * length out of the old, as for the new part, carried the fall
		 * into the next epoch, at every turn, for every mapping in use
		 * across one (a churn's: 4 to 9 MiB still counted as coming 1.5 s
		 * after the only untouched mapping was made, and the cache kept
		 * shut for it: autoprobe expire).  So only the untouched comes
		 * out, and the resident counts as fallen, as for an older
		 * mapping.  Every such unmap is asked: capped (128 an epoch),
		 * a program with more mappings than that in use across each
		 * turn carried the rest for good, now heeded at every look
		 * (a review's finding).  The price: 8,000 mappings of 256 KiB
		 * never touched, unmapped just after a turn, take 30% longer
		 * (costprobe keepmaps 8000 256K); touched, their munmap frees
		 * pages, and the ask is a small part of it. */
		uint64_t out = c > res ? c - res : 0;
		spin_lock(&S.glock);
		if (S.epoch - e == 1) {
			__atomic_sub_fetch(&S.grown, (int64_t)out, __ATOMIC_RELAXED);
			fresh_take(out);
			S.old_gone += out;
		}
		spin_unlock(&S.glock);
	}
	return res;
}

uint64_t auto_dropped(const struct region *r, int unmap) { return shrinks(r->start, r->end - r->start, r->epoch, r->weight, unmap); }

void auto_unmapped(uint64_t resident)
{
	if (resident) {
		__atomic_add_fetch(&S.fallen, resident, __ATOMIC_RELEASE);
		__atomic_store_n(&S.rss_fell, 1, __ATOMIC_RELEASE); /* (see grows) */
	}
}

/* A region reused: of what the site's mappings come back touched, what is
 * not resident is the program's to touch (counted as all that was not
 * resident, a site touching half of each 8 MiB region, the same half each
 * time, counted 2 MiB coming at each reuse that never came, and its cache
 * was given back for it: autoprobe sparse 400 8M 2).  But when it was kept, what of it was left untouched still counted (a
 * region kept is not shrunk: its untouched part is not known), unless its
 * epoch went: counted again at each reuse, a site reusing regions half
 * touched piled up 300 MiB counted as coming within a second (32 such 2
 * MiB regions reused 8 times), and the cache was given back whole at the
 * next new mapping.  So counted again only once its epoch went, and it
 * takes the epoch of the count it is in. */
void auto_taken(size_t len, size_t resident, uint32_t kept_epoch, struct request *rq)
{
	if (resident == (size_t)-1) {
		grows(counted(len, rq->weight));
	} else if (__atomic_load_n(&S.epoch, __ATOMIC_RELAXED) - kept_epoch < 2) {
		rq->epoch = kept_epoch;
	} else {
		/* (the program touches as much of it as the site's mappings came
		 * back touched, mostly the pages it touched before: they are
		 * resident) */
		uint64_t c = counted(len, rq->weight), r = (uint64_t)resident * page_size;
		if (c > r) {
			__atomic_add_fetch(&S.grown, (int64_t)(c - r), __ATOMIC_RELAXED);
			fresh_add(c - r);
		}
	}
}

/* Room under the top for n bytes more made resident (populating ahead):
 * 1 and charged, or 0. */
static int front_reserve(uint64_t n, uint64_t pending)
{
	/* (the program's new mappings are not taken as resident here: a
	 * buffer being filled would leave no room for its own window.  RSS and
	 * pending: as front_pending just read them) */
	if (__atomic_load_n(&S.rss, __ATOMIC_RELAXED) + __atomic_load_n(&S.added, __ATOMIC_RELAXED) + pending + n > top())
		return 0;
	/* Nor more than the extra in all, wherever RSS is: unlike a kept
	 * region a window cannot be given back, and the program may come back
	 * to its peak.  (Windows queued while the program was under it, in a
	 * 64 MiB mapping whose front moved again when khugepaged, it seems,
	 * filled a huge page it had advised, held 6 MiB against an extra of
	 * 5.2: RSS past the top whenever the program was at its peak, and a
	 * churn beside it kept nothing for the rest of the run, autoprobe
	 * expire, 2 runs of 40.) */
	if (__atomic_load_n(&S.front_held, __ATOMIC_RELAXED) + n > extra())
		return 0;
	if (S.hard && !budget_reserve(n))
		return 0;
	__atomic_add_fetch(&S.added, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&S.front_held, n, __ATOMIC_RELAXED);
	note_held();
	return 1;
}

/* What the windows queued so far have not had populated yet, and then RSS
 * read afresh: a look at RSS sees only what the workers have populated
 * (and forgets what was added before it), so the rest is added, read
 * first (a chunk populated between the two is counted twice, never
 * missed).  Then the budget grows as the program fills: its peak is as it
 * is now.  The watcher's, before it reserves. */
static uint64_t front_pending(void)
{
	uint64_t pending = S.front_rules ? worker_pending_bytes(S.front_rules) : 0;
	rss_refresh(os_now_ns(), 1);
	return pending;
}

static void front_release(uint64_t n)
{
	if (n)
		__atomic_sub_fetch(&S.front_held, n, __ATOMIC_RELAXED);
	if (S.hard)
		budget_release(n);
}

struct policy *auto_setup(const struct settings *set)
{
	uint64_t pct = 10, cap = 256ull << 20;
	int hard = 0;
	if (set->auto_budget && parse_auto_budget(set->auto_budget, &pct, &cap, &hard))
		return NULL;
	memset(&P, 0, offsetof(struct policy, rules));
	S.pct = pct;
	S.cap = cap;
	S.hard = hard; /* (its cap is set by the look below: measure) */
	S.t0 = os_now_ns();
	S.thp = os_thp_mode();
	S.ncpu = os_online_cpus();
	if (!sites)
		sites = glue_table(SITES * sizeof *sites, 1); /* (none: every site is -1, left alone) */
	recycle_count_given(); /* (for own: see count_grown) */
	rss_refresh(S.t0, 1);
	auto_on = 1;
	return &P;
}

/* ---- sites ---- */

static uint64_t site_hash(uintptr_t ret, unsigned call, uint32_t k)
{
	uint64_t h = ((uint64_t)ret ^ ((uint64_t)ret >> 17)) * 0x9e3779b97f4a7c15ull;
	return (h ^ (h >> 29)) + call * 31 + k;
}

/* The site of a request: found without a lock, added under it; -1 when
 * the table is full. */
static int site_of(uintptr_t ret, unsigned call, uint64_t len)
{
	uint32_t k = (uint32_t)size_class(len), n;
	uint64_t h = site_hash(ret, call, k);
	unsigned i;
	if (unlikely(!sites)) {
		stats_note(N_NO_TABLE);
		return -1;
	}
	for (n = 0, i = (unsigned)(h % SITES); n < SITES; n++, i = (i + 1) % SITES) {
		uintptr_t r = __atomic_load_n(&sites[i].ret, __ATOMIC_ACQUIRE);
		if (!r)
			break;
		if (r == ret && sites[i].call == call && sites[i].klass == k)
			return (int)i;
	}
	spin_lock(&S.lock);
	for (n = 0, i = (unsigned)(h % SITES); n < SITES && sites[i].ret; n++, i = (i + 1) % SITES)
		if (sites[i].ret == ret && sites[i].call == call && sites[i].klass == k) {
			spin_unlock(&S.lock);
			return (int)i;
		}
	if (n == SITES || S.nsites >= SITES * 3 / 4) {
		spin_unlock(&S.lock);
		stats_note(N_AUTO_SITES);
		return -1;
	}
	sites[i].call = call;
	sites[i].klass = k;
	sites[i].rule = -1;
	sites[i].size_min = sites[i].size_max = len;
	__atomic_store_n(&sites[i].ret, ret, __ATOMIC_RELEASE);
	S.nsites++;
	spin_unlock(&S.lock);
	return (int)i;
}

/* Named in the report (once); S.lock held. */
static void list_site(int i)
{
	if (sites[i].listed || S.nlisted == FIGS_MAX_AUTO)
		return;
	listed[S.nlisted++] = i;
	sites[i].listed = 1;
}

/* A site left alone, and why (said once). */
static void name_site(struct asite *s);

static void leave_alone(int i, uint32_t why, uint64_t a, uint64_t b)
{
	struct asite *s = &sites[i];
	if (s->listed)
		return;
	name_site(s);
	spin_lock(&S.lock);
	if (!s->listed && s->state == AS_OBSERVE) {
		s->why = why;
		s->why_a = a;
		s->why_b = b;
		s->since_ns = os_now_ns() - S.t0;
		list_site(i);
	}
	spin_unlock(&S.lock);
}

/* A rule for site i.  Its object is looked up first, with no lock held
 * (dladdr takes the loader's).  -1 when every rule is taken. */
/* The object the site's caller is in (dladdr, the loader's lock: never
 * with a lock of ours held, never at exit). */
static void name_site(struct asite *s)
{
	const char *obj;
	uintptr_t base;
	if (!s->object && match_caller((const void *)s->ret, &obj, &base) == 0) {
		s->base = base;
		__atomic_store_n(&s->object, obj, __ATOMIC_RELEASE);
	}
}

static int new_rule(int i, unsigned actions, uint64_t lo, uint64_t hi)
{
	struct asite *s = &sites[i];
	struct pol_rule *r;
	struct sbuf sb;
	int n;
	name_site(s);
	spin_lock(&S.lock);
	n = P.nrules;
	if (n == POL_MAX_RULES) {
		spin_unlock(&S.lock);
		stats_note(N_AUTO_RULES);
		return -1;
	}
	r = &P.rules[n];
	memset(r, 0, sizeof *r);
	sb_init(&sb, r->name, sizeof r->name, -1);
	sb_str(&sb, s->object ? s->object : "?");
	sb_chr(&sb, '+');
	sb_hex(&sb, s->ret - s->base);
	sb_chr(&sb, '-');
	sb_str(&sb, s->call == CALL_MMAP ? "mmap-" : "malloc-");
	sb_size_exact(&sb, lo);
	sb_cstr(&sb);
	r->calls = s->call;
	r->size_lo = lo;
	r->size_hi = hi;
	r->map_req = MK_ANON | MK_PRIVATE;
	r->prot_req = PK_READ | PK_WRITE;
	r->actions = actions;
	r->huge_check = (actions & A_HUGEPAGE) && S.thp == THP_MADVISE;
	if ((actions & A_POPULATE) && lo >= POOL_FROM && S.ncpu > 1) {
		uint64_t t = lo / POOL_FROM, cpus = (uint64_t)(S.ncpu > 0 ? S.ncpu : 1);
		r->threads = (unsigned)(t < cpus ? t : cpus);
	}
	/* (populate's threads: one per 64 MiB, at most the CPUs) */
	if (actions & A_RECYCLE)
		r->recycle_max = RECYCLE_MAX_DEFAULT;
	rule_site[n] = i;
	__atomic_store_n(&P.nrules, n + 1, __ATOMIC_RELEASE);
	spin_unlock(&S.lock);
	stats_rules(n + 1);
	if (actions & A_RECYCLE)
		recycle_add_rule(n, RECYCLE_MAX_DEFAULT);
	return n;
}

/* The decision, published (the state last, with release). */
static void decided(int i, int rule, int state, uint32_t why, uint64_t a, uint64_t b, uint64_t c)
{
	struct asite *s = &sites[i];
	uint64_t f = program_faults(), now = os_now_ns(); /* (one getrusage: decisions are rare) */
	spin_lock(&S.lock);
	s->rule = rule;
	s->off = AO_NONE;
	s->why = why;
	s->why_a = a;
	s->why_b = b;
	s->why_c = c;
	s->since_ns = now - S.t0;
	s->f_at = f;
	s->next_probe = __atomic_load_n(&s->maps, __ATOMIC_RELAXED) + PROBE_FIRST;
	s->probe_step = PROBE_FIRST;
	list_site(i);
	/* (no rule left: nothing more to learn here) */
	__atomic_store_n(&s->state, rule < 0 ? AS_OFF : state, __ATOMIC_RELEASE);
	spin_unlock(&S.lock);
}

static void back_off(int i, uint32_t off, uint64_t a, uint64_t b)
{
	struct asite *s = &sites[i];
	int rule;
	spin_lock(&S.lock);
	if (s->state == AS_OFF || s->state == AS_OBSERVE || s->state == AS_DECIDING) {
		spin_unlock(&S.lock);
		return;
	}
	rule = s->rule;
	s->off = off;
	s->off_a = a;
	s->off_b = b;
	s->off_ns = os_now_ns() - S.t0;
	__atomic_store_n(&s->state, AS_OFF, __ATOMIC_RELEASE);
	spin_unlock(&S.lock);
	if (off == AO_DROPPED || off == AO_UNUSED)
		recycle_release_rule(rule);
}

/* One more unmap of len at site s, at now (S.lock held): does it make len
 * churn (the CHURN_N-th within CHURN_NS)?  Then *n and *us say how many in
 * how long.  A site tells LENS lengths apart (the oldest window gives way). */
static int churned(struct asite *s, uint64_t len, uint64_t now, uint32_t *n, uint64_t *us)
{
	int k, old = 0;
	for (k = 0; k < LENS && s->win_len[k] != len; k++)
		if (s->win_t0[k] < s->win_t0[old])
			old = k;
	if (k == LENS || now - s->win_t0[k] > CHURN_NS) {
		k = k == LENS ? old : k;
		s->win_len[k] = len;
		s->win_t0[k] = now;
		s->win_n[k] = 1;
		return 0;
	}
	if (++s->win_n[k] < CHURN_N)
		return 0;
	*n = s->win_n[k];
	*us = (now - s->win_t0[k]) / 1000;
	s->win_t0[k] = 0; /* (counted once) */
	return 1;
}

static int recycles(const struct asite *s, uint64_t len)
{
	int k;
	for (k = 0; k < LENS; k++)
		if (__atomic_load_n(&s->len[k], __ATOMIC_RELAXED) == len)
			return 1;
	return 0;
}

/* Churn: site i recycles regions of len from now (a site that recycles
 * already takes one more length, up to LENS). */
static void decide_recycle(int i, uint64_t len, uint32_t n, uint64_t us)
{
	struct asite *s = &sites[i];
	int rule, k;
	spin_lock(&S.lock);
	if (s->state == AS_RECYCLE) {
		for (k = 0; k < LENS && s->len[k] && s->len[k] != len; k++)
			;
		if (k < LENS && !s->len[k] && s->rule >= 0) {
			struct pol_rule *r = &P.rules[s->rule];
			if (len < r->size_lo)
				r->size_lo = len;
			if (len > r->size_hi)
				r->size_hi = len;
			__atomic_store_n(&s->len[k], len, __ATOMIC_RELAXED);
		}
		spin_unlock(&S.lock);
		return;
	}
	spin_unlock(&S.lock);
	rss_refresh(os_now_ns(), 1);
	rule = new_rule(i, A_RECYCLE, len, len);
	memset(s->len, 0, sizeof s->len);
	s->len[0] = len;
	decided(i, rule, AS_RECYCLE, AW_CHURN, n, us, 0);
}

/* Whether a rule learned for mappings of size goes with huge pages: not
 * under hard (a mapping of the site's grown by mremap, or a block by
 * realloc, keeps the advice over what it gains, and a page touched there
 * is a huge page: helper-27, +254 MB). */
static int learns_huge(uint64_t size) { return S.thp != THP_NONE && size >= HUGE_FROM && !S.hard; }

/* Dense: populate (or background, first touched late) the site's class. */
static void decide_populate(int i, uint64_t measured, uint64_t pm)
{
	struct asite *s = &sites[i];
	uint64_t lo = 1ull << s->klass, hi = (lo << 1) - 1;
	int late = s->firsts && s->lates * 2 > s->firsts;
	unsigned a = late ? A_BACKGROUND : A_POPULATE;
	if (learns_huge(s->size_min))
		a |= A_HUGEPAGE;
	decided(i, new_rule(i, a, lo, hi), late ? AS_BACKGROUND : AS_POPULATE, late ? AW_LATE : AW_DENSE, measured, pm,
	        s->firsts ? s->late_ns / s->firsts / 1000000 : 0);
}

/* Every 64th request of a recycled site: did keeping pay?  (Regions the
 * budget had no room for, or gave back, are not the site's doing: counted
 * against it, a site churning while a large mapping of the program's still
 * counted as coming (count_grown) backed off for good, in 3 runs of 5 of
 * autoprobe expire; and one whose regions a look gave back for what was
 * coming would read them kept and never reused.) */
static void recycle_review(int i)
{
	const struct figs_rule *rs = &g_stats.rules[sites[i].rule];
	uint64_t kept = st_get(&rs->recycle_kept), dropped = st_get(&rs->recycle_dropped);
	uint64_t reused = st_get(&rs->recycle_reused), capped = recycle_capped(sites[i].rule);
	uint64_t trimmed = recycle_trimmed(sites[i].rule);
	dropped = dropped > capped ? dropped - capped : 0;
	kept = kept > trimmed ? kept - trimmed : 0;
	if (dropped >= 32 && dropped > kept)
		back_off(i, AO_DROPPED, dropped, dropped + kept);
	else if (kept >= 64 && reused * 4 < kept)
		back_off(i, AO_UNUSED, reused, kept);
}

/* What a site's mappings count as coming, per 1024 of their length: as
 * much as the most touched of its earlier ones (mincore at their unmaps),
 * all of it until one has come back.  A site that maps 64 MiB and touches
 * 1% again and again counts 1%: counted whole, its regions kept and reused
 * counted 63 MiB to come at every look, and the cache was given back for
 * them (autoprobe sparse 200 64M 100: 3x slower).  The most, not the mean:
 * the count is one pool, and a mapping touched past what it counted takes
 * the rest from other mappings' counts (a site of mappings half untouched
 * and half touched whole, counted at the mean, would have hidden the
 * others' as fast as it touched).  Measured only while the site observes
 * (its first 4 unmaps, then every 16th): a site that turns denser after
 * it recycles or populates is counted low for good, the unsafe side, as
 * any count that went (open).  (Read without the lock: a figure a little
 * off at worst.) */
static unsigned weight_of(const struct asite *s)
{
	uint64_t n = __atomic_load_n(&s->measured, __ATOMIC_ACQUIRE);
	uint32_t pm = __atomic_load_n(&s->pm_max, __ATOMIC_RELAXED);
	return !n || pm >= 1000 ? 1024 : pm * 1024 / 1000 + 1;
}

int auto_request(struct request *rq, int *watch)
{
	struct asite *s;
	uint64_t len = PAGE_UP(rq->len), n;
	int i, st;
	*watch = -1;
	rq->epoch = auto_epoch(); /* (before it is counted: see shrinks) */
	if (rq->call == CALL_MMAP &&
	    (rq->len < AUTO_MMAP_MIN || (rq->mk & (MK_ANON | MK_PRIVATE | MK_FIXED | MK_NORESERVE)) != (MK_ANON | MK_PRIVATE) ||
	     rq->hint || rq->pk != (PK_READ | PK_WRITE) || (rq->flags & (MAP_HUGETLB | MAP_LOCKED | MAP_GROWSDOWN))))
		return -1;
	if (rq->call == CALL_MALLOC && rq->len < AUTO_BLOCK_MIN)
		return -1;
	if ((i = site_of((uintptr_t)rq->ret, rq->call, len)) < 0)
		return -1;
	s = &sites[i];
	n = __atomic_add_fetch(&s->maps, 1, __ATOMIC_RELAXED);
	if (len < s->size_min) /* (for the report: a figure a little off at worst) */
		s->size_min = len;
	if (len > s->size_max)
		s->size_max = len;
	st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	/* Mapped anew: RSS may grow past the top.  For a length it recycles,
	 * the wrapper says after its take whether it was (auto_taken): asked
	 * before, another thread could take the region meanwhile, and the
	 * mapping would go uncounted. */
	rq->weight = (uint16_t)weight_of(s);
	if (st == AS_RECYCLE && rq->call == CALL_MMAP && recycles(s, len))
		*watch = AUTO_TAKEN;
	else
		grows(counted(len, rq->weight));
	switch (st) {
	case AS_RECYCLE:
		if (!recycles(s, len))
			break; /* watched: it may churn too */
		if (!(n & 63))
			recycle_review(i);
		return s->rule; /* (a reuse: RSS as it was; RSS is looked at in the unmaps) */
	case AS_POPULATE:
	case AS_BACKGROUND:
	case AS_FRONT: {
		uint64_t next = __atomic_load_n(&s->next_probe, __ATOMIC_RELAXED), step;
		if (n < next || !__atomic_compare_exchange_n(&s->next_probe, &next, next + s->probe_step, 0, __ATOMIC_RELAXED,
		                                             __ATOMIC_RELAXED))
			return s->rule;
		step = s->probe_step * 2; /* (racy: a probe more or less) */
		s->probe_step = step < PROBE_STEP_MAX ? step : PROBE_STEP_MAX;
		break; /* a probe: left to the program, measured when it goes */
	}
	case AS_OFF:
		if (s->off != AO_SPARSE) { /* recycling did not pay: nothing more to learn */
			/* (but tracked, so that its unmap leaves grown: else churn
			 * here piled up there, and kept the cache closed for all) */
			*watch = i;
			return -1;
		}
		break;
	default:
		break;
	}
	*watch = i;
	return -1;
}

/* ---- what a mapping that goes away teaches ---- */

/* Resident pages of [s, e), into *pages the pages looked at: all of them up
 * to 8 windows of 256 pages, else 8 windows spread over the range. */
static uint64_t sample_resident(uintptr_t s, uintptr_t e, uint64_t *pages)
{
	unsigned char vec[256];
	size_t total = (e - s) / page_size, win = sizeof vec, k, nwin, i;
	uint64_t res = 0;
	*pages = 0;
	nwin = total <= 8 * win ? (total + win - 1) / win : 8;
	for (k = 0; k < nwin; k++) {
		size_t first = total <= 8 * win ? k * win : (total - win) * k / (nwin - 1);
		size_t n = total - first < win ? total - first : win;
		if (sys_mincore((void *)(s + first * page_size), n * page_size, vec) != 0)
			break;
		for (i = 0; i < n; i++)
			res += vec[i] & 1;
		*pages += n;
	}
	return res;
}

static uint64_t watch_drop(uintptr_t s, uintptr_t e, int whole);

/* A region big against the extra that goes (kept or unmapped) while the
 * program's own RSS may be past its peak seen so far (by the figures of the
 * last look: RSS then, what was mapped anew since, less what is held now)
 * is looked at first: the region is still the program's, so the program is
 * at a peak just now, and a look only after it is kept would take it for
 * the learner's (getrusage's peak, less the most the learner ever held,
 * reads low too).  Under load, 10 ms went by without a look: the peak read
 * 4 MiB low, and the learner thought itself over the top by as much.  No
 * system call unless a new peak may be under way (a region reused again
 * and again is not one). */
static int big_gone(uint64_t len)
{
	uint64_t h = held(), guess = rss_guess(), p = prog_peak();
	return len * 2 > extra_of(p) && guess > h && guess - h > p;
}

/* ---- the watcher: first touch, the front, and the guard ---- */

static void *watcher_main(void *arg);

/* Soft: the regions kept fill the room below the program's peak, and
 * growth the shim does not see (the heap grown by brk for small blocks, a
 * stack, a reserve) takes RSS past the line by what is kept until a call
 * of the program's makes a look: none came while a CPython program built
 * a cache of 1 KiB strings after a churn (bench/py/phase.py: VmHWM 34.9
 * MB against 25.5 without the shim, the line 28.1).  So while regions are
 * kept the watcher looks every 1 to 10 ms too (guard_every, watcher_main):
 * what passes the line is what the program grows in that time, not all
 * that is kept.  Only while what is kept passes the extra (past_extra:
 * within it, growth back to the peak cannot pass the line).  Here, once a
 * region is kept: a few loads and an exchange, and a thread started or
 * woken when there is no guard yet; the guard lasts IDLE_NS past the last
 * look that saw the cache past the extra (a churn's regions
 * are kept and taken back in turn: seen empty between, each keep would
 * wake the watcher again, two futex calls a cycle). */
void auto_kept(void)
{
	/* (seq_cst, as the watcher's end of a guard: a region kept as the
	 * guard ends is seen by one side or the other; the cache's count
	 * has it already) */
	huge_hold();
	if (S.hard || __atomic_load_n(&S.guarding, __ATOMIC_SEQ_CST) || !past_extra() ||
	    __atomic_exchange_n(&S.guarding, 1, __ATOMIC_SEQ_CST))
		return;
	__atomic_fetch_add(&S.wword, 1, __ATOMIC_RELEASE);
	if (glue_spawn_upto(&S.nwatchers, 1, watcher_main, NULL, STACK, &S.wword) < 0)
		stats_note(N_NO_THREAD);
	glue_wake(&S.wword);
}

uint64_t auto_gone(const struct region *r, int unmap)
{
	struct asite *s;
	uint64_t len = r->end - r->start, now, us = 0, pages, res, pm, fell;
	int i = r->rule, churn = 0, measure, probe, st;
	uint32_t n = 0;
	if (!(r->flags & RF_AUTO)) {
		/* A region under one of the learner's rules: a populated site that
		 * turns out to churn is better recycled. */
		if (r->flags & RF_RECYCLE) { /* to be kept: is there room? */
			rss_refresh(os_now_ns(), big_gone(len));
			return 0;
		}
		fell = shrinks(r->start, len, r->epoch, r->weight, unmap);
		if (r->rule < 0 || r->rule >= __atomic_load_n(&P.nrules, __ATOMIC_ACQUIRE))
			return fell;
		i = rule_site[r->rule];
		s = &sites[i];
		if (s->call != CALL_MMAP || s->rule != r->rule)
			return fell;
		now = os_now_ns();
		spin_lock(&S.lock);
		st = s->state;
		churn = (st == AS_POPULATE || st == AS_BACKGROUND || st == AS_FRONT) && churned(s, len, now, &n, &us);
		if (churn)
			s->state = AS_DECIDING;
		spin_unlock(&S.lock);
		if (churn)
			decide_recycle(i, len, n, us);
		return fell;
	}
	s = &sites[i];
	if (big_gone(len) && held())
		rss_refresh(os_now_ns(), 1);
	fell = shrinks(r->start, len, r->epoch, r->weight, unmap);
	/* What its windows populated ahead is in that resident figure, and
	 * their charge leaves what the watches hold (which the look takes off
	 * RSS) at once: counted in both, the program's own would rise by it
	 * at the next look, taken for touches of its new mappings. */
	if (len >= WATCH_MIN) {
		uint64_t charged = watch_drop(r->start, r->end, !unmap); /* (a realloc: glibc may mremap it) */
		fell = fell > charged ? fell - charged : 0;
	}
	now = os_now_ns();
	spin_lock(&S.lock);
	s->gone++;
	st = s->state;
	if (s->call == CALL_MMAP && (st == AS_OBSERVE || st == AS_RECYCLE || (st == AS_OFF && s->off == AO_SPARSE)) &&
	    churned(s, len, now, &n, &us)) {
		churn = 1;
		if (st != AS_RECYCLE)
			s->state = AS_DECIDING;
	}
	probe = s->state == AS_POPULATE || s->state == AS_BACKGROUND || s->state == AS_FRONT;
	measure = !churn && (probe || (s->state == AS_OBSERVE && (s->measured < MEASURE_FIRST || s->gone % MEASURE_EVERY == 0)));
	spin_unlock(&S.lock);
	if (churn) {
		decide_recycle(i, len, n, us);
		return fell;
	}
	if (!measure || !len)
		return fell;
	res = sample_resident(r->start, r->end, &pages);
	if (!pages)
		return fell;
	pm = res * 1000 / pages;
	if (probe) {
		if (pm < BACKOFF_PM)
			back_off(i, AO_SPARSE, pm, 0);
		return fell;
	}
	spin_lock(&S.lock);
	if (pm > s->pm_max) /* (before measured: weight_of reads them so, unlocked) */
		__atomic_store_n(&s->pm_max, (uint32_t)pm, __ATOMIC_RELEASE);
	__atomic_store_n(&s->measured, s->measured + 1, __ATOMIC_RELEASE);
	s->pages += pages;
	s->touched += res;
	pm = s->touched * 1000 / s->pages;
	if (s->state != AS_OBSERVE || s->measured < NEED_MEASURED) {
		spin_unlock(&S.lock);
		return fell;
	}
	if (pm >= DENSE_PM) {
		s->state = AS_DECIDING;
		spin_unlock(&S.lock);
		decide_populate(i, s->measured, pm);
		return fell;
	}
	spin_unlock(&S.lock);
	if (pm < SPARSE_PM)
		leave_alone(i, AW_SPARSE, s->measured, pm);
	return fell;
}

void auto_mapped(int i, uintptr_t start, size_t len, const void *key, size_t size, const struct request *rq)
{
	struct region reg;
	struct asite *s = &sites[i];
	int k;
	if (!len)
		return;
	memset(&reg, 0, sizeof reg);
	reg.start = start;
	reg.end = start + len;
	reg.rule = i;
	reg.flags = RF_AUTO;
	reg.epoch = rq->epoch;
	reg.weight = rq->weight;
	if ((key ? blocks_add(key, &reg) : regions_add(&reg)) != 0)
		return;
	/* Watched: large, a site not yet decided that has not shown it is
	 * touched here and there, or not at all. */
	if (len < WATCH_MIN || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != AS_OBSERVE || s->scattered >= 2 ||
	    s->untouched >= 2 || (s->measured >= NEED_MEASURED && s->touched * 1000 < s->pages * SPARSE_PM))
		return;
	spin_lock(&S.wlock);
	for (k = 0; k < WATCH_MAX && watches[k].live; k++)
		;
	if (k < WATCH_MAX) {
		struct watch *w = &watches[k];
		memset(w, 0, sizeof *w);
		w->start = start;
		w->end = start + len;
		w->front = start;
		w->back = w->b_mark = w->end;
		/* A block: glibc's own mapping of it, never split in two (its
		 * mremap would then fail) */
		w->adv_lo = start;
		w->adv_hi = start + len;
		if (key)
			block_pages(key, size, &w->adv_lo, &w->adv_hi);
		w->site = i;
		w->t_map = w->t_prev = w->t_moved = os_now_ns();
		w->period = POLL_MIN_NS;
		w->t_next = w->t_map + w->period;
		w->live = 1;
		__atomic_store_n(&S.nwatch, S.nwatch + 1, __ATOMIC_RELAXED);
	}
	spin_unlock(&S.wlock);
	if (k < WATCH_MAX) {
		__atomic_fetch_add(&S.wword, 1, __ATOMIC_RELEASE);
		if (glue_spawn_upto(&S.nwatchers, 1, watcher_main, NULL, STACK, &S.wword) < 0)
			stats_note(N_NO_THREAD);
		glue_wake(&S.wword);
	}
}

/* Stop watching what overlaps [s, e), waiting for a poll in progress there
 * (it may be advising it); wlock held on entry and exit.  Returns the
 * charges released.  What it advised huge pages over goes in advised[]
 * (up to WATCH_MAX), if given: see watch_drop. */
static uint64_t unwatch_locked(uintptr_t s, uintptr_t e, uintptr_t (*advised)[2], int *nadvised)
{
	uint64_t released = 0;
	int k;
	for (k = 0; k < WATCH_MAX; k++) {
		struct watch *w = &watches[k];
		if (!w->live || e <= w->adv_lo || s >= w->adv_hi)
			continue;
		while (__atomic_load_n(&w->busy, __ATOMIC_ACQUIRE)) {
			spin_unlock(&S.wlock);
			sys_sched_yield();
			spin_lock(&S.wlock);
		}
		if (!w->live)
			continue;
		if (advised && w->advised && w->huge_kept) {
			advised[*nadvised][0] = w->adv_lo;
			advised[*nadvised][1] = w->adv_hi;
			++*nadvised;
		}
		front_release(w->held);
		released += w->held;
		w->live = 0;
		__atomic_store_n(&S.nwatch, S.nwatch - 1, __ATOMIC_RELAXED);
	}
	return released;
}

/* whole: the program's call may move the mapping and grow it (mremap,
 * realloc's by glibc), or change it.  The advice is taken back over the
 * whole first (one call, after the lock).  Left on, what the mapping
 * gains has it too, and a byte written there is a huge page (autoprobe
 * moved: 8 MiB filled 2 MiB, grown to 256 MiB, a byte every 2 MiB of it:
 * VmHWM 323 MB against 69 without the shim); and hard's advice near the
 * edges split the mapping in two or three, and mremap of a range over
 * more than one fails with EFAULT (the program's own mremap; glibc's
 * realloc falls back to copying: 14 MB more). */
static uint64_t watch_drop(uintptr_t s, uintptr_t e, int whole)
{
	uintptr_t advised[WATCH_MAX][2];
	uint64_t released;
	int n = 0, i;
	if (!__atomic_load_n(&S.nwatch, __ATOMIC_RELAXED))
		return 0;
	spin_lock(&S.wlock);
	released = unwatch_locked(s, e, whole ? advised : NULL, &n);
	spin_unlock(&S.wlock);
	for (i = 0; i < n; i++)
		sys_madvise((void *)advised[i][0], advised[i][1] - advised[i][0], MADV_NOHUGEPAGE);
	return released;
}

void auto_forget(uintptr_t start, size_t len)
{
	if (auto_on)
		watch_drop(start, start + len, 1);
}

/* The run of resident pages from *edge toward limit, upward or (down)
 * downward, by mincore, up to 64 MiB a poll: *edge moves to its far end.
 * Returns the pages resident in the first window looked at, or -1 if the
 * range is gone. */
static long resident_run(uintptr_t *edge, uintptr_t limit, int down)
{
	unsigned char vec[256];
	long first = -1;
	int win;
	for (win = 0; win < 64 && (down ? *edge > limit : *edge < limit); win++) {
		size_t pages = (down ? *edge - limit : limit - *edge) / page_size, run, i;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (!pages)
			break;
		if (sys_mincore((void *)(down ? *edge - pages * page_size : *edge), pages * page_size, vec) != 0)
			return -1;
		for (run = 0; run < pages && (vec[down ? pages - 1 - run : run] & 1); run++)
			;
		if (first < 0)
			for (first = 0, i = 0; i < pages; i++)
				first += vec[i] & 1;
		*edge = down ? *edge - run * page_size : *edge + run * page_size;
		if (run < pages)
			break;
	}
	return first < 0 ? 0 : first;
}

/* The front of w: [start, front) touched in a row.  Returns the pages
 * resident in the first window looked at past it, or -1 if the range is
 * gone. */
static long advance_front(struct watch *w)
{
	return resident_run(&w->front, w->end, 0);
}

/* The back of w: [back, end) touched in a row, down to the front or the
 * window ahead of it.  A buffer filled from both ends (sort: its text from
 * the start, its line table from the end down) grows here too.  Returns -1
 * if the range is gone, else 0. */
static int advance_back(struct watch *w)
{
	uintptr_t limit = w->ahead2 ? w->ahead2 : w->ahead > w->front ? w->ahead : w->front;
	return resident_run(&w->back, limit, 1) < 0 ? -1 : 0;
}

/* Whether the program has pages in [from, hi) outside the windows the
 * worker populated (ours, whole and charged: advised, nothing more comes
 * resident there; without the exception, huge pages advised late (hard:
 * huge_late) never reached past windows populated before, all small). */
static int resident_outside_windows(const struct watch *w, uintptr_t from, uintptr_t hi)
{
	uintptr_t win[2][2] = { { w->ahead - w->window, w->ahead }, { w->ahead2 - w->window2, w->ahead2 } };
	int i;
	for (i = 0; i < 2 && from < hi; i++) {
		if (!(i ? w->window2 : w->window) || win[i][1] <= from || win[i][0] >= hi)
			continue;
		if (win[i][0] > from && os_resident_pages(from, win[i][0], page_size))
			return 1;
		from = win[i][1];
	}
	return from < hi && os_resident_pages(from, hi, page_size);
}

/* Hard: huge pages are advised only where the program is filling: from the
 * start to a huge page past the front, or past the windows queued ahead
 * of it, and from the huge page the back is in to the end; the rest as
 * the edges move.  Over the whole mapping, every page the program touched
 * anywhere in it, before or after, could become a huge page: helper-27,
 * a 64 MiB mapping filled 1 MiB from the front, then one byte every 2 MiB,
 * VmHWM 63 MB past the program's own (and khugepaged, with max_ptes_none
 * at 511, collapsing pages written one per 2 MiB before the advice: +94
 * MB with no touch after it).  Advised so, what the program has not
 * filled of the advised ranges is the huge page the front is in (or the
 * windows' last, which the worker populates: charged as windows), the
 * one past it where the budget has room for it too (else the program's
 * front goes on in small pages until the next look), and the huge page
 * the back is in: each charged, a system call of the watcher's each time
 * an edge moves on.  Not so by default: advised an edge at a time, a
 * program filling 64 MiB in 0.17 s ran into unadvised pages between two
 * looks and took 13,318 faults of 16,384 (at most 4,096 advised whole),
 * and the default's line is for growth it sees (README, "Bounded"). */
static void advise_upto(struct watch *w, uintptr_t far)
{
	uintptr_t hi;
	if (!w->ahead_charged && front_reserve(hpage_size, front_pending())) {
		w->held += hpage_size;
		w->ahead_charged = 1;
	}
	hi = ((far + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1)) + (w->ahead_charged ? hpage_size : 0);
	if (hi > w->hp_lo)
		hi = w->hp_lo;
	if (hi > w->hp_hi) {
		/* Past the huge page the front is in, only where the program has
		 * nothing yet: pages it wrote there before (one per 2 MiB, say)
		 * khugepaged would make huge pages of, and those read as its front
		 * going through the windows, one after another (helper-27's hk:
		 * 30 MB past the line in 60 s, with no touch after the advice) */
		uintptr_t from = (w->front + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1);
		if (from < w->hp_hi)
			from = w->hp_hi;
		if (resident_outside_windows(w, from, hi))
			return;
		sys_madvise((void *)w->hp_hi, hi - w->hp_hi, MADV_HUGEPAGE);
		w->hp_hi = hi;
	}
}

static void advise_near(struct watch *w)
{
	uintptr_t hm = ~(uintptr_t)(hpage_size - 1), lo;
	if (!S.hard || !w->advised || !w->huge_kept)
		return;
	advise_upto(w, w->ahead2 ? w->ahead2 : w->ahead > w->front ? w->ahead : w->front);
	/* (the back below the advice: the program filled there with small
	 * pages.  Not the back at the advice's edge: a huge page made of one
	 * touch there looks like a fill, and the next touch a huge page below
	 * would be advised too, and so down the mapping, helper-27's hs with
	 * 2 MiB strides: 60 MB past the line in one run of two) */
	if (w->back >= w->hp_lo || w->back <= w->hp_hi)
		return;
	if (!w->back_charged) {
		if (!front_reserve(hpage_size, front_pending()))
			return;
		w->held += hpage_size;
		w->back_charged = 1;
	}
	lo = w->back & hm;
	if (lo < w->hp_hi)
		lo = w->hp_hi;
	if (lo < w->hp_lo) {
		sys_madvise((void *)lo, w->hp_lo - lo, MADV_HUGEPAGE);
		w->hp_lo = lo;
	}
}

/* The worker populates a window ahead of the program's front: what the
 * program fills in LEAD_NS at the rate measured, within the budget; it is
 * charged until the program has gone through it (the program is not seen
 * inside: its pages and ours look alike).  A second window is queued
 * behind the first, one huge page past its end: the program fills that
 * huge page itself, and it is where the program is seen going through the
 * first while the worker already fills the second (with one window, the
 * worker stood idle from the end of its window until the program had gone
 * through it and been seen: BENCHMARKS.md, issue 21). */
static void lead(struct watch *w, uint64_t now)
{
	struct asite *s = &sites[w->site];
	int next = w->ahead > w->front;
	uintptr_t from = next ? w->ahead + hpage_size : (w->front + 2 * hpage_size - 1) & ~(uintptr_t)(hpage_size - 1);
	uint64_t want = w->rate * (LEAD_NS / 1000000), asked, pending, half;
	if (s->rule < 0 || w->ahead2 || from >= w->back || now - w->t_moved > STALL_NS)
		return;
	if (w->cut && now - w->t_cut < 2 * POLL_MIN_NS)
		return; /* (no room a moment ago: asked again at most every 2 ms, each a look at RSS) */
	pending = front_pending();
	want = (want < hpage_size ? hpage_size : want > LEAD_MAX ? LEAD_MAX : want) & ~(uint64_t)(hpage_size - 1);
	if (want > w->back - from) /* (up to what the program filled from the end) */
		want = w->back - from;
	asked = want;
	half = extra() / 2 & ~(uint64_t)(hpage_size - 1);
	if (half >= hpage_size && want > half)
		want = half; /* (room for two) */
	while (want >= hpage_size && !front_reserve(want, pending))
		want = (want / 2) & ~(uint64_t)(hpage_size - 1);
	if (want < hpage_size && !(want && from + want == w->back && front_reserve(want, pending))) {
		if (!w->cut) /* (once until a window goes out: this is asked every look) */
			S.cut++;
		w->cut = 1;
		w->t_cut = now;
		return;
	}
	if (want < asked && !w->cut)
		S.cut++;
	w->cut = 0;
	if (S.hard && w->advised && w->huge_kept)
		advise_upto(w, from + want); /* (the worker's populate takes huge pages only where advised) */
	if (worker_enqueue(from, want, s->rule, hpage_size, MADV_POPULATE_WRITE, w->huge_kept ? W_HUGE : 0, 0, 0) != 0) {
		front_release(want);
		return;
	}
	w->held += want;
	S.front_rules |= 1ull << s->rule;
	if (next) {
		st_add(&g_stats.rules[s->rule].behind, 1);
		w->window2 = want;
		w->ahead2 = from + want;
	} else {
		w->window = want;
		w->ahead = from + want;
	}
	if (w->held > s->held_peak)
		s->held_peak = w->held;
}

/* With a window out, its pages (ours, resident) cannot be told from the
 * program's: the front is looked for past it.  A resident page right after
 * it: the program has gone through, and its charge comes back; the next
 * window, if one is queued, becomes the one out, and the front is looked
 * for only up to it.  Returns as advance_front does. */
static long window_passed(struct watch *w)
{
	unsigned char v[PASSED_PAGES];
	uintptr_t gap_end;
	size_t n = S.hard ? PASSED_PAGES : 1, i;
	if (w->ahead >= w->back)
		return 0; /* to the end (or the back): held until the mapping goes */
	if (w->ahead + n * page_size > w->back)
		n = (w->back - w->ahead) / page_size;
	if (sys_mincore((void *)w->ahead, n * page_size, v) != 0)
		return -1;
	/* (hard: a run, not one page: pages the program wrote one per 2 MiB
	 * before the advice read as its front going through window after
	 * window, the advice went with them, and khugepaged made each a huge
	 * page: helper-27's hk, 79 MB past the line) */
	for (i = 0; i < n; i++)
		if (!(v[i] & 1))
			return 0;
	front_release(w->window);
	w->held -= w->window;
	w->window = 0;
	w->front = w->ahead;
	if (!w->ahead2)
		return advance_front(w);
	gap_end = w->ahead + hpage_size;
	w->ahead = w->ahead2;
	w->window = w->window2;
	w->ahead2 = 0;
	w->window2 = 0;
	return resident_run(&w->front, gap_end, 0);
}

/* The front is seen: a rule for the site (populate, or background where
 * it was first touched late), huge pages advised where they can be had and
 * the budget has room for the one the front is in. */
static void front_found(struct watch *w, uint64_t now)
{
	struct asite *s = &sites[w->site];
	int late = w->t_touch - w->t_map >= LATE_NS, st;
	unsigned a = late ? A_BACKGROUND : A_POPULATE;
	spin_lock(&S.lock);
	st = s->state;
	if (st == AS_OBSERVE)
		s->state = AS_DECIDING;
	spin_unlock(&S.lock);
	if (st == AS_OBSERVE) {
		if (learns_huge(w->end - w->start))
			a |= A_HUGEPAGE;
		decided(w->site, new_rule(w->site, a, 1ull << s->klass, (2ull << s->klass) - 1), AS_FRONT, AW_FRONT,
		        (w->front - w->start) >> 10, (w->t_touch - w->t_map) / 1000000, 0);
	}
	if (sites[w->site].rule < 0) {
		w->phase = WP_AHEAD;
		return;
	}
	if (S.thp == THP_MADVISE && w->end - w->front >= 2 * hpage_size && front_reserve(hpage_size, front_pending())) {
		w->held += hpage_size;
		w->advised = w->huge_kept = 1;
		w->hp_hi = w->adv_lo;
		w->hp_lo = w->adv_hi;
		if (S.hard)
			advise_near(w);
		else
			sys_madvise((void *)w->adv_lo, w->adv_hi - w->adv_lo, MADV_HUGEPAGE);
		w->phase = WP_HUGE;
	} else {
		w->phase = WP_AHEAD;
		w->huge_kept = S.thp == THP_ALWAYS;
	}
	w->t_mark = now;
	w->f_mark = w->front;
	w->rate = w->small_ns >= 1000000 ? w->small_bytes / (w->small_ns / 1000000) : w->small_bytes;
}

/* Hard: the front's huge page had no room when the front was found (the
 * peak was small then: the example streamer's 9 MiB at its first 356
 * KiB, an extra of 2 MiB less the shim's own 0.6), and none was ever
 * advised: 1.43x of no shim against the default's 7.07.  The peak grows
 * as the program fills, and the room with it: asked again at a look
 * with room (the extra seen without a system call first), the program's
 * rate with small pages from the front's finding to now the one to beat,
 * over REJUDGE of the front as kept huge pages are (not WP_HUGE's two huge
 * pages without windows: advised only near the front under hard, a fast
 * filler runs past the advice between two looks, 12,833 ns a page against
 * 12,360 with small pages and windows). */
static void huge_late(struct watch *w, uint64_t now)
{
	if (!S.hard || S.thp != THP_MADVISE || w->advised || w->end - w->front < 2 * hpage_size ||
	    w->front - w->f_mark < FRONT_MIN || (w->cut && now - w->t_cut < 2 * POLL_MIN_NS) ||
	    __atomic_load_n(&S.front_held, __ATOMIC_RELAXED) + hpage_size > extra())
		return;
	if (!front_reserve(hpage_size, front_pending()))
		return;
	w->held += hpage_size;
	w->small_ns = now - w->t_mark;
	w->small_bytes = w->front - w->f_mark;
	w->advised = w->huge_kept = 1;
	w->hp_hi = w->adv_lo;
	w->hp_lo = w->adv_hi;
	/* (judged as kept huge pages are, after REJUDGE: both spans with
	 * windows ahead; from where the windows queued before the advice end:
	 * small pages, a span starting in them ran as fast as small pages, and
	 * the advice went back at its first judgement, 2 runs of 3) */
	w->marked = 2;
	w->f_mark = w->ahead2 ? w->ahead2 : w->ahead > w->front ? w->ahead : w->front;
	advise_near(w);
}

/* Huge pages were not seen to win here: the advice is taken back. */
static void advice_back(struct watch *w)
{
	sys_madvise((void *)w->adv_lo, w->adv_hi - w->adv_lo, MADV_NOHUGEPAGE);
	w->huge_kept = 0;
}

/* The program's own fill rate with huge pages since the mark against the
 * one before the advice; if it is slower, the advice is taken back.  Then
 * the mark moves on.  `again`: a judgement after the first (what
 * PREFAULT_TEST_HUGE=huge-then-small makes a loss). */
static void huge_judge(struct watch *w, uint64_t now, int again)
{
	struct asite *s = &sites[w->site];
	uint64_t hb = w->front - w->f_mark, hns = now - w->t_mark;
	int won = (unsigned __int128)hns * w->small_bytes <= (unsigned __int128)w->small_ns * hb;
	if (pool_test_huge)
		won = again ? pool_test_huge == 1 : pool_test_huge > 0;
	if (s->rule >= 0)
		stats_count_check(&g_stats.rules[s->rule], w->small_ns, w->small_bytes / page_size, hns, hb / page_size, won);
	if (won) {
		__atomic_add_fetch(&s->saved_pages, hb / page_size, __ATOMIC_RELAXED);
		if (hns >= 1000000)
			w->rate = hb / (hns / 1000000);
	} else {
		advice_back(w);
	}
	w->t_mark = now;
	w->f_mark = w->front;
}

/* Kept huge pages are judged again every REJUDGE bytes of the front, the
 * same way: one span's win says little about the next where a huge page
 * can be cheap or dear by whether the host still backs it (a guest that
 * reports free 2 MiB blocks to its host: sort's buffer with huge pages ran
 * 1.4x faster or 1.6x slower from one run to the next, BENCHMARKS.md, issue
 * 21).  A span with a stall in it is not judged: the program was not
 * filling. */
static void huge_rejudge(struct watch *w, uint64_t now)
{
	if (w->t_moved != now && now - w->t_moved > STALL_NS) {
		w->t_mark = now;
		w->f_mark = w->front;
	} else if (w->front - w->f_mark >= REJUDGE) {
		huge_judge(w, now, 1);
	}
}

/* The back, where a buffer is filled from both ends (sort: its text from
 * the start, its line table, larger, from the end down), is judged too:
 * after two huge pages, then every REJUDGE.  Not by the program's fill
 * rate: there is none with small pages to set against it.  By what a huge
 * page and small pages cost just now, in a scratch mapping of our own
 * (pool_huge_recheck), with room for it under the budget for a moment:
 * asked for here (J_WANTED), measured by the watcher between looks, so
 * that the program's munmap of the buffer never waits for it (a look
 * holds the watch busy), and found here at the next look (J_DONE).  No
 * room: asked again, and twice that much filled unjudged, the advice is
 * taken back (huge pages are kept only where they were seen to win). */
static void back_judge(struct watch *w)
{
	struct asite *s = &sites[w->site];
	uint64_t grown = w->b_mark - w->back, every = w->b_judged ? REJUDGE : 2 * hpage_size;
	int j = w->judge;
	if (grown < every || j == J_WANTED)
		return;
	w->judge = J_WANTED;
	if (j == J_NONE)
		return;
	if (j == J_NO_ROOM) {
		if (grown >= 2 * every) {
			advice_back(w);
			w->judge = J_NONE;
			if (s->rule >= 0)
				st_add(&g_stats.rules[s->rule].hc_unjudged, 1);
		}
		return;
	}
	w->judge = J_NONE; /* J_DONE */
	w->b_mark = w->back;
	w->b_judged++;
	if (s->rule >= 0) {
		stats_prefault_faults(&g_stats.rules[s->rule], w->jf.minor, w->jf.major);
		stats_count_check(&g_stats.rules[s->rule], w->jh.small_ns, w->jh.small_pages, w->jh.huge_ns,
		                  w->jh.huge_pages, w->jh.huge);
	}
	if (w->jh.huge) {
		__atomic_add_fetch(&s->saved_pages, grown / page_size, __ATOMIC_RELAXED);
	} else {
		advice_back(w);
	}
}

/* The measure a watch asked for (back_judge), made with no watch busy:
 * J_DONE with what it found, or J_NO_ROOM. */
static int judge_now(uint64_t now, struct hcheck *h, struct faults *f)
{
	uint64_t room = hpage_size + hpage_size / 4;
	struct meter m;
	int r;
	if (!front_reserve(room, front_pending()))
		return J_NO_ROOM;
	meter_start(&m, 1);
	r = pool_huge_recheck(h);
	meter_read(&m, f, NULL);
	front_release(room);
	return r == 0 ? J_DONE : J_NO_ROOM;
}

/* One look at a watched mapping (busy: a change to it waits for us). */
static void poll_one(struct watch *w, uint64_t now)
{
	struct asite *s = &sites[w->site];
	uintptr_t before = w->front;
	uint64_t moved;
	long first = w->ahead > w->front ? window_passed(w) : advance_front(w);
	if (first < 0) { /* gone (the unmap is on its way) */
		w->live = 0;
		return;
	}
	if (w->front != before)
		w->t_moved = now;
	if (w->advised && w->huge_kept && (w->phase == WP_HUGE || w->phase == WP_AHEAD)) {
		before = w->back;
		if (advance_back(w) < 0) {
			w->live = 0;
			return;
		}
		if (w->back != before)
			w->t_bmoved = now;
		back_judge(w);
		advise_near(w);
	}
	switch (w->phase) {
	case WP_WAIT:
		if (w->front == w->start && !first) {
			if (now - w->t_map > GIVEUP_NS) {
				__atomic_add_fetch(&s->untouched, 1, __ATOMIC_RELAXED);
				leave_alone(w->site, AW_UNTOUCHED, (now - w->t_map) / 1000000000, 0);
				w->live = 0;
			}
			/* (looked at often while the program may be about to fill it:
			 * the example streamer fills 8 MiB a frame once it starts) */
			if (now - w->t_map > EARLY_NS)
				w->period = w->period * 2 < POLL_MAX_NS ? w->period * 2 : POLL_MAX_NS;
			break;
		}
		w->t_touch = w->t_prev;
		spin_lock(&S.lock); /* the first touch, no later than now and after the last look */
		s->firsts++;
		s->lates += w->t_prev - w->t_map >= LATE_NS;
		s->late_ns += (w->t_prev + now) / 2 - w->t_map;
		spin_unlock(&S.lock);
		if (w->front == w->start) { /* touched, but not from the front */
			if (__atomic_add_fetch(&s->scattered, 1, __ATOMIC_RELAXED) >= 2)
				leave_alone(w->site, AW_SCATTERED, s->scattered, 0);
			w->live = 0;
			break;
		}
		w->phase = WP_FILL;
		w->t_mark = w->t_prev;
		w->f_mark = w->start;
		w->period = POLL_MIN_NS;
		/* it may be far enough already: */
		/* fall through */
	case WP_FILL:
		if (w->front - w->start >= FRONT_MIN) {
			w->small_ns = now - w->t_mark;
			w->small_bytes = w->front - w->f_mark;
			front_found(w, now);
		} else if (now - w->t_moved > STALL_NS) {
			w->live = 0; /* a little at the front, then nothing: not a buffer being filled */
		}
		break;
	case WP_HUGE:
		/* Measured from the first huge-page boundary past the front at the
		 * advice (the huge page the front was in has small pages already),
		 * over two huge pages. */
		if (!w->marked) {
			if (w->front >= ((w->f_mark + hpage_size - 1) & ~(uintptr_t)(hpage_size - 1))) {
				w->marked = 1;
				w->t_mark = now;
				w->f_mark = w->front;
			} else if (now - w->t_moved > STALL_NS) {
				w->phase = WP_AHEAD; /* stopped: the advice stays, unjudged */
			}
		} else if (w->front - w->f_mark >= 2 * hpage_size || w->front == w->end || now - w->t_moved > STALL_NS) {
			huge_judge(w, now, 0);
			w->phase = WP_AHEAD;
		}
		break;
	case WP_AHEAD:
		if (w->marked == 2 && w->front >= w->f_mark) { /* (huge_late) */
			w->marked = 1;
			w->t_mark = now;
			w->f_mark = w->front;
		}
		if (w->advised && w->huge_kept && w->marked == 1)
			huge_rejudge(w, now);
		huge_late(w, now);
		lead(w, now);
		if (w->front >= w->back) {
			front_release(w->held);
			w->held = 0;
			w->live = 0;
		}
		/* (a program that stopped filling is looked at less and less) */
		moved = w->t_bmoved > w->t_moved ? w->t_bmoved : w->t_moved;
		w->period = now - moved > 8 * STALL_NS ? 1000 * POLL_MIN_NS :
		            now - moved > STALL_NS ? 8 * POLL_MAX_NS : POLL_MIN_NS;
		break;
	}
	w->t_prev = now;
	w->t_next = now + w->period;
}

/* Reuses of kept regions so far, all the learner's rules (the guard's
 * sign of a program still churning). */
static uint64_t reuses(void)
{
	uint64_t n = 0;
	int r, nr = __atomic_load_n(&P.nrules, __ATOMIC_ACQUIRE);
	for (r = 0; r < nr; r++)
		n += st_get(&g_stats.rules[r].recycle_reused);
	return n;
}

static void *watcher_main(void *arg)
{
	uint64_t idle_since = 0, guard_until = 0, reused = 0, reused_at = 0;
	(void)arg;
	for (;;) {
		uint32_t seen = __atomic_load_n(&S.wword, __ATOMIC_ACQUIRE);
		uint64_t now = os_now_ns(), next = UINT64_MAX;
		struct watch copy;
		int k, pick = -1, nlive = 0, nhuge = 0, guard;
		if (glue_leaving())
			break;
		spin_lock(&S.wlock);
		for (k = 0; k < WATCH_MAX; k++) {
			struct watch *w = &watches[k];
			if (!w->live)
				continue;
			nlive++;
			/* (advised, being filled: not yet between the front and the
			 * back (a buffer written whole and used for seconds is no
			 * growth to come), nor stopped (a 64 MiB mapping filled 1
			 * MiB and left kept the churn beside it from its cache,
			 * autoprobe expire: filled again, it is seen at the watch's
			 * next look, in 32 ms to 1 s), and mapped so long ago that
			 * it may no longer count as coming (one mapped lately does:
			 * grows made room for it, and the churn beside a 64 MiB
			 * buffer refilled at once kept its cache, autoprobe refill)) */
			nhuge += w->advised && w->huge_kept && now - w->t_map >= UNTOUCHED_NS &&
			         now - (w->t_bmoved > w->t_moved ? w->t_bmoved : w->t_moved) <= STALL_NS &&
			         w->front + hpage_size < (w->back > w->front ? w->back : w->end);
			if (w->t_next <= now && pick < 0)
				pick = k;
			else if (w->t_next < next)
				next = w->t_next;
		}
		if (pick >= 0 && watches[pick].judge == J_WANTED) { /* (see back_judge) */
			struct hcheck h = { 0, 0, 0, 0, 0 };
			struct faults f = { 0, 0 };
			int j;
			spin_unlock(&S.wlock);
			j = judge_now(now, &h, &f);
			now = os_now_ns();
			spin_lock(&S.wlock);
			if (!watches[pick].live || watches[pick].judge != J_WANTED) {
				pick = -1; /* (gone meanwhile, or another watch in its place) */
			} else {
				watches[pick].judge = j;
				watches[pick].jh = h;
				watches[pick].jf = f;
			}
		}
		if (pick >= 0) {
			__atomic_store_n(&watches[pick].busy, 1, __ATOMIC_RELAXED);
			copy = watches[pick];
		}
		spin_unlock(&S.wlock);
		/* (when the last such front is filled or stops, the next look
		 * sets the cap as it finds room) */
		if (!S.hard && (nhuge > 0) != __atomic_load_n(&S.huge_live, __ATOMIC_RELAXED)) {
			__atomic_store_n(&S.huge_live, nhuge > 0, __ATOMIC_RELAXED);
			if (nhuge) {
				__atomic_store_n(&S.huge_holds, S.huge_holds + 1, __ATOMIC_RELAXED);
				huge_hold();
			}
		}
		if (pick >= 0) {
			int was_live;
			poll_one(&copy, now);
			spin_lock(&S.wlock);
			was_live = watches[pick].live;
			if (was_live) {
				copy.busy = 0;
				watches[pick] = copy;
				if (!copy.live) {
					front_release(copy.held);
					__atomic_store_n(&S.nwatch, S.nwatch - 1, __ATOMIC_RELAXED);
				}
			} else {
				front_release(copy.held - watches[pick].held); /* (what the poll added) */
			}
			__atomic_store_n(&watches[pick].busy, 0, __ATOMIC_RELEASE);
			spin_unlock(&S.wlock);
			if (held())
				rss_refresh(now, 0);
			idle_since = 0;
			continue;
		}
		/* (auto_kept: a guard asked for, or the cache past the extra,
		 * guards for IDLE_NS more) */
		if (__atomic_load_n(&S.guarding, __ATOMIC_RELAXED) && (!guard_until || past_extra()))
			guard_until = now + IDLE_NS;
		guard = now < guard_until;
		if (!guard && guard_until) {
			guard_until = 0;
			__atomic_store_n(&S.guarding, 0, __ATOMIC_SEQ_CST);
			if (past_extra()) { /* (kept as it ended: its auto_kept saw the guard on) */
				__atomic_store_n(&S.guarding, 1, __ATOMIC_SEQ_CST);
				guard_until = now + IDLE_NS;
				guard = 1;
			}
		}
		if (guard) { /* (auto_kept) */
			uint64_t last = __atomic_load_n(&S.rss_at, __ATOMIC_RELAXED), r = reuses();
			uint64_t every = guard_every();
			if (now >= last && now - last >= every) {
				rss_refresh(now, GUARD_LOOK);
				__atomic_store_n(&S.guard_looks, S.guard_looks + 1, __ATOMIC_RELAXED);
				every = guard_every();
				last = now;
			}
			if (now < last) /* (another thread's look, since this clock read) */
				last = now;
			if (next > last + every)
				next = last + every;
			/* A program that reuses nothing for IDLE_TRIM_NS is given back
			 * what is kept past the extra, and the guard ends: it looked
			 * every 10 ms for as long as an idle program held the cache
			 * (helper-28: 626 system calls a second, a thread that never
			 * left, for a program that churned at start and then slept) */
			if (r != reused || !reused_at) {
				reused = r;
				reused_at = now;
			} else if (now - reused_at >= IDLE_TRIM_NS) {
				recycle_trim(guard_room());
				reused_at = now;
			}
		} else {
			reused_at = 0;
		}
		if (!nlive && !guard) {
			if (!idle_since)
				idle_since = now;
			else if (now - idle_since > IDLE_NS)
				break; /* idle: leave, and come back on the next need */
			next = now + IDLE_NS;
		} else {
			idle_since = 0;
		}
		glue_wait(&S.wword, seen, next > now ? next - now : 1);
	}
	__atomic_store_n(&S.guarding, 0, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&S.nwatchers, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

void auto_warm(void) { glue_warm_add(1, STACK); }

void auto_kick(void)
{
	if (!auto_on || !__atomic_load_n(&S.nwatch, __ATOMIC_ACQUIRE))
		return;
	if (glue_spawn_upto(&S.nwatchers, 1, watcher_main, NULL, STACK, &S.wword) < 0)
		stats_note(N_NO_THREAD);
	glue_wake(&S.wword);
}

/* ---- fork ---- */

/* A child starts with its parent's RSS as its peak (the kernel copies it
 * at fork), the regions kept for the parent in it: the child's line is
 * the parent program's own RSS now and the extra of that, which what is
 * kept must fit in (fk: 100 MiB written and unmapped, 9 MiB kept, then a
 * fork: the child's VmHWM 9.9 MB against 1.2 without the shim).  So the
 * parent gives back what would not, before the fork: a look at RSS, and
 * the munmaps of what goes, only where something is kept.  (In the child
 * the rest goes too: see below.) */
static void fork_trim(void)
{
	uint64_t k = recycle_kept_total(), h, rss, mine, e, other, own;
	if (!k)
		return;
	h = held();
	rss = os_rss_now();
	/* (the shim's own memory is the child's too: not the program's) */
	own = shim_own_now();
	mine = rss > h + own ? rss - h - own : 0;
	e = extra_of(mine);
	other = h > k ? h - k : 0; /* (windows ahead, and hard, populated mappings) */
	e = e > other + own ? e - other - own : 0;
	if (k > e)
		recycle_trim(e);
}

/* First of the hooks (init.c): before any lock of the shim is taken, its
 * look at RSS and its munmaps are system calls. */
void auto_atfork_trim(int who)
{
	if (who == FORK_PREPARE && auto_on)
		fork_trim();
}

void auto_atfork(int who)
{
	if (who == FORK_PREPARE) {
		spin_lock(&S.lock);
		spin_lock(&S.wlock);
		return;
	}
	if (who == FORK_PARENT) {
		spin_unlock(&S.wlock);
		spin_unlock(&S.lock);
		return;
	}
	/* The child: its own process, with no watcher; what it learns from now
	 * on is its own (the sites and rules it inherited stay: same code). */
	spin_init(&S.lock);
	spin_init(&S.wlock);
	if (S.nwatch)
		memset(watches, 0, sizeof watches);
	S.nwatch = 0;
	S.nwatchers = 0;
	S.guarding = 0;
	/* (hard: the windows' charges stay in the budget, never given back
	 * here: their pages are the child's too, and the watches are gone) */
	S.front_held = 0;
	S.front_rules = 0; /* (no worker's jobs here) */
	S.cut = 0;         /* (the parent's, in its own report) */
	S.guard_looks = S.huge_holds = 0;
	S.huge_live = 0;
	S.rss_at = 0;      /* (the child's first look is not put off by a look of the parent's) */
	S.own_at = 0;      /* (nothing to count from: the parent's windows are not the child's) */
	spin_init(&S.glock);
	/* Its peak is its own, found by its first look: the parent's could be
	 * far above it, and room below that is none of the child's.  The
	 * regions the parent kept go back: in the child they would hold the
	 * parent's room (hp fork: 50.9 MB against 34.0 without the shim), and
	 * are worth nothing there (each page shared with the parent, its
	 * clearing store copies it: a fault as dear as a fresh one). */
	S.prog_peak = 0;
	S.over_peak = 0;
	S.held_peak = held(); /* (before the flush: getrusage's peak has them, from the fork) */
	if (auto_on)
		recycle_flush();
	hard_cap();
}

/* ---- the report ---- */

void auto_figs(struct figs_proc *p, struct figs_auto *out, int max)
{
	uint64_t f = program_faults(), now = os_now_ns();
	int k, n = 0;
	p->auto_on = auto_on;
	if (!auto_on)
		return;
	/* (no look at statm, no trim: this may run in a signal handler that
	 * interrupted the shim) */
	peak_from_rusage();
	p->auto_program_peak = prog_peak();
	p->auto_limit = extra_of(p->auto_program_peak);
	p->auto_over_peak = S.over_peak;
	p->auto_held = held();
	note_held();
	p->auto_held_peak = S.held_peak;
	p->auto_percent = S.pct;
	p->auto_cap = S.cap;
	p->auto_hard = (uint64_t)S.hard;
	p->auto_shim_own = S.shim_own;
	p->auto_cut = S.cut;
	p->auto_guard_looks = S.guard_looks;
	p->auto_huge_holds = S.huge_holds;
	p->auto_sites = (uint64_t)S.nsites;
	for (k = 0; k < S.nlisted && n < max; k++) {
		const struct asite *s = &sites[listed[k]];
		struct figs_auto *a = &out[n++];
		const struct figs_rule *rs = s->rule >= 0 ? &g_stats.rules[s->rule] : NULL;
		memset(a, 0, sizeof *a);
		a->object = s->object ? s->object : "?";
		a->offset = s->object ? s->ret - s->base : s->ret;
		a->call = s->call;
		a->size = s->size_min;
		a->size_max = s->size_max;
		if (s->len[0]) { /* recycle: the lengths it recycles */
			int j;
			a->size = a->size_max = s->len[0];
			for (j = 1; j < LENS && s->len[j]; j++) {
				a->size = s->len[j] < a->size ? s->len[j] : a->size;
				a->size_max = s->len[j] > a->size_max ? s->len[j] : a->size_max;
			}
		}
		a->rule = s->rule >= 0 ? (uint64_t)s->rule + 1 : 0;
		a->actions = s->rule >= 0 ? P.rules[s->rule].actions : 0;
		a->why = s->why;
		a->why_a = s->why_a;
		a->why_b = s->why_b;
		a->why_c = s->why_c;
		a->since_ns = s->since_ns;
		a->off = s->off;
		a->off_a = s->off_a;
		a->off_b = s->off_b;
		a->off_ns = s->off_ns;
		a->maps = s->maps;
		if (s->rule >= 0) {
			a->before = s->f_at;
			a->before_ns = s->since_ns;
			a->after = f > s->f_at ? f - s->f_at : 0;
			/* (since_ns may be newer than now: decided after the clock read) */
			a->after_ns = now - S.t0 > s->since_ns ? now - S.t0 - s->since_ns : 0;
			/* Saved: a page handed back resident (recycle), made resident
			 * ahead of the program (populate, background), or filled as a
			 * huge page (the front): each a fault the program did not take. */
			a->saved = st_get(&rs->recycle_zeroed_bytes) / page_size + st_get(&rs->prefaulted_bytes) / page_size +
			           s->saved_pages;
			a->held_peak = st_get(&rs->recycle_peak_bytes) > s->held_peak ? st_get(&rs->recycle_peak_bytes) : s->held_peak;
			a->cost_ns = st_get(&rs->ns) + st_get(&rs->recycle_zero_ns);
		}
	}
	p->autos = out;
	p->nauto = n;
}
