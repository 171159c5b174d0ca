/* reports.h: the shim's per-process JSON reports, read back by the tool.
 *
 * `prefault run` has the program write its reports into a private
 * directory, waits for it, and prints them itself: one process as the
 * shim's own text report, a process tree as one summary.  So the report
 * arrives even when the program closed its stderr before exit.
 */
#ifndef PREFAULT_REPORTS_H
#define PREFAULT_REPORTS_H
#include <stdint.h>
#include <sys/types.h>
#include "json.h"

struct report_set {
	struct json **docs; /* sorted by pid */
	int n;
	int unreadable;     /* files that did not parse (a process still writing?) */
};

/* A new directory only we can use (mode 0700), under $TMPDIR if set, else
 * /tmp; with in_memory (for reports: small files, one per process), /dev/shm
 * when it is a tmpfs.  A malloc'd path, or NULL with errno set. */
char *scratch_dir(const char *what, int in_memory);
/* dir/file as a report or profile path template for the shim: a '%' of
 * dir's (from $TMPDIR) doubled, so only file's %p and %e are read.
 * malloc'd, or NULL. */
char *scratch_template(const char *dir, const char *file);
/* Remove the files in dir, and dir itself if rm_dir. */
void scratch_clean(const char *dir, int rm_dir);

/* Every *.json in dir.  Returns 0, or -1 if dir cannot be read. */
int reports_load(const char *dir, struct report_set *rs);
void reports_free(struct report_set *rs);

/* One report: the text the shim would have written.  Several: a summary
 * (processes, faults, the heaviest processes, rules summed, notes).
 * root and root_name name the program we started, wall_s is how long it
 * ran, tree_faults what wait4 says the tree took: when the reports hold
 * much less, a line says how much is in none of them (processes killed
 * before their report, say).  Written to fd with write(2). */
void reports_print(int fd, const struct report_set *rs, pid_t root, const char *root_name, double wall_s,
                   uint64_t tree_faults);
/* Is there a report of process pid? */
int reports_has_pid(const struct report_set *rs, pid_t pid);

/* One report's figures, as the shim had them (the arrays behind p are
 * static: valid until the next call). */
struct figs_proc;
void report_figs(const struct json *doc, struct figs_proc *p);

/* faults.in_prefault of one report: taken by the shim's own work (0 if absent). */
uint64_t report_in_prefault(const struct json *doc);
#endif
