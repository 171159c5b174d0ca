/* prefault.c: see prefault.h. */
#include "prefault.h"
#include "carve.h"
#include "auto.h"
#include "defs.h"
#include "fork.h"
#include "lock.h"
#include "match.h"
#include "os.h"
#include "pool.h"
#include "profile.h"
#include "recycle.h"
#include "regions.h"
#include "settings.h"
#include "stats.h"
#include "worker.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

size_t pf_block_min; /* 0: every block goes to pf_block until start-up is done */
static const struct policy *pol;
/* The module's state, in one place (its tables stand apart). */
static struct {
	int populate_ok; /* MADV_POPULATE_* works on this kernel */
	int thp_ok; /* transparent huge pages can be had */
	int thp_madvise; /* ... only where advised: huge and small can be compared */
	int profile_on;
	int locked_all; /* the policy's mlockall is in force */
	int program_locks_all; /* the program called mlockall itself */
	int recyclers; /* the policy has a recycle rule */
	int carving; /* the policy has a carve rule: see unadvised() */
	int madvise_mode; /* THP in madvise mode: 1 yes, -1 no, 0 not read yet (unadvised()) */
	spin_t plock;
} S = { .populate_ok = 1, .thp_ok = 1 };
/* hugepage_check, per rule: which won when last measured (1 huge pages, -1
 * small, 0 not yet), and the populates since. */
static int8_t huge_won[POL_MAX_RULES];
static uint32_t huge_since[POL_MAX_RULES];
#define HC_EVERY 16 /* measured again every 16th populate (the host's state changes) */

static int mlockall_give_way(void);

static const char fallback_msg[] =
	"prefault: this kernel lacks MADV_POPULATE_WRITE (Linux 5.14+); populating by touching pages instead";

/* ---- set-up ---- */

/* Is RLIMIT_AS or RLIMIT_DATA set?  Asked at start-up and after each of
 * the program's own changes, never per call (a limit set from outside, by
 * prlimit on our pid, is not seen: an mmap that then fails with ENOMEM gives
 * the kept regions back and is tried again, map_real). */
static void read_limits(void)
{
	struct rlimit as, data;
	recycle_limited((sys_getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) ||
	                (sys_getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY));
}

/* May this process lock without limit?  (CAP_IPC_LOCK, or no limit.) */
static int lock_unlimited(void)
{
	struct rlimit rl;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (sys_getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		return 1;
	memset(d, 0, sizeof d);
	return sys_n(SC_capget, (long)&h, (long)d, 0, 0, 0, 0) == 0 && (d[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32)));
}

/* The policy's mlockall.  Under a limited RLIMIT_MEMLOCK, locking all the
 * program has, and will have, would make its own large mappings and its
 * own mlock calls fail (without the shim they work), so it is not done,
 * and the report says so: `lock` rules lock what they match, and give way. */
static void apply_mlockall(int flags)
{
	if (!flags)
		return;
	if (!lock_unlimited()) {
		stats_note(N_MLOCKALL_LIMIT);
		return;
	}
	{
		/* (the next definition: a sanitizer's runtime stands in for it) */
		__typeof__(mlockall) *f = REAL(mlockall);
		if (f)
			sc_note(SC_mlockall);
		if ((f ? f(flags) : (int)sys_n(SC_mlockall, flags, 0, 0, 0, 0, 0)) == 0) {
			S.locked_all = flags;
		} else {
			/* (it may have locked some mappings before it failed) */
			sys_n(SC_munlockall, 0, 0, 0, 0, 0, 0);
			stats_note(N_MLOCK_FAILED);
		}
	}
}

static void nested_changed(uintptr_t s, uintptr_t e, int gone);

void pf_setup(const struct policy *p, int profile, const struct settings *set)
{
	void *m;
	int i, carve_checks = 0, carving = 0;
	unsigned all = 0;
	uint64_t min_block = UINT64_MAX;
	pol = p;
	S.profile_on = profile;
	for (i = 0; p && i < p->nrules; i++) {
		all |= p->rules[i].actions;
		carve_checks |= (p->rules[i].actions & A_CARVE) && p->rules[i].huge_check;
		carving |= (p->rules[i].actions & A_CARVE) != 0;
	}
	if (auto_on) /* the learner's rules come as it decides */
		all |= A_RECYCLE | A_POPULATE | A_BACKGROUND | A_HUGEPAGE;
	worker_setup(p ? p->workers : 1, set->bg_strategy && !strcmp(set->bg_strategy, "trail") ? BG_TRAIL : BG_LEAP);
	if (set->test_huge)
		pool_test_huge = !strcmp(set->test_huge, "huge") ? 1 : !strcmp(set->test_huge, "huge-then-small") ? 2 : -1;
	recycle_setup(p);
	carve_setup(p, set);
	glue_nested_hook = nested_changed;
	if (all & A_RECYCLE) {
		S.recyclers = 1;
		read_limits();
	}
	if (all & A_HUGEPAGE) {
		int thp = os_thp_mode();
		(void)os_thp_pmd_size(); /* hpage_size, the system's, before a rule needs it */
		S.thp_ok = thp != THP_NONE;
		S.thp_madvise = thp == THP_MADVISE;
		if (!S.thp_ok && !auto_on)
			stats_note(N_NO_THP);
	} else if (carve_checks) { /* (carve notes its own lack of THP) */
		S.thp_madvise = os_thp_mode() == THP_MADVISE;
	}
	S.carving = carving;
	if (match_min_size[1] < min_block)
		min_block = match_min_size[1];
	if (auto_on && AUTO_BLOCK_MIN < min_block)
		min_block = AUTO_BLOCK_MIN;
	if (profile && PROFILE_MALLOC_MIN < min_block)
		min_block = PROFILE_MALLOC_MIN;
	stats_setup(min_block, p ? p->nrules : 0);
	if (profile)
		blocks_watch_all();
	__atomic_store_n(&pf_block_min, min_block >= SIZE_MAX ? SIZE_MAX : (size_t)min_block, __ATOMIC_RELEASE);
	if (p)
		apply_mlockall(p->mlockall);
	if (!(all & (A_POPULATE | A_BACKGROUND)) && !carve_checks)
		return;
	/* For the tests of the fallback path on kernels that have the real thing. */
	if (set->test_no_populate) {
		S.populate_ok = 0;
		return;
	}
	/* Probe once rather than guess from the kernel version: backports and
	 * seccomp filters both make version numbers lie. */
	m = sys_mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		S.populate_ok = sys_madvise(m, page_size, MADV_POPULATE_WRITE) == 0;
		sys_munmap(m, page_size);
	}
}

void pf_off(void)
{
	__atomic_store_n(&pf_block_min, SIZE_MAX, __ATOMIC_RELEASE);
}

/* ---- the plan: what was decided before the real call ---- */

struct plan {
	int rule;
	unsigned actions;
	int write;             /* populate for writing: private anonymous writable memory */
	uint64_t charge;       /* reserved before the call (map-populate) */
	int extra_flags;       /* added to the mmap flags */
	int align_huge;        /* place the mapping on a huge-page boundary */
	int recyclable;        /* a recycle rule on a plain writable anonymous private request */
	int carve;             /* ... of a carve rule, that can be carved (carve.c) */
	int slice;             /* the request got a carved slice (RF_CARVED) */
	size_t recycled_resident; /* pages of a reused region already resident, or ~0 if fresh */
	int check;             /* hugepage_check: the first chunk both ways */
	int timed;
	int counted;           /* faults known without the meter: see plan_request() */
	struct meter m;
};

/* hugepage_check: measure this one (when THP is in madvise mode, the
 * rule's first populate and every HC_EVERY-th, on mappings holding two
 * whole huge pages past the first boundary), or go by the last measure. */
static void plan_check(struct plan *pl, int rule, const struct request *rq)
{
	if (!S.thp_madvise || !S.populate_ok || !(pl->actions & (A_POPULATE | A_BACKGROUND)) || (pl->actions & A_LOCK) ||
	    !(rq->mk & MK_ANON) || (rq->flags & MAP_HUGETLB))
		return; /* (with THP always on, or locked: as asked) */
	if (rq->len >= 3 * hpage_size && (!huge_won[rule] || ++huge_since[rule] % HC_EVERY == 0))
		pl->check = 1;
	else if (huge_won[rule] < 0)
		pl->actions &= ~(unsigned)A_HUGEPAGE;
}

/* hugepage_check on a carve rule: before each reserve is made, huge pages
 * against small ones, both in a scratch mapping of our own at that moment
 * (pool_huge_recheck: a quarter of a huge page of small pages, then one
 * huge page, populated, timed, unmapped).  The program's own memory cannot
 * be measured: its slices are touched by the program, one at a time.  1:
 * carve (huge pages won, or nothing could be judged: carved as asked); 0:
 * small pages won, and the rule recycles from now on (carve_small_won), or
 * the process is still under the rule's carve_min_rss (this request is
 * recycled; asked again at the next that would open a reserve).
 * What it costs, once a reserve (not a slice): seven system calls (two of
 * them the meter's getrusage) and the small side's populate; the huge page
 * it frees is the one the reserve's first fault is likely to get back at
 * once (a block just freed, which the host has not taken back yet). */
