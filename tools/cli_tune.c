/* cli_tune.c: `prefault tune [-n PAIRS] [-t SECONDS] [-o POLICY] [--json]
 * [--rank time|faults] -- CMD [ARGS...]`.
 *
 * What makes this program faster?  Answered as a policy, with the evidence
 * next to each rule (issue 12):
 *  1. profile the program once (profile_run.h), process tree included;
 *  2. the candidates per heavy site (candidates.h);
 *  3. trial each candidate against the best policy so far: the shim on
 *     both sides, so only the policy differs (the first "best so far" is an
 *     empty policy: observe mode), alternating pairs after a warm-up, like
 *     with like (compare.h); keep it by the rule in decide.h: faster by 3%
 *     or more at the median, nearly every pair agreeing, and fewer faults
 *     left in the program.  --rank faults keeps a candidate on faults and
 *     peak RSS alone (a verdict without timings, for tests);
 *  4. confirm the combined policy against the program without prefault and
 *     in observe mode; a policy that is not faster than no prefault at all
 *     is dropped, and said so;
 *  5. write the policy (-o, default tune.policy), each rule with its site,
 *     its speedup, its fault cut and its cost in peak RSS, and print a
 *     table of everything tried (--json: the same for machines).
 * The program's output is discarded; a failing program is reported with
 * its exit status and tune stops with it.  -t bounds the whole run: no run
 * starts that would not end in time, a run still going at the deadline is
 * stopped (with the program's tree), and what was done is kept.  Ctrl-C
 * writes the best policy found so far.
 */
#include "cli.h"
#include "candidates.h"
#include "child.h"
#include "compare.h"
#include "decide.h"
#include "fmt.h"
#include "profile_run.h"
#include "progress.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { V_KEPT, V_REPLACED, V_REJECTED, V_UNFINISHED };
static const char *const vword[] = { "kept", "replaced", "rejected", "unfinished" };

struct tried {
	int cand, rounds, verdict;
	int against; /* the site's candidate on the best-so-far side, or -1 */
	struct spread ratio, fa, fb, ra, rb, ta, tb;
	char why[320];
	double wa[ROUNDS_MAX], wb[ROUNDS_MAX];
};

struct confirm {
	int done, rounds, dropped;
	struct spread ratio, ratio_obs, fw, fo, fb, rw, ro, rb;
	char verdict[16], why[320], obs_why[320];
};

static struct {
	char **cmd;
	enum rank rank;
	int pairs, json;
	double budget;
	const char *out;
	struct plan plan;
	int chosen[CAND_MAX_SITES];       /* candidate per site, or -1 */
	int kept_row[CAND_MAX_SITES];     /* its row in tried[] */
	struct spread site_ref[CAND_MAX_SITES]; /* faults without a rule for the site */
	struct spread site_ref_rss[CAND_MAX_SITES]; /* and peak RSS */
	int have_ref[CAND_MAX_SITES];
	struct tried tried[CAND_MAX];
	int ntried;
	struct confirm conf;
	const char *stopped;              /* NULL, "interrupted", "time budget" */
	int sig;
	uint64_t profile_faults;
	int nproc;
} T;

static struct compare C;

/* ---- policy files ---- */

/* The rules chosen, with site's rule replaced by candidate cand (-1: none). */
static int rules_text(char *buf, size_t cap, int site, int cand)
{
	size_t len = 0;
	int s;
	buf[0] = '\0';
	for (s = 0; s < T.plan.nsites; s++) {
		int k = s == site ? cand : T.chosen[s];
		int w;
		if (k < 0)
			continue;
		w = snprintf(buf + len, cap - len, "%s%s", len ? "\n" : "", T.plan.cands[k].rule);
		if (w < 0 || (size_t)w >= cap - len)
			return -1;
		len += (size_t)w;
	}
	return 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	size_t n = strlen(text);
	if (!f || fwrite(text, 1, n, f) != n) {
		int e = errno;
		if (f)
			fclose(f);
		errno = e;
		return -1;
	}
	return fclose(f);
}

/* dir/NAME.policy with the chosen rules, site's set to cand. */
static int scratch_policy(char *path, size_t cap, const char *name, int site, int cand)
{
	static char text[CAND_MAX_SITES * 1300];
	snprintf(path, cap, "%s/%s.policy", C.dir, name);
	if (rules_text(text, sizeof text, site, cand) < 0) {
		errno = ENOSPC;
		return -1;
	}
	return write_file(path, text);
}

