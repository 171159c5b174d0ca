/* compare.c: see compare.h. */
#include "compare.h"
#include "child.h"
#include "fmt.h"
#include "progress.h"
#include "reports.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const measure_key[M_COUNT] = { "wall_s", "user_s", "sys_s", "minor_faults", "major_faults",
                                           "peak_rss_kb", "faults_in_program" };
const char *const measure_label[M_COUNT] = { "wall", "user", "system", "minor faults", "major faults", "peak RSS",
                                             "faults in the program" };

int compare_open(struct compare *c, char **cmd, const char *tool)
{
	char *rep;
	memset(c, 0, sizeof *c);
	c->cmd = cmd;
	if (!find_shim()) {
		fprintf(stderr, "prefault: cannot find libprefault.so (set PREFAULT_SHIM)\n");
		return -1;
	}
	if (preload_holds(find_shim())) {
		fprintf(stderr, "%s: LD_PRELOAD already holds the shim, so no run could be without it: unset it first\n",
		        tool);
		return -1;
	}
	/* Under a seccomp filter, whether the shim may act is tried here, once,
	 * before any run: every side inherits what it sets, so the environments
	 * stay the same size, and no side's figures hold the try (helper-38). */
	seccomp_vouch();
	/* Every run reads /dev/null (runs cannot share one input): input piped
	 * or redirected to the tool would be timed unread, so it is said
	 * (helper-34: a filter timed doing nothing, and a verdict). */
	{
		struct stat st;
		if (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
		                           (S_ISREG(st.st_mode) && st.st_size > 0)))
			fprintf(stderr,
			        "%s: the program reads /dev/null in every run, not this input (runs cannot share one): "
			        "name its input file on its command line\n",
			        tool);
	}
	/* dir/stderr: the program's stderr of the last run (on disk: it can be
	 * large); repdir: its reports (in memory where we can: each run's
	 * report would otherwise cost the shim's side a file on disk). */
	c->dir = scratch_dir("compare", 0);
	if (!c->dir) {
		fprintf(stderr, "%s: cannot make a temporary directory: %s\n", tool, strerror(errno));
		return -1;
	}
	snprintf(c->errfile, sizeof c->errfile, "%s/stderr", c->dir);
	rep = scratch_dir("reports", 1);
	if (!rep || strlen(rep) >= sizeof c->repdir) {
		fprintf(stderr, "%s: cannot make a temporary directory: %s\n", tool, rep ? "path too long" : strerror(errno));
		if (rep)
			rmdir(rep);
		free(rep);
		rmdir(c->dir);
		free(c->dir);
		c->dir = NULL;
		return -1;
	}
	snprintf(c->repdir, sizeof c->repdir, "%s", rep);
	free(rep);
	c->spec = scratch_template(c->repdir, "%p.json");
	if (!c->spec) {
		fprintf(stderr, "%s: out of memory\n", tool);
		compare_close(c);
		return -1;
	}
	/* What the caller's environment says about the shim is ours to set. */
	unsetenv("PREFAULT_POLICY");
	unsetenv("PREFAULT_REPORT");
	unsetenv("PREFAULT_PROFILE");
	return 0;
}

static void free_sides(struct compare *c)
{
	int s;
	for (s = 0; s < c->nsides; s++) {
		free(c->side[s].policy);
		c->side[s].policy = NULL;
	}
	c->nsides = 0;
}

void compare_close(struct compare *c)
{
	free_sides(c);
	free(c->spec);
	c->spec = NULL;
	if (c->dir) {
		scratch_clean(c->repdir, 1);
		scratch_clean(c->dir, 1);
		free(c->dir);
		c->dir = NULL;
	}
}

int compare_sides(struct compare *c, int n, const char *const *labels, const char *const *policies)
{
	size_t len = 0;
	int s;
	free_sides(c);
	for (s = 0; s < n; s++)
		if (policies[s] && strlen(policies[s]) > len)
			len = strlen(policies[s]);
	for (s = 0; s < n; s++) {
		struct side *d = &c->side[s];
		memset(d, 0, sizeof *d);
		snprintf(d->label, sizeof d->label, "%s", labels[s]);
		if (policies[s]) {
			size_t k = len - strlen(policies[s]);
			d->policy = malloc(len + 1);
			if (!d->policy)
				return -1;
			memset(d->policy, '/', k); /* //tmp/x.policy is /tmp/x.policy */
			strcpy(d->policy + k, policies[s]);
		}
		c->nsides = s + 1;
	}
	return 0;
}

struct side_env {
	const struct compare *c;
	int s;
};

