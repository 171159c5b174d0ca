/* profile_tables.c: mapping sites and the ranges they mapped.
 *
 * Each mmap (and each malloc block of PROFILE_MALLOC_MIN or more) is
 * charged to its site: the return address of the call, with the call and
 * the size class.  The site counts maps, unmaps and bytes, and at unmap
 * (and at exit) how much of the range was resident (mincore): the bytes the
 * program really touched.  A sampled fault is charged to the site whose
 * range holds its address (recently unmapped ranges are remembered, since
 * samples are read a little late), together with how long after the map it
 * came: the timing that tells a buffer touched at once from one filled
 * later.
 */
#include "profile_int.h"
#include "glue.h"
#include "match.h"
#include "os.h"
#include "stats.h"
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

int profiling;
struct profile_state P = {
	.period = 1,
	.live_slab = { sizeof(struct live), NULL, NULL, NULL, 0, NULL, 1 }, /* (want: the first spare) */
};
/* Ranges recently gone: samples are read a little late. */
static struct live *grave; /* GRAVE of them, mapped by tables_init */

void tables_init(void)
{
	void *p = sys_mmap(NULL, SITES * (sizeof *P.sites + sizeof *P.used), PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	P.sites = p == MAP_FAILED ? NULL : p;
	P.used = P.sites ? (uint16_t *)(P.sites + SITES) : NULL;
	grave = glue_table(GRAVE * sizeof *grave, 0); /* (none: nothing remembered gone) */
	if (!grave)
		stats_note(N_NO_TABLE);
}

unsigned tables_nsites(void) { return P.nsites; }
/* The site lock keeps a site's identity and sizes whole; its counters are
 * added to without it (unmaps and touched bytes at munmap, faults by the
 * reader), so they are read as the atomics they are. */
void tables_site_copy(unsigned i, struct site *out, int may_wait)
{
	const struct site *s = &P.sites[P.used[i]];
	int got = spin_lock_bounded(&P.site_lock, may_wait);
	out->ret = s->ret;
	out->call = s->call;
	out->klass = s->klass;
	out->mk = s->mk;
	out->pk = s->pk;
#define SITE_LOAD(m, key, merge) out->m = __atomic_load_n(&s->m, __ATOMIC_RELAXED);
	PROFILE_SITE_COUNTS(SITE_LOAD)
#undef SITE_LOAD
	out->live_touched = s->live_touched;
	out->live_huge = s->live_huge;
	if (got)
		spin_unlock(&P.site_lock);
}

static uint32_t site_of(uintptr_t ret, unsigned call, uint64_t len, unsigned mk, unsigned pk)
{
	uint32_t k = (uint32_t)size_class(len), i;
	uint64_t h = (ret * 0x9e3779b97f4a7c15ull) ^ (call * 31 + k);
	spin_lock(&P.site_lock);
	for (i = (uint32_t)(h % SITES);; i = (i + 1) % SITES) {
		struct site *s = &P.sites[i];
		if (s->maps == 0 && s->ret == 0) {
			if (P.nsites >= SITES * 3 / 4) { /* full: the last slot collects the rest */
				i = SITES - 1;
				P.my.sites_merged++;
				if (!P.sites[i].maps && !P.sites[i].ret)
					P.used[P.nsites++] = (uint16_t)i;
				break;
			}
			s->ret = ret;
			s->call = call;
			s->klass = k;
			s->size_min = len;
			P.used[P.nsites++] = (uint16_t)i;
			break;
		}
		if (s->ret == ret && s->call == call && s->klass == k)
			break;
	}
	if (len < P.sites[i].size_min)
		P.sites[i].size_min = len;
	if (len > P.sites[i].size_max)
		P.sites[i].size_max = len;
	P.sites[i].maps++;
	P.sites[i].bytes += len;
	P.sites[i].mk |= mk;
	P.sites[i].pk |= pk;
	spin_unlock(&P.site_lock);
	return i;
}

size_t resident_bytes(uintptr_t s, uintptr_t e)
{
	size_t n = os_resident_pages(s, e, page_size) * page_size;
	return n < e - s ? n : e - s;
}

/* One more change for the reader's next snapshot (live_lock held; the
 * reader reads it without). */
static void changed(void) { __atomic_store_n(&P.my.changes, P.my.changes + 1, __ATOMIC_RELAXED); }

/* A new live range [s, e) of site, mapped now; NULL if the slab is out of
 * memory (the range is then not tracked, and the profile says so). */
static struct live *live_insert(struct rtree *t, uintptr_t s, uintptr_t e, uint32_t site)
{
	struct live *l = slab_get(&P.live_slab);
	if (!l) {
		P.my.live_dropped++;
		return NULL;
	}
	l->node.start = s;
	l->node.end = e;
	l->site = site;
	l->faulted = 0;
	l->t_map = os_now_ns();
	rt_insert(t, &l->node);
	return l;
}

/* [s, e) of the range `from` (its site, map time and first fault). */
static void live_copy(struct rtree *t, uintptr_t s, uintptr_t e, const struct live *from)
{
	struct live *l = live_insert(t, s, e, from->site);
	if (l) {
		l->faulted = from->faulted;
		l->t_map = from->t_map;
	}
}

/* How a range leaves the live table: */
enum gone {
	GONE_UNMAP, /* the program unmaps it now: its pages are still there to count */
	GONE_OVER,  /* mapped over, or moved away: what is there now is another
	             * mapping's, so nothing is counted */
};

/* A range unmapped, its touched bytes still to count (count_touched). */
struct piece {
	uintptr_t s, e;
	uint32_t site;
};
#define PIECES 16

/* Remove what overlaps [s, e) from t, remembering the ranges for late
 * samples.  GONE_UNMAP: unmaps counted, and the pieces whose touched bytes
 * are to be counted go to out (*nout of them), for the caller to count
 * with the lock let go (count_touched: mincore is a system call, and every
 * mmap and munmap of the program waits for this lock); at most PIECES,
 * then 1 is returned with more to remove.  live_lock held. */
static int live_remove(struct rtree *t, uintptr_t s, uintptr_t e, enum gone how, struct piece *out, unsigned *nout)
{
	struct rnode *n = rt_first(t, s);
	while (n && n->start < e) {
		struct live *l = (struct live *)n;
		uintptr_t os = n->start > s ? n->start : s, oe = n->end < e ? n->end : e;
		struct site *st = &P.sites[l->site];
		struct rnode *next = rt_next(t, n);
		if (how == GONE_UNMAP) {
			if (*nout == PIECES)
				return 1;
			out[*nout].s = os;
			out[*nout].e = oe;
			out[(*nout)++].site = l->site;
			__atomic_fetch_add(&st->unmaps, 1, __ATOMIC_RELAXED);
		}
		if (grave) {
			grave[P.grave_next % GRAVE] = *l;
			grave[P.grave_next % GRAVE].node.start = os;
			grave[P.grave_next % GRAVE].node.end = oe;
			P.grave_next++;
		}
		if (os == n->start && oe == n->end) {
			rt_remove(t, n);
			slab_put(&P.live_slab, l);
		} else if (os == n->start) {
			n->start = oe;
		} else {
			uintptr_t end = n->end;
			n->end = os;
			if (oe < end) /* a hole: the back is a range of the same site */
				live_copy(t, oe, end, l);
		}
		n = next;
	}
	return 0;
}

/* The touched bytes of the pieces live_remove took out, with no lock held
 * (their pages are still there: the program unmaps or frees them after). */
static void count_touched(const struct piece *pc, unsigned n)
{
	unsigned i;
	for (i = 0; i < n; i++)
		__atomic_fetch_add(&P.sites[pc[i].site].touched, resident_bytes(pc[i].s, pc[i].e), __ATOMIC_RELAXED);
}

void tables_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk)
{
	uint32_t s = site_of((uintptr_t)ret, call, len, mk, pk);
	slab_refill(&P.live_slab, &P.live_lock); /* (ranges.h: never under the lock) */
	spin_lock(&P.live_lock);
	live_remove(&P.live_maps, start, start + len, GONE_OVER, NULL, NULL); /* MAP_FIXED over old ones */
	live_insert(&P.live_maps, start, start + len, s);
	changed();
	spin_unlock(&P.live_lock);
}