/* ---- figures as people read them ---- */

static void faults_cell(char *out, size_t cap, double a, double b)
{
	if (a > 0)
		snprintf(out, cap, "%.0f -> %.0f (%+.0f%%)", a, b, 100 * (b - a) / a);
	else
		snprintf(out, cap, "%.0f -> %.0f", a, b);
}

static void rss_cell(char *out, size_t cap, double a, double b)
{
	snprintf(out, cap, "%.1f -> %.1f MiB", a / 1024, b / 1024);
}

static void ratio_cell(char *out, size_t cap, const struct spread *r, int rounds)
{
	if (rounds)
		snprintf(out, cap, "%.3f (%.3f-%.3f)", r->med, r->lo, r->hi);
	else
		snprintf(out, cap, "-");
}

/* ---- the trials ---- */

/* minor + major faults of a side, per round */
static struct spread total_faults(int s)
{
	double v[ROUNDS_MAX];
	int i;
	for (i = 0; i < C.rounds; i++)
		v[i] = C.side[s].runs[i].v[M_MINOR] + C.side[s].runs[i].v[M_MAJOR];
	return spread_of(v, C.rounds);
}

static void record(struct tried *t, int a, int b)
{
	double r[ROUNDS_MAX];
	int i;
	t->rounds = C.rounds;
	if (!C.rounds)
		return;
	compare_ratios(&C, a, b, M_WALL, r);
	t->ratio = spread_of(r, C.rounds);
	t->fa = compare_spread(&C, a, M_PROGRAM);
	t->fb = compare_spread(&C, b, M_PROGRAM);
	t->ra = compare_spread(&C, a, M_RSS);
	t->rb = compare_spread(&C, b, M_RSS);
	t->ta = total_faults(a);
	t->tb = total_faults(b);
	for (i = 0; i < C.rounds; i++) {
		t->wa[i] = C.side[a].runs[i].v[M_WALL];
		t->wb[i] = C.side[b].runs[i].v[M_WALL];
	}
}

/* Trouble in a comparison: 0 to go on (out of time: stop trying), or the
 * exit status to stop with. */
static int trouble(const char *what)
{
	if (C.stopped) {
		T.stopped = "interrupted";
		T.sig = C.stopped;
		progress_say("prefault tune: interrupted (signal %d, %s) during %s: writing the best policy found so far\n",
		             C.stopped, strsignal(C.stopped), what);
		return 0;
	}
	if (C.out_of_time) {
		T.stopped = "time budget";
		progress_say("prefault tune: the time budget (-t %g) ran out during %s: keeping what was done\n", T.budget,
		             what);
		return 0;
	}
	compare_show_failure(&C, "prefault tune");
	return C.failed ? C.failed : 1;
}

/* Trial candidate k (of site s) against the best so far.  Returns 0 to go
 * on, or an exit status to stop with. */
