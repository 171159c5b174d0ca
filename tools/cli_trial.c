/* cli_trial.c: `prefault trial [-n RUNS] -p POLICY [--observe] [--json] -- CMD [ARGS...]`.
 *
 * Does this policy help this program?  Runs it without the shim and with
 * the policy (and, with --observe, under the shim in observe mode: an empty
 * policy), alternating after one warm-up of each, like with like (see
 * compare.h), and compares medians of what wait4 reports (wall, user and
 * system time, faults, peak RSS) and of the faults left in the program.
 * The verdict rests on the per-pair ratios of wall time (decide.h).
 * With --observe the shim's own cost shows apart from the policy's effect.
 */
#include "cli.h"
#include "fmt.h"
#include "compare.h"
#include "decide.h"
#include "progress.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { S_WITHOUT, S_WITH, S_OBSERVE };

static void fmt(char *out, size_t cap, int m, double v)
{
	if (m <= M_SYS)
		snprintf(out, cap, "%.3f s", v);
	else if (m == M_RSS)
		snprintf(out, cap, "%.1f MiB", v / 1024);
	else
		snprintf(out, cap, "%.0f", v);
}

/* "0.752 s (0.715 s-0.794 s)", or compact: "0.752 s (0.715-0.794)" */
static void cell(char *out, size_t cap, int m, struct spread s, int compact)
{
	char md[24], lo[24], hi[24];
	fmt(md, sizeof md, m, s.med);
	if (compact) {
		int d = m <= M_SYS ? 3 : m == M_RSS ? 1 : 0;
		double k = m == M_RSS ? 1024 : 1;
		snprintf(out, cap, "%s (%.*f-%.*f)", md, d, s.lo / k, d, s.hi / k);
		return;
	}
	fmt(lo, sizeof lo, m, s.lo);
	fmt(hi, sizeof hi, m, s.hi);
	snprintf(out, cap, "%s (%s-%s)", md, lo, hi);
}

static void ratio_cell(char *out, size_t cap, double a, double b)
{
	if (a > 0)
		snprintf(out, cap, "%.3f", b / a);
	else
		snprintf(out, cap, "%s", b > 0 ? "-" : "1.000");
}

static void json_spread(struct spread s)
{
	printf("{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g}", s.med, s.lo, s.hi);
}

static void print_json(const struct compare *c, char **cmd, const char *policy, const char *verdict, const char *why,
                       const char *const *sub, const char *const *subwhy)
{
	double r[ROUNDS_MAX];
	struct spread ra;
	int k, m, obs = c->nsides > 2;
	printf("{\"command\":[");
	for (k = 0; cmd[k]; k++) {
		if (k)
			putchar(',');
		json_string(stdout, cmd[k]);
	}
	printf("],\"policy\":");
	json_string(stdout, policy);
	printf(",\"runs\":%d,\"verdict\":\"%s\",\"summary\":", c->rounds, verdict);
	json_string(stdout, why);
	compare_ratios(c, S_WITHOUT, S_WITH, M_WALL, r);
	ra = spread_of(r, c->rounds);
	printf(",\"wall_ratio\":{\"median\":%.4f,\"min\":%.4f,\"max\":%.4f}", ra.med, ra.lo, ra.hi);
	if (obs) {
		printf(",\"shim_cost\":{\"verdict\":\"%s\",\"summary\":", sub[0]);
		json_string(stdout, subwhy[0]);
		printf("},\"policy_effect\":{\"verdict\":\"%s\",\"summary\":", sub[1]);
		json_string(stdout, subwhy[1]);
		printf("}");
	}
	for (m = 0; m < M_COUNT; m++) {
		struct spread a = compare_spread(c, S_WITHOUT, m), b = compare_spread(c, S_WITH, m);
		printf(",\"%s\":{\"without\":", measure_key[m]);
		json_spread(a);
		printf(",\"with\":");
		json_spread(b);
		if (obs) {
			struct spread o = compare_spread(c, S_OBSERVE, m);
			printf(",\"observe\":");
			json_spread(o);
			printf(",\"ratio_observe\":%.4f,\"ratio_policy\":%.4f", a.med > 0 ? o.med / a.med : 0,
			       o.med > 0 ? b.med / o.med : 0);
		}
		printf(",\"ratio\":%.4f}", a.med > 0 ? b.med / a.med : 0);
	}
	/* The raw pairs, for the record (tests/unit/decide_test.c keeps some). */
	printf(",\"pairs\":[");
	for (k = 0; k < c->rounds; k++) {
		printf("%s{\"without\":%.6f,\"with\":%.6f", k ? "," : "", c->side[S_WITHOUT].runs[k].v[M_WALL],
		       c->side[S_WITH].runs[k].v[M_WALL]);
		if (obs)
			printf(",\"observe\":%.6f", c->side[S_OBSERVE].runs[k].v[M_WALL]);
		printf("}");
	}
	printf("]}\n");
}

