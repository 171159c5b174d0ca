/* learned.h: `prefault run --auto -o FILE`: what the learner decided, read
 * back from the reports, written as an ordinary policy file with comments.
 *
 * One rule for each site the learner acted on, named and matched by its
 * caller (the object that made the call) and its size: the exact length
 * for recycle, the lengths it saw otherwise.  Sites in one object with the
 * same call, size and action are one rule (a policy names objects, not
 * return addresses); each site stays in a comment with why the learner
 * acted, when, and what it saved.  A rule it backed off from is written
 * commented out, with the reason; a site it left alone is a comment.  With
 * more than one program in the tree, each rule names its program.  The
 * text is parsed before it is written: what `prefault check` accepts. */
#ifndef PREFAULT_LEARNED_H
#define PREFAULT_LEARNED_H
#include "reports.h"

/* 0, or -1 after saying why on stderr.  cmd: the program's argv. */
int learned_write(const char *path, const struct report_set *rs, char *const *cmd);
#endif