static int carve_judge(int rule)
{
	static uint64_t judged[POL_MAX_RULES]; /* reserves made + 1, at the last judgement */
	uint64_t need = hpage_size + hpage_size / 4, made;
	struct hcheck h;
	struct meter m;
	struct faults f;
	int r;
	if (!carve_rss_reached(rule))
		return 0; /* (recycled: a huge page's rounding would weigh too much yet) */
	if (!pol->rules[rule].huge_check || !S.thp_madvise || !S.populate_ok)
		return 1; /* (with THP always on, the program's slices get huge pages anyway) */
	/* once a reserve: where the last one judged could not be made (budget,
	 * memory), not again on every request until one is */
	made = __atomic_load_n(&g_stats.rules[rule].carve_reserves, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&judged[rule], made + 1, __ATOMIC_RELAXED) == made + 1)
		return 1;
	if (!budget_reserve(need)) {
		st_add(&g_stats.rules[rule].hc_unjudged, 1);
		return 1; /* (the reserve's own charge decides) */
	}
	meter_start(&m, 1);
	r = pool_huge_recheck(&h);
	meter_read(&m, &f, NULL);
	budget_release(need);
	stats_prefault_faults(&g_stats.rules[rule], f.minor, f.major); /* (the shim's, not the program's) */
	if (r < 0) {
		st_add(&g_stats.rules[rule].hc_unjudged, 1);
		return 1;
	}
	stats_count_check(&g_stats.rules[rule], h.small_ns, h.small_pages, h.huge_ns, h.huge_pages, h.huge);
	if (h.huge)
		return 1;
	carve_small_won(rule);
	return 0;
}

/* The one place a plan is made, for mmap requests and malloc blocks alike. */
static void plan_request(const struct request *rq, int rule, struct plan *pl)
{
	int anon_private = (rq->mk & (MK_ANON | MK_PRIVATE)) == (MK_ANON | MK_PRIVATE);
	/* (an offset, even ignored, is the kernel's to refuse: EINVAL where
	 * it is not page aligned, which a kept region would not say) */
	int placeable = rq->call == CALL_MMAP && anon_private && !(rq->mk & MK_FIXED) && !rq->hint &&
	                !(rq->flags & MAP_HUGETLB) && rq->off == 0;
	memset(pl, 0, sizeof *pl);
	pl->rule = rule;
	pl->recycled_resident = (size_t)-1;
	if (rule < 0)
		return;
	pl->actions = pol->rules[rule].actions;
	/* Writing is for anonymous private memory only: populating a private
	 * file mapping for writing would copy every page now, and the program
	 * would no longer see the file change (Linux shows it until the
	 * program writes). */
	pl->write = (rq->pk & PK_WRITE) && anon_private;
	if ((rq->mk & MK_FILE) && (rq->mk & MK_PRIVATE) && (rq->pk & PK_WRITE))
		pl->actions &= ~(unsigned)A_LOCK; /* mlock would copy every page too */
	/* Never kept: read-only regions (nothing to gain, and they could not be
	 * zeroed), locked ones (they would hold the program's RLIMIT_MEMLOCK
	 * after it unmapped them), or any while the program locks everything. */
	if ((pl->actions & A_HUGEPAGE) && pol->rules[rule].huge_check)
		plan_check(pl, rule, rq);
	pl->recyclable = (pl->actions & A_RECYCLE) && placeable && (rq->prot & PROT_WRITE) &&
	                 !(rq->flags & MAP_LOCKED) && !S.program_locks_all;
	/* (never under mlockall: a reserve would be locked whole) */
	pl->carve = pl->recyclable && (pl->actions & A_CARVE) && !S.locked_all &&
	            carve_fits(rule, PAGE_UP(rq->len), rq->flags);
	/* Huge pages need a huge-page-aligned range: place the mapping ourselves
	 * when the program left the address to the kernel (never hugetlbfs:
	 * its mappings are huge already, and the slack could not be trimmed). */
	pl->align_huge = (pl->actions & A_HUGEPAGE) && placeable && S.thp_ok && rq->len >= hpage_size;
	if ((pl->actions & A_MAP_POPULATE) && rq->call == CALL_MMAP && !(rq->pk & PK_NONE)) {
		if (!budget_reserve(rq->len)) {
			st_add(&g_stats.rules[rule].skip_budget, 1);
			stats_note(N_BUDGET);
		} else {
			pl->charge = rq->len;
			/* After placing (not the slack too), or for a private file
			 * mapping (read, so copy-on-write is left as it was): populate
			 * after the call instead. */
			if (pl->align_huge || ((rq->mk & MK_FILE) && (rq->mk & MK_PRIVATE)))
				pl->actions |= A_POPULATE;
			else
				pl->extra_flags = MAP_POPULATE;
		}
	}
	/* Timed: the actions done in the program's call (MAP_POPULATE's faults
	 * happen inside the real mmap).  Recycling times its own clearing. */
	if (pl->actions & ~(unsigned)(A_NONE | A_RECYCLE | A_CARVE)) {
		/* Only what makes memory resident now can fault in our name.  A
		 * fresh anonymous private mapping that cannot get large pages takes
		 * one fault per page it gets: those are counted, not measured, so
		 * a populate costs its one system call and not the meter's two. */
		int faulting = (pl->actions & (A_POPULATE | A_MAP_POPULATE | A_LOCK)) != 0;
		pl->counted = faulting && rq->call == CALL_MMAP && anon_private && pol->rules[rule].threads <= 1 &&
		              !os_large_pages_possible(rq->len, (pl->actions & A_HUGEPAGE) != 0);
		pl->timed = 1;
		meter_start(&pl->m, faulting && !pl->counted);
	}
}

/* The shim's own lock and unlock, through the next definitions (a
 * sanitizer runtime stands in for them). */
static int lock_ours(const void *p, size_t len)
{
	__typeof__(mlock) *f = REAL(mlock);
	if (!f)
		return sys_mlock(p, len);
	sc_note(SC_mlock);
	return f(p, len);
}

static int unlock_ours(const void *p, size_t len)
{
	__typeof__(munlock) *f = REAL(munlock);
	if (!f)
		return sys_munlock(p, len);
	sc_note(SC_munlock);
	return f(p, len);
}

/* ---- the actions, step by step ---- */

/* Fallback for kernels without MADV_POPULATE_*: touch each page.  Only used
 * synchronously, before the memory is handed to the program, and with an
 * atomic add of zero, so not even a racing writer could lose a store. */
static void touch_pages(char *p, size_t len, int write)
{
	size_t off;
	for (off = 0; off < len; off += page_size) {
		if (write)
			__atomic_fetch_add(p + off, 0, __ATOMIC_RELAXED);
		else
			(void)*(volatile char *)(p + off);
	}
}

static int populate(const struct pol_rule *r, struct figs_rule *rs, void *p, size_t len, int write,
                    uint64_t *helper_faults)
{
	int advice = write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ, rc;
	if (!S.populate_ok) {
		if (stats_note(N_NO_POPULATE))
			os_warn(fallback_msg);
		touch_pages(p, len, write);
		return 0;
	}
	if (r->threads > 1) {
		rc = pool_populate((uintptr_t)p, len, advice, r->threads, helper_faults);
		/* The helpers' faults are ours too; the caller's own are measured
		 * around the whole action. */
		stats_prefault_faults(rs, *helper_faults, 0);
		return rc;
	}
	return sys_madvise(p, len, advice);
}

/* What the steps share. */
struct act {
	const struct request *rq;
	struct plan *pl;
	const struct pol_rule *r;
	struct figs_rule *rs;
	void *start;
	size_t len;
	const void *key;      /* the block malloc returned, or NULL for mmap */
	unsigned a;           /* actions still to do */
	uint64_t charge;
	unsigned rflags;
	int resident, queued;
	int checked;          /* hugepage_check: 1 huge pages kept, -1 small */
	uint64_t helper_faults;
};

/* The pages the advice covers: the mapping, or a malloc block's
 * (block_pages: glibc's own mapping of a large block, never split). */
static void advice_span(const struct act *x, uintptr_t *s, uintptr_t *e)
{
	*s = (uintptr_t)x->start;
	*e = *s + x->len;
	if (x->key)
		block_pages(x->key, x->rq->len, s, e);
}

