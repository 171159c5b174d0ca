/* learned.c: see learned.h. */
#include "learned.h"
#include "candidates.h"
#include "cli.h"
#include "fmt.h"
#include "policy.h"
#include "report_text.h"
#include "sbuf.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RULES 128

/* A rule of the learned policy: the sites it stands for, in comments. */
struct lrule {
	char object[96], program[96];
	uint64_t call, lo, hi, actions;
	int off;          /* backed off: written commented out */
	char name[POL_NAME_MAX];
	char *why;        /* the sites' lines, malloc'd */
	size_t why_len;
};

struct learned {
	struct lrule r[MAX_RULES];
	int n;
	char *alone;      /* the sites left alone, as comments */
	size_t alone_len;
	int programs;     /* distinct programs with rules */
	char first_program[96];
};

/* Append "# site LINE\n" to a growing text; -1 without memory. */
static int add_line(char **text, size_t *len, const char *lead, const struct figs_auto *a)
{
	char line[1200];
	struct sbuf sb;
	size_t n;
	char *t;
	sb_init(&sb, line, sizeof line, -1);
	sb_str(&sb, lead);
	rt_auto_site(&sb, a);
	sb_chr(&sb, '\n');
	n = strlen(sb_cstr(&sb));
	if (!(t = realloc(*text, *len + n + 1)))
		return -1;
	memcpy(t + *len, line, n + 1);
	*text = t;
	*len += n;
	return 0;
}

static void name_rule(struct learned *l, struct lrule *r)
{
	char sz[64];
	struct sbuf sb;
	size_t i, k;
	int n, dup;
	size_spec(sz, sizeof sz, r->lo, r->lo);
	for (n = 1;; n++) {
		int j;
		sb_init(&sb, r->name, sizeof r->name, -1);
		for (i = 0, k = 0; r->object[i] && k < 20; i++, k++) {
			char c = r->object[i];
			sb_chr(&sb, (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'
			                ? c : '-');
		}
		sb_str(&sb, r->call == CALL_MMAP ? "-mmap-" : "-malloc-");
		sb_str(&sb, sz);
		if (n > 1) {
			sb_chr(&sb, '-');
			sb_u64(&sb, (uint64_t)n);
		}
		sb_cstr(&sb);
		for (dup = 0, j = 0; j < l->n && !dup; j++)
			dup = &l->r[j] != r && !strcmp(l->r[j].name, r->name);
		if (!dup)
			return;
	}
}

/* A site acted on: into the rule for its object, call, size and action. */
static int add_site(struct learned *l, const struct figs_auto *a, const char *program)
{
	uint64_t lo = a->size, hi = a->why == AW_CHURN ? a->size : a->size_max;
	int off = a->off != AO_NONE, i;
	struct lrule *r = NULL;
	if (hi < lo)
		hi = lo;
	for (i = 0; i < l->n && !r; i++) {
		struct lrule *c = &l->r[i];
		if (!strcmp(c->object, a->object) && !strcmp(c->program, program) && c->call == a->call &&
		    c->actions == a->actions && c->off == off && c->lo <= hi && lo <= c->hi) {
			r = c;
			r->lo = lo < r->lo ? lo : r->lo;
			r->hi = hi > r->hi ? hi : r->hi;
		}
	}
	if (!r) {
		if (l->n == MAX_RULES)
			return 0;
		r = &l->r[l->n++];
		memset(r, 0, sizeof *r);
		snprintf(r->object, sizeof r->object, "%s", a->object);
		snprintf(r->program, sizeof r->program, "%s", program);
		r->call = a->call;
		r->lo = lo;
		r->hi = hi;
		r->actions = a->actions;
		r->off = off;
		if (!off) {
			if (!l->programs)
				snprintf(l->first_program, sizeof l->first_program, "%s", program);
			l->programs += !l->programs || strcmp(l->first_program, program);
		}
	}
	return add_line(&r->why, &r->why_len, "# site ", a);
}

/* The rule's lines, each prefixed (lead: "" or "# "). */
static void rule_text(FILE *f, const struct learned *l, const struct lrule *r, const char *lead)
{
	char sz[64];
	size_spec(sz, sizeof sz, r->lo, r->hi);
	fprintf(f, "%s[rule %s]\n%scall = %s\n%ssize = %s\n", lead, r->name, lead, r->call == CALL_MMAP ? "mmap" : "malloc",
	        lead, sz);
	if (r->call == CALL_MMAP)
		fprintf(f, "%smap = anon private\n%sprot = rw\n", lead, lead);
	if (glob_safe(r->object))
		fprintf(f, "%scaller = %s\n", lead, r->object);
	if (l->programs > 1 && glob_safe(r->program))
		fprintf(f, "%sprogram = %s\n", lead, r->program);
	{
		char words[128];
		struct sbuf sb;
		sb_init(&sb, words, sizeof words, -1);
		rt_actions(&sb, (unsigned)r->actions);
		fprintf(f, "%saction = %s\n", lead, sb_cstr(&sb));
	}
	if (r->actions & A_HUGEPAGE)
		fprintf(f, "%shugepage_check = yes\n", lead);
	if ((r->actions & A_POPULATE) && r->lo >= (64ull << 20)) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t t = r->lo >> 26;
		if (cpus > 1)
			fprintf(f, "%sthreads = %llu\n", lead, (unsigned long long)(t < (uint64_t)cpus ? t : (uint64_t)cpus));
	}
}

