/* profile_int.h: what the profile's three files share (not for other
 * modules: they use profile.h).
 *
 * Locks, in order: write_lock (whoever writes the file: a snapshot of the
 * reader thread's, or the exit) before drain_lock (the reader holds it
 * while it attributes samples) before live_lock (the live ranges) before
 * site_lock (the site table).  The fork handler takes the last three in
 * that order too (a child remakes write_lock: it has no reader).
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
#include "os.h"
#include <pthread.h>
#include <stdint.h>

#define SITES 4096
#define GRAVE 4096
#define EARLY_NS (5ull * 1000 * 1000) /* "soon after the map": 5 ms */

struct site {
	uintptr_t ret;
	uint32_t call, klass;
	uint32_t mk, pk; /* MK_* and PK_* seen, OR-ed */
	PROFILE_SITE_COUNTS(PROFILE_X_MEMBER) /* profile_format.h: the file's counters */
	/* The resident bytes of its live ranges, as the file's writer last
	 * measured them (write_lock held): added to touched in the file, never
	 * to the counter, so that a file written again counts them once. */
	uint64_t live_touched;
	uint64_t live_huge; /* ... and their AnonHugePages (smaps), the same way */
	/* (tables_site_copy copies a site field by field: a new one goes there too) */
};

/* A live mapping or block, or one recently gone (late samples still land). */
struct live {
	struct rnode node; /* first */
	uint32_t site;
	uint32_t faulted;  /* a sample has landed in it */
	uint64_t t_map;    /* os_now_ns() at the map */
};

struct ipc;
struct stk;
struct oth;

/* The profile's state, all of it in one place but for the large tables
 * (their pages are touched only when used).  Defined in profile_tables.c,
 * the lowest of the three files.  profile_atfork (profile.c) says in one
 * place what a fork child keeps and what starts afresh. */
struct profile_state {
	/* Set at start; a fork child keeps them. */
	uint64_t period;   /* one sample every period faults */
	int no_perf;       /* the refused path, for tests */
	int no_reader;     /* no reader thread (a test's late reader: full rings) */
	int locked_signal; /* a test's signal, raised once with live_lock held */
	int fd_cap;        /* the most events we allow ourselves */
	int thr_key_ok;
	pthread_key_t thr_key;     /* a thread's event slot, freed at its exit */
	uintptr_t shim_lo, shim_hi; /* our own code: its faults are not the program's */
	/* Tables, mapped at start (profile_tables.c: sites and used;
	 * profile_sample.c: the rest).  Their contents are inherited; what a
	 * fork child counts anew is zeroed there. */
	struct site *sites;
	/* The used site slots in the order they were taken: the fork child
	 * and the file visit these, not the whole table (each page of it they
	 * read would be a fault of the shim's own). */
	uint16_t *used;
	struct ipc *ips;
	struct stk *stacks;
	struct oth *others;
	/* The live ranges: the child's mappings are the parent's, so it keeps
	 * them, and the sites (their sizes; their counts start afresh). */
	struct rtree live_maps, live_blocks;
	struct slab live_slab;
	unsigned nsites;
	unsigned grave_next; /* the ring of ranges just gone (profile_tables.c) */
	int nmm;             /* /proc/self/maps as last read (profile_sample.c) */
	/* In lock order (see above); made anew in a fork child. */
	spin_t write_lock, drain_lock, live_lock, site_lock;
	/* This process's own: all zero in a fork child. */
	struct profile_proc {
		pid_t pid;
		uint64_t sites_merged, live_dropped;
		/* samples and where they went (drain_lock held); lost: the
		 * faults that samples the rings dropped (or the exit could not
		 * read) stood for, of the events closed; lost_live: of those
		 * still open, as the last snapshot's drain counted them */
		uint64_t samples, lost, lost_live, unattributed, in_shim;
		uint64_t dropped_ips, dropped_stacks, dropped_others;
		uint64_t unsampled; /* threads without an event (fd share, table, or refused) */
		int nfds;           /* our open events */
		int thr_hi;         /* one past the highest event slot used */
		int perf_ok;        /* 1: an event opened; else perf_errno says why not */
		int perf_errno;
		int window_open;        /* the first event of this process is open */
		int event_tried;        /* a thread here has tried to open its event */
		struct faults win0;     /* the process's faults then */
		uint64_t own_measured;  /* the shim's own faults outside the samples */
		uint64_t reader_faults; /* the reader thread's (RUSAGE_THREAD), drain_lock held */
		int reader_running;
		uint32_t reader_wake;
		int finished; /* the file is written: no more draining */
		uint64_t t0;  /* os_now_ns() at its start (or fork) */
		uint64_t changes;     /* maps, unmaps, blocks, frees (live_lock held) */
		int final;            /* the exit is writing the file: snapshots stop */
		int writing;          /* a snapshot is in write_file (see snapshot()) */
		uint64_t snap_next;   /* no snapshot before (os_now_ns) */
		uint64_t snap_seen;   /* changes + samples + lost at the last one */
	} my;
	const char *program, *exe; /* init.c's, for the file (and %e) */
	const pid_t *ppid;
	uint64_t fork_t0;     /* os_now_ns() at the last fork (prepare) */
	char path_tmpl[1024]; /* PREFAULT_PROFILE (%p %e %%) */
};
extern struct profile_state P;