static int trial_candidate(int s, int k, int idx, int total)
{
	const char *labels[2] = { "best so far", "candidate" };
	char a[4400], b[4400], what[400], sshort[300], why[320], nowhy[400];
	const char *pols[2] = { a, b };
	struct tried *t = &T.tried[T.ntried];
	struct keep_input in;
	double r[ROUNDS_MAX];
	int rc;
	memset(t, 0, sizeof *t);
	t->cand = k;
	t->against = T.chosen[s];
	site_short(sshort, sizeof sshort, &T.plan.sites[s]);
	snprintf(what, sizeof what, "candidate %d of %d, %s for %s", idx, total, T.plan.cands[k].label, tty_str(sshort));
	progress_what(what);
	if (scratch_policy(a, sizeof a, "best", -1, -1) < 0 || scratch_policy(b, sizeof b, "cand", s, k) < 0) {
		progress_say("prefault tune: cannot write a policy in %s: %s\n", C.dir, strerror(errno));
		return 1;
	}
	if (compare_sides(&C, 2, labels, pols) < 0) {
		progress_say("prefault tune: out of memory\n");
		return 1;
	}
	T.ntried++;
	if (compare_run(&C, T.pairs, T.rank == RANK_TIME) < 0) {
		t->verdict = V_UNFINISHED;
		record(t, 0, 1);
		snprintf(t->why, sizeof t->why, "%s after %d of %d pairs", C.stopped ? "interrupted" : C.out_of_time ?
		         "the time budget ran out" : "the program failed", C.rounds, T.pairs);
		return trouble(what);
	}
	record(t, 0, 1);
	/* Observe mode (the first best so far) loads the shim: if it wrote no
	 * report, it never loaded, and no policy can do anything here. */
	if (C.side[0].runs[0].reports == 0) {
		progress_say("prefault tune: the shim wrote no report: %s; nothing to tune\n",
		             why_no_report(T.cmd[0], C.side[0].runs[0].status, nowhy, sizeof nowhy));
		t->verdict = V_REJECTED;
		snprintf(t->why, sizeof t->why, "the shim does not load into the program");
		return 1;
	}
	if (!T.have_ref[s]) {
		T.site_ref[s] = t->fa;
		T.site_ref_rss[s] = t->ra;
		T.have_ref[s] = 1;
	}
	memset(&in, 0, sizeof in);
	in.rank = T.rank;
	compare_ratios(&C, 0, 1, M_WALL, r);
	in.ratios = r;
	in.n = C.rounds;
	in.ref_faults = T.site_ref[s];
	in.a_faults = t->fa;
	in.b_faults = t->fb;
	in.a_rss = t->ra;
	in.b_rss = t->rb;
	in.a_total = t->ta;
	in.b_total = t->tb;
	rc = decide_keep(&in, why, sizeof why);
	snprintf(t->why, sizeof t->why, "%s", why);
	if (rc) {
		if (T.chosen[s] >= 0) {
			struct tried *old = &T.tried[T.kept_row[s]];
			char label[48];
			size_t n = strlen(old->why);
			snprintf(label, sizeof label, "%s", T.plan.cands[k].label);
			old->verdict = V_REPLACED;
			snprintf(old->why + n, sizeof old->why - n, "; replaced by %s", label);
		}
		T.chosen[s] = k;
		T.kept_row[s] = T.ntried - 1;
		t->verdict = V_KEPT;
	} else {
		t->verdict = V_REJECTED;
	}
	return 0;
}

static int nchosen(void)
{
	int s, n = 0;
	for (s = 0; s < T.plan.nsites; s++)
		n += T.chosen[s] >= 0;
	return n;
}

/* The combined policy against the program without prefault, with observe
 * mode beside it.  0 to go on, or an exit status. */
static int confirm(void)
{
	const char *labels[3] = { "without prefault", "observe mode", "tuned policy" };
	char o[4400], b[4400];
	const char *pols[3] = { NULL, o, b };
	double r[ROUNDS_MAX];
	struct confirm *cf = &T.conf;
	progress_what("confirming the combined policy");
	/* observe mode: an empty policy, its path as long as the other's */
	snprintf(o, sizeof o, "%s/none.policy", C.dir);
	if (write_file(o, "") < 0 || scratch_policy(b, sizeof b, "best", -1, -1) < 0) {
		progress_say("prefault tune: cannot write a policy in %s: %s\n", C.dir, strerror(errno));
		return 1;
	}
	if (compare_sides(&C, 3, labels, pols) < 0)
		return 1;
	if (compare_run(&C, T.pairs, T.rank == RANK_TIME) < 0)
		return trouble("the confirmation");
	cf->done = 1;
	cf->rounds = C.rounds;
	compare_ratios(&C, 0, 2, M_WALL, r);
	cf->ratio = spread_of(r, C.rounds);
	snprintf(cf->verdict, sizeof cf->verdict, "%s", decide_trial(r, C.rounds, "with the tuned policy", cf->why,
	                                                             sizeof cf->why));
	compare_ratios(&C, 0, 1, M_WALL, r);
	cf->ratio_obs = spread_of(r, C.rounds);
	decide_trial(r, C.rounds, "in observe mode", cf->obs_why, sizeof cf->obs_why);
	cf->fw = compare_spread(&C, 0, M_PROGRAM);
	cf->fo = compare_spread(&C, 1, M_PROGRAM);
	cf->fb = compare_spread(&C, 2, M_PROGRAM);
	cf->rw = compare_spread(&C, 0, M_RSS);
	cf->ro = compare_spread(&C, 1, M_RSS);
	cf->rb = compare_spread(&C, 2, M_RSS);
	/* Never slower than no policy: by time, the median must be faster; by
	 * faults, the cut must hold against the program without the shim. */
	if (T.rank == RANK_TIME) {
		cf->dropped = cf->ratio.med >= 1;
	} else {
		double cut = cf->fw.med > 0 ? (cf->fw.med - cf->fb.med) / cf->fw.med : 0;
		cf->dropped = cut < RANK_FAULT_CUT;
		snprintf(cf->verdict, sizeof cf->verdict, "%s", cf->dropped ? "no cut" : "fewer faults");
		snprintf(cf->why, sizeof cf->why, "%.0f%% of the faults left in the program cut (%.0f -> %.0f), %.0f%% needed",
		         100 * cut, cf->fw.med, cf->fb.med, 100 * RANK_FAULT_CUT);
	}
	return 0;
}

