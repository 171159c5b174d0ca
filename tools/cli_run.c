/* cli_run.c: `prefault run [-p POLICY | --auto] [-o REPORT] -- CMD [ARGS...]`.
 *
 * Checks the policy first (a bad one exits 2 and starts nothing), prepends
 * the shim to LD_PRELOAD (keeping what was there, libeatmydata style), sets
 * PREFAULT_POLICY, and runs CMD as its child (see child.h), so the exit
 * status is the program's own (128+N after signal N).
 *
 * The report: many programs close stderr before the shim's report is
 * written at exit (coreutils' close_stdout, daemons), and a report on
 * stderr is then lost.  So unless told where the report goes, the tool has
 * each process write JSON into a private directory and prints it itself,
 * on its own stderr, once the program has exited: one process as the
 * shim's text report, a process tree as one summary.
 *
 * --auto: no policy; PREFAULT_POLICY=auto, and the shim learns per call
 * site (shim/auto.c).  Then -o names the policy file to write what it
 * learned into (learned.c), from the JSON reports, which the tool always
 * collects itself (the report goes to --report: stderr or none).
 */
#include "cli.h"
#include "child.h"
#include "fmt.h"
#include "learned.h"
#include "path_walk.h"
#include "reports.h"
#include "report_file.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where the report goes, as the shim would decide: -o, else an inherited
 * PREFAULT_REPORT, else the policy's report key.  NULL (or "stderr") means
 * the tool collects the reports and prints them itself. */
static const char *report_dest(const char *opt)
{
	const char *env = getenv("PREFAULT_REPORT");
	const struct policy *pol = prepared_policy();
	if (opt)
		return opt;
	if (env && *env)
		return env;
	if (pol && pol->has_report)
		return pol->report;
	return NULL;
}

/* What the shim will find at path when it writes the report there
 * (report_file.h): REPORT_OK where nothing is there yet (or it cannot tell
 * now: a directory it cannot read, a template, %p or %e, left to the
 * shim), else why it will refuse.  Said before the program starts, as the
 * program may have closed its stderr by the time the shim finds out.
 * *was_report: an earlier report is there. */