/* The process's counters (profile_format.h), filled at exit. */
struct profile_counts {
	PROFILE_COUNTS(PROFILE_X_MEMBER)
};

/* profile_tables.c */
void tables_init(void);
void tables_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk);
void tables_unmap(uintptr_t start, size_t len);
/* mremap moved or resized [old, old + oldlen) to [dst, dst + newlen): the
 * ranges there keep their sites (the mapping's origin: its call, kind and
 * protection), their map times and first faults.  Growth is mapped bytes
 * of the last range's site.  A shrunk tail is gone unmeasured (the call
 * unmapped its pages before we could count them; the usual reason to
 * shrink, a tail never touched, is counted right).  keep_old
 * (MREMAP_DONTUNMAP): the old ranges stay, and the new ones are mapped
 * bytes of the same sites (so too oldlen 0: a second mapping of a shared
 * one).  What the shim never saw mapped gets no site:
 * its faults are outside the sites, where they were. */
void tables_remap(uintptr_t old, size_t oldlen, uintptr_t dst, size_t newlen, int keep_old);
void tables_block(const void *p, size_t len, const void *ret);
void tables_free(const void *p);
/* A fork child: the sites' counts start afresh. */
void tables_fork_child(void);
/* Charge a sampled fault at addr, taken at time t (CLOCK_MONOTONIC ns), to
 * its site; -1 if no site's range holds it.  live_lock is taken inside. */
int tables_fault(uintptr_t addr, uint64_t t);
/* Measure what is still mapped, into each site's live_touched, and its
 * huge pages (smaps) into live_huge (write_lock
 * held): 0, or -1 if *stop was set on the way (stop NULL: never stops). */
int tables_live_touched(const int *stop);
/* Resident bytes of [s, e), the partial pages at the ends counted only for
 * the part inside. */
size_t resident_bytes(uintptr_t s, uintptr_t e);
/* The sites that were used, in the order they were first seen. */
unsigned tables_nsites(void);
/* A copy of site i, its counters read under the site lock (which mappers
 * hold while they count): may_wait 0 tries it once, and copies unlocked if
 * it is held (at exit, the holder may be the frame a signal interrupted). */
void tables_site_copy(unsigned i, struct site *out, int may_wait);

/* profile_sample.c */
/* per: PREFAULT_PROFILE_PERIOD (or NULL); no_perf: take the refused path. */
void sample_init(const char *per, int no_perf);
/* A fork child: the parent's events are closed (before P.my is
 * zeroed: the slots are found through it) ... */
void sample_fork_child_events(void);
/* ... and the sample tables start afresh. */
void sample_fork_child(void);
/* The window's counts so far: the process's faults, the shim's measured. */
void sample_counts(struct profile_counts *c);
/* The end of the profile's window: every event stopped (faults from now on
 * are the shim's exit work, counted nowhere); fills the window's counts. */
void sample_stop_all(struct profile_counts *c);
/* Start the reader thread, fn(pid), sleeping on word (P.my.reader_running
 * set by the caller; cleared here if it could not start). */
void sample_start_reader(void *(*fn)(void *), uint32_t *word);
/* Move fd (if >= 0) above the numbers programs use for their own files
 * (the shim's files are open beside a running program). */
int sample_fd_high(int fd);
/* The reader thread's own faults so far, into P.my.reader_faults
 * (drain_lock held): all the shim's. */
void sample_reader_count(void);
/* Drain every ring, with drain_lock held (count_lost: and count what the
 * open events lost so far, for a snapshot: two system calls an event);
 * then close every event (exit), draining what is left first if drain
 * (which takes live_lock). */
void sample_drain_locked(int count_lost);
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
