/* prefault.c: see prefault.h. */
#include "glue.h"
#include "prefault.h"
#include "recycle.h"
#include "regions.h"
#include "stats.h"
#include "worker.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

size_t pf_page; /* sysconf's page size, set first thing in shim_init: nothing reads it before */
int pf_populate_ok = 1;
int pf_thp_ok = 1;
static const struct policy *pol;

static const char fallback_msg[] =
	"prefault: this kernel lacks MADV_POPULATE_WRITE (Linux 5.14+); populating by touching pages instead\n";

static int thp_available(void)
{
	char buf[128];
	/* "never" system-wide, or PR_SET_THP_DISABLE on this process (inherited
	 * across fork and exec): either way MADV_HUGEPAGE gets nothing. */
	if (os_read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf) < 0 ||
	    strstr(buf, "[never]"))
		return 0;
	return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 1;
}

void pf_init(const struct policy *p)
{
	void *m;
	int i;
	unsigned all = 0;
	pol = p;
	for (i = 0; p && i < p->nrules; i++)
		all |= p->rules[i].actions;
	worker_setup(p ? p->workers : 1);
	recycle_setup(p);
	if (all & A_HUGEPAGE) {
		pf_thp_ok = thp_available();
		if (!pf_thp_ok)
			stats_note(N_NO_THP);
	}
	if (!(all & (A_POPULATE | A_BACKGROUND)))
		return;
	/* For the tests of the fallback path on kernels that have the real thing. */
	if (getenv("PREFAULT_TEST_NO_POPULATE")) {
		pf_populate_ok = 0;
		return;
	}
	/* Probe once rather than guess from the kernel version: backports and
	 * seccomp filters both make version numbers lie. */
	m = sys_mmap(NULL, pf_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		pf_populate_ok = sys_madvise(m, pf_page, MADV_POPULATE_WRITE) == 0;
		sys_munmap(m, pf_page);
	}
}

static void begin(struct plan *pl)
{
	pl->t0 = os_now_ns();
	os_faults_thread(&pl->f0);
}

void pf_plan(const struct request *rq, int rule, struct plan *pl)
{
	pl->rule = rule;
	pl->actions = rule >= 0 ? pol->rules[rule].actions : 0;
	pl->charge = 0;
	pl->extra_flags = 0;
	pl->align_huge = 0;
	pl->recyclable = 0;
	pl->recycled_resident = (size_t)-1;
	pl->t0 = 0;
	if (rule < 0)
		return;
	pl->recyclable = (pl->actions & A_RECYCLE) && rq->call == CALL_MMAP &&
	                 (rq->mk & (MK_ANON | MK_PRIVATE)) == (MK_ANON | MK_PRIVATE) && !(rq->mk & MK_FIXED) &&
	                 !rq->hint && rq->pk != PK_NONE;
	/* Huge pages need a 2 MiB-aligned range: place the mapping ourselves
	 * when the program left the address to the kernel. */
	if ((pl->actions & A_HUGEPAGE) && rq->call == CALL_MMAP && pf_thp_ok &&
	    (rq->mk & (MK_ANON | MK_PRIVATE)) == (MK_ANON | MK_PRIVATE) && !(rq->mk & MK_FIXED) &&
	    rq->len >= HPAGE && !rq->hint)
		pl->align_huge = 1;
	if ((pl->actions & A_MAP_POPULATE) && rq->call == CALL_MMAP && !(rq->pk & PK_NONE)) {
		if (!budget_reserve(rq->len)) {
			st_add(&g_stats.rules[rule].skipped[SK_BUDGET], 1);
			stats_note(N_BUDGET);
		} else {
			pl->charge = rq->len;
			if (pl->align_huge) /* populate after placing, not the slack too */
				pl->actions |= A_POPULATE;
			else
				pl->extra_flags = MAP_POPULATE;
		}
	}
	if (pl->actions & ~A_NONE)
		begin(pl); /* MAP_POPULATE faults happen inside the real mmap */
}

void *pf_mmap_huge(mmap_fn f, size_t len, int prot, int flags, int fd, off_t off)
{
	size_t span = ((len + pf_page - 1) & ~(pf_page - 1)) + HPAGE;
	char *p = f(NULL, span, prot, flags, fd, off), *a;
	size_t head;
	if (p == MAP_FAILED)
		return f(NULL, len, prot, flags, fd, off); /* no room for slack: plain */
	a = (char *)(((uintptr_t)p + HPAGE - 1) & ~(uintptr_t)(HPAGE - 1));
	head = (size_t)(a - p);
	if (head)
		sys_munmap(p, head);
	if (HPAGE - head)
		sys_munmap(a + span - HPAGE, HPAGE - head);
	return a;
}