static int report_there(const char *path, int *was_report)
{
	struct stat st;
	struct statfs sf;
	char head[12];
	ssize_t n = 0;
	int fd, v;
	*was_report = 0;
	if (strchr(path, '%'))
		return REPORT_OK;
	static struct path_walk w;
	const char *last;
	int dfd;
	if ((dfd = path_walk_dir(&libc_io, (unsigned long)geteuid(), path, &last, &w)) < 0)
		return errno == ENOLINK ? REPORT_FOREIGN_LINK : REPORT_OK;
	fd = openat(dfd, last, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	v = errno;
	close(dfd);
	if (fd < 0)
		return v == ELOOP ? REPORT_SYMLINK : REPORT_OK;
	if (fstat(fd, &st) != 0 || fstatfs(fd, &sf) != 0) {
		close(fd);
		return REPORT_OK;
	}
	if (S_ISREG(st.st_mode) && st.st_size != 0)
		n = read(fd, head, sizeof head);
	close(fd);
	v = report_verdict(&st, (unsigned long)sf.f_type, (unsigned long)geteuid(), head, n);
	*was_report = v == REPORT_OK && st.st_size != 0;
	return v;
}
static int is_report(const char *path)
{
	int was;
	report_there(path, &was);
	return was;
}

static uint64_t tree_faults(const struct child_result *r)
{
	return (uint64_t)r->ru.ru_minflt + (uint64_t)r->ru.ru_majflt;
}

/* Why the program started wrote no report: what was checked, never a
 * guess.  others: other processes of its tree did. */
static void no_report(const char *cmd, const char *prog, const struct child_result *r, int others)
{
	char why[400];
	if (WIFSIGNALED(r->status) && !others)
		fprintf(stderr,
		        "prefault: %s[%d] was killed by signal %d (%s): no report (the shim reports at exit, "
		        "which a signal's default action skips)\n",
		        tty_str(prog), (int)r->pid, WTERMSIG(r->status), strsignal(WTERMSIG(r->status)));
	else
		fprintf(stderr, "prefault:%s%s[%d]%s wrote no report: %s\n", others ? "   note: " : " ", tty_str(prog),
		        (int)r->pid, others ? ", the program started," : "", why_no_report(cmd, r->status, why, sizeof why));
	if (!others)
		fprintf(stderr, "prefault:   its tree took %llu faults (from wait4)\n", (unsigned long long)tree_faults(r));
}

/* --auto's options: 0, or -1 after saying what is wrong. */
static int auto_options(const char *policy, const char *budget, const char *report, const char *learned)
{
	uint64_t pct, cap;
	int hard;
	const char *e;
	if (policy) {
		fprintf(stderr, "prefault run: --auto learns a policy, -p gives one: choose one\n");
		return -1;
	}
	if (budget && (e = parse_auto_budget(budget, &pct, &cap, &hard))) {
		fprintf(stderr, "prefault run: --auto-budget %s: %s (like 10%%, 256M, 10%%,256M, and soft or hard with either)\n", tty_str(budget), e);
		return -1;
	}
	/* (without --auto, -o none means no report: here it would write a
	 * policy file named none, which no one asking for that wants) */
	if (learned && !strcmp(learned, "-")) {
		fprintf(stderr, "prefault run: -o -: the learned policy would mix with the program's own output; "
		                "name a file\n");
		return -1;
	}
	/* (a report's name may say which process wrote it; one policy is learned) */
	if (learned && strchr(learned, '%')) {
		fprintf(stderr, "prefault run: -o %s: with --auto, -o names the one policy file to write: no %%p or %%e\n",
		        tty_str(learned));
		return -1;
	}
	if (learned && (!strcmp(learned, "none") || !strcmp(learned, "stderr"))) {
		fprintf(stderr, "prefault run: with --auto, -o names the policy file to write, not the report: "
		                "for the report, --report %s\n", learned);
		return -1;
	}
	/* (an earlier report there: the -o of a command line without --auto) */
	if (learned && is_report(learned)) {
		fprintf(stderr, "prefault run: %s is a prefault report; with --auto, -o names the policy file to write "
		                "(not overwritten)\n", tty_str(learned));
		return -1;
	}
	if (learned && !output_writable(learned)) { /* (said now, not after the program's run) */
		fprintf(stderr, "prefault run: cannot write %s: %s\n", tty_str(learned), strerror(errno));
		return -1;
	}
	if (learned && report && strcmp(report, "stderr") && strcmp(report, "none")) {
		fprintf(stderr, "prefault run: --auto -o reads the reports itself: %s takes stderr or none then\n",
		        report == getenv("PREFAULT_REPORT") ? "PREFAULT_REPORT" : "--report");
		return -1;
	}
	return 0;
}

int cmd_run(const struct command *self, int argc, char **argv)
{
	const char *policy = NULL, *report = NULL, *out = NULL, *budget = NULL, *learned = NULL, *dest, *prog;
	int autom = 0;
	const struct opt opts[] = {
		OPT_S("-p", "--policy", &policy, "POLICY"),
		OPT_S("-o", NULL, &out, "REPORT"),
		OPT_S("--report", NULL, &report, "REPORT"),
		OPT_F("--auto", &autom),
		OPT_S("--auto-budget", NULL, &budget, "BUDGET"),
		OPT_END,
	};
	char *dir = NULL;
	struct child_spec spec;
	struct child_result r;
	int i, n, rc;
	if ((i = opt_parse(self, argc, argv, opts, &n)) < 0)
		return EXIT_USAGE;
	if ((out && !*out) || (report && !*report)) {
		fprintf(stderr, "prefault run: %s names no file\n", out && !*out ? "-o" : "--report");
		return EXIT_USAGE;
	}
	if (budget && !autom) {
		fprintf(stderr, "prefault run: --auto-budget goes with --auto\n");
		return EXIT_USAGE;
	}
	if (autom) {
		learned = out; /* -o: the learned policy; the report goes to --report */
		/* (else an inherited PREFAULT_REPORT, as without -o) */
		if (learned && !report && getenv("PREFAULT_REPORT") && *getenv("PREFAULT_REPORT"))
			report = getenv("PREFAULT_REPORT");
	}
	else if (out && report) {
		fprintf(stderr, "prefault run: -o and --report both name the report: give one\n");
		return EXIT_USAGE;
	} else if (out) {
		report = out;
	}
	if (!budget && autom && getenv("PREFAULT_AUTO_BUDGET") && *getenv("PREFAULT_AUTO_BUDGET"))
		budget = getenv("PREFAULT_AUTO_BUDGET"); /* (checked here too: the shim would only warn) */
	if (autom && auto_options(policy, budget, report, learned) < 0)
		return EXIT_USAGE;
	if (prepare_env(policy, NULL) < 0)
		return EXIT_USAGE;
	if (autom) {
		setenv("PREFAULT_POLICY", "auto", 1);
		if (budget) /* (else one the caller's environment gives holds) */
			setenv("PREFAULT_AUTO_BUDGET", budget, 1);
	}
	dest = learned ? (report ? report : "stderr") : report_dest(report);
	if (dest && strcmp(dest, "stderr") && strcmp(dest, "none")) {
		int was, v = report_there(dest, &was);
		if (v != REPORT_OK) {
			fprintf(stderr, "prefault run: the report would go to %s, which is %s: not written over (name "
			                "another with -o)\n", tty_str(dest), report_why(v));
			return EXIT_USAGE;
		}
	}
	if (dest && strcmp(dest, "stderr") && !learned) {
		/* none, or files the shim writes itself: nothing to print. */
		setenv("PREFAULT_REPORT", dest, 1);
	} else {
		dir = scratch_dir("run", 1);
		if (dir) {
			char *spec_path = scratch_template(dir, "%p.json");
			if (!spec_path) {
				perror("prefault run");
				scratch_clean(dir, 1);
				return EXIT_USAGE;
			}
			setenv("PREFAULT_REPORT", spec_path, 1);
			setenv("PREFAULT_REPORT_QUIET", "1", 1);
			free(spec_path);
		} else {
			fprintf(stderr, "prefault run: cannot make a private directory for the reports (%s): they go to "
			                "the program's stderr\n", strerror(errno));
			setenv("PREFAULT_REPORT", "stderr", 1);
		}
	}
	memset(&spec, 0, sizeof spec);
	spec.argv = argv + i;
	spec.fd_in = spec.fd_out = spec.fd_err = -1;
	spec.collect = dir; /* (reports of processes that cannot write there) */
	if (child_run(&spec, &r) < 0) {
		fprintf(stderr, "prefault run: cannot start %s: %s\n", tty_str(argv[i]), strerror(errno));
		if (dir)
			scratch_clean(dir, 1);
		free(dir);
		return 126;
	}
	rc = child_exit_code(r.status);
	if (dir) {
		struct report_set rs;
		prog = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		if (!r.exec_errno && reports_load(dir, &rs) == 0) {
			if ((rs.n || rs.unreadable) && strcmp(dest ? dest : "stderr", "none"))
				reports_print(2, &rs, r.pid, prog, r.wall_s, tree_faults(&r));
			if (!reports_has_pid(&rs, r.pid))
				no_report(argv[i], prog, &r, rs.n + rs.unreadable > 0);
			/* (the exit status stays the program's: a policy not written is said) */
			if (learned && rs.n)
				learned_write(learned, &rs, argv + i);
			else if (learned)
				fprintf(stderr, "prefault run: no report to learn from: %s not written\n", tty_str(learned));
			reports_free(&rs);
		} else if (learned) {
			fprintf(stderr, "prefault run: no report to learn from: %s not written\n", tty_str(learned));
		}
		scratch_clean(dir, 1);
		free(dir);
	}
	return rc;
}
