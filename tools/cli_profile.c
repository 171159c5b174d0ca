/* cli_profile.c: `prefault profile [-o FILE.json] [--suggest POLICY]
 * [--svg FILE.svg] [--folded FILE] [--period N] -- CMD [ARGS...]`.
 *
 * Runs CMD under the shim in observe mode with PREFAULT_PROFILE set, so each
 * process of the tree writes its own profile (see shim/profile.c), then
 * reads them all, merges them, and prints the heaviest mapping sites and
 * the code that takes the faults.  The exit status is CMD's.
 */
#include "cli.h"
#include "child.h"
#include "profile_run.h"
#include "fmt.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Which processes left only a snapshot, and why; and the program we ran,
 * if it was killed before its first. */
static void print_snapshots(FILE *o, const struct profiled *p)
{
	int i, root_seen = 0, sig = WIFSIGNALED(p->status) ? WTERMSIG(p->status) : 0;
	for (i = 0; i < p->nproc; i++) {
		const struct profile *q = &p->procs[i];
		int root = q->pid == (long)p->root;
		root_seen |= root;
		if (!q->snapshot)
			continue;
		if (root && sig)
			fprintf(o, "  pid %ld (%s) was killed by signal %d (%s): its profile runs up to %.1f s before its end (the "
			           "last snapshot, %.1f s after its start)\n",
			        q->pid, tty_str(q->program), sig, strsignal(sig), (double)q->snap_before_end_ns / 1e9,
			        (double)q->snap_age_ns / 1e9);
		else
			fprintf(o, "  pid %ld (%s) ended without writing its profile (killed, or it exec'd a program the shim is "
			           "not in): its profile is the last snapshot, %.1f s after its start\n",
			        q->pid, tty_str(q->program), (double)q->snap_age_ns / 1e9);
	}
	if (!root_seen && sig)
		fprintf(o, "  pid %ld, the program, was killed by signal %d (%s) before its profile's first snapshot: its own "
		           "figures are not here\n",
		        (long)p->root, sig, strsignal(sig));
}

static void print_table(FILE *o, const struct profiled *p, const char *cmd)
{
	const struct profile *m = &p->merged;
	size_t i;
	uint64_t tot = program_sampled(m) ? program_sampled(m) : 1;
	print_profile_counts(o, m, p->nproc, cmd);
	print_snapshots(o, p);
	fprintf(o, "\nMapping sites, heaviest first:\n");
	fprintf(o, "  %8s %6s %6s %6s %10s %8s %9s %-6s %-9s %s\n", "faults", "share", "maps", "unmaps", "mapped", "touched",
	        "huge", "call", "size", "site");
	for (i = 0; i < m->nsites && i < 20; i++) {
		const struct psite *s = &m->sites[i];
		char b[32], sz[32], hg[32], lab[300];
		human_size(b, sizeof b, s->bytes);
		human_size(sz, sizeof sz, s->size_min);
		human_size(hg, sizeof hg, s->huge);
		site_label(lab, sizeof lab, s);
		fprintf(o, "  %8llu %5.1f%% %6llu %6llu %10s %7.1f%% %9s %-6s %-9s %s\n", (unsigned long long)s->faults,
		        100.0 * (double)s->faults / (double)tot, (unsigned long long)s->maps, (unsigned long long)s->unmaps, b,
		        s->bytes ? 100.0 * (double)s->touched / (double)s->bytes : 0.0, hg, s->call, sz, tty_str(lab));
	}
	if (m->nsites > 20)
		fprintf(o, "  ... %zu more sites in the JSON\n", m->nsites - 20);
	if (!m->perf_ok)
		return;
	fprintf(o, "\nCode taking the faults:\n  %8s %6s  %s\n", "faults", "share", "code");
	for (i = 0; i < m->ncode && i < 12; i++)
		fprintf(o, "  %8llu %5.1f%%  %s (%s)\n", (unsigned long long)m->code[i].n, 100.0 * (double)m->code[i].n / (double)tot,
		        tty_str(m->code[i].b), tty_str(m->code[i].a));
	if (m->nother) {
		fprintf(o, "\nFaults outside the mappings the shim saw (heap, stacks, libraries, glibc's own mmaps):\n");
		for (i = 0; i < m->nother && i < 8; i++)
			fprintf(o, "  %8llu %5.1f%%  %s\n", (unsigned long long)m->other[i].n, 100.0 * (double)m->other[i].n / (double)tot,
			        tty_str(m->other[i].a));
	}
}

int cmd_profile(const struct command *self, int argc, char **argv)
{
	const char *out_json = NULL, *suggest = NULL, *svg = NULL, *folded = NULL;
	char cmd[256], period_s[16];
	int i, n, rc, tty, period = 0;
	struct profiled p;
	const struct opt opts[] = {
		OPT_S("-o", NULL, &out_json, "FILE.json"),
		OPT_S("--suggest", NULL, &suggest, "POLICY"),
		OPT_S("--svg", NULL, &svg, "FILE.svg"),
		OPT_S("--folded", NULL, &folded, "FILE"),
		OPT_I("--period", &period, "N", 1, 1000000),
		OPT_END,
	};
	if ((i = opt_parse(self, argc, argv, opts, &n)) < 0)
		return EXIT_USAGE;
	if (period) {
		snprintf(period_s, sizeof period_s, "%d", period);
		setenv("PREFAULT_PROFILE_PERIOD", period_s, 1);
	}
	/* Progress: the program owns the terminal while it runs (its output is
	 * its own, and a line redrawn under it would garble it), so on a
	 * terminal: a line before, and one with the time it took. */
	tty = isatty(2);
	if (tty)
		fprintf(stderr, "prefault profile: profiling %s (its output follows; the table when it exits)\n", tty_str(argv[i]));
	if (profile_program(argv + i, -1, -1, -1, &p) < 0) {
		if (errno)
			fprintf(stderr, "prefault profile: cannot start %s: %s\n", tty_str(argv[i]), strerror(errno));
		return errno ? 126 : EXIT_USAGE;
	}
	rc = child_exit_code(p.status);
	if (p.exec_errno) /* said by the child */
		return rc;
	if (tty)
		fprintf(stderr, "prefault profile: %s ran %.1f s; %d profile%s read\n", tty_str(argv[i]), p.wall_s, p.nproc,
		        p.nproc == 1 ? "" : "s");
	if (p.nproc == 0) {
		char why[400];
		if (WIFSIGNALED(p.status)) /* (the cause is known: not the ELF, the set-user-ID bit or the environment) */
			snprintf(why, sizeof why, "it was killed by signal %d (%s) before its profile's first snapshot (taken %d s "
			         "after its start, then every %d s while it changes)",
			         WTERMSIG(p.status), strsignal(WTERMSIG(p.status)), PROFILE_SNAP_S, PROFILE_SNAP_S);
		else
			why_no_report(argv[i], p.status, why, sizeof why);
		fprintf(stderr, "prefault profile: no profile was written: %s\n", why);
		return rc ? rc : 1;
	}
	snprintf(cmd, sizeof cmd, "%s", tty_str(argv[i]));
	print_table(stderr, &p, cmd);
	if (out_json && write_profile_json(out_json, &p.merged, p.procs, p.nproc, argv + i, rc) < 0)
		rc = rc ? rc : 1;
	if (folded && write_folded(folded, &p.merged) < 0)
		rc = rc ? rc : 1;
	if (svg && write_svg(svg, &p.merged, argv + i) < 0)
		rc = rc ? rc : 1;
	if (suggest && write_suggestion(suggest, &p.merged, argv + i) < 0)
		rc = rc ? rc : 1;
	return rc;
}