void pf_cancel(struct plan *pl)
{
	budget_release(pl->charge);
	pl->charge = 0;
}

/* Fallback for kernels without MADV_POPULATE_*: touch each page.  Only used
 * synchronously, before the memory is handed to the program, and with an
 * atomic add of zero, so not even a racing writer could lose a store. */
static void touch_pages(char *p, size_t len, int write)
{
	size_t off;
	for (off = 0; off < len; off += pf_page) {
		if (write)
			__atomic_fetch_add(p + off, 0, __ATOMIC_RELAXED);
		else
			(void)*(volatile char *)(p + off);
	}
}

static int populate(const struct pol_rule *r, struct rule_stats *rs, void *p, size_t len, int write,
                    uint64_t *helper_faults)
{
	int rc;
	if (!pf_populate_ok) {
		if (stats_note(N_NO_POPULATE))
			os_write_all(2, fallback_msg, sizeof fallback_msg - 1);
		touch_pages(p, len, write);
		return 0;
	}
	if (r->threads > 1) {
		rc = pool_populate((uintptr_t)p, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ, r->threads,
		                   helper_faults);
		/* The helpers' faults are ours too; the caller's own are measured by
		 * pf_apply around the whole action. */
		st_add(&g_stats.pf_minor, *helper_faults);
		st_add(&rs->faults, *helper_faults);
		return rc;
	}
	return sys_madvise(p, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

void pf_count_huge(struct rule_stats *rs, uint64_t bytes, uint64_t faults)
{
	/* h huge and s small pages populated: faults = h + s and
	 * pages = h * (HPAGE / page) + s, so h = (pages - faults) / (HPAGE / page - 1). */
	uint64_t pages = bytes / pf_page, per = HPAGE / pf_page;
	if (per > 1 && pages > faults)
		st_add(&rs->huge_bytes, (pages - faults) / (per - 1) * HPAGE);
}

void pf_apply(const struct request *rq, struct plan *pl, void *start, size_t len, const void *key)
{
	const struct pol_rule *r = &pol->rules[pl->rule];
	struct rule_stats *rs = &g_stats.rules[pl->rule];
	unsigned a = pl->actions;
	uint64_t charge = pl->charge;
	unsigned rflags = 0;
	int write = (rq->pk & PK_WRITE) && (rq->mk & MK_PRIVATE);
	int resident = 0, queued = 0;
	uint64_t helper_faults = 0;
	struct faults f1;

	if (!(a & ~(A_NONE | A_RECYCLE)) && !pl->recyclable)
		goto out;
	if (len == 0)
		goto out;
	if ((a & A_HUGEPAGE) && (rq->mk & MK_ANON))
		sys_madvise(start, len, MADV_HUGEPAGE);
	if (a & A_WILLNEED) {
		sys_madvise(start, len, MADV_WILLNEED);
		if ((rq->mk & MK_FILE) && rq->fd >= 0)
			posix_fadvise(rq->fd, rq->off, (off_t)len, POSIX_FADV_WILLNEED);
	}
	if (pl->recycled_resident != (size_t)-1 && pl->recycled_resident == len / pf_page)
		a &= ~(unsigned)(A_POPULATE | A_BACKGROUND | A_MAP_POPULATE); /* reused, already resident */
	if ((a & (A_POPULATE | A_LOCK | A_BACKGROUND)) && !charge) {
		if (!budget_reserve(len)) {
			st_add(&rs->skipped[SK_BUDGET], 1);
			stats_note(N_BUDGET);
			a &= ~(unsigned)(A_POPULATE | A_LOCK | A_BACKGROUND);
		} else {
			charge = len;
		}
	}
	if (a & A_LOCK) {
		if (mlock(start, len) == 0) {
			rflags |= RF_LOCKED;
		} else {
			st_add(&rs->skipped[SK_FAILED], 1);
			stats_note(N_MLOCK_FAILED);
		}
	}
	if ((a & A_POPULATE) && !(rflags & RF_LOCKED)) { /* mlock already populated */
		if (populate(r, rs, start, len, write, &helper_faults) == 0)
			resident = 1;
		else
			st_add(&rs->skipped[SK_FAILED], 1);
	}
	if (a & A_BACKGROUND) {
		if (pf_populate_ok &&
		    worker_enqueue((uintptr_t)start, len, pl->rule, r->chunk,
		                   write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0) {
			queued = 1;
		} else {
			st_add(&rs->skipped[SK_QUEUE], 1);
			stats_note(N_QUEUE_FULL);
		}
	}
	resident |= (rflags & RF_LOCKED) || (pl->extra_flags & MAP_POPULATE);
	if (charge && !resident && !queued) { /* nothing made resident: nothing to charge */
		budget_release(charge);
		charge = 0;
	}
	if (pl->recyclable && !key)
		rflags |= RF_RECYCLE; /* tracked even uncharged: munmap must recognise it */
	if (charge || (rflags & RF_RECYCLE)) {
		/* Remember the charge (and the lock) so that munmap or free can
		 * give them back; if there is no room, give them back now. */
		int rc = key ? blocks_add(key, (uintptr_t)start, len, pl->rule, rflags, charge)
		             : regions_add((uintptr_t)start, len, pl->rule, rflags, charge);
		if (rc < 0) {
			if (rflags & RF_LOCKED)
				munlock(start, len);
			if (queued)
				worker_cancel((uintptr_t)start, len);
			budget_release(charge);
			st_add(&rs->skipped[SK_TABLE], 1);
			stats_note(N_TABLE_FULL);
		}
	}
	if (resident)
		st_add(&rs->prefaulted_bytes, len);
	if ((rflags & RF_RECYCLE))
		regions_set_mmap((uintptr_t)start, rq->prot, rq->flags);
out:
	if (pl->t0) {
		uint64_t minor, major;
		os_faults_thread(&f1);
		minor = f1.minor - pl->f0.minor;
		major = f1.major - pl->f0.major;
		st_add(&rs->ns, os_now_ns() - pl->t0);
		st_add(&rs->faults, minor + major);
		st_add(&g_stats.pf_minor, minor);
		st_add(&g_stats.pf_major, major);
		if ((a & A_HUGEPAGE) && len >= HPAGE && !pf_thp_ok && (rq->mk & MK_ANON)) {
			st_add(&rs->small_fallbacks, 1);
		} else if (resident && (a & A_HUGEPAGE) && len >= HPAGE) {
			uint64_t before = st_get(&rs->huge_bytes);
			pf_count_huge(rs, len, minor + helper_faults);
			if (st_get(&rs->huge_bytes) == before && pf_thp_ok) {
				st_add(&rs->small_fallbacks, 1);
				stats_note(N_THP_FALLBACK);
			}
		}
	}
}

void pf_unmapped(void *addr, size_t len)
{
	worker_cancel((uintptr_t)addr, len);
	regions_forget((uintptr_t)addr, len);
}

int pf_munmap(void *addr, size_t len)
{
	struct region r;
	recycle_release_range((uintptr_t)addr, len); /* kept regions inside: the kernel would unmap them */
	if (regions_take_exact((uintptr_t)addr, len, &r)) {
		worker_cancel((uintptr_t)addr, len);
		budget_release(r.charged);
		if ((r.flags & RF_RECYCLE) && !(r.flags & RF_LOCKED) &&
		    recycle_keep((uintptr_t)addr, len, r.rule, r.prot, r.mflags))
			return 1;
		return 0;
	}
	pf_unmapped(addr, len);
	return 0;
}

void pf_reprotected(void *addr, size_t len)
{
	/* Populating for write would fail on read-only pages and mean nothing
	 * on PROT_NONE: whatever is queued there is dropped.  A region whose
	 * protection changed is no longer one we could hand out as fresh. */
	recycle_release_range((uintptr_t)addr, len);
	worker_cancel((uintptr_t)addr, len);
	regions_clear_flag((uintptr_t)addr, len, RF_RECYCLE);
}

void pf_advised(void *addr, size_t len, int advice)
{
	recycle_release_range((uintptr_t)addr, len); /* not the program's: let it see ENOMEM */
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_FREE:
	case MADV_REMOVE:
		/* The pages go: nothing queued there, and no charge for them.  The
		 * region stays recyclable (reuse zeroes what is resident). */
		worker_cancel((uintptr_t)addr, len);
		regions_uncharge((uintptr_t)addr, len);
		break;
	case MADV_NORMAL:
	case MADV_WILLNEED:
	case MADV_COLD:
	case MADV_PAGEOUT:
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
		break;
	default:
		/* Anything else (DONTFORK, WIPEONFORK, HUGEPAGE, MERGEABLE, ...)
		 * changes the mapping in a way a fresh one would not have. */
		regions_clear_flag((uintptr_t)addr, len, RF_RECYCLE);
	}
}

void pf_claim_range(void *addr, size_t len)
{
	recycle_release_range((uintptr_t)addr, len);
}

void pf_freed(void *p)
{
	struct region r;
	if (!blocks_take(p, &r))
		return;
	worker_cancel(r.start, r.end - r.start);
	if (r.flags & RF_LOCKED)
		munlock((void *)r.start, r.end - r.start);
	budget_release(r.charged);
}
