/* decide_test.c: the decision rules of trial and tune (tools/decide.c) on
 * pair data recorded on the development machine, and on their edges.
 * Built by `make probes`, run by `make unit` and by tests/tune.bats.
 * Prints one line per case; exits 1 if any case fails. */
#include "decide.h"
#include <stdio.h>
#include <string.h>

static int failures, cases;

/* Wall seconds per pair, (a, b) as recorded: the ratio is b / a. */
struct pairs {
	int n;
	double a[16], b[16];
};

static int ratios(const struct pairs *p, double *r)
{
	int i;
	for (i = 0; i < p->n; i++)
		r[i] = p->b[i] / p->a[i];
	return p->n;
}

static void check_trial(const char *name, const struct pairs *p, const char *want)
{
	double r[16];
	char why[320];
	int n = ratios(p, r);
	const char *got = decide_trial(r, n, "with the policy", why, sizeof why);
	cases++;
	if (strcmp(got, want)) {
		failures++;
		printf("FAIL trial %s: got \"%s\", want \"%s\" (%s)\n", name, got, want, why);
	} else {
		printf("ok   trial %s: %s\n", name, why);
	}
}

static struct spread sp(double lo, double med, double hi)
{
	struct spread s = { lo, med, hi };
	return s;
}

static void check_keep(const char *name, struct keep_input in, const double *r, int n, int want)
{
	char why[320];
	int got;
	in.ratios = r;
	in.n = n;
	got = decide_keep(&in, why, sizeof why);
	cases++;
	if (got != want) {
		failures++;
		printf("FAIL keep %s: got %s, want %s (%s)\n", name, got ? "kept" : "rejected", want ? "kept" : "rejected", why);
	} else {
		printf("ok   keep %s: %s: %s\n", name, got ? "kept" : "rejected", why);
	}
}

