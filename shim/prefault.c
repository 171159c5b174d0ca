/* prefault.c: see prefault.h. */
#include "glue.h"
#include "prefault.h"
#include "regions.h"
#include "stats.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

size_t pf_page = 4096; /* replaced from sysconf in pf_init before any use */
int pf_populate_ok = 1;
static const struct policy *pol;

static const char fallback_msg[] =
	"prefault: this kernel lacks MADV_POPULATE_WRITE (Linux 5.14+); populating by touching pages instead\n";

void pf_init(const struct policy *p)
{
	void *m;
	int i, need = 0;
	pol = p;
	pf_page = os_page_size();
	for (i = 0; p && i < p->nrules; i++)
		need |= (p->rules[i].actions & A_POPULATE) != 0;
	if (!need)
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
	pl->t0 = 0;
	if ((pl->actions & A_MAP_POPULATE) && rq->call == CALL_MMAP && !(rq->pk & PK_NONE)) {
		if (budget_reserve(rq->len)) {
			pl->charge = rq->len;
			pl->extra_flags = MAP_POPULATE;
		} else {
			st_add(&g_stats.rules[rule].skipped[SK_BUDGET], 1);
			stats_note(N_BUDGET);
		}
	}
	if (pl->actions & ~A_NONE)
		begin(pl); /* MAP_POPULATE faults happen inside the real mmap */
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

static int populate(void *p, size_t len, int write)
{
	if (pf_populate_ok)
		return sys_madvise(p, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	if (stats_note(N_NO_POPULATE))
		os_write_all(2, fallback_msg, sizeof fallback_msg - 1);
	touch_pages(p, len, write);
	return 0;
}

void pf_apply(const struct request *rq, struct plan *pl, void *start, size_t len, const void *key)
{
	struct rule_stats *rs = &g_stats.rules[pl->rule];
	unsigned a = pl->actions;
	uint64_t charge = pl->charge;
	unsigned rflags = 0;
	int write = (rq->pk & PK_WRITE) && (rq->mk & MK_PRIVATE);
	int resident = 0;
	struct faults f1;

	if (!(a & ~A_NONE) || len == 0)
		goto out;
	if ((a & A_HUGEPAGE) && (rq->mk & MK_ANON))
		sys_madvise(start, len, MADV_HUGEPAGE);
	if (a & A_WILLNEED) {
		sys_madvise(start, len, MADV_WILLNEED);
		if ((rq->mk & MK_FILE) && rq->fd >= 0)
			posix_fadvise(rq->fd, rq->off, (off_t)len, POSIX_FADV_WILLNEED);
	}
	if ((a & (A_POPULATE | A_LOCK)) && !charge) {
		if (!budget_reserve(len)) {
			st_add(&rs->skipped[SK_BUDGET], 1);
			stats_note(N_BUDGET);
			a &= ~(unsigned)(A_POPULATE | A_LOCK);
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
		if (populate(start, len, write) == 0)
			resident = 1;
		else
			st_add(&rs->skipped[SK_FAILED], 1);
	}
	resident |= (rflags & RF_LOCKED) || (pl->extra_flags & MAP_POPULATE);
	if (charge && !resident) { /* nothing was made resident: nothing to charge */
		budget_release(charge);
		charge = 0;
	}
	if (charge) {
		/* Remember the charge (and the lock) so that munmap or free can
		 * give them back; if there is no room, give them back now. */
		int r = key ? blocks_add(key, (uintptr_t)start, len, pl->rule, rflags, charge)
		            : regions_add((uintptr_t)start, len, pl->rule, rflags, charge);
		if (r < 0) {
			if (rflags & RF_LOCKED)
				munlock(start, len);
			budget_release(charge);
			st_add(&rs->skipped[SK_TABLE], 1);
			stats_note(N_TABLE_FULL);
		}
	}
	if (resident)
		st_add(&rs->prefaulted_bytes, len);
out:
	if (pl->t0) {
		os_faults_thread(&f1);
		st_add(&rs->ns, os_now_ns() - pl->t0);
		st_add(&rs->faults, f1.minor - pl->f0.minor + f1.major - pl->f0.major);
		st_add(&g_stats.pf_minor, f1.minor - pl->f0.minor);
		st_add(&g_stats.pf_major, f1.major - pl->f0.major);
	}
}

void pf_unmapped(void *addr, size_t len)
{
	regions_forget((uintptr_t)addr, len);
}

void pf_freed(void *p)
{
	struct region r;
	if (!blocks_take(p, &r))
		return;
	if (r.flags & RF_LOCKED)
		munlock((void *)r.start, r.end - r.start);
	budget_release(r.charged);
}
