/* profile.c: the profile in a process: its start, what the rest of the
 * shim tells it (maps, unmaps, blocks), its fork, the reader thread's
 * rounds, and the tab-separated file `prefault profile` merges, tabulates,
 * charts and turns into a policy.  Where perf_event_open is refused the
 * file says so, with the reason, and the mapping-level figures are still
 * there.  Above profile_sample.c (fault events) and profile_tables.c
 * (sites, ranges).
 *
 * The file is written at exit, and before that, so that a process killed
 * by a signal (a server stopped with SIGTERM, or SIGKILL) still leaves its
 * profile: the reader thread writes a snapshot a second after the start
 * and then at most once a second while something changes, each one marked
 * as such with its time.  Every file goes to a temporary beside the final
 * name and is renamed over it, so the name always holds a whole file, and
 * the exit's replaces the last snapshot.  Nothing of the program's is
 * touched for it: no signal handler, no change of disposition, no call on
 * the program's paths; the writing is the reader's, and its faults are the
 * shim's own. */
#include "profile_int.h"
#include "fork.h"
#include "glue.h"
#include "os.h"
#include "sbuf.h"
#include "settings.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


#define OUT_BUF (4 << 10)               /* formatting buffer for the profile file, flushed when full */
#define READ_NS (10ull * 1000 * 1000)   /* the reader drains the rings this often */
#define SNAP_NS (PROFILE_SNAP_S * 1000ull * 1000 * 1000) /* and writes a snapshot at most this often */
#define SNAP_COST 10                    /* ... or, after a dear one, 10 times as long as it took */

void profile_init(const struct settings *set, const char *program, const char *exe, const pid_t *ppid)
{
	const char *tmpl = set->profile;
	size_t n = strlen(tmpl);
	if (n >= sizeof P.path_tmpl)
		return;
	tables_init();
	if (!P.sites)
		return;
	sample_init(set->profile_period, set->test_no_perf != NULL);
	P.no_reader = set->test_no_reader != NULL;
	P.locked_signal = set->test_locked_signal ? atoi(set->test_locked_signal) : 0;
	memcpy(P.path_tmpl, tmpl, n + 1);
	P.program = program;
	P.exe = exe;
	P.ppid = ppid;
	P.my.pid = sys_getpid();
	P.my.t0 = os_now_ns();
	P.my.snap_next = P.my.t0 + SNAP_NS;
	profiling = 1;
}

void profile_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk)
{
	tables_map(start, len, call, ret, mk, pk);
	profile_tick();
}

void profile_unmap(uintptr_t start, size_t len) { tables_unmap(start, len); }

void profile_remap(uintptr_t old, size_t oldlen, uintptr_t dst, size_t newlen, int flags)
{
	tables_remap(old, oldlen, dst, newlen, (flags & MREMAP_DONTUNMAP) != 0);
}
void profile_block(const void *p, size_t len, const void *ret) { tables_block(p, len, ret); }
void profile_free(const void *p) { tables_free(p); }

/* The reader's lock, first of all fork's locks (init.c): the reader holds
 * it across a snapshot's file I/O, and a fork that took it last would
 * hold every wrapper's lock meanwhile, so that every other thread's
 * mmap, munmap and free waited for the disk.  The child's reset is
 * profile_atfork's (its reader thread starts there). */
void profile_atfork_drain(int who)
{
	if (!profiling)
		return;
	if (who == FORK_PREPARE)
		slow_lock(&P.drain_lock);
	else if (who == FORK_PARENT)
		slow_unlock(&P.drain_lock);
}