/* ---- the results ---- */

static void policy_header(FILE *f, int nrules)
{
	time_t now = time(NULL);
	struct tm tm;
	char when[64];
	int i;
	localtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
	fprintf(f, "# Tuned by: prefault tune -n %d%s", T.pairs, T.rank == RANK_FAULTS ? " --rank faults" : "");
	if (T.budget > 0)
		fprintf(f, " -t %g", T.budget);
	fprintf(f, " --");
	for (i = 0; T.cmd[i]; i++)
		fprintf(f, " %s", tty_str(T.cmd[i]));
	fprintf(f, "\n# %s: %d site%s worth a rule, %d candidate%s tried, %d rule%s kept.\n", when, T.plan.nsites,
	        T.plan.nsites == 1 ? "" : "s", T.ntried, T.ntried == 1 ? "" : "s", nrules, nrules == 1 ? "" : "s");
	if (T.rank == RANK_TIME)
		fprintf(f, "# Each rule was kept because, against the best policy so far (the shim on both sides), the\n"
		           "# median of %d alternating pairs was at least %.0f%% faster, nearly every pair agreed, and\n"
		           "# fewer faults were left in the program.\n", T.pairs, 100 * KEEP_MARGIN);
	else
		fprintf(f, "# Ranked by faults (--rank faults): each rule cut the faults left in the program by at least\n"
		           "# %.0f%% against the best policy so far, without moving them into the shim's work or raising\n"
		           "# peak RSS much.  Timings were not used: run prefault tune without --rank to measure the speed.\n",
		        100 * RANK_FAULT_CUT);
	if (T.stopped)
		fprintf(f, "# Stopped early (%s): the candidates not tried are not here.\n", T.stopped);
	if (T.conf.done)
		fprintf(f, "# Confirmed against the program without prefault (%d pair%s):\n#   %s;\n"
		           "#   faults in the program %.0f -> %.0f, peak RSS %.1f -> %.1f MiB.\n",
		        T.conf.rounds, T.conf.rounds == 1 ? "" : "s", T.conf.why, T.conf.fw.med, T.conf.fb.med,
		        T.conf.rw.med / 1024, T.conf.rb.med / 1024);
	else if (nrules)
		fprintf(f, "# Not confirmed against the program without prefault (%s).\n",
		        T.stopped ? "stopped early" : "no time left");
	fprintf(f, "# Check it with 'prefault check %s%s'; run with it: prefault run -p %s%s -- CMD.\n",
	        strchr(T.out, '/') ? "" : "./", tty_str(T.out), strchr(T.out, '/') ? "" : "./", tty_str(T.out));
}

