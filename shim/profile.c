/* profile.c: the profile in a process: its start, what the rest of the
 * shim tells it (maps, unmaps, blocks), its fork, and at the end the
 * tab-separated file `prefault profile` merges, tabulates, charts and turns
 * into a policy.  Where perf_event_open is refused the file says so, with
 * the reason, and the mapping-level figures are still there.  Above
 * profile_sample.c (fault events) and profile_tables.c (sites, ranges). */
#include "profile_int.h"
#include "fork.h"
#include "glue.h"
#include "os.h"
#include "sbuf.h"
#include "settings.h"
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4 /* Linux 5.7 */
#endif

#define OUT_BUF (4 << 10) /* formatting buffer for the profile file, flushed when full */

void profile_init(const struct settings *set)
{
	const char *tmpl = set->profile;
	size_t n = strlen(tmpl);
	if (n >= sizeof P.path_tmpl)
		return;
	tables_init();
	if (!P.sites)
		return;
	sample_init(set->profile_period, set->test_no_perf != NULL);
	memcpy(P.path_tmpl, tmpl, n + 1);
	P.my.pid = sys_getpid();
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

void profile_atfork(int who)
{
	if (!profiling)
		return;
	if (who == FORK_PREPARE) {
		spin_lock(&P.drain_lock);
		spin_lock(&P.live_lock);
		spin_lock(&P.site_lock);
	} else if (who == FORK_PARENT) {
		spin_unlock(&P.site_lock);
		spin_unlock(&P.live_lock);
		spin_unlock(&P.drain_lock);
	} else {
		/* The child is a process of its own, with the parent's mappings.
		 * It keeps the settings, the live ranges and the sites (their
		 * sizes); it has none of the parent's events, its reader thread
		 * or its locks' holders; it counts from zero. */
		sample_fork_child_events();
		memset(&P.my, 0, sizeof P.my);
		P.my.pid = sys_getpid();
		tables_fork_child();
		sample_fork_child();
		spin_init(&P.site_lock);
		spin_init(&P.live_lock);
		spin_init(&P.drain_lock);
		/* Its window opens with its event (its fault counts began at zero
		 * at fork, and the resets above are the shim's, before it). */
		profile_thread_start();
	}
}

static void site_line(struct sbuf *sb, const struct site *s)
{
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
#define FIELD(m, key, merge) profile_tab_u64(sb, s->m);
	PROFILE_SITE_COUNTS(FIELD)
#undef FIELD
	sb_chr(sb, '\n');
}

void profile_finish(const char *program, const char *exe, pid_t ppid, int may_wait)
{
	static char path[4200], buf[OUT_BUF];
	struct profile_counts c;
	struct sbuf sb, pth;
	unsigned i;
	int fd, drain, live;
	if (!profiling || sys_getpid() != P.my.pid)
		return;
	/* The reader must not count while the tables are written out: hold the
	 * drain lock throughout.  The window closes first (every event
	 * stopped, the process's faults read), so the drain's own faults on
	 * the tables are nobody's; then every event is drained and closed, so
	 * a program that used up its descriptors still gets its profile.
	 * Where a lock cannot be had (the code this thread's signal handler
	 * interrupted holds it), the ranges are not walked and the rings not
	 * drained: a shorter profile, never an exit that waits forever. */
	drain = spin_lock_bounded(&P.drain_lock, may_wait);
	live = spin_lock_bounded(&P.live_lock, may_wait);
	if (live) /* (free: no frame of this thread holds it, so waiting for it is safe) */
		spin_unlock(&P.live_lock);
	memset(&c, 0, sizeof c);
	c.exit_locked = !(drain && live);
	sample_stop_all(&c);
	if (drain && live)
		sample_drain_locked();
	sample_close_all(drain && live);
	if (live)
		tables_touched_at_exit();
	sb_init(&pth, path, sizeof path, -1);
	sb_template(&pth, P.path_tmpl, (uint64_t)P.my.pid, program);
	sb_cstr(&pth);
	fd = pth.trunc ? -1 : os_open_report(path);
	if (fd < 0) {
		if (drain)
			spin_unlock(&P.drain_lock);
		return;
	}
	sb_init(&sb, buf, sizeof buf, -1);
	sb_bind(&sb, fd, &glue_io);
	sb_str(&sb, PROFILE_MAGIC "\t");
	sb_u64(&sb, PROFILE_VERSION);
	sb_str(&sb, "\nprocess\t");
	sb_u64(&sb, (uint64_t)P.my.pid);
	profile_tab_u64(&sb, (uint64_t)ppid);
	sb_chr(&sb, '\t');
	profile_tab_name(&sb, program);
	sb_chr(&sb, '\t');
	profile_tab_name(&sb, exe);
	sb_chr(&sb, '\n');
	sample_write(&sb, &c);
	for (i = 0; i < tables_nsites(); i++)
		if (tables_site(i)->maps)
			site_line(&sb, tables_site(i));
	c.merged_sites = P.my.sites_merged;
	c.untracked_ranges = P.my.live_dropped;
#define COUNT(m, key, merge)                                                                                           \
	sb_str(&sb, "count\t" #m);                                                                                     \
	profile_tab_u64(&sb, c.m);                                                                                     \
	sb_chr(&sb, '\n');
	PROFILE_COUNTS(COUNT)
#undef COUNT
	sb_str(&sb, "end\n");
	sb_flush(&sb);
	sys_close(fd);
	if (drain)
		spin_unlock(&P.drain_lock);
}