static void step_advise(struct act *x)
{
	/* (hugepage_check: the advice comes with the measure) */
	if ((x->a & A_HUGEPAGE) && (x->rq->mk & MK_ANON) && !(x->rq->flags & MAP_HUGETLB) && !x->pl->check) {
		uintptr_t s, e;
		advice_span(x, &s, &e);
		sys_madvise((void *)s, e - s, MADV_HUGEPAGE);
	}
	if (x->a & A_WILLNEED) {
		sys_madvise(x->start, x->len, MADV_WILLNEED);
		if ((x->rq->mk & MK_FILE) && x->rq->fd >= 0)
			sys_n(SC_fadvise64, x->rq->fd, (long)x->rq->off, (long)x->len, POSIX_FADV_WILLNEED, 0, 0);
	}
}

/* A reused region already resident needs no populate; anything that makes
 * memory resident is charged first. */
static void step_charge(struct act *x)
{
	if (x->pl->recycled_resident != (size_t)-1 && x->pl->recycled_resident == x->len / page_size)
		x->a &= ~(unsigned)(A_POPULATE | A_BACKGROUND | A_MAP_POPULATE);
	if ((x->a & (A_POPULATE | A_LOCK | A_BACKGROUND)) && !x->charge) {
		if (!budget_reserve(x->len)) {
			st_add(&x->rs->skip_budget, 1);
			stats_note(N_BUDGET);
			/* hugepage with them was asked for them: huge pages on a
			 * mapping left to the program's touches could multiply what
			 * a sparse one makes resident by 512. */
			x->a &= ~(unsigned)(A_POPULATE | A_LOCK | A_BACKGROUND | A_HUGEPAGE);
		} else {
			x->charge = x->len;
		}
	}
}

/* What a lock covers: [s, e), or where key is a block glibc mmapped, its
 * mapping whole (locked in part, it would be split in two, and realloc's
 * mremap of it fail).  Found again at the unlock from [s, e) alone. */
static void lock_span(const void *key, uintptr_t *s, uintptr_t *e)
{
	uintptr_t lo, hi;
	if (key && *e > (uintptr_t)key && block_pages(key, *e - (uintptr_t)key, &lo, &hi)) {
		*s = lo;
		*e = hi;
	}
}

static void unlock_block(const void *key, uintptr_t s, uintptr_t e)
{
	lock_span(key, &s, &e);
	unlock_ours((void *)s, e - s);
}

static void step_lock(struct act *x)
{
	uintptr_t s = (uintptr_t)x->start, e = s + x->len;
	/* Locked by the program already (MAP_LOCKED, mlockall): not ours. */
	if (!(x->a & A_LOCK) || (x->rq->flags & MAP_LOCKED) || S.program_locks_all)
		return;
	lock_span(x->key, &s, &e);
	if (lock_ours((void *)s, e - s) == 0) {
		x->rflags |= RF_LOCKED;
	} else {
		/* (mlock fails after locking when populating fails: undone, or
		 * the program's MADV_DONTNEED would meet a lock nobody knows) */
		unlock_ours((void *)s, e - s);
		st_add(&x->rs->skip_failed, 1);
		stats_note(N_MLOCK_FAILED);
	}
}

static void step_populate(struct act *x)
{
	char *p = x->start;
	size_t len = x->len;
	if (!(x->a & A_POPULATE) || (x->rflags & RF_LOCKED)) /* mlock already populated */
		return;
	if (x->pl->check) {
		uintptr_t s, e, end;
		struct hcheck h;
		advice_span(x, &s, &e);
		end = pool_huge_check((uintptr_t)p, (uintptr_t)p + len, s, e, x->pl->write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ,
		                      &h);
		if (end == (uintptr_t)p) { /* too small to tell after all: as asked */
			sys_madvise((void *)s, e - s, MADV_HUGEPAGE);
		} else {
			stats_count_check(x->rs, h.small_ns, h.small_pages, h.huge_ns, h.huge_pages, h.huge);
			huge_won[x->pl->rule] = h.huge ? 1 : -1;
			x->checked = h.huge ? 1 : -1;
			len -= end - (uintptr_t)p;
			p = (char *)end;
		}
	}
	if (!len || populate(x->r, x->rs, p, len, x->pl->write, &x->helper_faults) == 0)
		x->resident = 1;
	else
		st_add(&x->rs->skip_failed, 1);
}

static void step_queue(struct act *x)
{
	uintptr_t s, e;
	int flags = (x->a & A_HUGEPAGE) && S.thp_ok ? W_HUGE : 0;
	if (!(x->a & A_BACKGROUND))
		return;
	advice_span(x, &s, &e);
	if (x->pl->check)
		flags |= W_CHECK;
	if (S.populate_ok && worker_enqueue((uintptr_t)x->start, x->len, x->pl->rule, x->r->chunk,
	                                  x->pl->write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ, flags, s, e) == 0) {
		x->queued = 1;
	} else {
		st_add(&x->rs->skip_queue, 1);
		stats_note(N_QUEUE_FULL);
	}
}

/* Remember the charge (and the lock) so that munmap or free can give them
 * back; if there is no room to, give them back now. */
static void step_track(struct act *x, const void *key)
{
	struct region reg;
	x->resident |= (x->rflags & RF_LOCKED) || (x->pl->extra_flags & MAP_POPULATE);
	if (x->charge && !x->resident && !x->queued) { /* nothing made resident: nothing to charge */
		budget_release(x->charge);
		x->charge = 0;
	}
	if (x->pl->recyclable && !key) {
		x->rflags |= RF_RECYCLE; /* tracked even uncharged: munmap must recognise it */
		/* Resident whole: populated (or locked) just now, or reused with
		 * every page resident.  Its reuse then needs no mincore. */
		if ((x->resident && x->pl->write) || x->pl->recycled_resident == x->len / page_size)
			x->rflags |= RF_FULL;
	}
	if (x->resident)
		st_add(&x->rs->prefaulted_bytes, x->len);
	/* (a carved slice: a huge page its neighbour faulted in may hold it) */
	if (x->resident || x->queued || (x->pl->recycled_resident != (size_t)-1 && x->pl->recycled_resident) || x->pl->carve)
		x->rflags |= RF_MADE;
	if (x->rq->mk & MK_SHARED)
		x->rflags |= RF_SHARED;
	if (x->pl->slice && !key)
		x->rflags |= RF_CARVED;
	/* (the learner's mappings tracked even uncharged: their unmap takes
	 * them out of what it counts as coming, see auto_gone) */
	if (!x->charge && !(x->rflags & RF_RECYCLE) && !auto_on)
		return;
	reg.start = (uintptr_t)x->start;
	reg.end = (uintptr_t)x->start + x->len;
	reg.charged = x->charge;
	reg.rule = x->pl->rule;
	reg.flags = x->rflags;
	reg.prot = x->rq->prot;
	reg.mflags = x->rq->flags;
	reg.epoch = x->rq->epoch;
	reg.weight = x->rq->weight;
	if ((key ? blocks_add(key, &reg) : regions_add(&reg)) == 0)
		return;
	if (x->rflags & RF_LOCKED)
		unlock_block(x->key, (uintptr_t)x->start, (uintptr_t)x->start + x->len);
	if (x->queued)
		worker_cancel((uintptr_t)x->start, x->len);
	budget_release(x->charge);
	st_add(&x->rs->skip_table, 1);
	stats_note(N_TABLE_FULL);
}

/* Time, faults, and whether huge pages came. */
static void step_account(struct act *x)
{
	struct faults f;
	uint64_t ns;
	if (!x->pl->timed)
		return;
	meter_read(&x->pl->m, &f, &ns);
	if (x->pl->counted && x->resident) { /* every page not resident before took one fault */
		size_t pages = x->len / page_size, had = x->pl->recycled_resident;
		f.minor = had == (size_t)-1 ? pages : pages - had;
	}
	st_add(&x->rs->ns, ns);
	stats_prefault_faults(x->rs, f.minor, f.major);
	if ((x->a & A_HUGEPAGE) && x->len >= hpage_size && !S.thp_ok && (x->rq->mk & MK_ANON)) {
		st_add(&x->rs->small_fallbacks, 1);
	} else if (x->resident && (x->a & A_HUGEPAGE) && x->len >= hpage_size && !(x->rq->flags & MAP_HUGETLB) &&
	           x->checked >= 0) { /* (small pages kept by the check: no fallback) */
		if (!stats_count_huge(x->rs, x->len, f.minor + x->helper_faults) && S.thp_ok) {
			st_add(&x->rs->small_fallbacks, 1);
			stats_note(N_THP_FALLBACK);
		}
	}
}

/* The actions' steps, in actions.h's order: each checks its own bits, and
 * actions that share one (willneed and hugepage: advice) have it once. */
static void step_nothing(struct act *x) { (void)x; }
#define PF_ACTION_STEP(name, word, bit, calls, excl, why, knob, hint, tune, step) step_##step,
static void (*const action_steps[])(struct act *) = { PF_ACTIONS(PF_ACTION_STEP) };
#undef PF_ACTION_STEP
#define N_STEPS (int)(sizeof action_steps / sizeof action_steps[0])