static int write_result(const char *path)
{
	FILE *f = open_output(path);
	int s, n = T.conf.dropped ? 0 : nchosen();
	if (!f) {
		progress_say("prefault tune: cannot write %s: %s\n", tty_str(path), strerror(errno));
		return -1;
	}
	policy_header(f, n);
	fprintf(f, "\n[global]\nreport = stderr\n");
	if (T.conf.dropped)
		fprintf(f, "\n# The combined policy was not faster than the program without prefault (%s): the shim's\n"
		           "# own cost outweighs what its rules gain here, so this policy has no rules.  Run the program\n"
		           "# without prefault.\n", T.conf.why);
	else if (!n)
		fprintf(f, "\n# Nothing helped: no candidate was %s.  This policy has no rules.\n",
		        T.rank == RANK_TIME ? "faster by the margin with fewer faults left in the program" :
		                              "enough of a cut in the faults left in the program");
	for (s = 0; s < T.plan.nsites && !T.conf.dropped; s++) {
		const struct candidate *c;
		const struct tried *t;
		if (T.chosen[s] < 0)
			continue;
		c = &T.plan.cands[T.chosen[s]];
		t = &T.tried[T.kept_row[s]];
		fprintf(f, "\n# site %s\n", tty_str(T.plan.sites[s].desc));
		if (t->against >= 0)
			fprintf(f, "# measured (%d pair%s) against %s for this site: %.2fx faster (pairs %.2fx to %.2fx);\n",
			        t->rounds, t->rounds == 1 ? "" : "s", T.plan.cands[t->against].label, 1 / t->ratio.med,
			        1 / t->ratio.hi, 1 / t->ratio.lo);
		else
			fprintf(f, "# measured (%d pair%s) against no rule for this site: %.2fx faster (pairs %.2fx to %.2fx);\n",
			        t->rounds, t->rounds == 1 ? "" : "s", 1 / t->ratio.med, 1 / t->ratio.hi, 1 / t->ratio.lo);
		fprintf(f, "# against no rule for this site: faults in the program %.0f -> %.0f (%.0f%% fewer),\n"
		           "# peak RSS %.1f -> %.1f MiB (%+.1f MiB)\n",
		        T.site_ref[s].med, t->fb.med,
		        T.site_ref[s].med > 0 ? 100 * (T.site_ref[s].med - t->fb.med) / T.site_ref[s].med : 0.0,
		        T.site_ref_rss[s].med / 1024, t->rb.med / 1024, (t->rb.med - T.site_ref_rss[s].med) / 1024);
		if (c->hugepage)
			fprintf(f, "# hugepage changes memory use (whole 2 MiB pages, mappings aligned to them): peak RSS\n"
			           "# %+.1f MiB here; keep it only if that memory is yours to spend.\n",
			        (t->rb.med - T.site_ref_rss[s].med) / 1024);
		fputs(c->rule, f);
	}
	return close_output(f, path, "prefault tune");
}

static void print_table(int written)
{
	const char *none = written ? "wrote a policy with no rules" : "a policy with no rules, not written";
	int i, s = -1;
	char ratio[64], fc[64], rc[64];
	printf("\nprefault tune: %s: %d site%s worth a rule, %d candidate%s; ranked by %s\n", tty_str(T.cmd[0]), T.plan.nsites,
	       T.plan.nsites == 1 ? "" : "s", T.plan.ncands, T.plan.ncands == 1 ? "" : "s",
	       T.rank == RANK_TIME ? "time (3% faster, nearly every pair, fewer faults)" : "faults (a 20% cut)");
	printf("\n  %-38s %-22s %-28s %-24s %s\n", "site: candidate", "wall ratio (range)", "faults in the program",
	       "peak RSS", "verdict");
	for (i = 0; i < T.ntried; i++) {
		const struct tried *t = &T.tried[i];
		const struct candidate *c = &T.plan.cands[t->cand];
		char label[300];
		if (c->site != s) {
			s = c->site;
			site_short(label, sizeof label, &T.plan.sites[s]);
			printf("  %s\n", tty_str(label));
		}
		ratio_cell(ratio, sizeof ratio, &t->ratio, t->rounds);
		if (t->rounds) {
			faults_cell(fc, sizeof fc, t->fa.med, t->fb.med);
			rss_cell(rc, sizeof rc, t->ra.med, t->rb.med);
		} else {
			snprintf(fc, sizeof fc, "-");
			snprintf(rc, sizeof rc, "-");
		}
		printf("    %-36s %-22s %-28s %-24s %s: %s\n", c->label, ratio, fc, rc, vword[t->verdict], t->why);
	}
	for (i = 0; i < T.plan.nsites; i++)
		if (!T.plan.sites[i].n) {
			char label[300];
			site_short(label, sizeof label, &T.plan.sites[i]);
			printf("  %s\n    nothing to try: %s\n", tty_str(label), tty_str(T.plan.sites[i].none_why));
		}
	if (T.conf.done) {
		ratio_cell(ratio, sizeof ratio, &T.conf.ratio, T.conf.rounds);
		faults_cell(fc, sizeof fc, T.conf.fw.med, T.conf.fb.med);
		rss_cell(rc, sizeof rc, T.conf.rw.med, T.conf.rb.med);
		printf("\n  %-38s %-22s %-28s %-24s %s\n", "combined, against without prefault", ratio, fc, rc, T.conf.verdict);
		ratio_cell(ratio, sizeof ratio, &T.conf.ratio_obs, T.conf.rounds);
		faults_cell(fc, sizeof fc, T.conf.fw.med, T.conf.fo.med);
		rss_cell(rc, sizeof rc, T.conf.rw.med, T.conf.ro.med);
		printf("  %-38s %-22s %-28s %-24s\n", "observe mode, against without", ratio, fc, rc);
	}
	printf("\n");
	if (T.stopped)
		printf("stopped early (%s): kept what was done\n", T.stopped);
	if (T.conf.done)
		printf("confirmed: %s\n  the shim's own cost: %s\n", T.conf.why, T.conf.obs_why);
	if (T.plan.skipped_light)
		printf("%d lighter site%s (under %.0f%% of the faults each) not tried: no rule for %s could gain that much\n",
		       T.plan.skipped_light, T.plan.skipped_light == 1 ? "" : "s", 100 * CAND_MIN_SHARE,
		       T.plan.skipped_light == 1 ? "it" : "them");
	/* (say "wrote" only of a policy that was written) */
	if (T.conf.dropped)
		printf("the combined policy is not faster than the program without prefault: %s\n", none);
	else if (!nchosen() && T.stopped)
		printf("nothing kept before tune stopped: %s\n", none);
	else if (!nchosen())
		printf("nothing helped: %s; %s\n", T.plan.nsites ? "no candidate earned its place" :
		                                    "no mapping site takes enough of the faults", none);
	printf("policy: %s (%d rule%s)%s\n", tty_str(T.out), T.conf.dropped ? 0 : nchosen(),
	       (T.conf.dropped ? 0 : nchosen()) == 1 ? "" : "s", written ? "" : ": not written");
}

