/* profile_data.c: reading the shim's per-process profile files, by the
 * description in lib/profile_format.h (the version checked, every record
 * checked for its fields), naming their code addresses (symbols.c), and
 * merging a process tree into one view. */
#include "profile_data.h"
#include "symbols.h"
#include <dirent.h>
#include <errno.h>
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

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

/* ---- the records, from the description ---- */

enum rec {
#define R(tag, kinds) REC_##tag,
	PROFILE_RECORDS(R)
#undef R
	NREC
};

static const struct {
	const char *tag, *kinds;
} recs[NREC] = {
#define R(tag, kinds) { #tag, kinds },
	PROFILE_RECORDS(R)
#undef R
};

#define ONE(m, key, merge) +1
#define SITE_COUNTS (0 PROFILE_SITE_COUNTS(ONE))
#define MAX_FIELDS (8 + SITE_COUNTS)

/* The fields a record has: its kinds, and for a site its counters too. */
static size_t fields_of(enum rec r) { return strlen(recs[r].kinds) + (r == REC_site ? SITE_COUNTS : 0); }

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
	return line ? max + 1 : n; /* more than max: too many */
}

static int number(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *end || errno ? -1 : 0;
}

static int address(const char *s, uint64_t *v)
{
	char *end;
	if (s[0] != '0' || s[1] != 'x' || !s[2])
		return -1;
	errno = 0;
	*v = strtoull(s + 2, &end, 16);
	return *end || errno ? -1 : 0;
}

/* What a file says before its addresses are named. */
struct raw {
	struct mapping *maps;
	size_t nmaps, cmaps;
	struct {
		uint64_t ip, n;
	} * code;
	size_t ncode, ccode;
	struct {
		uint64_t n;
		char *chain;
	} * stacks;
	size_t nstacks, cstacks;
	uint64_t *site_ret;
	size_t csret;
};

