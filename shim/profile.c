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
#include <string.h>
#include <unistd.h>

#define OUT_BUF (4 << 10) /* formatting buffer for the profile file, flushed when full */

char path_tmpl[1024];

void profile_init(const char *tmpl)
{
	size_t n = strlen(tmpl);
	if (n >= sizeof path_tmpl)
		return;
	tables_init();
	if (!sites)
		return;
	sample_init();
	memcpy(path_tmpl, tmpl, n + 1);
	my_pid = sys_getpid();
	profiling = 1;
}

void profile_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk)
{
	tables_map(start, len, call, ret, mk, pk);
	profile_tick();
}

void profile_unmap(uintptr_t start, size_t len) { tables_unmap(start, len); }
void profile_block(const void *p, size_t len, const void *ret) { tables_block(p, len, ret); }
void profile_free(const void *p) { tables_free(p); }

void profile_atfork(int who)
{
	if (!profiling)
		return;
	if (who == FORK_PREPARE) {
		spin_lock(&drain_lock);
		spin_lock(&live_lock);
		spin_lock(&site_lock);
	} else if (who == FORK_PARENT) {
		spin_unlock(&site_lock);
		spin_unlock(&live_lock);
		spin_unlock(&drain_lock);
	} else {
		my_pid = sys_getpid();
		tables_fork_child();
		sample_fork_child();
	}
}

static void site_line(struct sbuf *sb, const struct site *s)
{
	sb_str(sb, "site\t");
	if (s->ret)
		profile_symbol(sb, s->ret, 1, '\t');
	else
		sb_str(sb, "?\t?");
	sb_str(sb, s->call == CALL_MALLOC ? "\tmalloc\t" : "\tmmap\t");
	sb_str(sb, (s->mk & MK_FILE) ? ((s->mk & MK_ANON) ? "mixed" : "file") : "anon");
	sb_str(sb, (s->mk & MK_SHARED) ? ((s->mk & MK_PRIVATE) ? ",mixed\t" : ",shared\t") : ",private\t");
	if (s->pk & PK_READ) sb_chr(sb, 'r');
	if (s->pk & PK_WRITE) sb_chr(sb, 'w');
	if (s->pk & PK_EXEC) sb_chr(sb, 'x');
	if (!(s->pk & (PK_READ | PK_WRITE | PK_EXEC))) sb_str(sb, "none");
	profile_tab_u64(sb, 1ull << s->klass);
	profile_tab_u64(sb, s->size_min);
	profile_tab_u64(sb, s->size_max);
	profile_tab_u64(sb, s->maps);
	profile_tab_u64(sb, s->unmaps);
	profile_tab_u64(sb, s->bytes);
	profile_tab_u64(sb, s->touched);
	profile_tab_u64(sb, s->faults);
	profile_tab_u64(sb, s->ranges_faulted);
	profile_tab_u64(sb, s->ranges_early);
	profile_tab_u64(sb, s->faults_early);
	profile_tab_u64(sb, s->delay_us);
	sb_chr(sb, '\n');
}

void profile_finish(const char *program, const char *exe, pid_t ppid, const struct faults *f)
{
	static char path[4200], buf[OUT_BUF];
	struct sbuf sb, pth;
	int fd, i;
	if (!profiling || sys_getpid() != my_pid)
		return;
	/* The reader must not count while the tables are written out: hold the
	 * drain lock throughout.  Every event is drained and closed first, so
	 * a program that used up its descriptors still gets its profile. */
	spin_lock(&drain_lock);
	sample_drain_locked();
	sample_close_all();
	tables_touched_at_exit();
	sb_init(&pth, path, sizeof path, -1);
	sb_template(&pth, path_tmpl, (uint64_t)my_pid, program);
	sb_cstr(&pth);
	fd = pth.trunc ? -1 : os_open_report(path);
	if (fd < 0) {
		spin_unlock(&drain_lock);
		return;
	}
	sb_init(&sb, buf, sizeof buf, -1);
	sb_bind(&sb, fd, &glue_io);
	sb_str(&sb, "prefault-profile\t2\nprocess\t");
	sb_u64(&sb, (uint64_t)my_pid);
	profile_tab_u64(&sb, (uint64_t)ppid);
	sb_chr(&sb, '\t');
	profile_tab_name(&sb, program);
	sb_chr(&sb, '\t');
	profile_tab_name(&sb, exe);
	sb_str(&sb, "\nfaults\t");
	sb_u64(&sb, f->minor);
	profile_tab_u64(&sb, f->major);
	sb_chr(&sb, '\n');
	sample_write(&sb);
	for (i = 0; i < SITES; i++)
		if (sites[i].maps)
			site_line(&sb, &sites[i]);
	sb_str(&sb, "end\n");
	sb_flush(&sb);
	close(fd);
	spin_unlock(&drain_lock);
}
