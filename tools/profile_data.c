/* profile_data.c: reading the shim's per-process profile files (tab
 * separated, see shim/profile.c) and merging a process tree into one view. */
#include "profile_data.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	if (!p) {
		perror("prefault");
		exit(1);
	}
	return p;
}

static char *dup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d) {
		perror("prefault");
		exit(1);
	}
	return d;
}

static int split(char *line, char **f, int max)
{
	int n = 0;
	char *nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	while (n < max) {
		f[n++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

static uint64_t u(const char *s) { return strtoull(s, NULL, 10); }

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

static int load_one(const char *path, struct profile *p)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *fl[24];
	size_t cap = 0, csites = 0, ccode = 0, cstacks = 0, cother = 0;
	int ok = 0;
	if (!f)
		return -1;
	memset(p, 0, sizeof *p);
	p->period = 1;
	while (getline(&line, &cap, f) > 0) {
		int n = split(line, fl, 24);
		if (!strcmp(fl[0], "process") && n >= 5) {
			p->pid = atol(fl[1]);
			p->ppid = atol(fl[2]);
			copy(p->program, sizeof p->program, fl[3]);
			copy(p->exe, sizeof p->exe, fl[4]);
		} else if (!strcmp(fl[0], "perf") && n >= 3) {
			p->perf_ok = !strcmp(fl[1], "ok");
			copy(p->perf_why, sizeof p->perf_why, fl[2]);
		} else if (!strcmp(fl[0], "period") && n >= 2) {
			p->period = u(fl[1]);
		} else if (!strcmp(fl[0], "samples") && n >= 5) {
			p->sampled = u(fl[1]);
			p->lost = u(fl[2]);
			p->unattributed = u(fl[3]);
			p->in_shim = u(fl[4]);
		} else if (!strcmp(fl[0], "faults") && n >= 3) {
			p->minor = u(fl[1]);
			p->major = u(fl[2]);
		} else if (!strcmp(fl[0], "site") && n >= 14) {
			struct psite *s;
			p->sites = grow(p->sites, &csites, p->nsites, sizeof *p->sites);
			s = &p->sites[p->nsites++];
			copy(s->caller, sizeof s->caller, fl[1]);
			copy(s->symbol, sizeof s->symbol, fl[2]);
			copy(s->call, sizeof s->call, fl[3]);
			copy(s->kind, sizeof s->kind, fl[4]);
			copy(s->prot, sizeof s->prot, fl[5]);
			s->size_class = u(fl[6]);
			s->size_min = u(fl[7]);
			s->size_max = u(fl[8]);
			s->maps = u(fl[9]);
			s->unmaps = u(fl[10]);
			s->bytes = u(fl[11]);
			s->touched = u(fl[12]);
			s->faults = u(fl[13]);
			if (n >= 18) {
				s->ranges_faulted = u(fl[14]);
				s->ranges_early = u(fl[15]);
				s->faults_early = u(fl[16]);
				s->delay_us = u(fl[17]);
			}
		} else if (!strcmp(fl[0], "limits")) {
			int k;
			for (k = 1; k + 1 < n; k += 2) {
				uint64_t v = u(fl[k + 1]);
				if (!strcmp(fl[k], "unsampled_threads")) p->unsampled_threads = v;
				else if (!strcmp(fl[k], "dropped_code")) p->dropped_code = v;
				else if (!strcmp(fl[k], "dropped_stacks")) p->dropped_stacks = v;
				else if (!strcmp(fl[k], "dropped_other")) p->dropped_other = v;
				else if (!strcmp(fl[k], "merged_sites")) p->merged_sites = v;
				else if (!strcmp(fl[k], "untracked_ranges")) p->untracked_ranges = v;
			}
		} else if (!strcmp(fl[0], "code") && n >= 4) {
			p->code = grow(p->code, &ccode, p->ncode, sizeof *p->code);
			p->code[p->ncode].a = dup(fl[1]);
			p->code[p->ncode].b = dup(fl[2]);
			p->code[p->ncode++].n = u(fl[3]);
		} else if (!strcmp(fl[0], "stack") && n >= 3) {
			p->stacks = grow(p->stacks, &cstacks, p->nstacks, sizeof *p->stacks);
			p->stacks[p->nstacks].a = dup(fl[2]);
			p->stacks[p->nstacks].b = NULL;
			p->stacks[p->nstacks++].n = u(fl[1]);
		} else if (!strcmp(fl[0], "other") && n >= 3) {
			p->other = grow(p->other, &cother, p->nother, sizeof *p->other);
			p->other[p->nother].a = dup(fl[1]);
			p->other[p->nother].b = NULL;
			p->other[p->nother++].n = u(fl[2]);
		} else if (!strcmp(fl[0], "end")) {
			ok = 1;
		}
	}
	free(line);
	fclose(f);
	return ok ? 0 : -1; /* a process killed mid-write leaves no "end" */
}

int load_profiles(const char *dir, struct profile **out, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0, cnt = 0;
	struct profile *v = NULL;
	char path[4200];
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".prof"))
			continue;
		v = grow(v, &cap, cnt, sizeof *v);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (load_one(path, &v[cnt]) == 0)
			cnt++;
	}
	closedir(d);
	*out = v;
	*n = (int)cnt;
	return 0;
}