/* After a successful call: act on [start, start+len).  `key` is the pointer
 * a malloc-family call returned (NULL for mmap). */
static void apply(const struct request *rq, struct plan *pl, void *start, size_t len, const void *key)
{
	struct act x;
	memset(&x, 0, sizeof x);
	x.rq = rq;
	x.pl = pl;
	x.r = &pol->rules[pl->rule];
	x.rs = &g_stats.rules[pl->rule];
	x.start = start;
	x.len = len;
	x.key = key;
	x.a = pl->actions;
	x.charge = pl->charge;
	if (len && ((x.a & ~(unsigned)(A_NONE | A_RECYCLE | A_CARVE)) || pl->recyclable)) {
		int i;
		step_charge(&x);
		for (i = 0; i < N_STEPS; i++)
			if (action_steps[i] != step_nothing && (i == 0 || action_steps[i] != action_steps[i - 1]))
				action_steps[i](&x);
		step_track(&x, key);
	}
	step_account(&x);
}

/* ---- the program gives memory back, or changes it ---- */

static void uffd_gone(uintptr_t s, uintptr_t e);

/* [addr, addr + len) changed in place (reprotected, advised, sealed, or
 * handed to the kernel): populating for write would fail on read-only
 * pages and mean nothing on PROT_NONE, so whatever is queued there is
 * dropped; a region changed so is no longer one we could hand out as
 * fresh, so it is never kept, and kept regions there go back. */
static void reprotected(uintptr_t addr, size_t len)
{
	recycle_release_range(addr, len);
	auto_forget(addr, len);
	worker_cancel(addr, len);
	regions_clear_flag(addr, len, RF_RECYCLE);
}

static void unmapped(void *addr, size_t len)
{
	auto_forget((uintptr_t)addr, len);
	worker_cancel((uintptr_t)addr, len);
	regions_forget((uintptr_t)addr, len);
	uffd_gone((uintptr_t)addr, (uintptr_t)addr + len);
}

/* A call under the guard changed [s, e) behind the shim's back (glue.h,
 * glue_nested).  Gone (unmapped, or mapped anew: the call succeeded): what
 * the shim held there is forgotten, as for the program's own munmap, and
 * kept regions there are no longer ours: forgotten, not unmapped.  Changed
 * in place (mprotect, madvise, mseal, ...): as for the program's own
 * mprotect: kept regions there are given back, queued work dropped, and
 * nothing there is kept later; the records stay (a lock the shim took is
 * still in force).  e 0: notes were lost, and where is unknown: every kept
 * region is given back and nothing mapped now is kept later (the records
 * that could be stale can then do no harm; forgetting them all would drop
 * true ones, the shim's locks among them, and leak every kept region). */
static void nested_changed(uintptr_t s, uintptr_t e, int gone)
{
	if (!e) {
		s = 0;
		e = (uintptr_t)0 - page_size;
		gone = 0; /* (reprotected() gives every kept region back) */
	}
	if (e <= s)
		return;
	s &= ~(uintptr_t)(page_size - 1); /* (what the kernel acted on: whole pages) */
	if (e < (uintptr_t)0 - page_size)
		e = PAGE_UP(e);
	if (gone) {
		unmapped((void *)s, e - s);
		recycle_forget_range(s, e - s);
	} else {
		reprotected(s, e - s);
	}
}

/* ---- the mmap family ---- */

/* A call of the program's failed for want of memory (ENOMEM, EAGAIN): what
 * the shim holds may be why.  Kept regions count against RLIMIT_AS and
 * overcommit, the shim's locks and its mlockall against RLIMIT_MEMLOCK:
 * give them back, as if they never were.  1 if anything was given back
 * (then the caller tries once more). */
int pf_give_way(void)
{
	struct guard g;
	int gave = 0;
	if (!recycle_any() && !regions_any_locked() && !__atomic_load_n(&S.locked_all, __ATOMIC_RELAXED))
		return 0;
	g = guard_enter();
	if (recycle_any()) {
		recycle_flush();
		gave = 1;
	}
	if (regions_unlock(0, 0)) {
		stats_note(N_LOCK_YIELDED);
		gave = 1;
	}
	gave |= mlockall_give_way();
	guard_leave(g);
	return gave;
}

static void *map_plain(__typeof__(mmap) *f, struct plan *pl, void *addr, size_t len, int prot, int flags, int fd,
                       off_t off)
{
	void *p = FORWARD(SYS_mmap, addr, len, f(addr, len, prot, flags | pl->extra_flags, fd, off));
	if (p == MAP_FAILED && (errno == ENOMEM || errno == EAGAIN) && pf_give_way())
		p = FORWARD(SYS_mmap, addr, len, f(addr, len, prot, flags | pl->extra_flags, fd, off));
	return p;
}

/* The real mmap, placed on a huge-page boundary when the plan says so, and
 * tried again once after an ENOMEM with the kept regions given back (they
 * count against RLIMIT_AS and overcommit). */
static void *map_real(enum entry e, struct plan *pl, void *addr, size_t len, int prot, int flags, int fd,
                      off_t off)
{
	__typeof__(mmap) *f = (__typeof__(mmap) *)real_fn(e);
	if (!f)
		return sys_mmap(addr, len, prot, flags, fd, off);
	if (pl->align_huge) { /* (no extra flags: populated after placing, not the slack too) */
		void *a = glue_map_aligned(f, len, hpage_size, prot, flags, fd, off, 0);
		if (a == MAP_FAILED && (errno == ENOMEM || errno == EAGAIN) && pf_give_way())
			a = glue_map_aligned(f, len, hpage_size, prot, flags, fd, off, 0);
		if (a != MAP_FAILED)
			return a;
		/* no room for the slack: a plain mapping */
	}
	return map_plain(f, pl, addr, len, prot, flags, fd, off);
}

/* A request recycle may not hint beside its kept regions: the kernel
 * honours a MAP_32BIT hint anywhere below 2 GiB, where it would never
 * place one itself. */
static int no_hint(int flags)
{
#ifdef MAP_32BIT
	return (flags & MAP_32BIT) != 0;
#else
	(void)flags;
	return 0;
#endif
}

