/* compare.h: one program run several ways ("sides": without the shim, or
 * under it with a policy), alternating, like with like.  Used by trial
 * and tune.
 *
 * Like with like:
 *  - every side gets an environment of the same size.  Environment size
 *    alone moves run times by several percent (it shifts the initial stack
 *    and the alignment of everything on it: Mytkowicz et al., ASPLOS 2009).
 *    A side under the shim sets LD_PRELOAD, PREFAULT_POLICY and
 *    PREFAULT_REPORT; the side without it sets the same names with one
 *    letter changed (LX_PRELOAD, PREFAULX_POLICY, PREFAULX_REPORT) to values
 *    of the same length.  When the caller has an LD_PRELOAD of its own, the
 *    side without the shim keeps it, padded at the front with empty entries
 *    (':') to the length the shim adds.  Policy paths are padded to one
 *    length with leading slashes (//tmp/x is /tmp/x);
 *  - "faults in the program" is measured the same way on every side: the
 *    whole process tree's faults from wait4 (minor and major, the child and
 *    its waited-for descendants) minus the faults the shim's reports say its
 *    own work took (in_prefault; 0 without the shim);
 *  - rounds run the sides in turn, the order rotating and reversing from
 *    round to round, after one warm-up round that is not counted.
 *
 * The program's stdin and stdout are /dev/null; its stderr goes to a file
 * that is shown (the last 20 lines) when a run fails.
 */
#ifndef PREFAULT_COMPARE_H
#define PREFAULT_COMPARE_H
#include "cli.h"

enum { M_WALL, M_USER, M_SYS, M_MINOR, M_MAJOR, M_RSS, M_PROGRAM, M_COUNT };
/* JSON keys (wall_s ...) and table labels (wall ...) of the measures */
extern const char *const measure_key[M_COUNT], *const measure_label[M_COUNT];

#define SIDES_MAX 3
#define ROUNDS_MAX 100

struct run {
	double v[M_COUNT];
	int status; /* wait status */
	int reports; /* reports the shim wrote (processes it saw) */
};

struct side {
	char label[48];
	char *policy; /* padded path, or NULL: no shim */
	struct run runs[ROUNDS_MAX];
};

struct compare {
	char **cmd;
	char *dir; /* scratch: the last run's stderr, r/ the reports, the caller's files */
	char errfile[4200], repdir[4200];
	char *spec; /* repdir's report path template for the shim */
	int nsides;
	struct side side[SIDES_MAX];
	double deadline; /* mono_s(): start no run that would end after it; 0: none
	                    (a run going on past child_set_deadline's is stopped) */
	/* results of compare_run */
	int rounds;      /* complete rounds measured */
	int failed;      /* exit code (128+N after signal N) of a failed run, else 0 */
	int failed_wstatus, failed_side, failed_run;
	int stopped;     /* the signal that stopped us (Ctrl-C), else 0 */
	int out_of_time; /* the deadline came first */
};

/* A scratch directory for the comparisons of one command.  0, or -1 with a
 * message printed. */
int compare_open(struct compare *c, char **cmd, const char *tool);
void compare_close(struct compare *c);
/* The sides of the next comparison: labels and policy paths (NULL: the
 * program without the shim).  Returns 0, or -1 (out of memory). */
int compare_sides(struct compare *c, int n, const char *const *labels, const char *const *policies);
/* Warm-up round (if warmup) and then rounds rounds.  Returns 0 when all
 * ran, else -1 with failed, stopped or out_of_time set (rounds says how
 * many complete rounds there are). */
int compare_run(struct compare *c, int rounds, int warmup);
/* The spread of measure m on side s over the complete rounds. */
struct spread compare_spread(const struct compare *c, int s, int m);
/* Per round: side b's measure m over side a's. */
void compare_ratios(const struct compare *c, int a, int b, int m, double *out);
/* Say which run failed and how, with the program's last lines of stderr. */
void compare_show_failure(const struct compare *c, const char *tool);
#endif