/* Add (a, b, n) to a count table, merging equal keys. */
static void add_count(struct pcount **t, size_t *n, size_t *cap, const char *a, const char *b, uint64_t cnt)
{
	size_t i;
	for (i = 0; i < *n; i++) {
		if (!strcmp((*t)[i].a, a) && (!b || !strcmp((*t)[i].b, b))) {
			(*t)[i].n += cnt;
			return;
		}
	}
	*t = grow(*t, cap, *n, sizeof **t);
	(*t)[*n].a = dup(a);
	(*t)[*n].b = b ? dup(b) : NULL;
	(*t)[(*n)++].n = cnt;
}

int same_site(const struct psite *a, const struct psite *b)
{
	return !strcmp(a->caller, b->caller) && !strcmp(a->symbol, b->symbol) && !strcmp(a->call, b->call) &&
	       a->size_class == b->size_class && !strcmp(a->kind, b->kind);
}

void merge_profiles(const struct profile *p, int n, struct profile *m)
{
	size_t csites = 0, ccode = 0, cstacks = 0, cother = 0, k, j;
	int i;
	memset(m, 0, sizeof *m);
	m->period = n ? p[0].period : 1;
	m->perf_ok = 0;
	for (i = 0; i < n; i++) {
		m->minor += p[i].minor;
		m->major += p[i].major;
		m->sampled += p[i].sampled;
		m->lost += p[i].lost;
		m->unattributed += p[i].unattributed;
		m->in_shim += p[i].in_shim;
		m->unsampled_threads += p[i].unsampled_threads;
		m->dropped_code += p[i].dropped_code;
		m->dropped_stacks += p[i].dropped_stacks;
		m->dropped_other += p[i].dropped_other;
		m->merged_sites += p[i].merged_sites;
		m->untracked_ranges += p[i].untracked_ranges;
		if (p[i].perf_ok)
			m->perf_ok = 1;
		else if (!m->perf_why[0])
			copy(m->perf_why, sizeof m->perf_why, p[i].perf_why);
		for (k = 0; k < p[i].nsites; k++) {
			const struct psite *s = &p[i].sites[k];
			for (j = 0; j < m->nsites; j++)
				if (same_site(&m->sites[j], s))
					break;
			if (j == m->nsites) {
				m->sites = grow(m->sites, &csites, m->nsites, sizeof *m->sites);
				m->sites[m->nsites] = *s;
				m->sites[m->nsites].maps = m->sites[m->nsites].unmaps = m->sites[m->nsites].bytes = 0;
				m->sites[m->nsites].touched = m->sites[m->nsites].faults = 0;
				m->sites[m->nsites].ranges_faulted = m->sites[m->nsites].ranges_early = 0;
				m->sites[m->nsites].faults_early = m->sites[m->nsites].delay_us = 0;
				m->nsites++;
			}
			if (s->size_min < m->sites[j].size_min)
				m->sites[j].size_min = s->size_min;
			if (s->size_max > m->sites[j].size_max)
				m->sites[j].size_max = s->size_max;
			m->sites[j].maps += s->maps;
			m->sites[j].unmaps += s->unmaps;
			m->sites[j].bytes += s->bytes;
			m->sites[j].touched += s->touched;
			m->sites[j].faults += s->faults;
			m->sites[j].ranges_faulted += s->ranges_faulted;
			m->sites[j].ranges_early += s->ranges_early;
			m->sites[j].faults_early += s->faults_early;
			m->sites[j].delay_us += s->delay_us;
		}
		for (k = 0; k < p[i].ncode; k++)
			add_count(&m->code, &m->ncode, &ccode, p[i].code[k].a, p[i].code[k].b, p[i].code[k].n);
		for (k = 0; k < p[i].nstacks; k++)
			add_count(&m->stacks, &m->nstacks, &cstacks, p[i].stacks[k].a, NULL, p[i].stacks[k].n);
		for (k = 0; k < p[i].nother; k++)
			add_count(&m->other, &m->nother, &cother, p[i].other[k].a, NULL, p[i].other[k].n);
	}
}

/* A site as people read it: the symbol, or object and symbol. */
void site_label(char *out, size_t cap, const struct psite *s)
{
	if (!strcmp(s->symbol, s->caller) || strchr(s->symbol, '+'))
		snprintf(out, cap, "%s", s->symbol);
	else
		snprintf(out, cap, "%s %s", s->caller, s->symbol);
}
