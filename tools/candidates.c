/* candidates.c: see candidates.h. */
#include "candidates.h"
#include "cli.h"
#include "fmt.h"
#include "policy.h"
#include "sbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void size_spec(char *out, size_t cap, uint64_t lo, uint64_t hi)
{
	char a[24], b[24];
	struct sbuf sa, sb;
	sb_init(&sa, a, sizeof a, -1);
	sb_init(&sb, b, sizeof b, -1);
	sb_size_exact(&sa, lo);
	sb_size_exact(&sb, hi);
	sb_cstr(&sa);
	sb_cstr(&sb);
	if (lo == hi || cap < sizeof a + sizeof b + 2)
		snprintf(out, cap, "%s", a);
	else
		snprintf(out, cap, "%.23s..%.23s", a, b);
}

static void rule_name(char *out, size_t cap, const struct psite *s, int n)
{
	const char *base = strchr(s->symbol, '+') ? s->caller : s->symbol;
	size_t i, k = 0;
	for (i = 0; base[i] && k + 1 < cap - 12 && k < 30; i++) {
		char c = base[i];
		out[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		            c == '-' || c == '.') ? c : '-';
	}
	snprintf(out + k, cap - k, "-%d", n);
}

int glob_safe(const char *s)
{
	const unsigned char *p;
	for (p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return *s && strcmp(s, "?") && !strpbrk(s, "*?[]/ #");
}

void site_short(char *out, size_t cap, const struct site_plan *sp)
{
	char lab[300], sz[32];
	site_label(lab, sizeof lab, sp->s);
	human_size(sz, sizeof sz, sp->s->size_min);
	snprintf(out, cap, "%s %s %s", lab, sp->s->call, sz);
}

/* The match lines of a site's rules: call, size, map, prot, caller, program. */
static void match_lines(char *out, size_t cap, const struct psite *s, int recycle)
{
	char size[64];
	size_t len = 0;
	int anon_private = !strcmp(s->kind, "anon,private");
#define ADD(...) do { int w_ = snprintf(out + len, cap - len, __VA_ARGS__); if (w_ > 0 && (size_t)w_ < cap - len) len += (size_t)w_; } while (0)
	out[0] = '\0';
	size_spec(size, sizeof size, s->size_min, s->size_max);
	ADD("call = %s\nsize = %s\n", s->call, size);
	if (!strcmp(s->call, "mmap") && !strstr(s->kind, "mixed"))
		ADD("map = %s\n", anon_private ? "anon private" : strstr(s->kind, "file") ? "file" : "anon");
	if (recycle)
		ADD("prot = rw\n");
	if (glob_safe(s->caller))
		ADD("caller = %s\n", s->caller);
	if (!s->in_root && s->programs[0]) { /* seen only in other processes */
		char copy[128], names[128], *w, *save = NULL;
		size_t k = 0;
		names[0] = '\0';
		snprintf(copy, sizeof copy, "%s", s->programs);
		for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (glob_safe(w) && k + strlen(w) + 2 < sizeof names)
				k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? " " : "", w);
		if (names[0])
			ADD("program = %s\n", names);
	}
#undef ADD
}

static void add(struct plan *p, int site, const char *label, const char *action, unsigned threads, int recycle);

/* An action's candidates for the site being planned: the action alone, with
 * each action tune adds to it (hugepage, where huge pages can be had), and
 * on threads where its knob is threads and the site is large. */
static void add_action(struct plan *p, const struct pol_action *a, int huge_ok, unsigned threads)
{
	const struct pol_action *w;
	char label[80], actions[32];
	int with, t;
	for (t = 0; t <= (threads && a->knob && !strcmp(a->knob, "threads")); t++) {
		for (with = 0; with <= 1; with++) {
			for (w = pol_actions; with && w->word && (w->tune != TUNE_WITH || !huge_ok); w++)
				;
			if (with && !w->word)
				continue;
			snprintf(actions, sizeof actions, "%s%s%s", a->word, with ? " " : "", with ? w->word : "");
			if (t)
				snprintf(label, sizeof label, "%s, threads = %u", actions, threads);
			else
				snprintf(label, sizeof label, "%s", actions);
			add(p, p->nsites, label, actions, t ? threads : 0, a->bit == A_RECYCLE);
		}
	}
}

static void add(struct plan *p, int site, const char *label, const char *action, unsigned threads, int recycle)
{
	struct site_plan *sp = &p->sites[site];
	struct candidate *c;
	static struct policy pol;
	struct pol_error err;
	char match[600], name[64];
	if (p->ncands >= CAND_MAX)
		return;
	c = &p->cands[p->ncands];
	memset(c, 0, sizeof *c);
	c->site = site;
	snprintf(c->label, sizeof c->label, "%.*s", (int)sizeof c->label - 1, label);
	c->hugepage = strstr(action, "hugepage") != NULL;
	match_lines(match, sizeof match, sp->s, recycle);
	snprintf(name, sizeof name, "%s", sp->name);
	if (threads)
		snprintf(c->rule, sizeof c->rule, "[rule %s]\n%saction = %s\nthreads = %u\n", name, match, action, threads);
	else
		snprintf(c->rule, sizeof c->rule, "[rule %s]\n%saction = %s\n", name, match, action);
	/* What check would refuse never runs. */
	if (policy_parse(c->rule, strlen(c->rule), &pol, &err))
		return;
	if (!sp->n)
		sp->first = p->ncands;
	sp->n++;
	p->ncands++;
}

