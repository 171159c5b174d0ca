/* cli_trial.c: `prefault trial [-n RUNS] -p POLICY [--json] -- CMD [ARGS...]`.
 *
 * Does this policy help this program?  Runs it without the shim and with
 * the policy, alternating (A B A B ...) after one warm-up of each, so drift
 * on a noisy machine hits both sides alike, and compares medians of what
 * wait4 reports (wall, user and system time, faults, peak RSS) and of the
 * faults the shim's report says were left in the program.  The verdict
 * rests on the per-pair ratios of wall time: "no effect" within 2% with the
 * pairs close together, faster or slower only if every pair agrees,
 * otherwise inconclusive.
 */
#include "cli.h"
#include "fmt.h"
#include "child.h"
#include "reports.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { M_WALL, M_USER, M_SYS, M_MINOR, M_MAJOR, M_RSS, M_PROGRAM, M_COUNT };
static const char *const mname[M_COUNT] = { "wall_s", "user_s", "sys_s", "minor_faults", "major_faults",
                                            "peak_rss_kb", "faults_in_program" };
static const char *const mlabel[M_COUNT] = { "wall", "user", "system", "minor faults", "major faults", "peak RSS",
                                             "faults in the program" };

struct run {
	double v[M_COUNT];
	int status; /* wait status */
};

/* Sum "in_program" over the reports a run left in dir, and empty it. */
static long sum_reports(const char *dir, int *count)
{
	struct report_set rs;
	long sum = 0;
	int k;
	*count = 0;
	if (reports_load(dir, &rs) == 0) {
		for (k = 0; k < rs.n; k++)
			sum += (long)report_in_program(rs.docs[k]);
		*count = rs.n;
		reports_free(&rs);
	}
	scratch_clean(dir, 0);
	return sum;
}

struct with_env {
	const char *policy, *dir;
};

/* In the child of a run with the policy: the shim, the policy, reports in dir. */
static void set_with_env(void *arg)
{
	const struct with_env *w = arg;
	char spec[4400];
	snprintf(spec, sizeof spec, "%s/%%p.json", w->dir);
	setenv("PREFAULT_POLICY", w->policy, 1);
	setenv("PREFAULT_REPORT", spec, 1);
	if (set_preload(find_shim()) < 0)
		_exit(126);
}

static int run_once(char **cmd, int with, const char *policy, const char *dir, const char *errfile, struct run *r)
{
	struct child_spec spec;
	struct child_result cr;
	struct with_env w = { policy, dir };
	int nrep, rc;
	memset(&spec, 0, sizeof spec);
	spec.argv = cmd;
	spec.fd_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	spec.fd_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	spec.fd_err = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (with) {
		spec.in_child = set_with_env;
		spec.arg = &w;
	}
	rc = child_run(&spec, &cr);
	if (spec.fd_in >= 0)
		close(spec.fd_in);
	if (spec.fd_out >= 0)
		close(spec.fd_out);
	if (spec.fd_err >= 0)
		close(spec.fd_err);
	if (rc < 0)
		return -1;
	r->v[M_WALL] = cr.wall_s;
	r->v[M_USER] = (double)cr.ru.ru_utime.tv_sec + (double)cr.ru.ru_utime.tv_usec / 1e6;
	r->v[M_SYS] = (double)cr.ru.ru_stime.tv_sec + (double)cr.ru.ru_stime.tv_usec / 1e6;
	r->v[M_MINOR] = (double)cr.ru.ru_minflt;
	r->v[M_MAJOR] = (double)cr.ru.ru_majflt;
	r->v[M_RSS] = (double)cr.ru.ru_maxrss;
	r->status = cr.status;
	if (with) {
		long inprog = sum_reports(dir, &nrep);
		r->v[M_PROGRAM] = nrep ? (double)inprog : r->v[M_MINOR] + r->v[M_MAJOR];
	} else {
		r->v[M_PROGRAM] = r->v[M_MINOR] + r->v[M_MAJOR]; /* no shim: every fault is the program's */
	}
	return 0;
}

/* The spread of measure m over n runs. */
static struct spread stats_of(const struct run *r, int n, int m)
{
	double v[256];
	int i;
	for (i = 0; i < n; i++)
		v[i] = r[i].v[m];
	return spread_of(v, n);
}

