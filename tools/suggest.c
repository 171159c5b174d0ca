/* suggest.c: a policy from a profile (`prefault profile --suggest FILE`).
 *
 * The candidates of `prefault tune` (candidates.h), without the trials:
 * each site heavy enough to matter gets its first choice (recycle for a
 * site that maps and unmaps one size over and over, background where the
 * program works between mapping and touching, populate for a dense site,
 * on threads from 64 MiB, willneed for a file mapping; nothing for a
 * sparse one), labelled untested, with the other candidates worth a trial
 * as comments.  The result is checked with the same parser as
 * `prefault check` before it is written.
 */
#include "cli.h"
#include "candidates.h"
#include "fmt.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int write_suggestion(const char *path, const struct profile *m, char **cmd)
{
	char *text;
	size_t cap = 1 << 17, len = 0;
	int nrules = 0, j, k;
	static struct plan plan;
	static struct policy pol;
	struct pol_error err;
	FILE *f;
	text = malloc(cap);
	if (!text)
		return -1;
#define OUT(...) do { int w_ = snprintf(text + len, cap - len, __VA_ARGS__); if (w_ > 0 && (size_t)w_ < cap - len) len += (size_t)w_; } while (0)
	plan_candidates(m, &plan);
	OUT("# Suggested by: prefault profile --suggest");
	for (j = 0; cmd[j]; j++)
		OUT(" %s", tty_str(cmd[j]));
	OUT("\n# %llu faults of the program; %s.\n", (unsigned long long)program_faults(m),
	    m->perf_ok ? "sites weighed by sampled faults" : "fault sampling unavailable: sites weighed by pages touched");
	OUT("# Every rule here is untested: run prefault tune to measure it (prefault tune -- CMD tries each\n"
	    "# candidate against the program and keeps only what is faster and cuts faults).\n"
	    "# Background gains most with hugepage on mappings of 2 MiB and up where a first touch is dear\n"
	    "# (1.5 to 10 us a page on the machine it was measured on); hugepage changes memory use, so it\n"
	    "# is never suggested unmeasured.  Check this file with 'prefault check'.\n\n[global]\nreport = stderr\n");
	for (j = 0; j < plan.nsites; j++) {
		const struct site_plan *sp = &plan.sites[j];
		OUT("\n# site %s\n", tty_str(sp->desc));
		if (sp->primary < 0) {
			OUT("# %s\n", sp->none_why[0] ? tty_str(sp->none_why) : "no candidate rule for this kind of site");
			continue;
		}
		for (k = sp->first; k < sp->first + sp->n; k++)
			if (k != sp->primary)
				OUT("# also worth a trial: action = %s%s\n", plan.cands[k].label,
				    plan.cands[k].hugepage ? " (changes memory use)" : "");
		OUT("# untested: run prefault tune to measure it\n%s", plan.cands[sp->primary].rule);
		nrules++;
	}
	if (plan.skipped_light)
		OUT("\n# %d lighter site%s (under %.0f%% of the faults each) left alone: no rule for %s could gain that much.\n",
		    plan.skipped_light, plan.skipped_light == 1 ? "" : "s", 100 * CAND_MIN_SHARE,
		    plan.skipped_light == 1 ? "it" : "them");
	if (!nrules)
		OUT("\n# No site is worth a rule: the faults are elsewhere (heap, stacks, libraries) or sparse.\n");
#undef OUT
	if (policy_parse(text, len, &pol, &err)) {
		fprintf(stderr, "prefault profile: internal error: the suggested policy does not parse (line %d: %s)\n", err.line,
		        err.msg);
		free(text);
		return -1;
	}
	f = open_output(path);
	if (!f) {
		fprintf(stderr, "prefault profile: cannot write %s: %s\n", tty_str(path), strerror(errno));
		free(text);
		return -1;
	}
	fwrite(text, 1, len, f);
	free(text);
	if (close_output(f, path, "prefault profile") < 0) /* (a short write shows in ferror) */
		return -1;
	fprintf(stderr, "prefault profile: wrote %s (%d rule%s, untested)\n", tty_str(path), nrules, nrules == 1 ? "" : "s");
	return 0;
}