void *pf_mmap(enum entry e, void *addr, size_t len, int prot, int flags, int fd, off_t off, const void *ret)
{
	struct request rq;
	struct plan pl;
	struct guard g;
	int rule = -1, lazy, watch = -1;
	uint32_t kept_epoch = 0; /* of a region recycle_take gave (auto_taken) */
	uintptr_t beside = 0; /* recycle's hint: a fresh region beside those it keeps */
	void *p = MAP_FAILED;
	if (len == 0 || len > SIZE_MAX - 2 * hpage_size) { /* the kernel refuses it: nothing to plan */
		__typeof__(mmap) *f = (__typeof__(mmap) *)real_fn(e);
		return f ? FORWARD(SYS_mmap, addr, len, f(addr, len, prot, flags, fd, off)) : sys_mmap(addr, len, prot, flags, fd, off);
	}
	g = guard_enter();
	stats_call(e);
	rq.call = CALL_MMAP;
	rq.len = len;
	rq.off = off;
	rq.hint = addr;
	rq.ret = ret;
	match_classify_mmap(&rq, prot, flags, fd);
	if (len >= match_min_size[0])
		rule = match_request(&rq);
	else if (auto_on)
		rule = auto_request(&rq, &watch);
	plan_request(&rq, rule, &pl);
	if (flags & MAP_FIXED) /* whatever was there goes away */
		unmapped(addr, PAGE_UP(len));
	if (addr) /* a hint, MAP_FIXED or MAP_FIXED_NOREPLACE: the range must look as it would without us */
		recycle_release_range((uintptr_t)addr, PAGE_UP(len));
	if (pl.recyclable) {
		size_t res;
		uintptr_t a = recycle_take(rule, PAGE_UP(len), prot, flags, &res, pl.carve || no_hint(flags) ? NULL : &beside, &kept_epoch, &pl.slice);
		if (!a && pl.carve && carve_judge(rule))
			pl.slice = (a = carve_take(rule, PAGE_UP(len), prot, flags, &res)) != 0;
		if (a) {
			p = (void *)a;
			pl.recycled_resident = res;
			/* MAP_POPULATE asks for every page now: what the program
			 * dropped from the kept region (MADV_DONTNEED) comes back */
			if ((flags & MAP_POPULATE) && (res == (size_t)-1 || res < PAGE_UP(len) / page_size))
				sys_madvise(p, PAGE_UP(len), MADV_POPULATE_WRITE);
		}
	}
	if (watch == AUTO_TAKEN) /* (the learner counts what the program maps anew) */
		auto_taken(PAGE_UP(len), p != MAP_FAILED ? pl.recycled_resident : (size_t)-1, kept_epoch, &rq);
	/* Under the policy's mlockall future the kernel would populate (and
	 * lock) a reservation whole at once: an 8 GiB sparse table would take
	 * 8 GiB; and a writable private file mapping by write faults, a copy of
	 * every page, so that the program would no longer see later changes to
	 * the file (helper-36: the realtime policy).  Around this one call,
	 * future mappings are locked as they are touched instead (the
	 * program's own mlockall is left as it is).  (A read-only one is
	 * populated for reading, as the realtime policy wants its samples: a
	 * later mprotect that makes it writable has the kernel copy it whole.) */
	lazy = p == MAP_FAILED && (S.locked_all & MCL_FUTURE) && !(S.locked_all & MCL_ONFAULT) && !S.program_locks_all &&
	       ((flags & MAP_NORESERVE) ||
	        (!(flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE && (prot & PROT_WRITE)));
	if (lazy)
		sys_n(SC_mlockall, MCL_FUTURE | MCL_ONFAULT, 0, 0, 0, 0, 0);
	guard_pause(&g); /* (a charge or a kept region taken: see glue.h) */
	if (p == MAP_FAILED)
		p = map_real(e, &pl, beside ? (void *)beside : addr, len, prot, flags, fd, off);
	guard_resume(&g);
	if (lazy)
		sys_n(SC_mlockall, MCL_FUTURE, 0, 0, 0, 0, 0);
	if (p == MAP_FAILED) {
		st_add(&g_stats.failed[e], 1);
		budget_release(pl.charge);
	} else {
		if (rule >= 0) {
			stats_count_request(&g_stats.rules[rule], len);
			apply(&rq, &pl, p, PAGE_UP(len), NULL);
		} else {
			stats_unmatched(0, len);
			if (watch >= 0)
				auto_mapped(watch, (uintptr_t)p, PAGE_UP(len), NULL, len, &rq);
		}
		if (unlikely(S.profile_on))
			profile_map((uintptr_t)p, PAGE_UP(len), CALL_MMAP, ret, rq.mk, rq.pk);
	}
	guard_leave(g);
	return p;
}

/* The allocator may keep a freed block (an arena's, or one it caches), or
 * unmap it (glibc, one it mapped for the block): the block's own page
 * still there says it kept it.  (Another thread's mapping there since:
 * taken for kept, the safe side.)  Only for blocks the learner asked
 * about (auto_gone: in use across a turn of its count, or older): a
 * mincore more per free of such a large block. */
void pf_freed(const struct fate *fate)
{
	unsigned char v;
	if (fate->fell && sys_mincore((void *)fate->at, page_size, &v) != 0 && errno == ENOMEM)
		auto_unmapped(fate->fell);
}

int pf_munmap(void *addr, size_t len)
{
	int (*f)(void *, size_t) = REAL(munmap);
	struct region r;
	struct guard g;
	int kept = 0, rc;
	uint64_t fell = 0; /* (auto_gone) */
	if (!len || ((uintptr_t)addr & (page_size - 1)) || len > SIZE_MAX - page_size)
		return f ? FORWARD(SYS_munmap, addr, len, f(addr, len)) : sys_munmap(addr, len); /* the kernel says EINVAL */
	len = PAGE_UP(len);
	/* Forget before unmapping: once the range is free, another thread's mmap
	 * may get it, and its tracking must not be the one we drop. */
	g = guard_enter();
	stats_call(E_munmap);
	if (unlikely(S.profile_on))
		profile_unmap((uintptr_t)addr, len);
	/* A tracked region is the program's, and no kept region lies in it:
	 * kept ones are taken out of the table and put back only when reused. */
	if (regions_take_exact((uintptr_t)addr, len, &r)) {
		if (auto_on)
			fell = auto_gone(&r, 1);
		worker_cancel((uintptr_t)addr, len);
		budget_release(r.charged);
		if ((r.flags & RF_RECYCLE) && !(r.flags & RF_LOCKED) && !S.program_locks_all)
			kept = recycle_keep((uintptr_t)addr, len, r.rule, r.prot, r.mflags, (r.flags & RF_FULL) != 0, (r.flags & RF_CARVED) != 0, r.epoch);
		if (kept && auto_on)
			auto_kept();
		if (auto_on && !kept && (r.flags & (RF_RECYCLE | RF_AUTO)) == RF_RECYCLE)
			fell = auto_dropped(&r, 1); /* (auto_gone took it for kept) */
	} else {
		recycle_release_range((uintptr_t)addr, len); /* kept regions inside: the kernel would unmap them */
		unmapped(addr, len);
	}
	guard_leave(g);
	if (kept)
		return 0; /* kept for recycling: to the program, it is gone */
	rc = f ? FORWARD(SYS_munmap, addr, len, f(addr, len)) : sys_munmap(addr, len);
	if (unlikely(fell) && rc == 0)
		auto_unmapped(fell); /* (an atomic add: no guard, errno as the munmap left it) */
	return rc;
}

/* A region of no rule's, [p, p+len) with these flags and this charge, in
 * the table; -1 if there is no room to track it. */
static int track(void *p, size_t len, unsigned flags, uint64_t charged)
{
	struct region reg;
	memset(&reg, 0, sizeof reg);
	reg.start = (uintptr_t)p;
	reg.end = (uintptr_t)p + len;
	reg.flags = flags;
	reg.charged = charged;
	return regions_add(&reg);
}

/* THP in madvise mode, read when a slice first moves (a process whose
 * slices never move never reads it). */
static int madvise_mode(void)
{
	int m = __atomic_load_n(&S.madvise_mode, __ATOMIC_RELAXED);
	if (!m)
		__atomic_store_n(&S.madvise_mode, m = os_thp_mode() == THP_MADVISE ? 1 : -1, __ATOMIC_RELAXED);
	return m > 0;
}

/* A carved slice lies in its reserve, a mapping advised MADV_HUGEPAGE; the
 * program's own mapping would have no advice.  Moved or grown by mremap,
 * it takes the reserve's advice with it, and a byte written every 2 MiB of
 * what it gained is a huge page each (autoprobe arenas 40 grow, under a
 * carve rule: VmHWM 296,832 kB against 50,504 without the shim).  So the
 * moved range is advised MADV_NOHUGEPAGE: in THP's madvise mode a fault
 * there then gets what the program's own mapping would (with THP always,
 * the advice changes nothing a fault gets, and is left).  The program's
 * MADV_COLLAPSE of it, refused under MADV_NOHUGEPAGE, is let through by
 * pf_madvise (RF_UNADVISED).  A slice the program advised itself is not a
 * candidate (its madvise clears RF_CARVED), nor a range where a reserve
 * once was (b0ad5a0 took every such range, and took the program's own
 * advice off its own buffers: reverted). */
static void unadvised(void *p, size_t len)
{
	(void)track(p, len, RF_UNADVISED, 0); /* (no room to track it: MADV_COLLAPSE there is refused) */
}

/* After mremap moved a range the shim had locked: remember it where it is
 * now (the kernel kept the lock, and locked what it grew by), charged to
 * the budget again; past the budget, or with no room to track it, the lock
 * is given back.  (MREMAP_DONTUNMAP leaves the old range unlocked.) */
static void moved_locked(void *p, size_t len)
{
	if (budget_reserve(len)) {
		if (track(p, len, RF_LOCKED, len) == 0)
			return;
		budget_release(len);
	}
	unlock_ours(p, len);
}

void *pf_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *new_addr, const void *ret)
{
	void *(*f)(void *, size_t, size_t, int, ...) = REAL(mremap);
	void *r;
	uintptr_t one[1][2], got[1][3];
	int ours, carved, unadv;
	struct guard g = guard_enter();
	stats_call(E_mremap);
	if (oldlen > SIZE_MAX - hpage_size || newlen > SIZE_MAX - hpage_size) { /* the kernel refuses it */
		guard_leave(g);
		return f ? FORWARD(SYS_mremap, old, oldlen, f(old, oldlen, newlen, flags, new_addr)) : sys_mremap(old, oldlen, newlen, flags, new_addr);
	}
	/* A kept region there is not the program's: the kernel must answer as
	 * it would (EFAULT for a range the program unmapped). */
	recycle_release_range((uintptr_t)old, PAGE_UP(oldlen));
	/* A range the shim locked moves locked, as the kernel moves it (a
	 * mapping that grows locked merges with its locked neighbours, as it
	 * would if the program had locked it): its record moves after the
	 * call.  (mremap works within one mapping, so the range is locked
	 * whole or not at all.) */
	ours = !S.program_locks_all && regions_locked_in((uintptr_t)old, PAGE_UP(oldlen), one, 1) > 0;
	carved = S.carving && regions_with((uintptr_t)old, PAGE_UP(oldlen), RF_CARVED, got, 1) > 0 && madvise_mode();
	unadv = S.carving && regions_with((uintptr_t)old, PAGE_UP(oldlen), RF_UNADVISED, got, 1) > 0;
	unmapped(old, PAGE_UP(oldlen));
	if (PAGE_UP(newlen) > PAGE_UP(oldlen)) /* growing in place needs what follows */
		recycle_release_range((uintptr_t)old + PAGE_UP(oldlen), PAGE_UP(newlen) - PAGE_UP(oldlen));
	if (flags & MREMAP_FIXED) {
		unmapped(new_addr, PAGE_UP(newlen));
		recycle_release_range((uintptr_t)new_addr, PAGE_UP(newlen));
	} else if ((flags & MREMAP_DONTUNMAP) && new_addr) { /* a hint: free as it would be */
		recycle_release_range((uintptr_t)new_addr, PAGE_UP(newlen));
	}
	guard_pause(&g); /* (a locked range's record dropped, put back after) */
	r = f ? FORWARD(SYS_mremap, old, oldlen, f(old, oldlen, newlen, flags, new_addr)) : sys_mremap(old, oldlen, newlen, flags, new_addr);
	if (r == MAP_FAILED && (errno == EAGAIN || errno == ENOMEM) && (ours || pf_give_way())) {
		/* Growing a locked mapping counts against RLIMIT_MEMLOCK: the
		 * shim's lock must not be why the program's call fails. */
		if (ours)
			unlock_ours(old, PAGE_UP(oldlen));
		ours = 0;
		r = f ? FORWARD(SYS_mremap, old, oldlen, f(old, oldlen, newlen, flags, new_addr)) : sys_mremap(old, oldlen, newlen, flags, new_addr);
	}
	guard_resume(&g);
	if (ours) {
		if (r != MAP_FAILED)
			moved_locked(r, PAGE_UP(newlen));
		else /* nothing moved: the old range is still locked */
			moved_locked(old, PAGE_UP(oldlen));
	}
	if (carved && r != MAP_FAILED && (r != old || PAGE_UP(newlen) > PAGE_UP(oldlen))) {
		if (sys_madvise(r, PAGE_UP(newlen), MADV_NOHUGEPAGE) == 0)
			unadvised(r, PAGE_UP(newlen));
	} else if (unadv) { /* (its record went with unmapped: put back where it is now) */
		if (r != MAP_FAILED)
			unadvised(r, PAGE_UP(newlen));
		if (r == MAP_FAILED || (flags & MREMAP_DONTUNMAP))
			unadvised(old, PAGE_UP(oldlen));
	}
	if (unlikely(S.profile_on) && r != MAP_FAILED)
		profile_remap((uintptr_t)old, PAGE_UP(oldlen), (uintptr_t)r, PAGE_UP(newlen), flags);
	guard_leave(g);
	return r;
}