static void json_spread(const char *key, struct spread s)
{
	printf("\"%s\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g}", key, s.med, s.lo, s.hi);
}

/* ,"key":{"name0":{spread},"name1":{spread}...} */
static void json_sides(const char *key, int n, const char *const *names, const struct spread *v)
{
	int i;
	printf(",\"%s\":{", key);
	for (i = 0; i < n; i++) {
		if (i)
			putchar(',');
		json_spread(names[i], v[i]);
	}
	putchar('}');
}

static void print_json(int written)
{
	static const char *const ba[] = { "before", "after" }, *const woc[] = { "without", "observe", "with" };
	int i, k, s;
	char label[300];
	printf("{\"command\":[");
	for (i = 0; T.cmd[i]; i++) {
		if (i)
			putchar(',');
		json_string(stdout, T.cmd[i]);
	}
	printf("],\"rank\":\"%s\",\"pairs\":%d,\"policy\":", T.rank == RANK_TIME ? "time" : "faults", T.pairs);
	json_string(stdout, T.out);
	printf(",\"stopped\":");
	if (T.stopped)
		json_string(stdout, T.stopped);
	else
		printf("null");
	printf(",\"profile\":{\"processes\":%d,\"faults\":%llu},\"sites\":[", T.nproc,
	       (unsigned long long)T.profile_faults);
	for (s = 0; s < T.plan.nsites; s++) {
		const struct site_plan *sp = &T.plan.sites[s];
		site_short(label, sizeof label, sp);
		printf("%s{\"site\":", s ? "," : "");
		json_string(stdout, label);
		printf(",\"description\":");
		json_string(stdout, sp->desc);
		printf(",\"share\":%.4f,\"touched\":%.4f,\"works_before_touching\":%s,\"candidates\":[", sp->share, sp->dense,
		       sp->later ? "true" : "false");
		for (k = sp->first; k < sp->first + sp->n; k++) {
			if (k > sp->first)
				putchar(',');
			json_string(stdout, T.plan.cands[k].label);
		}
		printf("],\"rule\":");
		if (T.chosen[s] >= 0 && !T.conf.dropped)
			json_string(stdout, T.plan.cands[T.chosen[s]].label);
		else
			printf("null");
		printf("}");
	}
	printf("],\"tried\":[");
	for (i = 0; i < T.ntried; i++) {
		const struct tried *t = &T.tried[i];
		const struct candidate *c = &T.plan.cands[t->cand];
		site_short(label, sizeof label, &T.plan.sites[c->site]);
		printf("%s{\"site\":", i ? "," : "");
		json_string(stdout, label);
		printf(",\"candidate\":");
		json_string(stdout, c->label);
		printf(",\"rule\":");
		json_string(stdout, c->rule);
		printf(",\"rounds\":%d,", t->rounds);
		json_spread("wall_ratio", t->ratio);
		json_sides("faults_in_program", 2, ba, (struct spread[]){ t->fa, t->fb });
		json_sides("peak_rss_kb", 2, ba, (struct spread[]){ t->ra, t->rb });
		printf(",\"verdict\":\"%s\",\"why\":", vword[t->verdict]);
		json_string(stdout, t->why);
		printf(",\"pairs\":[");
		for (k = 0; k < t->rounds; k++)
			printf("%s[%.6f,%.6f]", k ? "," : "", t->wa[k], t->wb[k]);
		printf("]}");
	}
	printf("],\"confirm\":");
	if (T.conf.done) {
		printf("{\"rounds\":%d,\"verdict\":\"%s\",\"summary\":", T.conf.rounds, T.conf.verdict);
		json_string(stdout, T.conf.why);
		printf(",\"dropped\":%s,", T.conf.dropped ? "true" : "false");
		json_spread("wall_ratio", T.conf.ratio);
		putchar(',');
		json_spread("wall_ratio_observe", T.conf.ratio_obs);
		json_sides("faults_in_program", 3, woc, (struct spread[]){ T.conf.fw, T.conf.fo, T.conf.fb });
		json_sides("peak_rss_kb", 3, woc, (struct spread[]){ T.conf.rw, T.conf.ro, T.conf.rb });
		printf("}");
	} else {
		printf("null");
	}
	printf(",\"rules\":%d,\"written\":%s}\n", T.conf.dropped ? 0 : nchosen(), written ? "true" : "false");
}