void tables_unmap(uintptr_t start, size_t len)
{
	struct piece pc[PIECES];
	unsigned n;
	int more;
	do {
		n = 0;
		slab_refill(&P.live_slab, &P.live_lock); /* (ranges.h: never under the lock) */
		spin_lock(&P.live_lock);
		more = live_remove(&P.live_maps, start, start + len, GONE_UNMAP, pc, &n);
		changed();
		if (P.locked_signal) { /* (a test's: a handler that exits here finds the lock held) */
			int sig = P.locked_signal;
			P.locked_signal = 0;
			raise(sig);
		}
		spin_unlock(&P.live_lock);
		count_touched(pc, n);
	} while (more);
}

#define MOVES 16 /* live ranges one mremap carries (one mapping: rarely more than 1) */

void tables_remap(uintptr_t old, size_t oldlen, uintptr_t dst, size_t newlen, int keep_old)
{
	struct live moved[MOVES];
	struct rnode *n;
	uintptr_t oe = old + oldlen, ne = dst + newlen;
	unsigned k = 0, i;
	if (!oldlen) { /* a second mapping of a shared one, which stays */
		oe = old + newlen;
		keep_old = 1;
	}
	slab_refill(&P.live_slab, &P.live_lock); /* (ranges.h: never under the lock) */
	spin_lock(&P.live_lock);
	for (n = rt_first(&P.live_maps, old); n && n->start < oe; n = rt_next(&P.live_maps, n)) {
		if (k == MOVES) {
			P.my.live_dropped++;
			continue;
		}
		moved[k] = *(struct live *)n;
		if (moved[k].node.start < old)
			moved[k].node.start = old;
		if (moved[k].node.end > oe)
			moved[k].node.end = oe;
		k++;
	}
	if (!keep_old)
		live_remove(&P.live_maps, old, oe, GONE_OVER, NULL, NULL);
	live_remove(&P.live_maps, dst, ne, GONE_OVER, NULL, NULL); /* MREMAP_FIXED over old ones */
	spin_lock(&P.site_lock);
	for (i = 0; i < k; i++) {
		uintptr_t s = moved[i].node.start - old + dst, e = moved[i].node.end - old + dst, len0;
		if (e > ne || (i == k - 1 && moved[i].node.end == oe))
			e = ne; /* shrunk, or grown at the end */
		if (s >= e)
			continue;
		/* Mapped bytes: all of a copy, the growth of a move. */
		len0 = moved[i].node.end - moved[i].node.start;
		if (keep_old)
			P.sites[moved[i].site].bytes += e - s;
		else if (e - s > len0)
			P.sites[moved[i].site].bytes += (e - s) - len0;
		live_copy(&P.live_maps, s, e, &moved[i]);
	}
	spin_unlock(&P.site_lock);
	changed();
	spin_unlock(&P.live_lock);
}

