/* decide.h: the decision rules of trial and tune, on recorded pair data.
 *
 * Pure functions of the figures (no I/O, no clock), so the rules are unit
 * tested on pairs recorded on a real machine (tests/unit/decide_test.c).
 *
 * A pair ratio is one side's wall time over the other side's in the same
 * round of alternating runs: drift on a noisy machine hits both alike.
 */
#ifndef PREFAULT_DECIDE_H
#define PREFAULT_DECIDE_H
#include <stddef.h>
#include "cli.h"

/* trial: the verdict on ratios (with / without) of n pairs; with says
 * what the second side is ("with the policy").
 *   "no effect"     median within 2% and the pairs within 5% of each other;
 *   "faster"        every pair faster (n >= 3);
 *   "slower"        every pair slower (n >= 3);
 *   "inconclusive"  otherwise.
 * Returns the word; why gets one sentence. */
const char *decide_trial(const double *ratios, int n, const char *with, char *why, size_t cap);

/* tune: keep a candidate?  Ranked by time (the default):
 *   - the median pair ratio (candidate / best so far) is at least 3% better
 *     (<= 0.97), with n >= 3 pairs;
 *   - nearly every pair agrees: at most 15% of the pairs (rounded down)
 *     not faster;
 *   - the faults left in the program fell against the policy without a
 *     rule for this site (ref): by at least 1% and by more than ref's own
 *     spread.  A rule that cuts no faults but "wins" is noise.
 * Ranked by faults (--rank faults, a verdict without timings): the faults
 * left in the program fell by at least 20% against the best so far (a),
 * while the faults of the whole process tree (the shim's own work
 * included) rose by no more than 10%, and peak RSS by no more than 10% or
 * 4 MiB, whichever is more: a rule that only moves
 * faults the best so far avoids altogether (populate in place of recycle)
 * is no gain. */
#define KEEP_MARGIN 0.03
#define KEEP_DISAGREE 0.15
#define KEEP_FAULT_CUT 0.01
#define RANK_FAULT_CUT 0.20
#define RANK_RSS_RISE 0.10
#define RANK_RSS_SLACK_KB 4096.0
#define RANK_TOTAL_RISE 0.10

enum rank { RANK_TIME, RANK_FAULTS };

struct keep_input {
	enum rank rank;
	const double *ratios; /* candidate / best so far, per pair */
	int n;
	struct spread ref_faults;     /* faults in the program without a rule for the site */
	struct spread a_faults, b_faults; /* best so far, candidate */
	struct spread a_rss, b_rss;
	struct spread a_total, b_total;   /* all faults of the tree (minor + major) */
};

/* 1: keep, 0: reject; why gets the reason. */
int decide_keep(const struct keep_input *in, char *why, size_t cap);
#endif
