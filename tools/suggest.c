/* suggest.c: a policy from a profile (`prefault profile --suggest FILE`).
 *
 * For each mapping site that matters (1% or more of the faults):
 *   recycle   an anonymous private mmap site that maps and unmaps the same
 *             size over and over: keeping the regions saves every refault;
 *   populate  a dense site (60% or more of what it maps is touched), or
 *   background for a dense site of 64 MiB or more, so the program need not
 *             wait for it;
 *   nothing   for a sparse site: prefaulting it would only spend memory and
 *             time on pages the program never uses.
 * The result is checked with the same parser as `prefault check` before it
 * is written.
 */
#include "cli.h"
#include "profile_data.h"
#include "sbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DENSE 0.60
#define LARGE (64ull << 20)

static void size_spec(char *out, size_t cap, uint64_t lo, uint64_t hi)
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

static int glob_safe(const char *s)
{
	return *s && strcmp(s, "?") && !strpbrk(s, "*?[]/ \t#");
}

int write_suggestion(const char *path, const struct profile *m, char **cmd)
{
	char *text;
	size_t cap = 1 << 16, len = 0;
	size_t i;
	int nrules = 0, j;
	uint64_t total = 0, pg = (uint64_t)sysconf(_SC_PAGESIZE);
	static struct policy pol;
	struct pol_error err;
	FILE *f;
	text = malloc(cap);
	if (!text)
		return -1;
#define OUT(...) do { int w_ = snprintf(text + len, cap - len, __VA_ARGS__); if (w_ > 0 && (size_t)w_ < cap - len) len += (size_t)w_; } while (0)
	/* Weight: sampled faults, or (without perf) the pages touched, which is
	 * what the first touches cost. */
	for (i = 0; i < m->nsites; i++)
		total += m->perf_ok ? m->sites[i].faults : m->sites[i].touched / pg;
	OUT("# Suggested by: prefault profile --suggest");
	for (j = 0; cmd[j]; j++)
		OUT(" %s", cmd[j]);
	OUT("\n# %llu faults in all; %s.\n", (unsigned long long)(m->minor + m->major),
	    m->perf_ok ? "sites weighed by sampled faults" : "fault sampling unavailable: sites weighed by pages touched");
	OUT("# Check it with 'prefault check', try it with 'prefault run -p' (or 'prefault trial').\n\n[global]\nreport = stderr\n");
	for (i = 0; i < m->nsites; i++) {
		const struct psite *s = &m->sites[i];
		uint64_t w = m->perf_ok ? s->faults : s->touched / pg;
		double dense = s->bytes ? (double)s->touched / (double)s->bytes : 0;
		char name[64], size[64];
		const char *action = NULL, *why = NULL;
		int anon_private = !strcmp(s->kind, "anon,private");
		if (!total || w * 100 < total || !s->maps)
			continue; /* under 1% of the faults: not worth a rule */
		size_spec(size, sizeof size, s->size_min, s->size_max);
		if (!strcmp(s->call, "mmap") && anon_private && strchr(s->prot, 'w') && s->maps >= 8 &&
		    s->unmaps * 2 >= s->maps && s->size_min == s->size_max) {
			action = "recycle";
			why = "maps and unmaps the same size over and over: keep the regions, save the refaults";
		} else if (dense >= DENSE && s->size_min >= LARGE) {
			action = "background";
			why = "dense and large: populated by a worker while the program goes on";
		} else if (dense >= DENSE) {
			action = "populate";
			why = "dense: most of each mapping is touched, so populating it wastes nothing";
		}
		OUT("\n# site %s %s (%s %s, %s %s): %llu maps, %llu unmaps, %.0f%% of %llu bytes touched, %llu faults (%.1f%%)\n",
		    s->caller, s->symbol, s->call, size, s->kind, s->prot, (unsigned long long)s->maps,
		    (unsigned long long)s->unmaps, 100 * dense, (unsigned long long)s->bytes, (unsigned long long)w,
		    100.0 * (double)w / (double)total);
		if (!action) {
			OUT("# sparse (%.0f%% touched): left alone; prefaulting it would only spend memory\n", 100 * dense);
			continue;
		}
		OUT("# %s\n", why);
		rule_name(name, sizeof name, s, ++nrules);
		OUT("[rule %s]\ncall = %s\nsize = %s\n", name, s->call, size);
		if (!strcmp(s->call, "mmap")) {
			if (strstr(s->kind, "mixed"))
				;
			else
				OUT("map = %s\n", anon_private ? "anon private" : strchr(s->kind, 'f') ? "file" : "anon");
		}
		if (strchr(s->prot, 'w') && !strcmp(action, "recycle"))
			OUT("prot = rw\n");
		if (glob_safe(s->caller))
			OUT("caller = %s\n", s->caller);
		OUT("action = %s\n", action);
	}
	if (!nrules)
		OUT("\n# No site is worth a rule: the faults are elsewhere (heap, stacks, libraries) or sparse.\n");
	if (policy_parse(text, len, &pol, &err)) {
		fprintf(stderr, "prefault profile: internal error: the suggested policy does not parse (line %d: %s)\n", err.line,
		        err.msg);
		free(text);
		return -1;
	}
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		free(text);
		return -1;
	}
	fprintf(stderr, "prefault profile: wrote %s (%d rule%s)\n", path, nrules, nrules == 1 ? "" : "s");
	free(text);
	return 0;
}