void profile_atfork(int who)
{
	if (!profiling)
		return;
	if (who == FORK_PREPARE) {
		spin_lock(&P.live_lock);
		spin_lock(&P.site_lock);
		P.fork_t0 = os_now_ns(); /* (the child's start; no clock read in it) */
	} else if (who == FORK_PARENT) {
		spin_unlock(&P.site_lock);
		spin_unlock(&P.live_lock);
	} else {
		/* The child is a process of its own, with the parent's mappings.
		 * It keeps the settings, the live ranges and the sites (their
		 * sizes); it has none of the parent's events, its reader thread
		 * (which may have been writing a snapshot) or its locks' holders;
		 * it counts from zero, and writes its own file (%p). */
		sample_fork_child_events();
		memset(&P.my, 0, sizeof P.my);
		P.my.pid = sys_getpid();
		P.my.t0 = P.fork_t0;
		P.my.snap_next = P.my.t0 + SNAP_NS;
		tables_fork_child();
		sample_fork_child();
		spin_init(&P.write_lock);
		spin_init(&P.site_lock);
		spin_init(&P.live_lock);
		spin_init(&P.drain_lock);
		/* Its window opens with its event (its fault counts began at zero
		 * at fork, and the resets above are the shim's, before it). */
		profile_thread_start();
	}
}

/* ---- the file ---- */

static void site_line(struct sbuf *sb, const struct site *s, int live)
{
	struct site w = *s;
	sb_str(sb, "site");
	profile_tab_hex(sb, s->ret);
	sb_str(sb, s->call == CALL_MALLOC ? "\tmalloc\t" : "\tmmap\t");
	sb_str(sb, (s->mk & MK_FILE) ? ((s->mk & MK_ANON) ? "mixed" : "file") : "anon");
	sb_str(sb, (s->mk & MK_SHARED) ? ((s->mk & MK_PRIVATE) ? ",mixed\t" : ",shared\t") : ",private\t");
	if (s->pk & PK_READ) sb_chr(sb, 'r');
	if (s->pk & PK_WRITE) sb_chr(sb, 'w');
	if (s->pk & PK_EXEC) sb_chr(sb, 'x');
	if (!(s->pk & (PK_READ | PK_WRITE | PK_EXEC))) sb_str(sb, "none");
	profile_tab_u64(sb, 1ull << s->klass);
	if (live) { /* what is still mapped counts as touched, in the file only */
		w.touched += s->live_touched;
		w.huge = s->live_huge;
	}
#define FIELD(m, key, merge) profile_tab_u64(sb, w.m);
	PROFILE_SITE_COUNTS(FIELD)
#undef FIELD
	sb_chr(sb, '\n');
}

/* Write the file (write_lock held, and drain_lock, or the exit's best
 * try): to "PATH.tmp" (the exit's) or "PATH.snap" (a snapshot's, taken at
 * snap_ns), renamed over PATH once whole.  live: the live ranges were
 * measured (tables_live_touched).  A snapshot that finds the exit under
 * way is dropped: the exit's file must be the last.  -1 if the file
 * cannot be there (its path, or what is there, is not ours to replace). */