/* In the child, after fork: the side's environment. */
static void set_side_env(void *arg)
{
	const struct side_env *e = arg;
	const struct side *d = &e->c->side[e->s];
	const char *shim = find_shim(), *pad = NULL;
	const char *spec = e->c->spec;
	int s;
	for (s = 0; s < e->c->nsides; s++)
		if (e->c->side[s].policy)
			pad = e->c->side[s].policy;
	if (d->policy) {
		setenv("PREFAULT_POLICY", d->policy, 1);
		setenv("PREFAULT_REPORT", spec, 1);
		if (set_preload(shim) < 0)
			_exit(126);
	} else {
		if (pad)
			setenv("PREFAULX_POLICY", pad, 1);
		setenv("PREFAULX_REPORT", spec, 1);
		if (set_preload_twin(shim) < 0)
			_exit(126);
	}
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

/* One run of side s.  0, or -1 if no child could be made. */
static int run_once(struct compare *c, int s, struct run *r)
{
	struct child_spec spec;
	struct child_result cr;
	struct side_env e = { c, s };
	struct report_set rs;
	double in_prefault = 0;
	int rc, k;
	memset(&spec, 0, sizeof spec);
	memset(r, 0, sizeof *r);
	spec.argv = c->cmd;
	spec.fd_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	spec.fd_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	spec.fd_err = open(c->errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	spec.in_child = set_side_env;
	spec.arg = &e;
	progress_run_start();
	rc = child_run(&spec, &cr);
	if (spec.fd_in >= 0)
		close(spec.fd_in);
	if (spec.fd_out >= 0)
		close(spec.fd_out);
	if (spec.fd_err >= 0)
		close(spec.fd_err);
	if (rc < 0)
		return -1;
	progress_run_done(cr.wall_s);
	r->v[M_WALL] = cr.wall_s;
	r->v[M_USER] = tv(cr.ru.ru_utime);
	r->v[M_SYS] = tv(cr.ru.ru_stime);
	r->v[M_MINOR] = (double)cr.ru.ru_minflt;
	r->v[M_MAJOR] = (double)cr.ru.ru_majflt;
	r->v[M_RSS] = (double)cr.ru.ru_maxrss;
	r->status = cr.status;
	if (reports_load(c->repdir, &rs) == 0) {
		for (k = 0; k < rs.n; k++)
			in_prefault += (double)report_in_prefault(rs.docs[k]);
		r->reports = rs.n;
		reports_free(&rs);
	}
	scratch_clean(c->repdir, 0);
	/* The same on every side: the tree's faults, less the shim's own work. */
	r->v[M_PROGRAM] = r->v[M_MINOR] + r->v[M_MAJOR] - in_prefault;
	if (r->v[M_PROGRAM] < 0)
		r->v[M_PROGRAM] = 0;
	return 0;
}

int compare_run(struct compare *c, int rounds, int warmup)
{
	int k, j, runs_of[SIDES_MAX] = { 0 };
	char step[120];
	c->rounds = c->failed = c->stopped = c->out_of_time = 0;
	if (rounds > ROUNDS_MAX)
		rounds = ROUNDS_MAX;
	for (k = warmup ? -1 : 0; k < rounds; k++) {
		int start = k < 0 ? 0 : k % c->nsides, rev = k >= 0 && (k / c->nsides) % 2;
		for (j = 0; j < c->nsides; j++) {
			int s = (start + (rev ? c->nsides - 1 - j : j)) % c->nsides, sig;
			struct run scratch, *r = k < 0 ? &scratch : &c->side[s].runs[k];
			double est = progress_run_estimate();
			if ((sig = child_take_signal())) {
				c->stopped = sig;
				return -1;
			}
			if (c->deadline > 0 && mono_s() + est > c->deadline) {
				c->out_of_time = 1;
				return -1;
			}
			if (k < 0)
				snprintf(step, sizeof step, "warm-up, %s", c->side[s].label);
			else
				snprintf(step, sizeof step, "%s %d of %d, %s", c->nsides == 2 ? "pair" : "round", k + 1, rounds,
				         c->side[s].label);
			progress_step(step);
			runs_of[s]++;
			if (run_once(c, s, r) < 0) {
				int e = errno;
				progress_say("%s: cannot start %s: %s\n", "prefault", tty_str(c->cmd[0]), strerror(e));
				c->failed = 126;
				c->failed_wstatus = 126 << 8;
				c->failed_side = s;
				c->failed_run = runs_of[s];
				return -1;
			}
			/* A Ctrl-C reached the program and us alike: stop, blame no one. */
			if ((sig = child_take_signal())) {
				c->stopped = sig;
				return -1;
			}
			if (child_timed_out()) { /* stopped at the deadline: not a result */
				c->out_of_time = 1;
				return -1;
			}
			if (r->status != 0) {
				c->failed = child_exit_code(r->status);
				c->failed_wstatus = r->status;
				c->failed_side = s;
				c->failed_run = runs_of[s];
				return -1;
			}
		}
		if (k >= 0)
			c->rounds = k + 1;
	}
	return 0;
}

struct spread compare_spread(const struct compare *c, int s, int m)
{
	double v[ROUNDS_MAX];
	int i;
	struct spread z = { 0, 0, 0 };
	if (c->rounds < 1)
		return z;
	for (i = 0; i < c->rounds; i++)
		v[i] = c->side[s].runs[i].v[m];
	return spread_of(v, c->rounds);
}

void compare_ratios(const struct compare *c, int a, int b, int m, double *out)
{
	int i;
	for (i = 0; i < c->rounds; i++) {
		double x = c->side[a].runs[i].v[m], y = c->side[b].runs[i].v[m];
		out[i] = x > 0 ? y / x : 1;
	}
}

void compare_show_failure(const struct compare *c, const char *tool)
{
	char line[1024];
	FILE *f = fopen(c->errfile, "r");
	int st = c->failed_wstatus;
	progress_say("%s: the program failed %s (run %d): %s %d\n", tool, c->side[c->failed_side].label, c->failed_run,
	             WIFSIGNALED(st) ? "killed by signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	if (f) {
		int shown = 0;
		while (fgets(line, sizeof line, f) && shown < 20) {
			line[strcspn(line, "\n")] = '\0';
			progress_say("  | %s\n", tty_str(line));
			shown++;
		}
		fclose(f);
	}
}