void pf_claim(void *addr, size_t len, int how)
{
	uintptr_t s = PAGE_DOWN((uintptr_t)addr);
	struct guard g;
	if (!len || len > SIZE_MAX - hpage_size)
		return;
	len = PAGE_UP(len + ((uintptr_t)addr - s));
	g = guard_enter();
	recycle_release_range(s, len);
	if (how == CLAIM_REPLACE)
		unmapped((void *)s, len);
	else if (how == CLAIM_KEEP_OUT) /* registered with userfaultfd, or sealed: never kept for reuse */
		regions_clear_flag(s, len, RF_RECYCLE);
	guard_leave(g);
}

void pf_reprotect(void *addr, size_t len)
{
	struct guard g;
	if (len > SIZE_MAX - hpage_size)
		return;
	g = guard_enter();
	reprotected((uintptr_t)addr, PAGE_UP(len));
	guard_leave(g);
}

/* ---- locking: the program's own calls, and what the shim locked ---- */

/* A few address ranges, under S.plock.  Past RSET_MAX of them the set
 * overflows, and then holds every address. */
#define RSET_MAX 64
struct rset {
	uintptr_t r[RSET_MAX][2];
	int n;
	int overflow;
};

/* Ranges the program locked itself (while the policy's mlockall is in
 * force, only these keep madvise's EINVAL; overflowing, the program is
 * taken to lock everything it cares about), and ranges registered with
 * userfaultfd (see relock).  The tables stand apart from S. */
static struct rset plocked, uffd_ranges;

static void rset_add(struct rset *t, uintptr_t s, uintptr_t e)
{
	spin_lock(&S.plock);
	if (t->n < RSET_MAX) {
		t->r[t->n][0] = s;
		t->r[t->n][1] = e;
		__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&t->overflow, 1, __ATOMIC_RELAXED);
	}
	spin_unlock(&S.plock);
}

/* [s, e) leaves the set: entries inside it go, ones that overlap an end
 * are trimmed (one with a hole in the middle stays whole: it holds a
 * little more than it should, never less). */
static void rset_remove(struct rset *t, uintptr_t s, uintptr_t e)
{
	int i;
	if (!__atomic_load_n(&t->n, __ATOMIC_RELAXED))
		return;
	spin_lock(&S.plock);
	for (i = 0; i < t->n; i++) {
		uintptr_t *u = t->r[i];
		if (u[1] <= s || u[0] >= e)
			continue;
		if (u[0] >= s && u[1] <= e) {
			u[0] = t->r[t->n - 1][0];
			u[1] = t->r[t->n - 1][1];
			__atomic_store_n(&t->n, t->n - 1, __ATOMIC_RELAXED);
			i--;
		} else if (u[0] >= s) {
			u[0] = e;
		} else if (u[1] <= e) {
			u[1] = s;
		}
	}
	spin_unlock(&S.plock);
}

static int rset_overlaps(struct rset *t, uintptr_t s, uintptr_t e)
{
	int i, in;
	if (!__atomic_load_n(&t->n, __ATOMIC_RELAXED) && !__atomic_load_n(&t->overflow, __ATOMIC_RELAXED))
		return 0;
	spin_lock(&S.plock);
	in = t->overflow;
	for (i = 0; i < t->n && !in; i++)
		in = t->r[i][0] < e && t->r[i][1] > s;
	spin_unlock(&S.plock);
	return in;
}

/* Emptied (under S.plock, or in a fork child). */
static void rset_clear(struct rset *t)
{
	t->n = 0;
	t->overflow = 0;
}

static void program_locked(uintptr_t s, uintptr_t e) { rset_add(&plocked, s, e); }
static void program_unlocked(uintptr_t s, uintptr_t e) { rset_remove(&plocked, s, e); }

/* Under the policy's mlockall: apply fn to the parts of [s, e) that the
 * program did not lock itself. */
static void for_not_program(uintptr_t s, uintptr_t e, int (*fn)(const void *, size_t))
{
	uintptr_t cur = s;
	spin_lock(&S.plock);
	if (S.program_locks_all || plocked.overflow) {
		spin_unlock(&S.plock);
		return;
	}
	while (cur < e) {
		uintptr_t next = e, skip_to = 0;
		int i;
		for (i = 0; i < plocked.n; i++) { /* the nearest program lock at or after cur */
			const uintptr_t *u = plocked.r[i];
			if (u[1] <= cur || u[0] >= next)
				continue;
			if (u[0] <= cur) {
				skip_to = u[1] > skip_to ? u[1] : skip_to;
			} else {
				next = u[0];
			}
		}
		if (skip_to) {
			cur = skip_to;
			continue;
		}
		spin_unlock(&S.plock);
		fn((void *)cur, next - cur);
		spin_lock(&S.plock);
		cur = next;
	}
	spin_unlock(&S.plock);
}

/* Locked again, but nothing faulted in: pages are locked as the program
 * touches them (what was dropped stays dropped, as without us).  The range
 * then differs from its neighbours (VM_LOCKONFAULT) and is a mapping of its
 * own, which mremap of the whole would refuse: so only for a range
 * registered with userfaultfd (pf_uffd), where a page made resident again
 * would hide the program's missing fault.  Elsewhere the shim locks again
 * as it locked first (lock_ours: the pages come back, zero). */
static int relock_lazy(const void *p, size_t len)
{
	return (int)sys_n(SC_mlock2, (long)p, (long)len, MLOCK_ONFAULT, 0, 0, 0);
}

static void unlock_not_program(uintptr_t s, uintptr_t e) { for_not_program(s, e, unlock_ours); }
/* Ranges registered with userfaultfd (any mode).  The shim never makes a
 * page of one resident by faulting it in: mlock's populate would send its
 * faults to the program's handler, or fail half done and leave the range
 * locked.  Its locks there are taken again lazily (registering split the
 * range into a mapping of its own already). */
static void uffd_gone(uintptr_t s, uintptr_t e) { rset_remove(&uffd_ranges, s, e); }

/* The shim's lock, taken again after the program's MADV_DONTNEED: as it
 * was first taken (mlock: the dropped pages come back, zero), or lazily
 * under mlockall onfault (where the mapping is locked on fault whole) and
 * on a range registered with userfaultfd.  A failed mlock may have locked
 * part of the range: that is undone, so the program's next MADV_DONTNEED
 * does not meet a lock the shim has forgotten (EINVAL). */