static int write_file(struct profile_counts *c, uint64_t snap_ns, int live)
{
	static char path[4200], tmp[4210], buf[OUT_BUF];
	static struct path_walk walk;
	struct sbuf sb, pth;
	unsigned i;
	int fd;
	sb_init(&pth, path, sizeof path, -1);
	sb_template(&pth, P.path_tmpl, (uint64_t)P.my.pid, P.program);
	sb_cstr(&pth);
	sb_init(&sb, tmp, sizeof tmp, -1);
	sb_str(&sb, path);
	sb_str(&sb, snap_ns ? ".snap" : ".tmp");
	sb_cstr(&sb);
	fd = pth.trunc || sb.trunc ? -1 : sample_fd_high(os_open_report(tmp, &walk));
	if (fd < 0)
		return -1;
	sb_init(&sb, buf, sizeof buf, -1);
	sb_bind(&sb, fd, &glue_io);
	sb_str(&sb, PROFILE_MAGIC "\t");
	sb_u64(&sb, PROFILE_VERSION);
	sb_str(&sb, "\nprocess\t");
	sb_u64(&sb, (uint64_t)P.my.pid);
	profile_tab_u64(&sb, (uint64_t)*P.ppid);
	sb_chr(&sb, '\t');
	profile_tab_name(&sb, P.program);
	sb_chr(&sb, '\t');
	profile_tab_name(&sb, P.exe);
	sb_chr(&sb, '\n');
	if (snap_ns) {
		sb_str(&sb, "snapshot");
		profile_tab_u64(&sb, snap_ns);
		profile_tab_u64(&sb, snap_ns - P.my.t0);
		sb_chr(&sb, '\n');
	}
	sample_write(&sb, c);
	for (i = 0; i < tables_nsites(); i++) {
		struct site s;
		tables_site_copy(i, &s, snap_ns != 0); /* (a snapshot's reader may wait) */
		if (s.maps)
			site_line(&sb, &s, live);
	}
	c->merged_sites = P.my.sites_merged;
	c->untracked_ranges = P.my.live_dropped;
#define COUNT(m, key, merge)                                                                                           \
	sb_str(&sb, "count\t" #m);                                                                                     \
	profile_tab_u64(&sb, c->m);                                                                                    \
	sb_chr(&sb, '\n');
	PROFILE_COUNTS(COUNT)
#undef COUNT
	sb_str(&sb, "end\n");
	sb_flush(&sb);
	sys_close(fd);
	if (sb.failed || (snap_ns && __atomic_load_n(&P.my.final, __ATOMIC_ACQUIRE))) {
		sys_unlink(tmp); /* (a short file never replaces a whole one) */
		return 0;
	}
	return os_replace_report(tmp, path, &walk);
}

/* A snapshot, from the reader thread: the file as it would be if the
 * process ended now, its figures taken without changing any (the events
 * stay open, the live ranges are measured into live_touched, not added).
 * The exit sets P.my.final first: a snapshot gives up at its next step,
 * and one being written is never renamed over the exit's file. */
static void snapshot(void)
{
	struct profile_counts c;
	uint64_t t0 = os_now_ns(), t1;
	int refused = 0;
	if (!slow_lock_bounded(&P.write_lock, 0))
		return; /* (the exit is writing) */
	if (!__atomic_load_n(&P.my.final, __ATOMIC_ACQUIRE) && tables_live_touched(&P.my.final) == 0) {
		slow_lock(&P.drain_lock);
		sample_drain_locked(1);
		sample_reader_count();
		/* Each side sets its flag, then reads the other's: either this
		 * snapshot sees the exit and stops, or the exit sees it writing
		 * (which waits for nothing) and waits for it; never both writing
		 * the file's buffers at once. */
		__atomic_store_n(&P.my.writing, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&P.my.final, __ATOMIC_SEQ_CST)) {
			memset(&c, 0, sizeof c);
			sample_counts(&c);
			refused = write_file(&c, t0, 1) < 0; /* (everything before t0 is in it) */
			sample_reader_count(); /* (the writing's faults: the shim's) */
		}
		__atomic_store_n(&P.my.writing, 0, __ATOMIC_RELEASE);
		slow_unlock(&P.drain_lock);
	}
	slow_unlock(&P.write_lock);
	t1 = os_now_ns();
	P.my.snap_next = t1 + ((t1 - t0) * SNAP_COST > SNAP_NS ? (t1 - t0) * SNAP_COST : SNAP_NS);
	if (refused) /* (no use writing it again each second: the exit tries once more) */
		P.my.snap_next = UINT64_MAX;
}

/* Something new since the last snapshot: a map, unmap, block or free, or a
 * sample (drain_lock held). */
static uint64_t changes(void)
{
	return __atomic_load_n(&P.my.changes, __ATOMIC_RELAXED) + P.my.samples + P.my.lost;
}

