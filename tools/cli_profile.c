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
#include "profile_data.h"
#include "fmt.h"
#include "reports.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_site(const void *a, const void *b)
{
	const struct psite *x = a, *y = b;
	if (x->faults != y->faults)
		return x->faults < y->faults ? 1 : -1;
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static int cmp_count(const void *a, const void *b)
{
	const struct pcount *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}


static void print_table(FILE *o, const struct profile *m, int nproc, const char *cmd)
{
	size_t i;
	uint64_t tot = m->sampled ? m->sampled : 1;
	fprintf(o, "\nprefault profile: %s [%d process%s], %llu faults in all (minor %llu, major %llu)\n", cmd, nproc,
	        nproc == 1 ? "" : "es", (unsigned long long)(m->minor + m->major), (unsigned long long)m->minor,
	        (unsigned long long)m->major);
	if (m->perf_ok)
		fprintf(o, "  %llu faults sampled (every %llu%s), %llu lost; %llu in the shim's own tables (not shown)\n",
		        (unsigned long long)m->sampled, (unsigned long long)m->period, m->period == 1 ? " fault" : " faults",
		        (unsigned long long)m->lost, (unsigned long long)m->in_shim);
	else
		fprintf(o, "  fault sampling unavailable: %s\n  (mapping-level figures below; faults per site and code are unknown)\n",
		        m->perf_why);
	fprintf(o, "\nMapping sites, heaviest first:\n");
	fprintf(o, "  %8s %6s %6s %6s %10s %8s %-6s %-9s %s\n", "faults", "share", "maps", "unmaps", "mapped", "touched",
	        "call", "size", "site");
	for (i = 0; i < m->nsites && i < 20; i++) {
		const struct psite *s = &m->sites[i];
		char b[32], sz[32], lab[300];
		human_size(b, sizeof b, s->bytes);
		human_size(sz, sizeof sz, s->size_min);
		site_label(lab, sizeof lab, s);
		fprintf(o, "  %8llu %5.1f%% %6llu %6llu %10s %7.1f%% %-6s %-9s %s\n", (unsigned long long)s->faults,
		        100.0 * (double)s->faults / (double)tot, (unsigned long long)s->maps, (unsigned long long)s->unmaps, b,
		        s->bytes ? 100.0 * (double)s->touched / (double)s->bytes : 0.0, s->call, sz, lab);
	}
	if (m->nsites > 20)
		fprintf(o, "  ... %zu more sites in the JSON\n", m->nsites - 20);
	if (!m->perf_ok)
		return;
	fprintf(o, "\nCode taking the faults:\n  %8s %6s  %s\n", "faults", "share", "code");
	for (i = 0; i < m->ncode && i < 12; i++)
		fprintf(o, "  %8llu %5.1f%%  %s (%s)\n", (unsigned long long)m->code[i].n, 100.0 * (double)m->code[i].n / (double)tot,
		        m->code[i].b, m->code[i].a);
	if (m->nother) {
		fprintf(o, "\nFaults outside the mappings the shim saw (heap, stacks, libraries, glibc's own mmaps):\n");
		for (i = 0; i < m->nother && i < 8; i++)
			fprintf(o, "  %8llu %5.1f%%  %s\n", (unsigned long long)m->other[i].n, 100.0 * (double)m->other[i].n / (double)tot,
			        m->other[i].a);
	}
}

int cmd_profile(int argc, char **argv)
{
	const char *out_json = NULL, *suggest = NULL, *svg = NULL, *folded = NULL, *period = NULL;
	char *dir, spec[4200], cmd[256];
	int i, nproc = 0, rc;
	struct child_spec cs;
	struct child_result cr;
	struct profile merged, *procs = NULL;
	for (i = 1; i < argc; i++) {
		const char **dst = NULL;
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-o"))
			dst = &out_json;
		else if (!strcmp(argv[i], "--suggest"))
			dst = &suggest;
		else if (!strcmp(argv[i], "--svg"))
			dst = &svg;
		else if (!strcmp(argv[i], "--folded"))
			dst = &folded;
		else if (!strcmp(argv[i], "--period"))
			dst = &period;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "prefault profile: unknown option %s\n", argv[i]);
			goto usage;
		} else
			break;
		if (++i == argc)
			goto usage;
		*dst = argv[i];
	}
	if (i >= argc) {
		fprintf(stderr, "prefault profile: no command given\n");
		goto usage;
	}
	if (period) {
		char *end;
		long v = strtol(period, &end, 10);
		if (*end || v < 1 || v > 1000000) {
			fprintf(stderr, "prefault profile: --period takes a whole number from 1 to 1000000\n");
			return EXIT_USAGE;
		}
		setenv("PREFAULT_PROFILE_PERIOD", period, 1);
	}
	dir = scratch_dir("profile");
	if (!dir) {
		fprintf(stderr, "prefault profile: cannot make a temporary directory: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	if (prepare_env(NULL, "none") < 0) {
		scratch_clean(dir, 1);
		free(dir);
		return EXIT_USAGE;
	}
	snprintf(spec, sizeof spec, "%s/%%p.prof", dir);
	setenv("PREFAULT_PROFILE", spec, 1);
	memset(&cs, 0, sizeof cs);
	cs.argv = argv + i;
	cs.fd_in = cs.fd_out = cs.fd_err = -1;
	if (child_run(&cs, &cr) < 0) {
		fprintf(stderr, "prefault profile: cannot start %s: %s\n", argv[i], strerror(errno));
		scratch_clean(dir, 1);
		free(dir);
		return 126;
	}
	rc = child_exit_code(cr.status);
	if (cr.exec_errno) { /* said by the child */
		scratch_clean(dir, 1);
		free(dir);
		return rc;
	}
	if (load_profiles(dir, &procs, &nproc) < 0 || nproc == 0) {
		fprintf(stderr, "prefault profile: no profile was written (a static binary, or a set-user-ID program?)\n");
		scratch_clean(dir, 1);
		free(dir);
		return rc ? rc : 1;
	}
	scratch_clean(dir, 1);
	free(dir);
	merge_profiles(procs, nproc, &merged);
	if (merged.nsites) /* (qsort of a NULL, empty array is undefined) */
		qsort(merged.sites, merged.nsites, sizeof merged.sites[0], cmp_site);
	if (merged.ncode)
		qsort(merged.code, merged.ncode, sizeof merged.code[0], cmp_count);
	if (merged.nother)
		qsort(merged.other, merged.nother, sizeof merged.other[0], cmp_count);
	if (merged.nstacks)
		qsort(merged.stacks, merged.nstacks, sizeof merged.stacks[0], cmp_count);
	snprintf(cmd, sizeof cmd, "%s", argv[i]);
	print_table(stderr, &merged, nproc, cmd);
	if (out_json && write_profile_json(out_json, &merged, procs, nproc, argv + i, rc) < 0)
		rc = rc ? rc : 1;
	if (folded && write_folded(folded, &merged) < 0)
		rc = rc ? rc : 1;
	if (svg && write_svg(svg, &merged, argv + i) < 0)
		rc = rc ? rc : 1;
	if (suggest && write_suggestion(suggest, &merged, argv + i) < 0)
		rc = rc ? rc : 1;
	return rc;
usage:
	fprintf(stderr, "usage: prefault profile [-o FILE.json] [--suggest POLICY] [--svg FILE.svg] [--folded FILE] "
	                "[--period N] -- CMD [ARGS...]\n");
	return EXIT_USAGE;
}
