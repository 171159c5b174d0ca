/* profile_run.c: see profile_run.h. */
#include "profile_run.h"
#include "cli.h"
#include "child.h"
#include "reports.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Add a program name to a space-separated list, once. */
static void add_name(char *list, size_t cap, const char *name)
{
	size_t n = strlen(name), len = strlen(list);
	const char *p = list;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return;
		p += n;
	}
	if (len + n + 2 > cap)
		return;
	if (len)
		list[len++] = ' ';
	memcpy(list + len, name, n + 1);
}

/* Which processes each merged site was seen in. */
static void mark_where(struct profiled *p)
{
	size_t j, k;
	int i;
	for (j = 0; j < p->merged.nsites; j++) {
		struct psite *m = &p->merged.sites[j];
		m->in_root = 0;
		m->programs[0] = '\0';
		for (i = 0; i < p->nproc; i++)
			for (k = 0; k < p->procs[i].nsites; k++) {
				if (!same_site(m, &p->procs[i].sites[k]))
					continue;
				if (p->procs[i].pid == (long)p->root)
					m->in_root = 1;
				else
					add_name(m->programs, sizeof m->programs, p->procs[i].program);
			}
	}
}

/* In the child: the shim in observe mode, no report, profiles into dir.
 * (Our own environment stays as it was: tune runs the program without the
 * shim afterwards.) */
static void set_profile_env(void *arg)
{
	const char *spec = arg;
	unsetenv("PREFAULT_POLICY");
	setenv("PREFAULT_REPORT", "none", 1);
	setenv("PREFAULT_PROFILE", spec, 1);
	if (set_preload(find_shim()) < 0)
		_exit(126);
}

int profile_program(char **cmd, int fd_in, int fd_out, int fd_err, struct profiled *p)
{
	struct child_spec cs;
	struct child_result cr;
	struct timespec end;
	char *dir, *spec;
	int i;
	seccomp_vouch(); /* (in the tool, not in the profiled child: compare.c) */
	memset(p, 0, sizeof *p);
	if (!find_shim()) {
		fprintf(stderr, "prefault: cannot find libprefault.so (set PREFAULT_SHIM)\n");
		errno = 0;
		return -1;
	}
	dir = scratch_dir("profile", 0);
	if (!dir) {
		fprintf(stderr, "prefault: cannot make a temporary directory: %s\n", strerror(errno));
		errno = 0;
		return -1;
	}
	spec = scratch_template(dir, "%p.prof");
	if (!spec) {
		scratch_clean(dir, 1);
		free(dir);
		errno = ENOMEM;
		return -1;
	}
	memset(&cs, 0, sizeof cs);
	cs.argv = cmd;
	cs.fd_in = fd_in;
	cs.fd_out = fd_out;
	cs.fd_err = fd_err;
	cs.in_child = set_profile_env;
	cs.arg = spec;
	cs.collect = dir; /* (profiles of processes that cannot write there) */
	if (child_run(&cs, &cr) < 0) {
		int e = errno;
		scratch_clean(dir, 1);
		free(dir);
		free(spec);
		errno = e;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &end); /* (the shim's snapshots are timed on this clock) */
	p->root = cr.pid;
	p->status = cr.status;
	p->exec_errno = cr.exec_errno;
	p->wall_s = cr.wall_s;
	if (!cr.exec_errno && load_profiles(dir, &p->procs, &p->nproc) < 0)
		p->nproc = 0;
	for (i = 0; i < p->nproc; i++) {
		struct profile *q = &p->procs[i];
		uint64_t t = (uint64_t)end.tv_sec * 1000000000u + (uint64_t)end.tv_nsec;
		if (q->snapshot && q->pid == (long)p->root && t >= q->snap_ns)
			q->snap_before_end_ns = (int64_t)(t - q->snap_ns);
	}
	scratch_clean(dir, 1);
	free(dir);
	free(spec);
	merge_profiles(p->procs, p->nproc, &p->merged);
	if (p->merged.nsites) /* (qsort of a NULL, empty array is undefined) */
		qsort(p->merged.sites, p->merged.nsites, sizeof p->merged.sites[0], cmp_site);
	if (p->merged.ncode)
		qsort(p->merged.code, p->merged.ncode, sizeof p->merged.code[0], cmp_count);
	if (p->merged.nother)
		qsort(p->merged.other, p->merged.nother, sizeof p->merged.other[0], cmp_count);
	if (p->merged.nstacks)
		qsort(p->merged.stacks, p->merged.nstacks, sizeof p->merged.stacks[0], cmp_count);
	mark_where(p);
	return 0;
}