static void *reader_main(void *arg)
{
	pid_t mine = (pid_t)(uintptr_t)arg;
	slow_lock(&P.drain_lock);
	sample_reader_count(); /* its start: the new stack, its TLS */
	slow_unlock(&P.drain_lock);
	for (;;) {
		uint32_t seen = __atomic_load_n(&P.my.reader_wake, __ATOMIC_ACQUIRE);
		uint64_t now, ch;
		/* Woken early only to leave; without events, nothing to drain. */
		glue_wait(&P.my.reader_wake, seen, P.my.perf_ok == 1 ? READ_NS : SNAP_NS);
		if (glue_leaving() || sys_getpid() != mine)
			break;
		slow_lock(&P.drain_lock);
		sample_drain_locked(0);
		sample_reader_count();
		ch = changes();
		slow_unlock(&P.drain_lock);
		now = os_now_ns();
		if (now >= P.my.snap_next && ch != P.my.snap_seen) {
			P.my.snap_seen = ch;
			snapshot();
		}
	}
	__atomic_store_n(&P.my.reader_running, 0, __ATOMIC_RELEASE);
	return NULL;
}

void profile_tick(void)
{
	/* The reader thread starts on first need, in each process (where
	 * perf_event_open is refused too: its snapshots are all a killed
	 * process leaves), but never before a thread has tried its event:
	 * the window the counts add up in opens with the first event, and the
	 * reader's faults and its start's, counted as the shim's, must fall in
	 * it.  (A program mapping before our constructor ran, as ASan's runtime
	 * does, would otherwise start it first.) */
	if (__atomic_load_n(&P.my.reader_running, __ATOMIC_ACQUIRE) || __atomic_load_n(&P.my.final, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&P.my.event_tried, __ATOMIC_ACQUIRE) || P.no_reader)
		return;
	if (__atomic_exchange_n(&P.my.reader_running, 1, __ATOMIC_ACQUIRE))
		return;
	sample_start_reader(reader_main, &P.my.reader_wake);
}

void profile_finish(int may_wait)
{
	struct profile_counts c;
	int wr, drain, live;
	if (!profiling || sys_getpid() != P.my.pid)
		return;
	/* A snapshot under way gives up at its next step (and never renames
	 * its file over this one); its lock is then free within a moment.  The
	 * reader must not count while the tables are written out: hold the
	 * drain lock throughout.  The window closes first (every event
	 * stopped, the process's faults read), so the drain's own faults on
	 * the tables are nobody's; then every event is drained and closed, so
	 * a program that used up its descriptors still gets its profile.
	 * Where a lock cannot be had (the code this thread's signal handler
	 * interrupted holds it, or a snapshot waits for such a lock), the
	 * ranges are not walked and the rings not drained: a shorter profile,
	 * never an exit that waits forever.  (A snapshot that holds write_lock
	 * without writing will not write: it sees P.my.final first.) */
	__atomic_store_n(&P.my.final, 1, __ATOMIC_SEQ_CST);
	wr = slow_lock_bounded(&P.write_lock, may_wait);
	if (!wr && __atomic_load_n(&P.my.writing, __ATOMIC_SEQ_CST)) {
		/* A snapshot is being written (it waits for nothing): let it end.
		 * Never write beside it: the file's buffers are one. */
		wr = slow_lock_bounded(&P.write_lock, 1);
		if (!wr)
			return; /* (its file is not renamed: the last snapshot stays) */
	}
	drain = slow_lock_bounded(&P.drain_lock, may_wait);
	live = spin_lock_bounded(&P.live_lock, may_wait);
	if (live) /* (free: no frame of this thread holds it, so waiting for it is safe) */
		spin_unlock(&P.live_lock);
	memset(&c, 0, sizeof c);
	c.exit_locked = !(wr && drain && live);
	sample_stop_all(&c);
	if (drain && live)
		sample_drain_locked(0);
	sample_close_all(drain && live);
	live = wr && live && tables_live_touched(NULL) == 0;
	(void)write_file(&c, 0, live);
	if (drain)
		slow_unlock(&P.drain_lock);
	if (wr)
		slow_unlock(&P.write_lock);
}