/* ---- the command ---- */

static int parse_args(const struct command *self, int argc, char **argv, int *cmd_at)
{
	const char *budget = NULL, *rank = NULL;
	char *end;
	int n;
	const struct opt opts[] = {
		OPT_I("-n", &T.pairs, "PAIRS", 1, ROUNDS_MAX),
		OPT_S("-t", NULL, &budget, "SECONDS"),
		OPT_S("-o", NULL, &T.out, "POLICY"),
		OPT_F("--json", &T.json),
		OPT_S("--rank", NULL, &rank, "time|faults"),
		OPT_END,
	};
	T.pairs = 5;
	T.out = "tune.policy";
	T.rank = RANK_TIME;
	if ((*cmd_at = opt_parse(self, argc, argv, opts, &n)) < 0)
		return -1;
	if (budget) {
		T.budget = strtod(budget, &end);
		if (end == budget || *end || !(T.budget > 0) || T.budget > 1e7) {
			fprintf(stderr, "prefault tune: -t takes a number of seconds above 0\n");
			return -1;
		}
	}
	if (rank && !strcmp(rank, "faults")) {
		T.rank = RANK_FAULTS;
	} else if (rank && strcmp(rank, "time")) {
		fprintf(stderr, "prefault tune: --rank takes time or faults\n");
		return -1;
	}
	if (T.rank == RANK_TIME && T.pairs < 3) {
		fprintf(stderr, "prefault tune: ranking by time needs 3 pairs or more (-n 3), or --rank faults\n");
		return -1;
	}
	return 0;
}

/* Profile once, output discarded.  0, or an exit status. */
static int profile_once(struct profiled *p)
{
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC), out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int err = open(C.errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc, sig;
	progress_what("profiling the program once");
	progress_step(NULL);
	progress_run_start();
	rc = profile_program(T.cmd, in, out, err, p);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	if (rc < 0) {
		if (errno)
			progress_say("prefault tune: cannot start %s: %s\n", tty_str(T.cmd[0]), strerror(errno));
		return errno ? 126 : EXIT_USAGE;
	}
	progress_run_done(p->wall_s);
	if ((sig = child_take_signal())) {
		T.stopped = "interrupted";
		T.sig = sig;
		progress_say("prefault tune: interrupted (signal %d, %s) while profiling: nothing found yet\n", sig,
		             strsignal(sig));
		return 0;
	}
	if (child_timed_out()) {
		T.stopped = "time budget";
		progress_say("prefault tune: the time budget (-t %g) ran out while profiling: the program was stopped, "
		             "nothing found yet\n", T.budget);
		return 0;
	}
	if (p->status != 0) {
		C.failed = child_exit_code(p->status);
		C.failed_wstatus = p->status;
		C.failed_run = 1;
		/* (compare_show_failure names a side: give it one) */
		compare_sides(&C, 1, (const char *const[]){ "under the profiler" }, (const char *const[]){ NULL });
		C.failed_side = 0;
		compare_show_failure(&C, "prefault tune");
		return C.failed;
	}
	if (p->nproc == 0) {
		char why[400];
		progress_say("prefault tune: no profile was written: %s; nothing to tune\n",
		             why_no_report(T.cmd[0], p->status, why, sizeof why));
		return 1;
	}
	return 0;
}