static void policy_text(FILE *f, const struct learned *l, char *const *cmd)
{
	time_t now = time(NULL);
	char when[64];
	int i, rules = 0;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "# Learned by 'prefault run --auto' from:");
	for (i = 0; cmd[i] && i < 16; i++)
		fprintf(f, " %s", tty_str(cmd[i]));
	fprintf(f, "%s\n# on %s.\n", cmd[i] ? " ..." : "", when);
	fprintf(f, "# Each rule is what the learner did at one site in that run: its caller (the object\n"
	           "# that made the call) and its size, then why, when, and what it saved.  Rules it backed off\n"
	           "# from are commented out, with the reason.  Check it with 'prefault check', measure it\n"
	           "# with 'prefault trial -p FILE -- CMD', refine it with 'prefault tune'.\n");
	fprintf(f, "\n[global]\nreport = stderr\n");
	for (i = 0; i < l->n; i++) {
		const struct lrule *r = &l->r[i];
		fprintf(f, "\n%s", r->why ? r->why : "");
		if (r->off) {
			fprintf(f, "# (backed off: not a rule)\n");
			rule_text(f, l, r, "# ");
		} else {
			rule_text(f, l, r, "");
			rules++;
		}
	}
	if (l->alone)
		fprintf(f, "\n# Left alone:\n%s", l->alone);
	if (!rules)
		fprintf(f, "\n# No rule was learned (none acted on, or every one backed off from): run the program\n"
		           "# without prefault.\n");
}

int learned_write(const char *path, const struct report_set *rs, char *const *cmd)
{
	struct learned *l = calloc(1, sizeof *l);
	struct figs_proc p;
	struct policy *pol = NULL;
	struct pol_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int d, i, rc = -1, nrules = 0;
	if (!l)
		goto oom;
	for (d = 0; d < rs->n; d++) {
		report_figs(rs->docs[d], &p);
		for (i = 0; i < p.nauto; i++) {
			const struct figs_auto *a = &p.autos[i];
			if (a->rule ? add_site(l, a, p.program) < 0 : add_line(&l->alone, &l->alone_len, "#   ", a) < 0)
				goto oom;
		}
	}
	for (i = 0; i < l->n; i++) {
		name_rule(l, &l->r[i]);
		nrules += !l->r[i].off;
	}
	if (!(f = open_memstream(&text, &len)))
		goto oom;
	policy_text(f, l, cmd);
	if (fclose(f) != 0 || !text)
		goto oom;
	if (!(pol = malloc(sizeof *pol)))
		goto oom;
	if (policy_parse(text, len, pol, &err)) {
		fprintf(stderr, "prefault run: internal error: the learned policy does not parse (line %d: %s)\n", err.line,
		        err.msg);
		goto out;
	}
	if (!(f = open_output(path))) {
		fprintf(stderr, "prefault run: cannot write %s: %s\n", tty_str(path), strerror(errno));
		goto out;
	}
	fwrite(text, 1, len, f);
	if (close_output(f, path, "prefault run") < 0)
		goto out;
	fprintf(stderr, "prefault run: wrote %s (%d rule%s learned)\n", tty_str(path), nrules, nrules == 1 ? "" : "s");
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "prefault run: out of memory writing the learned policy\n");
out:
	for (i = 0; l && i < l->n; i++)
		free(l->r[i].why);
	if (l)
		free(l->alone);
	free(l);
	free(pol);
	free(text);
	return rc;
}