int main(void)
{
	/* Recorded 2026-12-01 with `prefault trial -n 7 --json` (the "pairs"
	 * member), load average 0.6 to 1.4 unless said. */
	/* pfprobe burn 300 under an empty policy: compute only */
	static const struct pairs burn = { 7,
		{ 0.305809, 0.305653, 0.305442, 0.304979, 0.306638, 0.305883, 0.306053 },
		{ 0.306366, 0.308179, 0.306506, 0.308274, 0.306945, 0.308792, 0.306712 } };
	/* examples/stream under the streaming policy */
	static const struct pairs stream = { 7,
		{ 1.071763, 1.12718, 1.114818, 0.891603, 1.077138, 1.06553, 1.087291 },
		{ 0.26634, 0.141463, 0.076019, 0.198173, 0.316877, 0.143165, 0.203301 } };
	/* pfprobe burn 100 under an empty policy, python3 running beside it */
	static const struct pairs burn_loaded = { 7,
		{ 0.110018, 0.108836, 0.107097, 0.111395, 0.110545, 0.106086, 0.105689 },
		{ 0.110159, 0.111254, 0.10908, 0.114084, 0.109232, 0.10801, 0.106472 } };
	/* python3 -c 'sum(range(3000000))' under an empty policy, pfprobe beside it */
	static const struct pairs py_loaded = { 7,
		{ 0.087194, 0.081357, 0.08097, 0.088195, 0.080309, 0.060567, 0.077192 },
		{ 0.088458, 0.093068, 0.079287, 0.084482, 0.067194, 0.067472, 0.064332 } };
	/* /bin/true under the streaming policy: the shim's start-up, alone */
	static const struct pairs shim_start = { 7,
		{ 1, 1, 1, 1, 1, 1, 1 },
		{ 1.1467, 1.4584, 1.1798, 1.8625, 1.4443, 1.7427, 1.386 } };
	double r[16];
	struct keep_input k;
	int n;

	check_trial("burn 300, empty policy", &burn, "no effect");
	check_trial("stream, streaming policy", &stream, "faster");
	check_trial("burn 100 beside python3", &burn_loaded, "no effect");
	check_trial("python3 beside pfprobe", &py_loaded, "inconclusive");
	check_trial("/bin/true, streaming policy", &shim_start, "slower");
	{
		struct pairs two = stream;
		two.n = 2; /* two pairs agree, but that is too few to say faster */
		check_trial("stream, 2 pairs", &two, "inconclusive");
	}

	/* tune's rule, by time */
	memset(&k, 0, sizeof k);
	k.rank = RANK_TIME;
	k.ref_faults = k.a_faults = sp(67660, 67668, 67670);
	k.b_faults = sp(2106, 2107, 2107);
	k.a_rss = k.b_rss = sp(265000, 265300, 265400);
	n = ratios(&stream, r);
	check_keep("stream: 5x faster, 32x fewer faults", k, r, n, 1);
	k.b_faults = k.ref_faults; /* the same pairs, but no fault cut: noise */
	check_keep("stream's timings with no fault cut", k, r, n, 0);
	k.b_faults = sp(2106, 2107, 2107);
	n = ratios(&burn, r);
	check_keep("burn: no effect", k, r, n, 0);
	n = ratios(&py_loaded, r);
	check_keep("python3 beside pfprobe: pairs disagree", k, r, n, 0);
	{
		/* 5% faster in every pair but one of seven: nearly every pair agrees */
		double one_off[7] = { 0.95, 0.94, 0.96, 1.01, 0.95, 0.93, 0.95 };
		double two_off[7] = { 0.95, 0.94, 1.02, 1.01, 0.95, 0.93, 0.95 };
		double under[7] = { 0.98, 0.975, 0.98, 0.97, 0.985, 0.98, 0.975 };
		double at[5] = { 0.97, 0.96, 0.97, 0.965, 0.97 };
		check_keep("one pair of seven off", k, one_off, 7, 1);
		check_keep("two pairs of seven off", k, two_off, 7, 0);
		check_keep("2% faster: under the margin", k, under, 7, 0);
		check_keep("3% faster: at the margin", k, at, 5, 1);
		check_keep("3% faster on two pairs: too few", k, at, 2, 0);
		/* the faults fell, but by less than the spread of the reference */
		k.ref_faults = sp(20000, 22479, 24000);
		k.b_faults = sp(20500, 21000, 21500);
		check_keep("fault cut within the noise", k, at, 5, 0);
		k.b_faults = sp(1100, 1203, 1300);
		check_keep("fault cut beyond the noise", k, at, 5, 1);
	}

	/* Recorded with `prefault tune -n 5 --json` (bench/tune.sh, 2026-12-01
	 * 08:24 UTC, load about 1), each candidate against the best so far. */
	{
		/* churn_text.py: recycle for pymalloc's arenas, against observe mode */
		static const struct pairs recycle = { 5,
			{ 0.537838, 0.537116, 0.530939, 0.543589, 0.543449 },
			{ 0.278874, 0.272577, 0.27517, 0.256952, 0.276708 } };
		/* churn_text.py: populate in its place, against recycle */
		static const struct pairs populate = { 5,
			{ 0.269689, 0.256933, 0.267633, 0.271624, 0.257289 },
			{ 0.428654, 0.390415, 0.425382, 0.424577, 0.421432 } };
		/* steady.py 40 (no arena churn): recycle, against observe mode */
		static const struct pairs steady_recycle = { 5,
			{ 0.454639, 0.476891, 0.422859, 0.421431, 0.464416 },
			{ 0.438669, 0.464042, 0.436245, 0.519868, 0.422375 } };
		/* steady.py 40: populate for a malloc site, against recycle */
		static const struct pairs steady_populate = { 5,
			{ 0.476184, 0.449269, 0.419988, 0.49189, 0.42228 },
			{ 0.450374, 0.501095, 0.399992, 0.418601, 0.42275 } };
		struct keep_input t;
		memset(&t, 0, sizeof t);
		t.rank = RANK_TIME;
		t.ref_faults = t.a_faults = sp(22427, 22454, 22694);
		t.b_faults = sp(4514, 4516, 4543);
		t.a_rss = sp(21208, 21276, 21344);
		t.b_rss = sp(22228, 22288, 22376);
		n = ratios(&recycle, r);
		check_keep("churn_text.py: recycle", t, r, n, 1);
		t.a_faults = sp(4515, 4516, 4543);
		t.b_faults = sp(1041, 1043, 1043);
		n = ratios(&populate, r);
		check_keep("churn_text.py: populate after recycle", t, r, n, 0);
		n = ratios(&steady_recycle, r);
		check_keep("steady.py: recycle", t, r, n, 0);
		n = ratios(&steady_populate, r);
		check_keep("steady.py: populate, pairs disagree", t, r, n, 0);
	}

	/* tune's rule, by faults (--rank faults): no timings at all */
	memset(&k, 0, sizeof k);
	k.rank = RANK_FAULTS;
	k.a_faults = sp(24700, 24751, 24800);
	k.b_faults = sp(8500, 8567, 8600); /* recycle on pfprobe mixed's churn */
	k.a_rss = sp(35000, 35396, 35500);
	k.b_rss = sp(35000, 36420, 36500);
	k.a_total = sp(24700, 24751, 24800);
	k.b_total = sp(8500, 8567, 8600);
	n = ratios(&burn, r); /* the timings say nothing: it is the faults */
	check_keep("faults: 65% cut", k, r, n, 1);
	k.b_faults = sp(20000, 20500, 21000);
	check_keep("faults: 17% cut", k, r, n, 0);
	{
		/* Recorded: pfprobe churn 16 1M, populate tried against recycle:
		 * fewer faults left in the program, but the process takes ten
		 * times the faults in all (the shim takes them): moved, not saved. */
		struct keep_input m = k;
		m.a_faults = sp(436, 436, 436);
		m.b_faults = sp(177, 177, 177);
		m.a_total = sp(438, 438, 438);
		m.b_total = sp(4272, 4272, 4272);
		m.b_rss = m.a_rss;
		check_keep("faults: populate in place of recycle", m, r, n, 0);
		m.b_total = sp(450, 450, 450);
		check_keep("faults: the same cut with no faults moved", m, r, n, 1);
	}
	k.b_faults = sp(100, 200, 300);
	k.b_rss = sp(70000, 71000, 72000);
	check_keep("faults: cut, but twice the peak RSS", k, r, n, 0);
	{
		/* Recorded: pfprobe churn 128 1M, recycle against observe mode:
		 * 12% more peak RSS, but that is 0.3 MiB (one kept region). */
		struct keep_input m = k;
		m.a_faults = sp(32934, 32934, 32934);
		m.b_faults = sp(430, 430, 430);
		m.a_total = sp(32936, 32936, 32936);
		m.b_total = sp(432, 432, 432);
		m.a_rss = sp(2662, 2662, 2662);
		m.b_rss = sp(2970, 2970, 2970);
		check_keep("faults: recycle, a small RSS rise", m, r, n, 1);
	}
	k.a_faults = sp(0, 0, 0);
	k.b_faults = sp(0, 0, 0);
	k.b_rss = k.a_rss;
	check_keep("faults: none to cut", k, r, 1, 0);

	printf("%d cases, %d failed\n", cases, failures);
	return failures ? 1 : 0;
}