static void fmt(char *out, size_t cap, int m, double v)
{
	if (m <= M_SYS)
		snprintf(out, cap, "%.3f s", v);
	else if (m == M_RSS)
		snprintf(out, cap, "%.1f MiB", v / 1024);
	else
		snprintf(out, cap, "%.0f", v);
}

static void show_failure(const char *side, int run, int st, const char *errfile)
{
	char line[1024];
	FILE *f = fopen(errfile, "r");
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	fprintf(stderr, "prefault trial: the program failed %s (run %d): %s %d\n", side, run,
	        WIFEXITED(st) ? "exit status" : "killed by signal", WIFEXITED(st) ? code : WTERMSIG(st));
	if (f) {
		int shown = 0;
		while (fgets(line, sizeof line, f) && shown < 20) {
			fprintf(stderr, "  | %s", line);
			shown++;
		}
		fclose(f);
	}
}

int cmd_trial(int argc, char **argv)
{
	const char *policy_arg = NULL;
	char *policy = NULL, *dir, errfile[4200], repdir[4200];
	int runs = 5, json = 0, i, k, m, fail = 0;
	static struct run A[128], B[128];
	double ratios[128];
	struct spread ra;
	static struct policy pol;
	const char *verdict;
	char why[256];
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-n")) {
			char *end;
			if (++i == argc)
				goto usage;
			runs = (int)strtol(argv[i], &end, 10);
			if (*end || runs < 1 || runs > 100) {
				fprintf(stderr, "prefault trial: -n takes a whole number from 1 to 100\n");
				return EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "-p")) {
			if (++i == argc)
				goto usage;
			policy_arg = argv[i];
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "prefault trial: unknown option %s\n", argv[i]);
			goto usage;
		} else {
			break;
		}
	}
	if (!policy_arg || i >= argc) {
		fprintf(stderr, "prefault trial: %s\n", policy_arg ? "no command given" : "-p POLICY is required");
		goto usage;
	}
	policy = resolve_policy(policy_arg);
	if (!policy || load_policy_file(policy, strchr(policy_arg, '/') ? policy_arg : policy, &pol) < 0)
		return EXIT_USAGE;
	if (!find_shim()) {
		fprintf(stderr, "prefault: cannot find libprefault.so (set PREFAULT_SHIM)\n");
		return EXIT_USAGE;
	}
	/* dir/stderr: the program's stderr of the last run; dir/r: its reports. */
	dir = scratch_dir("trial");
	if (!dir) {
		perror("prefault trial: cannot make a temporary directory");
		return EXIT_USAGE;
	}
	snprintf(errfile, sizeof errfile, "%s/stderr", dir);
	snprintf(repdir, sizeof repdir, "%s/r", dir);
	if (mkdir(repdir, 0700) < 0) {
		perror("prefault trial: cannot make a temporary directory");
		rmdir(dir);
		return EXIT_USAGE;
	}
	unsetenv("PREFAULT_POLICY");
	unsetenv("PREFAULT_REPORT");
	if (!json)
		fprintf(stderr, "prefault trial: %d alternating pairs after a warm-up of each; program output discarded\n", runs);
	for (k = -1; k < runs && !fail; k++) { /* k = -1: the warm-up pair */
		struct run wa, wb, *a = k < 0 ? &wa : &A[k], *b = k < 0 ? &wb : &B[k];
		int first_with = k >= 0 && (k % 2); /* ABBA: who goes first alternates */
		for (m = 0; m < 2 && !fail; m++) {
			int with = m ^ first_with;
			struct run *r = with ? b : a;
			int sig;
			if (run_once(argv + i, with, policy, repdir, errfile, r) < 0) {
				perror("prefault trial");
				fail = 1;
			} else if (r->status != 0) {
				show_failure(with ? "with the policy" : "without prefault", k + 2, r->status, errfile);
				fail = child_exit_code(r->status);
			} else if ((sig = child_take_pending_signal())) {
				/* Between two runs: stop here, as the program would have. */
				fprintf(stderr, "prefault trial: stopped by signal %d (%s)\n", sig, strsignal(sig));
				fail = 128 + sig;
			}
		}
	}
	scratch_clean(repdir, 1);
	unlink(errfile);
	rmdir(dir);
	free(dir);
	if (fail) {
		if (json)
			printf("{\"failed\":true,\"exit_status\":%d}\n", fail);
		return fail ? 1 : 0;
	}
	for (k = 0; k < runs; k++)
		ratios[k] = A[k].v[M_WALL] > 0 ? B[k].v[M_WALL] / A[k].v[M_WALL] : 1;
	ra = spread_of(ratios, runs);
	/* Under 2% with the pairs close together is no effect worth a policy
	 * (the shim's own start-up costs about 0.5 ms); otherwise every pair
	 * must agree before the answer is faster or slower. */
	if (ra.med >= 0.98 && ra.med <= 1.02 && (ra.hi - ra.lo) / 2 <= 0.05) {
		verdict = "no effect";
		snprintf(why, sizeof why, "no effect on run time: within 2%% (ratio %.3f, pairs %.3f to %.3f)", ra.med, ra.lo,
		         ra.hi);
	} else if (ra.hi < 1 && runs >= 3) {
		verdict = "faster";
		snprintf(why, sizeof why, "faster with the policy: %.2fx (every pair agrees: %.2fx to %.2fx)", 1 / ra.med,
		         1 / ra.hi, 1 / ra.lo);
	} else if (ra.lo > 1 && runs >= 3) {
		verdict = "slower";
		snprintf(why, sizeof why, "slower with the policy: %.2fx the time (every pair agrees: %.2fx to %.2fx)", ra.med,
		         ra.lo, ra.hi);
	} else {
		verdict = "inconclusive";
		snprintf(why, sizeof why,
		         "inconclusive: the pairs disagree (ratios %.2f to %.2f, median %.2f); the spread is larger than the "
		         "difference; try more runs (-n %d)",
		         ra.lo, ra.hi, ra.med, runs * 3 > 100 ? 100 : runs * 3);
	}
	if (json) {
		printf("{\"command\":[");
		for (k = i; k < argc; k++) {
			if (k > i)
				putchar(',');
			json_string(stdout, argv[k]);
		}
		printf("],\"policy\":");
		json_string(stdout, policy);
		printf(",\"runs\":%d,\"verdict\":\"%s\",\"summary\":", runs, verdict);
		json_string(stdout, why);
		printf(",\"wall_ratio\":{\"median\":%.4f,\"min\":%.4f,\"max\":%.4f}", ra.med, ra.lo, ra.hi);
		for (m = 0; m < M_COUNT; m++) {
			struct spread a = stats_of(A, runs, m), b = stats_of(B, runs, m);
			printf(",\"%s\":{\"without\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g},"
			       "\"with\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g},\"ratio\":%.4f}",
			       mname[m], a.med, a.lo, a.hi, b.med, b.lo, b.hi, a.med > 0 ? b.med / a.med : 0);
		}
		printf("}\n");
	} else {
		printf("\n%-22s %-34s %-34s %s\n", "", "without prefault", "with the policy", "with/without");
		for (m = 0; m < M_COUNT; m++) {
			struct spread a = stats_of(A, runs, m), b = stats_of(B, runs, m);
			char am[24], al[24], ah[24], bm[24], bl[24], bh[24], ca[80], cb[80];
			fmt(am, sizeof am, m, a.med);
			fmt(al, sizeof al, m, a.lo);
			fmt(ah, sizeof ah, m, a.hi);
			fmt(bm, sizeof bm, m, b.med);
			fmt(bl, sizeof bl, m, b.lo);
			fmt(bh, sizeof bh, m, b.hi);
			snprintf(ca, sizeof ca, "%s (%s-%s)", am, al, ah);
			snprintf(cb, sizeof cb, "%s (%s-%s)", bm, bl, bh);
			if (a.med > 0)
				printf("%-22s %-34s %-34s %.3f\n", mlabel[m], ca, cb, b.med / a.med);
			else
				printf("%-22s %-34s %-34s %s\n", mlabel[m], ca, cb, b.med > 0 ? "-" : "1.000");
		}
		printf("\nverdict: %s\n", why);
		{
			struct spread a = stats_of(A, runs, M_PROGRAM), b = stats_of(B, runs, M_PROGRAM);
			if (a.med > 0 && b.med < a.med)
				printf("faults left in the program: %.0f -> %.0f (%.1fx fewer)\n", a.med, b.med,
				       b.med > 0 ? a.med / b.med : a.med);
		}
	}
	free(policy);
	return 0;
usage:
	fprintf(stderr, "usage: prefault trial [-n RUNS] -p POLICY [--json] -- CMD [ARGS...]\n");
	return EXIT_USAGE;
}