/* Stopped by a failure: no policy is written (what was found was not
 * confirmed on a program that runs). */
static int failed(int rc)
{
	progress_end();
	compare_close(&C);
	if (T.json)
		printf("{\"failed\":true,\"exit_status\":%d}\n", rc);
	return rc;
}

int cmd_tune(const struct command *self, int argc, char **argv)
{
	static struct profiled prof;
	int at, rc, s, k, idx = 0;
	double t0 = mono_s(), est;
	if (parse_args(self, argc, argv, &at) < 0)
		return EXIT_USAGE;
	T.cmd = argv + at;
	if (!output_writable(T.out)) {
		fprintf(stderr, "prefault tune: cannot write %s: %s\n", tty_str(T.out), strerror(errno));
		return EXIT_USAGE;
	}
	for (s = 0; s < CAND_MAX_SITES; s++)
		T.chosen[s] = -1;
	if (compare_open(&C, T.cmd, "prefault tune") < 0)
		return EXIT_USAGE;
	progress_begin("prefault tune");
	if (T.budget > 0) { /* no run starts that would end later, and none goes on past it */
		C.deadline = t0 + T.budget;
		child_set_deadline(C.deadline);
		progress_deadline(C.deadline);
	}
	rc = profile_once(&prof);
	if (rc)
		return failed(rc);
	if (!T.stopped) {
		T.nproc = prof.nproc;
		T.profile_faults = prof.merged.minor + prof.merged.major;
		plan_candidates(&prof.merged, &T.plan);
		/* The profiler samples every fault: a plain run is quicker, but it is
		 * the best first guess there is. */
		progress_guess(prof.wall_s);
		progress_plan(1 + T.plan.ncands * 2 * (T.pairs + (T.rank == RANK_TIME)) +
		              (T.plan.ncands ? 3 * (T.pairs + (T.rank == RANK_TIME)) : 0));
		if (!T.json)
			progress_say("prefault tune: %s: %llu faults, %d site%s worth a rule, %d candidate%s; %d pair%s each%s, "
			             "program output discarded\n",
			             tty_str(T.cmd[0]), (unsigned long long)T.profile_faults, T.plan.nsites, T.plan.nsites == 1 ? "" : "s",
			             T.plan.ncands, T.plan.ncands == 1 ? "" : "s", T.pairs, T.pairs == 1 ? "" : "s",
			             T.rank == RANK_TIME ? " after a warm-up" : "");
	}
	for (s = 0; s < T.plan.nsites && !T.stopped; s++) {
		const struct site_plan *sp = &T.plan.sites[s];
		for (k = sp->first; k < sp->first + sp->n && !T.stopped; k++) {
			int runs = 2 * (T.pairs + (T.rank == RANK_TIME));
			idx++;
			/* Leave room for the confirmation: the work done is worth more
			 * confirmed than one more candidate unconfirmed. */
			est = progress_run_estimate();
			if (C.deadline > 0 && mono_s() + est * (runs + 3 * runs / 2) > C.deadline && nchosen()) {
				T.stopped = "time budget";
				progress_say("prefault tune: the time budget (-t %g) leaves no room for candidate %d of %d and the "
				             "confirmation: keeping what was done\n", T.budget, idx, T.plan.ncands);
				break;
			}
			rc = trial_candidate(s, k, idx, T.plan.ncands);
			if (rc)
				return failed(rc);
		}
	}
	/* Confirm, unless interrupted (the user wants out now) or nothing was kept. */
	if (nchosen() && (!T.stopped || !strcmp(T.stopped, "time budget"))) {
		const char *was = T.stopped;
		T.stopped = NULL;
		rc = confirm();
		if (rc)
			return failed(rc);
		if (!T.stopped)
			T.stopped = was;
	}
	progress_end();
	rc = write_result(T.out);
	if (T.json)
		print_json(rc == 0);
	else
		print_table(rc == 0);
	fflush(stdout);
	compare_close(&C);
	if (rc < 0)
		return 1;
	if (T.sig)
		return 128 + T.sig;
	return 0;
}
