/* report_text.h: the report as text, written the same way by the shim (at
 * exit) and by the tool (from the JSON reports it collected, one process or
 * a tree summed), from the plain numbers of figs.h.  Pure: sbuf only. */
#ifndef PREFAULT_REPORT_TEXT_H
#define PREFAULT_REPORT_TEXT_H
#include "figs.h"

struct sbuf;
/* A whole process's report. */
void rt_process(struct sbuf *sb, const struct figs_proc *p);
/* Its lines, for the tool's tree summary.  suffix follows a rule's name. */
void rt_budget(struct sbuf *sb, const char *policy, uint64_t peak, uint64_t limit, const char *suffix);
void rt_ledger(struct sbuf *sb, const struct figs_proc *p);
void rt_rule(struct sbuf *sb, const char *name, const char *suffix, const struct figs_rule *r);
void rt_unmatched(struct sbuf *sb, const struct figs_proc *p);
void rt_note(struct sbuf *sb, const char *text);
/* The learner's lines: its budget, then a line a site (auto_on only). */
void rt_auto(struct sbuf *sb, const struct figs_proc *p);
/* One site, without the prefix or the newline: "OBJ+0xOFF mmap 1 MiB:
 * recycle, from 0.003 s: why; ...".  Also the learned policy's comments. */
void rt_auto_site(struct sbuf *sb, const struct figs_auto *a);
/* The actions' words for A_* bits, in apply() order ("hugepage populate"). */
void rt_actions(struct sbuf *sb, unsigned actions);
/* Add b's figures into a's, each by its kind (a tree's rules summed). */
void figs_rule_add(struct figs_rule *a, const struct figs_rule *b);
#endif
