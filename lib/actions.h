/* actions.h: every action a rule can take, described once.
 *
 * A line an action: its name (A_<NAME>), its word in policy files, its bit,
 * the calls it works on, the actions it cannot be combined with and why, the
 * rule key that applies to it alone (hugepage_check to carve as well:
 * policy.c) and a hint for a rule that gives the key without the action,
 * the kind of site `prefault tune` tries it on, and
 * the step of the shim's apply() that carries it out (prefault.c: `nothing`
 * where the work is done elsewhere: map-populate in the real mmap, recycle
 * at munmap and the next mmap, carve (which implies recycle) at the next
 * mmap too).  Lines stand in the order of apply()'s steps: advice before
 * locking, locking before populate (mlock populates), all of them before
 * the rest is queued.
 *
 * From it come the A_* bits, the parser's action words and the list its
 * errors give, the checks that need the whole rule (policy.c), the order of
 * apply()'s steps, the candidates of tune (tools/candidates.c) and the
 * fuzzer's dictionary.  A new action is a line here, a step function, the
 * man page and a test.  Pure: included by policy.h.
 */
#ifndef PREFAULT_ACTIONS_H
#define PREFAULT_ACTIONS_H

/* The kinds of site tune tries an action on (tools/candidates.c). */
enum { TUNE_NEVER, TUNE_CHURN, TUNE_FILE, TUNE_DENSE, TUNE_LATER, TUNE_WITH };

#define PF_ACTIONS(X)                                                                                                    \
	/* NAME, word, bit, calls, excludes, why, knobs (words), knob hint, tune, step */                                          \
	X(NONE, "none", 7, CALL_MMAP | CALL_MALLOC | CALL_STACK, ~A_NONE,                                                \
	  "action 'none' cannot be combined with other actions", NULL, NULL, TUNE_NEVER, nothing)                         \
	X(WILLNEED, "willneed", 2, CALL_MMAP | CALL_MALLOC, 0, NULL, NULL, NULL, TUNE_FILE, advise)                      \
	X(HUGEPAGE, "hugepage", 4, CALL_MMAP | CALL_MALLOC, 0, NULL, "hugepage_check", " or carve", TUNE_WITH, advise)   \
	X(LOCK, "lock", 3, CALL_MMAP | CALL_MALLOC, 0, NULL, NULL, NULL, TUNE_NEVER, lock)                               \
	X(POPULATE, "populate", 0, CALL_MMAP | CALL_MALLOC | CALL_STACK, A_BACKGROUND,                                   \
	  "background populates later, populate now: choose one", "threads",                                            \
	  " (for background, set workers in [global])", TUNE_DENSE, populate)                                           \
	X(MAP_POPULATE, "map-populate", 1, CALL_MMAP, A_BACKGROUND,                                                      \
	  "background populates later, map-populate now: choose one", NULL, NULL, TUNE_NEVER, nothing)                   \
	X(BACKGROUND, "background", 5, CALL_MMAP | CALL_MALLOC, A_POPULATE | A_MAP_POPULATE,                             \
	  "background populates later, populate now: choose one", "chunk", NULL, TUNE_LATER, queue)                      \
	X(RECYCLE, "recycle", 6, CALL_MMAP, 0, NULL, "recycle_max", NULL, TUNE_CHURN, nothing)                           \
	X(CARVE, "carve", 8, CALL_MMAP, 0, NULL, "reserve carve_min_rss", NULL, TUNE_NEVER, nothing)

enum {
#define PF_ACTION_BIT(name, word, bit, calls, excl, why, knob, hint, tune, step) A_##name = 1 << (bit),
	PF_ACTIONS(PF_ACTION_BIT)
#undef PF_ACTION_BIT
};

/* How many there are (their bits are 0 to PF_NACTIONS - 1). */
#define PF_ACTION_ONE(name, word, bit, calls, excl, why, knob, hint, tune, step) +1
enum { PF_NACTIONS = 0 PF_ACTIONS(PF_ACTION_ONE) };
#undef PF_ACTION_ONE

/* An action as a record, for code that walks them (policy.c's actions[]). */
struct pol_action {
	const char *word;
	unsigned bit, calls, excludes;
	const char *why, *knob, *knob_hint; /* knob: the action's knobs, words parted by spaces */
	int tune;
};
extern const struct pol_action pol_actions[]; /* in apply() order; word NULL ends it */
#endif