static void describe(struct site_plan *sp, int perf_ok)
{
	const struct psite *s = sp->s;
	char size[64], mapped[32], timing[160] = "", lab[300];
	site_label(lab, sizeof lab, s);
	size_spec(size, sizeof size, s->size_min, s->size_max);
	human_size(mapped, sizeof mapped, s->bytes);
	if (perf_ok && s->ranges_faulted)
		snprintf(timing, sizeof timing, "; first touch %.1f ms after the map on average, %.0f%% of ranges and %.0f%% "
		         "of faults within 5 ms of it",
		         (double)s->delay_us / 1000 / (double)s->ranges_faulted,
		         100.0 * (double)s->ranges_early / (double)s->ranges_faulted,
		         s->faults ? 100.0 * (double)s->faults_early / (double)s->faults : 0.0);
	if (snprintf(sp->desc, sizeof sp->desc,
	         "%s (%s %s, %s %s%s%s): %llu maps, %llu unmaps, %.0f%% of %s touched, %llu %s (%.1f%%)%s", lab, s->call, size, s->kind, s->prot, s->in_root || !s->programs[0] ? "" : ", in ",
	         s->in_root || !s->programs[0] ? "" : s->programs, (unsigned long long)s->maps,
	         (unsigned long long)s->unmaps, 100 * sp->dense, mapped, (unsigned long long)sp->weight,
	         perf_ok ? "faults" : "pages touched", 100 * sp->share, timing) >= (int)sizeof sp->desc)
		memcpy(sp->desc + sizeof sp->desc - 4, "...", 4);
}

int plan_candidates(const struct profile *m, struct plan *p)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t i;
	memset(p, 0, sizeof *p);
	p->perf_ok = m->perf_ok;
	/* The shares are of every fault the program's tree took (the shim's
	 * own left out): a site's share bounds what a rule for it can gain. */
	p->total = program_faults(m);
	for (i = 0; i < m->nsites; i++) {
		const struct psite *s = &m->sites[i];
		struct site_plan *sp;
		uint64_t w = m->perf_ok ? s->faults : s->touched / pg;
		int anon_private = !strcmp(s->kind, "anon,private"), malloc_site = !strcmp(s->call, "malloc");
		int file = strstr(s->kind, "file") != NULL, huge_ok = (anon_private || malloc_site) && s->size_min >= cli_hpage_size();
		int churn, writable = strchr(s->prot, 'w') != NULL;
		if (!p->total || !s->maps)
			continue;
		if ((double)w < CAND_MIN_SHARE * (double)p->total) {
			p->skipped_light++;
			continue;
		}
		if (p->nsites == CAND_MAX_SITES) {
			p->skipped_light++;
			continue;
		}
		sp = &p->sites[p->nsites];
		memset(sp, 0, sizeof *sp);
		sp->s = s;
		sp->weight = w;
		sp->share = (double)w / (double)p->total;
		sp->dense = s->bytes ? (double)s->touched / (double)s->bytes : 0;
		sp->primary = -1;
		/* Works between mapping and touching: most ranges are first touched
		 * later than 5 ms after the map, and most faults come later too. */
		sp->later = m->perf_ok && s->ranges_faulted && s->ranges_early * 2 < s->ranges_faulted &&
		            s->faults_early * 2 < s->faults;
		rule_name(sp->name, sizeof sp->name, s, p->nsites + 1);
		describe(sp, m->perf_ok);
		churn = !strcmp(s->call, "mmap") && anon_private && writable && s->maps >= 8 && s->unmaps * 2 >= s->maps &&
		        s->size_min == s->size_max;
		{
			/* Which kinds of site this one is (actions.h's tune column),
			 * in the order tune tries their actions. */
			static const int kinds[] = { TUNE_CHURN, TUNE_FILE, TUNE_DENSE, TUNE_LATER };
			int is[] = { [TUNE_CHURN] = churn, [TUNE_FILE] = file, [TUNE_DENSE] = sp->dense >= CAND_DENSE,
			             [TUNE_LATER] = sp->dense >= CAND_DENSE && sp->later };
			unsigned threads = 0;
			size_t k;
			if (s->size_min >= CAND_LARGE && ncpu > 1) {
				uint64_t t = s->size_min / CAND_LARGE;
				threads = (unsigned)(t < (uint64_t)ncpu ? t : (uint64_t)ncpu);
				if (threads < 2)
					threads = 0;
			}
			for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
				const struct pol_action *a;
				if (!is[kinds[k]])
					continue;
				for (a = pol_actions; a->word; a++)
					if (a->tune == kinds[k])
						add_action(p, a, huge_ok && kinds[k] != TUNE_CHURN && kinds[k] != TUNE_FILE, threads);
			}
		}
		/* --suggest's choice: recycle for churn; else background where the
		 * program works before touching; else populate (on threads when
		 * large); willneed for a file.  Never hugepage unasked: it changes
		 * memory use, so it stays the user's (or tune's, measured) call. */
		if (sp->n) {
			int k;
			const char *want = churn ? "recycle" : sp->later && sp->dense >= CAND_DENSE ? "background" : NULL;
			for (k = sp->first; k < sp->first + sp->n && sp->primary < 0; k++)
				if (want && !strcmp(p->cands[k].label, want))
					sp->primary = k;
			for (k = sp->first; k < sp->first + sp->n && sp->primary < 0; k++)
				if (!strncmp(p->cands[k].label, "populate, threads", 17))
					sp->primary = k;
			for (k = sp->first; k < sp->first + sp->n && sp->primary < 0; k++)
				if (!p->cands[k].hugepage)
					sp->primary = k;
		} else {
			snprintf(sp->none_why, sizeof sp->none_why,
			         "sparse (%.0f%% touched): left alone; prefaulting it would only spend memory", 100 * sp->dense);
		}
		p->nsites++;
	}
	return 0;
}