static void print_table(const struct compare *c, const char *why, const char *const *subwhy)
{
	int m, obs = c->nsides > 2;
	struct spread a, b;
	if (obs)
		printf("\n%-22s %-26s %-26s %-26s %-8s %-8s %s\n", "", "without prefault", "observe mode", "with the policy",
		       "obs/w.o.", "with/obs", "with/without");
	else
		printf("\n%-22s %-34s %-34s %s\n", "", "without prefault", "with the policy", "with/without");
	for (m = 0; m < M_COUNT; m++) {
		char ca[80], cb[80], co[80], r1[16], r2[16], r3[16];
		a = compare_spread(c, S_WITHOUT, m);
		b = compare_spread(c, S_WITH, m);
		cell(ca, sizeof ca, m, a, obs);
		cell(cb, sizeof cb, m, b, obs);
		ratio_cell(r3, sizeof r3, a.med, b.med);
		if (obs) {
			struct spread o = compare_spread(c, S_OBSERVE, m);
			cell(co, sizeof co, m, o, 1);
			ratio_cell(r1, sizeof r1, a.med, o.med);
			ratio_cell(r2, sizeof r2, o.med, b.med);
			printf("%-22s %-26s %-26s %-26s %-8s %-8s %s\n", measure_label[m], ca, co, cb, r1, r2, r3);
		} else {
			printf("%-22s %-34s %-34s %s\n", measure_label[m], ca, cb, r3);
		}
	}
	printf("\nverdict: %s\n", why);
	if (obs) {
		printf("  the shim's own cost (observe mode against without): %s\n", subwhy[0]);
		printf("  the policy's effect (with the policy against observe mode): %s\n", subwhy[1]);
	}
	a = compare_spread(c, S_WITHOUT, M_PROGRAM);
	b = compare_spread(c, S_WITH, M_PROGRAM);
	if (a.med > 0 && b.med < a.med)
		printf("faults left in the program: %.0f -> %.0f (%.1fx fewer)\n", a.med, b.med, b.med > 0 ? a.med / b.med : a.med);
	else
		printf("faults left in the program: %.0f -> %.0f (none fewer)\n", a.med, b.med);
}

int cmd_trial(const struct command *self, int argc, char **argv)
{
	const char *policy_arg = NULL, *labels[3], *pols[3];
	char *policy = NULL, empty[4300], why[320], subwhy[2][320];
	const char *verdict, *sub[2] = { "", "" }, *subw[2] = { subwhy[0], subwhy[1] };
	int runs = 5, json = 0, observe = 0, i, rc = 0;
	static struct policy pol;
	static struct compare c;
	double r[ROUNDS_MAX];
	FILE *f;
	const struct opt opts[] = {
		OPT_I("-n", &runs, "RUNS", 1, ROUNDS_MAX),
		{ "-p", NULL, OPT_STR, &policy_arg, "POLICY", 0, 0, 1 },
		OPT_F("--json", &json),
		OPT_F("--observe", &observe),
		OPT_END,
	};
	int n;
	if ((i = opt_parse(self, argc, argv, opts, &n)) < 0)
		return EXIT_USAGE;
	policy = resolve_policy(policy_arg);
	if (!policy || load_policy_file(policy, strchr(policy_arg, '/') ? policy_arg : policy, &pol) < 0)
		return EXIT_USAGE;
	if (compare_open(&c, argv + i, "prefault trial") < 0)
		return EXIT_USAGE;
	labels[S_WITHOUT] = "without prefault";
	labels[S_WITH] = "with the policy";
	labels[S_OBSERVE] = "in observe mode";
	pols[S_WITHOUT] = NULL;
	pols[S_WITH] = policy;
	/* Observe mode: the shim with an empty policy (no rules, no report key). */
	snprintf(empty, sizeof empty, "%s/observe.policy", c.dir);
	pols[S_OBSERVE] = empty;
	if (observe && (!(f = fopen(empty, "w")) || fclose(f) != 0)) {
		fprintf(stderr, "prefault trial: cannot write %s: %s\n", empty, strerror(errno));
		compare_close(&c);
		return EXIT_USAGE;
	}
	if (compare_sides(&c, observe ? 3 : 2, labels, pols) < 0) {
		perror("prefault trial");
		compare_close(&c);
		return EXIT_USAGE;
	}
	progress_begin("prefault trial");
	progress_plan((runs + 1) * c.nsides);
	if (!json)
		progress_say("prefault trial: %d alternating %s after a warm-up of each; program output discarded\n", runs,
		             observe ? "rounds (without, observe mode, with the policy)" : "pairs");
	if (compare_run(&c, runs, 1) < 0) {
		progress_end();
		if (c.stopped) {
			fprintf(stderr, "prefault trial: stopped by signal %d (%s)\n", c.stopped, strsignal(c.stopped));
			rc = 128 + c.stopped;
		} else {
			compare_show_failure(&c, "prefault trial");
			rc = 1;
		}
		if (json)
			printf("{\"failed\":true,\"exit_status\":%d}\n", c.stopped ? rc : c.failed);
		compare_close(&c);
		free(policy);
		return rc;
	}
	progress_end();
	compare_ratios(&c, S_WITHOUT, S_WITH, M_WALL, r);
	verdict = decide_trial(r, c.rounds, "with the policy", why, sizeof why);
	if (observe) {
		compare_ratios(&c, S_WITHOUT, S_OBSERVE, M_WALL, r);
		sub[0] = decide_trial(r, c.rounds, "in observe mode", subwhy[0], sizeof subwhy[0]);
		compare_ratios(&c, S_OBSERVE, S_WITH, M_WALL, r);
		sub[1] = decide_trial(r, c.rounds, "with the policy than in observe mode", subwhy[1], sizeof subwhy[1]);
	}
	if (json)
		print_json(&c, argv + i, policy, verdict, why, sub, subw);
	else
		print_table(&c, why, subw);
	compare_close(&c);
	free(policy);
	return 0;
}