static int relock(const void *p, size_t len)
{
	uintptr_t s = (uintptr_t)p;
	if ((S.locked_all & MCL_ONFAULT) || rset_overlaps(&uffd_ranges, s, s + len))
		return relock_lazy(p, len);
	if (lock_ours(p, len) == 0)
		return 0;
	unlock_ours(p, len);
	return -1;
}

static void relock_not_program(uintptr_t s, uintptr_t e) { for_not_program(s, e, relock); }

/* The policy's mlockall gives way: the process may no longer lock without
 * limit (it dropped CAP_IPC_LOCK or its uid, or lowered RLIMIT_MEMLOCK), or
 * a call of the program's failed for want of locked memory.  munlockall is
 * the only way to stop locking future mappings; what the program locked
 * itself is locked again (as far as it still may).  Returns 1 if it did. */
static int mlockall_give_way(void)
{
	int i;
	if (!__atomic_load_n(&S.locked_all, __ATOMIC_RELAXED) || S.program_locks_all)
		return 0;
	sys_n(SC_munlockall, 0, 0, 0, 0, 0, 0);
	__atomic_store_n(&S.locked_all, 0, __ATOMIC_RELAXED);
	regions_disown_locks(); /* (munlockall undid the shim's lock rules too) */
	spin_lock(&S.plock);
	for (i = 0; i < plocked.n; i++) {
		uintptr_t s = plocked.r[i][0], e = plocked.r[i][1];
		spin_unlock(&S.plock);
		sys_mlock((void *)s, e - s);
		spin_lock(&S.plock);
	}
	spin_unlock(&S.plock);
	stats_note(N_MLOCKALL_YIELDED);
	return 1;
}

/* After the program changed its privileges or its RLIMIT_MEMLOCK: may it
 * still lock without limit?  If not, the policy's mlockall gives way now,
 * before the program's next mapping fails. */
void pf_privileges(void)
{
	struct guard g;
	if (!__atomic_load_n(&S.locked_all, __ATOMIC_RELAXED))
		return;
	g = guard_enter();
	if (!lock_unlimited())
		mlockall_give_way();
	guard_leave(g);
}

/* The kernel refuses to drop locked pages (MADV_DONTNEED, MADV_FREE,
 * MADV_REMOVE: EINVAL).  Where the shim locked them and the program did
 * not, they are unlocked for the call and locked again after it (so the
 * mapping is not left split in two, and stays locked as the policy
 * wants): the program gets what it would without us. */
#define PIECES 16

int pf_madvise(void *addr, size_t len, int advice)
{
	int (*f)(void *, size_t, int) = REAL(madvise);
	uintptr_t ours[PIECES][2], un[PIECES][3], s = PAGE_DOWN((uintptr_t)addr), e;
	int n = 0, nun = 0, i, rc, drop = advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE;
	struct guard g;
	if (len > SIZE_MAX - hpage_size) /* the kernel refuses it */
		return f ? FORWARD(SYS_madvise, addr, len, f(addr, len, advice)) : sys_madvise(addr, len, advice);
	e = PAGE_UP((uintptr_t)addr + len);
	g = guard_enter();
	stats_call(E_madvise);
	recycle_release_range(s, e - s); /* not the program's: let it see ENOMEM */
	if (drop) {
		/* The pages go: nothing queued there, and no charge for them.  The
		 * region stays recyclable (reuse zeroes what is resident). */
		worker_cancel(s, e - s);
		regions_uncharge(s, e - s);
		regions_clear_flag(s, e - s, RF_FULL);
		if (!S.program_locks_all) {
			n = regions_locked_in(s, e - s, ours, PIECES);
			for (i = 0; i < n; i++)
				unlock_ours((void *)ours[i][0], ours[i][1] - ours[i][0]);
			if (S.locked_all)
				unlock_not_program(s, e);
		}
	} else if (advice == MADV_PAGEOUT) {
		regions_clear_flag(s, e - s, RF_FULL); /* (with swap, the pages may go) */
	} else if (advice != MADV_NORMAL && advice != MADV_WILLNEED && advice != MADV_COLD &&
	           advice != MADV_POPULATE_READ && advice != MADV_POPULATE_WRITE) {
		auto_forget(s, e - s); /* (never advised over the program's own advice) */
		/* Anything else (DONTFORK, WIPEONFORK, HUGEPAGE, MERGEABLE, ...)
		 * changes the mapping in a way a fresh one would not have. */
		regions_clear_flag(s, e - s, RF_RECYCLE);
		if (advice == MADV_HUGEPAGE || advice == MADV_NOHUGEPAGE) /* (its own advice now) */
			regions_clear_flag(s, e - s, RF_CARVED | RF_UNADVISED);
		else if (advice == MADV_COLLAPSE && S.carving) /* (see unadvised()) */
			nun = regions_with(s, e - s, RF_UNADVISED, un, PIECES);
	}
	for (i = 0; i < nun; i++)
		sys_madvise((void *)un[i][0], un[i][1] - un[i][0], MADV_HUGEPAGE);
	guard_pause(&g); /* (the shim's locks given up, taken again after) */
	rc = f ? FORWARD(SYS_madvise, addr, len, f(addr, len, advice)) : sys_madvise(addr, len, advice);
	guard_resume(&g);
	for (i = 0; i < nun; i++)
		sys_madvise((void *)un[i][0], un[i][1] - un[i][0], MADV_NOHUGEPAGE);
	if (drop && (n || S.locked_all) && !S.program_locks_all) {
		for (i = 0; i < n; i++)
			if (relock((void *)ours[i][0], ours[i][1] - ours[i][0]) != 0)
				regions_clear_flag(ours[i][0], ours[i][1] - ours[i][0], RF_LOCKED);
		if (S.locked_all)
			relock_not_program(s, e);
		stats_note(N_LOCK_YIELDED);
	}
	guard_leave(g);
	return rc;
}

/* The program's lock call failed for want of RLIMIT_MEMLOCK: if the shim
 * holds locks, give them all back (once) and let the caller try again. */
static int yield_locks(int rc, int err)
{
	if (rc == 0 || (err != ENOMEM && err != EAGAIN && err != EPERM))
		return 0;
	if (!regions_any_locked())
		return 0;
	regions_unlock(0, 0);
	stats_note(N_LOCK_YIELDED);
	return 1;
}

int pf_mlock(enum entry e, const void *addr, size_t len, unsigned flags)
{
	struct guard g = guard_enter();
	int rc;
	stats_call(e);
	recycle_release_range((uintptr_t)addr & ~(page_size - 1), PAGE_UP(len + ((uintptr_t)addr & (page_size - 1))));
	guard_pause(&g); /* (the program's lock recorded after) */
	for (;;) {
		if (e == E_mlock2) {
			__typeof__(mlock2) *f = REAL(mlock2);
			rc = f ? FORWARD(SYS_mlock2, addr, len, f(addr, len, flags)) : (int)sys_call(SYS_mlock2, (long)addr, (long)len, flags, 0, 0, 0);
		} else {
			__typeof__(mlock) *f = REAL(mlock);
			rc = f ? FORWARD(SYS_mlock, addr, len, f(addr, len)) : sys_mlock(addr, len);
		}
		guard_resume(&g);
		if (!yield_locks(rc, g.err))
			break;
		guard_pause(&g);
	}
	if (rc == 0) {
		uintptr_t s = PAGE_DOWN((uintptr_t)addr), end = PAGE_UP((uintptr_t)addr + len);
		/* The program's lock now: never the shim's to undo, and never a
		 * region to keep for reuse (it would hold the program's
		 * RLIMIT_MEMLOCK after it unmapped it). */
		regions_clear_flag(s, end - s, RF_LOCKED | RF_RECYCLE);
		program_locked(s, end);
	}
	guard_leave(g);
	return rc;
}

int pf_munlock(const void *addr, size_t len)
{
	struct guard g = guard_enter();
	int rc;
	stats_call(E_munlock);
	recycle_release_range(PAGE_DOWN((uintptr_t)addr), PAGE_UP((uintptr_t)addr + len) - PAGE_DOWN((uintptr_t)addr));
	guard_pause(&g); /* (the program's unlock recorded after) */
	{
		__typeof__(munlock) *f = REAL(munlock);
		rc = f ? FORWARD(SYS_munlock, addr, len, f(addr, len)) : sys_munlock(addr, len);
	}
	guard_resume(&g);
	if (rc == 0) {
		regions_clear_flag(PAGE_DOWN((uintptr_t)addr), PAGE_UP((uintptr_t)addr + len) - PAGE_DOWN((uintptr_t)addr),
		                   RF_LOCKED);
		program_unlocked(PAGE_DOWN((uintptr_t)addr), PAGE_UP((uintptr_t)addr + len));
	}
	guard_leave(g);
	return rc;
}