void tables_block(const void *p, size_t len, const void *ret)
{
	uint32_t s;
	if (len < PROFILE_MALLOC_MIN)
		return;
	s = site_of((uintptr_t)ret, CALL_MALLOC, len, MK_ANON | MK_PRIVATE, PK_READ | PK_WRITE);
	slab_refill(&P.live_slab, &P.live_lock); /* (ranges.h: never under the lock) */
	spin_lock(&P.live_lock);
	live_insert(&P.live_blocks, (uintptr_t)p, (uintptr_t)p + len, s);
	changed();
	spin_unlock(&P.live_lock);
}

void tables_free(const void *p)
{
	struct rnode *n;
	struct piece pc[PIECES];
	unsigned k = 0;
	if (!__atomic_load_n(&P.live_blocks.n, __ATOMIC_RELAXED))
		return;
	spin_lock(&P.live_lock);
	n = rt_find(&P.live_blocks, (uintptr_t)p);
	if (n) {
		(void)live_remove(&P.live_blocks, n->start, n->end, GONE_UNMAP, pc, &k); /* (one block: one piece) */
		changed();
	}
	spin_unlock(&P.live_lock);
	count_touched(pc, k);
}

/* Was l there at time t (0: unknown)?  A sample read late may be of an
 * earlier mapping at the same address, now gone (unmapped, moved away). */
static int there_at(const struct live *l, uint64_t t) { return !t || l->t_map <= t; }

/* The range that held addr at time t: a live block, a live mapping, or one
 * just gone. */
static struct live *holder(uintptr_t addr, uint64_t t)
{
	struct rnode *n = rt_first(&P.live_blocks, addr);
	unsigned g;
	if (n && n->start <= addr && there_at((struct live *)n, t))
		return (struct live *)n;
	n = rt_first(&P.live_maps, addr);
	if (n && n->start <= addr && there_at((struct live *)n, t))
		return (struct live *)n;
	for (g = 0; g < GRAVE && g < P.grave_next; g++) { /* newest first */
		struct live *l = &grave[(P.grave_next - 1 - g) % GRAVE];
		if (addr >= l->node.start && addr < l->node.end && there_at(l, t))
			return l;
	}
	return NULL;
}