static void raw_free(struct raw *r)
{
	size_t i;
	for (i = 0; i < r->nmaps; i++)
		free(r->maps[i].path);
	for (i = 0; i < r->nstacks; i++)
		free(r->stacks[i].chain);
	free(r->maps);
	free(r->code);
	free(r->stacks);
	free(r->site_ret);
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

/* A folded stack (root first, frames joined by ';') from a chain of
 * addresses, innermost first (the first the faulting instruction, the
 * rest return addresses). */
static char *fold(const struct raw *r, char *chain)
{
	char *frames[64], *tok, *save = NULL, *out;
	size_t n = 0, len = 0, cap = 1024;
	int k;
	for (tok = strtok_r(chain, ",", &save); tok && n < 64; tok = strtok_r(NULL, ",", &save))
		frames[n++] = tok;
	out = malloc(cap);
	if (!out) {
		perror("prefault");
		exit(1);
	}
	out[0] = '\0';
	for (k = (int)n - 1; k >= 0; k--) {
		char obj[256], name[512];
		uint64_t a = 0;
		size_t l;
		char *c;
		if (address(frames[k], &a) < 0)
			continue;
		symbolize(r->maps, r->nmaps, a, k > 0, obj, sizeof obj, name, sizeof name);
		for (c = name; *c; c++)
			if (*c == ';' || *c == ' ')
				*c = '_';
		l = strlen(name);
		while (len + l + 2 > cap) {
			cap *= 2;
			out = realloc(out, cap);
			if (!out) {
				perror("prefault");
				exit(1);
			}
		}
		if (len)
			out[len++] = ';';
		memcpy(out + len, name, l + 1);
		len += l;
	}
	return out;
}

/* Name what the file recorded as addresses. */
static void name_all(struct profile *p, struct raw *r)
{
	size_t i, ccode = 0, cstacks = 0;
	char obj[256], name[512];
	for (i = 0; i < r->ncode; i++) {
		symbolize(r->maps, r->nmaps, r->code[i].ip, 0, obj, sizeof obj, name, sizeof name);
		add_count(&p->code, &p->ncode, &ccode, obj, name, r->code[i].n);
	}
	for (i = 0; i < r->nstacks; i++) {
		char *f = fold(r, r->stacks[i].chain);
		add_count(&p->stacks, &p->nstacks, &cstacks, f, NULL, r->stacks[i].n);
		free(f);
	}
	for (i = 0; i < p->nsites; i++) {
		struct psite *s = &p->sites[i];
		if (!r->site_ret[i]) {
			copy(s->caller, sizeof s->caller, "?");
			copy(s->symbol, sizeof s->symbol, "?");
			continue;
		}
		symbolize(r->maps, r->nmaps, r->site_ret[i], 1, s->caller, sizeof s->caller, s->symbol, sizeof s->symbol);
	}
}

/* One record's fields, checked against its kinds; 0, or -1 with why. */
static int check_fields(enum rec k, char **fl, int n, char *why, size_t cap)
{
	const char *kinds = recs[k].kinds;
	size_t i, want = fields_of(k);
	uint64_t v;
	if ((size_t)n != want + 1) {
		snprintf(why, cap, "a \"%s\" record with %d fields, not %zu", recs[k].tag, n - 1, want);
		return -1;
	}
	for (i = 0; i < want; i++) {
		char kind = i < strlen(kinds) ? kinds[i] : 'u';
		if ((kind == 'u' && number(fl[i + 1], &v) < 0) || (kind == 'x' && address(fl[i + 1], &v) < 0)) {
			snprintf(why, cap, "a \"%s\" record whose field %zu is not a %s", recs[k].tag, i + 1,
			         kind == 'u' ? "number" : "hex address");
			return -1;
		}
	}
	return 0;
}

int load_profile(const char *path, struct profile *p, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *fl[MAX_FIELDS + 2];
	size_t lcap = 0, csites = 0, cother = 0, lineno = 0;
	struct raw r;
	int ok = 0, bad = 0;
	char err[200];
	memset(p, 0, sizeof *p);
	memset(&r, 0, sizeof r);
	p->period = 1;
	p->snap_before_end_ns = -1;
	if (!f) {
		snprintf(why, cap, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (getline(&line, &lcap, f) <= 0 || split(line, fl, 2) != 2 || strcmp(fl[0], PROFILE_MAGIC)) {
		snprintf(why, cap, "%s: not a prefault profile (no \"%s\" line)", path, PROFILE_MAGIC);
		bad = 1;
	} else if (strcmp(fl[1], PROFILE_VERSION_STR)) {
		snprintf(why, cap,
		         "%s: a profile of format version %.20s; this prefault reads version %d (the shim and the tool "
		         "come from different builds: set PREFAULT_SHIM to the libprefault.so of this one)",
		         path, fl[1], PROFILE_VERSION);
		bad = 1;
	}
	lineno = 1;
	while (!bad && !ok && getline(&line, &lcap, f) > 0) {
		int n = split(line, fl, MAX_FIELDS + 1);
		enum rec k;
		lineno++;
		for (k = 0; k < NREC && strcmp(fl[0], recs[k].tag); k++)
			;
		if (k == NREC)
			continue; /* (a record this version does not use) */
		if (check_fields(k, fl, n, err, sizeof err) < 0) {
			snprintf(why, cap, "%s:%zu: %s", path, lineno, err);
			bad = 1;
			break;
		}
		switch (k) {
		case REC_process:
			p->pid = atol(fl[1]);
			p->ppid = atol(fl[2]);
			copy(p->program, sizeof p->program, fl[3]);
			copy(p->exe, sizeof p->exe, fl[4]);
			break;
		case REC_snapshot:
			p->snapshot = 1;
			number(fl[1], &p->snap_ns);
			number(fl[2], &p->snap_age_ns);
			break;
		case REC_count: {
			uint64_t v = strtoull(fl[2], NULL, 10);
#define SET(m, key, merge)                                                                                             \
	if (!strcmp(fl[1], #m))                                                                                        \
		p->m = v;
			PROFILE_COUNTS(SET)
#undef SET
			break;
		}
		case REC_perf:
			p->perf_ok = !strcmp(fl[1], "ok");
			copy(p->perf_why, sizeof p->perf_why, fl[2]);
			break;
		case REC_object: {
			struct mapping *m;
			r.maps = grow(r.maps, &r.cmaps, r.nmaps, sizeof *r.maps);
			m = &r.maps[r.nmaps++];
			address(fl[1], &m->start);
			address(fl[2], &m->end);
			address(fl[3], &m->offset);
			number(fl[4], &m->inode);
			m->path = dup(fl[5]);
			break;
		}
		case REC_code:
			r.code = grow(r.code, &r.ccode, r.ncode, sizeof *r.code);
			address(fl[1], &r.code[r.ncode].ip);
			number(fl[2], &r.code[r.ncode++].n);
			break;
		case REC_stack:
			r.stacks = grow(r.stacks, &r.cstacks, r.nstacks, sizeof *r.stacks);
			number(fl[1], &r.stacks[r.nstacks].n);
			r.stacks[r.nstacks++].chain = dup(fl[2]);
			break;
		case REC_other:
			p->other = grow(p->other, &cother, p->nother, sizeof *p->other);
			p->other[p->nother].a = dup(fl[1]);
			p->other[p->nother].b = NULL;
			number(fl[2], &p->other[p->nother++].n);
			break;
		case REC_site: {
			struct psite *s;
			int i = 6;
			p->sites = grow(p->sites, &csites, p->nsites, sizeof *p->sites);
			r.site_ret = grow(r.site_ret, &r.csret, p->nsites, sizeof *r.site_ret);
			s = &p->sites[p->nsites];
			memset(s, 0, sizeof *s);
			address(fl[1], &r.site_ret[p->nsites++]);
			copy(s->call, sizeof s->call, fl[2]);
			copy(s->kind, sizeof s->kind, fl[3]);
			copy(s->prot, sizeof s->prot, fl[4]);
			number(fl[5], &s->size_class);
#define FIELD(m, key, merge) number(fl[i++], &s->m);
			PROFILE_SITE_COUNTS(FIELD)
#undef FIELD
			break;
		}
		case REC_end:
			ok = 1;
			break;
		default:
			break;
		}
	}
	free(line);
	fclose(f);
	if (!bad && !ok)
		snprintf(why, cap, "%s: no \"end\" line (the process was killed while writing it)", path);
	if (!bad && ok)
		name_all(p, &r);
	raw_free(&r);
	return ok && !bad ? 0 : -1;
}

int load_profiles(const char *dir, struct profile **out, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0, cnt = 0;
	struct profile *v = NULL;
	char path[4200], why[4400];
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".prof"))
			continue;
		v = grow(v, &cap, cnt, sizeof *v);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (load_profile(path, &v[cnt], why, sizeof why) == 0)
			cnt++;
		else if (strstr(why, "format version") || strstr(why, "record"))
			fprintf(stderr, "prefault: %s\n", why); /* (a killed process's is no news) */
	}
	closedir(d);
	*out = v;
	*n = (int)cnt;
	return 0;
}

uint64_t program_faults(const struct profile *p)
{
	uint64_t all = p->minor + p->major;
	return all > p->shim_faults ? all - p->shim_faults : 0;
}

uint64_t program_sampled(const struct profile *p) { return p->sampled > p->in_shim ? p->sampled - p->in_shim : 0; }

int same_site(const struct psite *a, const struct psite *b)
{
	return !strcmp(a->caller, b->caller) && !strcmp(a->symbol, b->symbol) && !strcmp(a->call, b->call) &&
	       a->size_class == b->size_class && !strcmp(a->kind, b->kind);
}

#define MERGE(dst, src, merge)                                                                                         \
	do {                                                                                                           \
		if ((merge) == FK_SUM)                                                                            \
			(dst) += (src);                                                                                \
		else if ((merge) == FK_MIN && (src) < (dst))                                                      \
			(dst) = (src);                                                                                 \
		else if ((merge) == FK_MAX && (src) > (dst))                                                      \
			(dst) = (src);                                                                                 \
	} while (0)

void merge_profiles(const struct profile *p, int n, struct profile *m)
{
	size_t csites = 0, ccode = 0, cstacks = 0, cother = 0, k, j;
	int i;
	memset(m, 0, sizeof *m);
	m->perf_ok = 0;
	for (i = 0; i < n; i++) {
#define COUNT(f, key, merge)                                                                                           \
	if ((merge) == FK_FIRST)                                                                                  \
		m->f = i ? m->f : p[i].f;                                                                              \
	else                                                                                                           \
		MERGE(m->f, p[i].f, merge);
		PROFILE_COUNTS(COUNT)
#undef COUNT
		m->snapshot += p[i].snapshot;
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
				m->sites[m->nsites] = *s; /* (its counts are the first process's) */
				m->nsites++;
				continue;
			}
#define SITE(f, key, merge) MERGE(m->sites[j].f, s->f, merge);
			PROFILE_SITE_COUNTS(SITE)
#undef SITE
		}
		for (k = 0; k < p[i].ncode; k++)
			add_count(&m->code, &m->ncode, &ccode, p[i].code[k].a, p[i].code[k].b, p[i].code[k].n);
		for (k = 0; k < p[i].nstacks; k++)
			add_count(&m->stacks, &m->nstacks, &cstacks, p[i].stacks[k].a, NULL, p[i].stacks[k].n);
		for (k = 0; k < p[i].nother; k++)
			add_count(&m->other, &m->nother, &cother, p[i].other[k].a, NULL, p[i].other[k].n);
	}
	if (!n)
		m->period = 1;
	m->snap_before_end_ns = -1;
}

/* A site as people read it: the symbol, or object and symbol. */
void site_label(char *out, size_t cap, const struct psite *s)
{
	if (!strcmp(s->symbol, s->caller) || strchr(s->symbol, '+'))
		snprintf(out, cap, "%s", s->symbol);
	else
		snprintf(out, cap, "%s %s", s->caller, s->symbol);
}