int pf_mlockall(int flags)
{
	struct guard g = guard_enter();
	int rc;
	stats_call(E_mlockall);
	/* Kept regions are not the program's: they must not be locked (and
	 * count against its limit) with the rest. */
	recycle_flush();
	guard_pause(&g); /* (the program's lock recorded after) */
	for (;;) {
		__typeof__(mlockall) *f = REAL(mlockall);
		rc = f ? FORWARD(SYS_mlockall, flags, FWD_ANY, f(flags)) : (int)sys_call(SYS_mlockall, flags, 0, 0, 0, 0, 0);
		guard_resume(&g);
		if (!yield_locks(rc, g.err))
			break;
		guard_pause(&g);
	}
	if (rc == 0) {
		/* Every lock is the program's now: none is the shim's to undo. */
		S.program_locks_all = 1;
		regions_disown_locks();
	}
	guard_leave(g);
	return rc;
}

int pf_munlockall(void)
{
	__typeof__(munlockall) *f = REAL(munlockall);
	int rc = f ? FORWARD(SYS_munlockall, FWD_ANY, FWD_ANY, f()) : (int)sys_call(SYS_munlockall, 0, 0, 0, 0, 0, 0);
	struct guard g = guard_enter();
	stats_call(E_munlockall);
	if (rc == 0) {
		regions_unlock(0, 0); /* nothing is locked now: forget that we had */
		S.locked_all = 0;
		S.program_locks_all = 0;
		spin_lock(&S.plock);
		rset_clear(&plocked);
		spin_unlock(&S.plock);
	}
	guard_leave(g);
	return rc;
}

/* ---- limits ---- */

void pf_exec_rules(void)
{
	struct guard g = guard_enter();
	recycle_never();
	guard_leave(g);
}

void pf_limit(int resource, int done)
{
	struct guard g;
	if (resource == RLIMIT_MEMLOCK && done)
		pf_privileges();
	if (resource != RLIMIT_AS && resource != RLIMIT_DATA)
		return;
	g = guard_enter();
	/* Kept regions would count against a limit on the program's address
	 * space or data: give them back before it takes effect (and keep none
	 * while it is set: recycle.c). */
	if (!done)
		recycle_flush();
	else if (S.recyclers)
		read_limits();
	guard_leave(g);
}

/* ---- userfaultfd ---- */

/* Drop the pages of [s, e) that are resident and read zero, unlocking them
 * for it (and locking them again as they are touched) where the shim locked
 * them (drop_locked: set by the caller, for for_not_program's sake). */
static TLS int drop_locked;

static int drop_zero_pages(const void *start, size_t len)
{
	unsigned char vec[256];
	uintptr_t s = (uintptr_t)start, e = s + len, base;
	for (base = s; base < e;) {
		size_t pages = (e - base) / page_size, i, run = 0;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (sys_mincore((void *)base, pages * page_size, vec) != 0)
			return -1;
		for (i = 0; i <= pages; i++) {
			int zero = 0;
			if (i < pages && (vec[i] & 1)) {
				const uint64_t *w = (const uint64_t *)(base + i * page_size);
				size_t k;
				for (k = 0; k < page_size / sizeof *w && !w[k]; k++)
					;
				zero = k == page_size / sizeof *w;
			}
			if (zero) {
				run++;
				continue;
			}
			if (run) {
				void *p = (void *)(base + (i - run) * page_size);
				if (drop_locked)
					unlock_ours(p, run * page_size);
				sys_madvise(p, run * page_size, MADV_DONTNEED);
				if (drop_locked)
					relock_lazy(p, run * page_size);
				run = 0;
			}
		}
		base += pages * page_size;
	}
	return 0;
}

/* A range registered with userfaultfd must fault as it would without us.
 * MISSING: pages the shim made resident that still read zero are dropped.
 * MINOR (shmem, hugetlbfs): a page in the page cache but not in the page
 * tables faults to the handler, which may change its contents first (live
 * migration does): the shim's mappings of such pages would let the program
 * read them without it.  On a shared mapping MADV_DONTNEED drops only the
 * page table entries (the file keeps its pages), so where the shim made a
 * shared range resident, its entries go.  (A page the program touched itself
 * before registering then faults to the handler too: one fault more, never
 * one hidden.) */
void pf_uffd(void *addr, size_t len, int missing, int minor)
{
	uintptr_t s = PAGE_DOWN((uintptr_t)addr), e, got[PIECES][3];
	struct guard g;
	int n, i;
	if (!len || len > SIZE_MAX - hpage_size)
		return;
	e = PAGE_UP((uintptr_t)addr + len);
	g = guard_enter();
	stats_call(E_ioctl);
	rset_add(&uffd_ranges, s, e);
	recycle_release_range(s, e - s);
	auto_forget(s, e - s);
	worker_cancel(s, e - s); /* (a chunk in flight finishes first: it is not registered yet) */
	regions_clear_flag(s, e - s, RF_RECYCLE);
	if (missing) {
		n = regions_with(s, e - s, RF_MADE, got, PIECES);
		for (i = 0; i < n; i++) {
			uintptr_t lo = got[i][0] > s ? got[i][0] : s, hi = got[i][1] < e ? got[i][1] : e;
			drop_locked = (got[i][2] & RF_LOCKED) || (S.locked_all && !S.program_locks_all);
			for_not_program(lo, hi, drop_zero_pages);
		}
		regions_clear_flag(s, e - s, RF_MADE | RF_FULL);
	}
	if (minor) {
		n = regions_with(s, e - s, RF_MADE | RF_SHARED, got, PIECES);
		for (i = 0; i < n; i++) {
			uintptr_t lo = got[i][0] > s ? got[i][0] : s, hi = got[i][1] < e ? got[i][1] : e;
			int locked = (got[i][2] & RF_LOCKED) || (S.locked_all && !S.program_locks_all);
			if (locked)
				unlock_ours((void *)lo, hi - lo);
			sys_madvise((void *)lo, hi - lo, MADV_DONTNEED);
			if (locked)
				relock_lazy((void *)lo, hi - lo);
		}
		regions_clear_flag(s, e - s, RF_MADE);
	}
	guard_leave(g);
}

void pf_uffd_unregistered(void *addr, size_t len)
{
	struct guard g;
	if (!len || len > SIZE_MAX - hpage_size)
		return;
	g = guard_enter();
	uffd_gone(PAGE_DOWN((uintptr_t)addr), PAGE_UP((uintptr_t)addr + len));
	guard_leave(g);
}

/* ---- fork ---- */

void pf_atfork(int who)
{
	if (who == FORK_PREPARE) {
		spin_lock(&S.plock);
		return;
	}
	if (who == FORK_PARENT) {
		spin_unlock(&S.plock);
		return;
	}
	/* Neither mlockall nor mlock is inherited: in the child nothing is
	 * locked, by the program or by us (regions.c clears RF_LOCKED). */
	spin_init(&S.plock);
	S.locked_all = 0;
	S.program_locks_all = 0;
	rset_clear(&plocked);
}

/* ---- the malloc family ---- */

void pf_block(enum entry e, void *p, size_t size, const void *ret)
{
	struct request rq;
	struct plan pl;
	uintptr_t s, t;
	int rule, watch = -1;
	if (size < stats_malloc_from)
		return; /* (a block from before start-up was done: not watched) */
	stats_call(e);
	if (unlikely(S.profile_on))
		profile_block(p, size, ret);
	if (size < match_min_size[1] && !auto_on) {
		stats_unmatched(1, size);
		return;
	}
	/* Act on the page-aligned interior: the edges share pages with other
	 * blocks (locks and advice take in a block's own mapping whole:
	 * block_pages). */
	s = PAGE_UP((uintptr_t)p);
	t = PAGE_DOWN((uintptr_t)p + size);
	match_anon_request(&rq, CALL_MALLOC, size, ret);
	rule = auto_on ? auto_request(&rq, &watch) : match_request(&rq);
	if (rule < 0) {
		stats_unmatched(1, size);
		if (watch >= 0 && t > s)
			auto_mapped(watch, s, t - s, p, size, &rq);
		return;
	}
	stats_count_request(&g_stats.rules[rule], size);
	plan_request(&rq, rule, &pl);
	apply(&rq, &pl, (void *)s, t > s ? t - s : 0, p);
}

void pf_free(void *p, struct fate *fate)
{
	struct region r;
	int unmap = fate != NULL;
	if (unlikely(S.profile_on))
		profile_free(p);
	if (!blocks_take(p, &r))
		return;
	if (auto_on) {
		uint64_t fell = auto_gone(&r, unmap);
		if ((r.flags & (RF_RECYCLE | RF_AUTO)) == RF_RECYCLE)
			fell = auto_dropped(&r, unmap); /* (a block is never kept here) */
		if (fate) {
			fate->at = r.start;
			fate->fell = fell;
		}
	}
	worker_cancel(r.start, r.end - r.start);
	if ((r.flags & RF_LOCKED) && !S.program_locks_all)
		unlock_block(p, r.start, r.end);
	budget_release(r.charged);
}
