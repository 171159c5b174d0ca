/* profile_int.h: what the profile's three files share (not for other
 * modules: they use profile.h).
 *
 * Locks, in order: drain_lock (the reader holds it while it attributes
 * samples) before live_lock (the live ranges) before site_lock (the site
 * table).  The fork handler takes them in that order too.
 * Memory for the tables comes from mmap at start (and the live ranges from
 * a slab that grows), never from malloc.  A fixed table that fills counts
 * what it dropped, and the profile says so.
 */
#ifndef PREFAULT_PROFILE_INT_H
#define PREFAULT_PROFILE_INT_H
#include "profile.h"
#include "policy.h"
#include "lock.h"
#include "ranges.h"
#include "profile_format.h"
#include <stdint.h>

#define SITES 4096
#define GRAVE 4096
#define EARLY_NS (5ull * 1000 * 1000) /* "soon after the map": 5 ms */

struct site {
	uintptr_t ret;
	uint32_t call, klass;
	uint32_t mk, pk; /* MK_* and PK_* seen, OR-ed */
	PROFILE_SITE_COUNTS(PROFILE_X_MEMBER) /* profile_format.h: the file's counters */
};

/* A live mapping or block, or one recently gone (late samples still land). */
struct live {
	struct rnode node; /* first */
	uint32_t site;
	uint32_t faulted;  /* a sample has landed in it */
	uint64_t t_map;    /* os_now_ns() at the map */
};

extern struct site *sites;
extern spin_t site_lock, live_lock, drain_lock;
extern struct rtree live_maps, live_blocks;
extern struct live grave[GRAVE];
extern unsigned grave_next;
extern uint64_t sites_merged, live_dropped;
extern char path_tmpl[1024];
extern uint64_t period;
extern pid_t my_pid;

/* The process's counters (profile_format.h), filled at exit. */
struct profile_counts {
	PROFILE_COUNTS(PROFILE_X_MEMBER)
};

/* profile_tables.c */
void tables_init(void);
void tables_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk);
void tables_unmap(uintptr_t start, size_t len);
void tables_block(const void *p, size_t len, const void *ret);
void tables_free(const void *p);
void tables_fork_child(void);
/* Charge a sampled fault at addr, taken at time t (CLOCK_MONOTONIC ns), to
 * its site; -1 if no site's range holds it.  live_lock is taken inside. */
int tables_fault(uintptr_t addr, uint64_t t);
/* At exit: count what is still mapped as touched. */
void tables_touched_at_exit(void);
/* Resident bytes of [s, e), the partial pages at the ends counted only for
 * the part inside. */
size_t resident_bytes(uintptr_t s, uintptr_t e);
/* The sites that were used, in the order they were first seen. */
unsigned tables_nsites(void);
const struct site *tables_site(unsigned i);

/* profile_sample.c */
/* per: PREFAULT_PROFILE_PERIOD (or NULL); no_perf: take the refused path. */
void sample_init(const char *per, int no_perf);
void sample_fork_child(void);
/* The end of the profile's window: every event stopped (faults from now on
 * are the shim's exit work, counted nowhere); fills the window's counts. */
void sample_stop_all(struct profile_counts *c);
/* Drain every ring, with drain_lock held; then close every event (exit),
 * draining what is left first if drain (which takes live_lock). */
void sample_drain_locked(void);
void sample_close_all(int drain);
struct sbuf;
/* The perf, object, code, stack and other records; the sampling counts into c. */
void sample_write(struct sbuf *sb, struct profile_counts *c);
/* The file's fields: a tab and a number, or an address; a name with no
 * tab or newline. */
void profile_tab_u64(struct sbuf *sb, uint64_t v);
void profile_tab_hex(struct sbuf *sb, uint64_t v);
void profile_tab_name(struct sbuf *sb, const char *s);
#endif
