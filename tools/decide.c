/* decide.c: see decide.h. */
#include "decide.h"
#include <stdio.h>
#include <string.h>

const char *decide_trial(const double *ratios, int n, const char *with, char *why, size_t cap)
{
	double v[128];
	struct spread ra;
	int i;
	if (n < 1) {
		snprintf(why, cap, "no pairs were run");
		return "inconclusive";
	}
	if (n > 128)
		n = 128;
	for (i = 0; i < n; i++)
		v[i] = ratios[i];
	ra = spread_of(v, n);
	/* Under 2% with the pairs close together is no effect worth a policy
	 * (the shim's own start-up costs about 0.5 ms); otherwise every pair
	 * must agree before the answer is faster or slower. */
	if (ra.med >= 0.98 && ra.med <= 1.02 && (ra.hi - ra.lo) / 2 <= 0.05) {
		snprintf(why, cap, "no effect on run time: within 2%% (ratio %.3f, pairs %.3f to %.3f)", ra.med, ra.lo, ra.hi);
		return "no effect";
	}
	if (ra.hi < 1 && n >= 3) {
		snprintf(why, cap, "faster %s: %.2fx (every pair agrees: %.2fx to %.2fx)", with, 1 / ra.med, 1 / ra.hi,
		         1 / ra.lo);
		return "faster";
	}
	if (ra.lo > 1 && n >= 3) {
		snprintf(why, cap, "slower %s: %.2fx the time (every pair agrees: %.2fx to %.2fx)", with, ra.med, ra.lo,
		         ra.hi);
		return "slower";
	}
	if (n < 3) {
		snprintf(why, cap, "inconclusive: %d pair%s too few for a verdict (ratios %.2f to %.2f, median %.2f); "
		         "run more (-n 5)", n, n == 1 ? " is" : "s are", ra.lo, ra.hi, ra.med);
		return "inconclusive";
	}
	snprintf(why, cap,
	         "inconclusive: the pairs disagree (ratios %.2f to %.2f, median %.2f); the spread is larger than the "
	         "difference; try more runs (-n %d)",
	         ra.lo, ra.hi, ra.med, n * 3 > 100 ? 100 : n * 3);
	return "inconclusive";
}

static int decide_faults(const struct keep_input *in, char *why, size_t cap)
{
	double a = in->a_faults.med, b = in->b_faults.med;
	double cut = a > 0 ? (a - b) / a : 0;
	if (cut < RANK_FAULT_CUT) {
		snprintf(why, cap, "cuts %.0f%% of the faults left in the program (%.0f -> %.0f): %.0f%% needed", 100 * cut, a,
		         b, 100 * RANK_FAULT_CUT);
		return 0;
	}
	if (in->b_total.med > in->a_total.med * (1 + RANK_TOTAL_RISE)) {
		snprintf(why, cap, "cuts %.0f%% of the faults left in the program, but the process takes %.1fx the faults in "
		         "all (%.0f -> %.0f): moved, not saved", 100 * cut, in->b_total.med / in->a_total.med,
		         in->a_total.med, in->b_total.med);
		return 0;
	}
	if (in->b_rss.med - in->a_rss.med > in->a_rss.med * RANK_RSS_RISE &&
	    in->b_rss.med - in->a_rss.med > RANK_RSS_SLACK_KB) {
		snprintf(why, cap, "cuts %.0f%% of the faults but raises peak RSS by %.0f%% (%.1f MiB; %.0f%% or %.0f MiB "
		         "allowed)", 100 * cut, 100 * (in->b_rss.med / in->a_rss.med - 1),
		         (in->b_rss.med - in->a_rss.med) / 1024, 100 * RANK_RSS_RISE, RANK_RSS_SLACK_KB / 1024);
		return 0;
	}
	snprintf(why, cap, "cuts %.0f%% of the faults left in the program (%.0f -> %.0f)", 100 * cut, a, b);
	return 1;
}

int decide_keep(const struct keep_input *in, char *why, size_t cap)
{
	double v[128];
	struct spread ra;
	int i, n = in->n > 128 ? 128 : in->n, slower = 0, allowed;
	double ref, b, fell;
	if (in->rank == RANK_FAULTS)
		return decide_faults(in, why, cap);
	if (n < 3) {
		snprintf(why, cap, "%d pair%s: too few for a verdict on time (3 at least)", n, n == 1 ? "" : "s");
		return 0;
	}
	for (i = 0; i < n; i++) {
		v[i] = in->ratios[i];
		slower += v[i] >= 1;
	}
	ra = spread_of(v, n);
	allowed = (int)(n * KEEP_DISAGREE);
	if (ra.med > 1 - KEEP_MARGIN) {
		snprintf(why, cap, "%s: median ratio %.3f, %.0f%% better needed", ra.med < 1 ? "not faster by the margin" :
		         "not faster", ra.med, 100 * KEEP_MARGIN);
		return 0;
	}
	if (slower > allowed) {
		snprintf(why, cap, "the pairs disagree: %d of %d not faster (%d allowed)", slower, n, allowed);
		return 0;
	}
	ref = in->ref_faults.med;
	b = in->b_faults.med;
	fell = ref - b;
	if (fell < ref * KEEP_FAULT_CUT || fell <= in->ref_faults.hi - in->ref_faults.lo) {
		snprintf(why, cap, "faster (%.3f) but cuts no faults in the program (%.0f -> %.0f): noise", ra.med, ref, b);
		return 0;
	}
	snprintf(why, cap, "%.2fx faster (pairs %.2fx to %.2fx), %.0f -> %.0f faults in the program", 1 / ra.med,
	         1 / ra.hi, 1 / ra.lo, ref, b);
	return 1;
}
