/* stats.h: counters for the report, kept apart from the mechanism.
 *
 * Matched requests count with relaxed atomic adds on static arrays.  The
 * per-call counters of the mmap family (system calls: a few adds are
 * nothing beside them) go to the calling thread's block, taken from a
 * small static table at its first call and updated with plain stores; the
 * report sums the blocks in use, and a thread's block is folded into the
 * globals when it exits (a pthread key destructor).  The malloc family is counted only from the size the policy
 * or the profile watches (prefault.h: pf_block_min): below it the wrappers
 * only forward, and the report says the rest was not counted.
 * Sizes go into power-of-two classes (figs.h).  What each counter means,
 * and its place in the report, is in figs.h.
 */
#ifndef PREFAULT_STATS_H
#define PREFAULT_STATS_H
#include <stdint.h>
#include "glue.h"
#include "defs.h"
#include "policy.h"
#include "figs.h"

/* A rule's counters are its report figures (figs.h: struct figs_rule). */
/* Notes: things the report should say once, e.g. a fallback taken. */
enum note {
	N_NO_POPULATE,     /* kernel lacks MADV_POPULATE_*: touched pages instead */
	N_MLOCK_FAILED,    /* mlock/mlockall refused */
	N_TABLE_FULL,      /* no memory to track a region */
	N_BUDGET,          /* budget spent at least once */
	N_NO_THP,          /* THP disabled: hugepage rules fell back to small pages */
	N_THP_FALLBACK,    /* huge pages asked for, small pages given */
	N_QUEUE_FULL,      /* background queue full */
	N_MLOCKALL_LIMIT,  /* mlockall future not applied: RLIMIT_MEMLOCK */
	N_LOCK_YIELDED,    /* the shim's locks were given back for the program's own */
	N_RECYCLE_LIMIT,   /* recycle off: RLIMIT_AS or RLIMIT_DATA is set */
	N_STACK_GUARD,     /* a stack rule stopped at memory it could not populate */
	N_TRAMPOLINES,     /* too many threads starting at once: some went without a stack rule */
	N_OBJECTS,         /* too many calling objects: some match no caller rule */
	N_MLOCKALL_YIELDED, /* the policy's mlockall was given back (privileges dropped, or memory short) */
	N_CARVE_NO_THP,    /* carve rules recycled instead: no PMD-size THP with MADV_HUGEPAGE */
	N_CARVE_UNEVEN,    /* carve recycled a size the huge page size is not a multiple of */
	N_CARVE_SMALL_WON, /* a carve rule's hugepage_check found small pages faster: recycled instead */
	N_CARVE_UNTRACKED, /* carve's table of reserves was full: some left out of the report's figures */
	N_AUTO_RULES,      /* the learner had no rule left for a site */
	N_AUTO_SITES,      /* the learner's site table was full */
	N_NO_THREAD,       /* the system refused the shim a helper thread */
	N_NO_TABLE,        /* the system refused the shim memory for a table (glue_table) */
	N_EXEC_RULES,      /* recycle and carve off: personality or PR_SET_MDWE changed mid-run */
	N_COUNT
};
extern const char *const note_texts[N_COUNT];

struct stats {
	uint64_t calls[E_COUNT];
	uint64_t failed[E_COUNT];
	struct figs_rule rules[POL_MAX_RULES];
	struct figs_rule unmatched[2]; /* [0] mmap, [1] malloc family */
	uint64_t pf_minor, pf_major;    /* faults taken inside the shim's prefault work */
	uint64_t notes;                  /* bit per enum note */
};

extern struct stats g_stats;
/* The smallest malloc-family block that is counted (SIZE_MAX: none). */
extern uint64_t stats_malloc_from;

static inline void st_add(uint64_t *c, uint64_t v) { __atomic_fetch_add(c, v, __ATOMIC_RELAXED); }
static inline uint64_t st_get(const uint64_t *c) { return __atomic_load_n(c, __ATOMIC_RELAXED); }
static inline int size_class(uint64_t v) { return v ? 63 - __builtin_clzll(v) : 0; }

/* The smallest malloc block counted, and how many rules the policy has. */
void stats_setup(uint64_t malloc_from, int rules);
void stats_count_request(struct figs_rule *rs, uint64_t len);
/* Faults taken by the shim's own work for a rule. */
void stats_prefault_faults(struct figs_rule *rs, uint64_t minor, uint64_t major);
/* Huge pages gained by populating `bytes` with `faults` faults: the bytes
 * of them counted (this call's: other threads add to the rule's too). */
uint64_t stats_count_huge(struct figs_rule *rs, uint64_t bytes, uint64_t faults);
/* A check of huge pages against small (pool_huge_check's figures). */
void stats_count_check(struct figs_rule *rs, uint64_t small_ns, uint64_t small_pages, uint64_t huge_ns,
                       uint64_t huge_pages, int huge_won);
/* The policy has n rules now (the learner adds them as it goes). */
void stats_rules(int n);
/* Counted in the calling thread's block. */
void stats_call(enum entry e);
void stats_unmatched(int kind, uint64_t len); /* kind 0 mmap, 1 malloc */
/* Counted in the globals: a call under the guard (a signal handler that
 * interrupted the shim), which must not touch the thread's block or lock. */
static inline void stats_call_nested(enum entry e) { st_add(&g_stats.calls[e], 1); }
/* Everything counted so far, thread blocks included (may_wait: see
 * spin_lock_bounded). */
void stats_snapshot(struct stats *out, int may_wait);
/* Once, from the constructor: the key whose destructor folds a block in. */
void stats_thread_init(void);
/* Returns 1 the first time the note is raised in this process. */
int stats_note(enum note n);
/* fork: prepare, parent, child (the child counts afresh, from zero). */
void stats_atfork(int who);

#endif