int tables_fault(uintptr_t addr, uint64_t t)
{
	struct live *l;
	int s = -1;
	spin_lock(&P.live_lock);
	l = holder(addr, t);
	if (l) {
		struct site *st = &P.sites[l->site];
		uint64_t delay = t > l->t_map ? t - l->t_map : 0;
		s = (int)l->site;
		__atomic_fetch_add(&st->faults, P.period, __ATOMIC_RELAXED);
		if (t && delay < EARLY_NS)
			__atomic_fetch_add(&st->faults_early, P.period, __ATOMIC_RELAXED);
		if (t && !l->faulted) {
			l->faulted = 1;
			__atomic_fetch_add(&st->ranges_faulted, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&st->delay_us, delay / 1000, __ATOMIC_RELAXED);
			if (delay < EARLY_NS)
				__atomic_fetch_add(&st->ranges_early, 1, __ATOMIC_RELAXED);
		}
	}
	spin_unlock(&P.live_lock);
	return s;
}

/* live_lock, or -1 once *stop is set (NULL: wait as long as it takes). */
static int live_lock_or_stop(const int *stop)
{
	unsigned n;
	if (!stop) {
		spin_lock(&P.live_lock);
		return 0;
	}
	for (n = 0; !spin_lock_bounded(&P.live_lock, 0); n++) { /* (one try) */
		if (__atomic_load_n(stop, __ATOMIC_ACQUIRE))
			return -1;
		if (n > 64)
			sys_sched_yield();
	}
	return 0;
}

/* Add the resident bytes of t's ranges to their sites' live_touched.  The
 * lock is held for a lookup at a time, never across mincore: a program's
 * mmap or free waits for one range's lookup, not the walk.  A range that
 * changed while it was measured (unmapped: its unmap counted it; moved,
 * mapped over) is left out. */
static int walk(struct rtree *t, const int *stop)
{
	struct rnode *n;
	uintptr_t s = 0, e = 0;
	uint32_t site = 0;
	int have;
	if (live_lock_or_stop(stop) < 0)
		return -1;
	n = rt_first(t, 0);
	for (;;) {
		size_t r;
		have = n != NULL;
		if (have) {
			s = n->start;
			e = n->end;
			site = ((struct live *)n)->site;
		}
		spin_unlock(&P.live_lock);
		if (!have)
			return 0;
		r = resident_bytes(s, e);
		if (live_lock_or_stop(stop) < 0)
			return -1;
		n = rt_first(t, s);
		if (n && n->start == s && n->end == e && ((struct live *)n)->site == site)
			P.sites[site].live_touched += r;
		n = rt_first(t, e);
	}
}

/* A mapping of smaps with huge pages: its share to each live range in it,
 * in proportion to the part of it the range covers.  The lock is taken per
 * mapping, never across the file's reads. */
struct huge_walk {
	const int *stop;
	int stopped;
};
static void huge_of(void *arg, const struct os_vma *v)
{
	struct huge_walk *h = arg;
	struct rnode *n;
	if (h->stopped || !v->anon_huge || v->end <= v->start)
		return;
	if (live_lock_or_stop(h->stop) < 0) {
		h->stopped = 1;
		return;
	}
	for (n = rt_first(&P.live_maps, v->start); n && n->start < v->end; n = rt_next(&P.live_maps, n)) {
		uintptr_t lo = n->start > v->start ? n->start : v->start, hi = n->end < v->end ? n->end : v->end;
		P.sites[((struct live *)n)->site].live_huge +=
			(uint64_t)((double)v->anon_huge * (double)(hi - lo) / (double)(v->end - v->start));
	}
	spin_unlock(&P.live_lock);
}

int tables_live_touched(const int *stop)
{
	struct huge_walk h = { stop, 0 };
	unsigned i;
	for (i = 0; i < P.nsites; i++) {
		P.sites[P.used[i]].live_touched = 0;
		P.sites[P.used[i]].live_huge = 0;
	}
	if (walk(&P.live_maps, stop) != 0 || walk(&P.live_blocks, stop) != 0)
		return -1;
	(void)os_smaps_walk(huge_of, &h); /* (unreadable: no huge pages said) */
	return h.stopped ? -1 : 0;
}

void tables_fork_child(void)
{
	unsigned i;
	/* Counts start afresh (the sizes seen stay); the live ranges are the
	 * child's too. */
	for (i = 0; i < P.nsites; i++) {
		struct site *s = &P.sites[P.used[i]];
#define ZERO(m, key, merge)                                                                                            \
	if ((merge) == FK_SUM)                                                                                    \
		s->m = 0;
		PROFILE_SITE_COUNTS(ZERO)
#undef ZERO
	}
}
