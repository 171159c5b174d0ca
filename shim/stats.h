/* stats.h: counters for the report, kept apart from the mechanism.
 *
 * Matched requests count with relaxed atomic adds on static arrays.  The hot
 * counters (every call, and requests no rule matched: every small malloc)
 * would cost six locked adds per malloc/free pair, so they go to a block in
 * the calling thread instead, updated with plain stores.  Blocks are listed
 * in a registry; the report sums them, and a thread's block is folded into
 * the globals when it exits (a pthread key destructor).  A fork child keeps
 * only its own thread and zeroes everything.
 * Sizes go into power-of-two classes (class k holds [2^k, 2^(k+1))).
 */
#ifndef PREFAULT_STATS_H
#define PREFAULT_STATS_H
#include <stdint.h>
#include "policy.h"

#define SIZE_CLASSES 64

/* Entry points, in report order. */
enum entry {
	E_MMAP, E_MMAP64, E_MUNMAP, E_MREMAP, E_MPROTECT, E_MADVISE,
	E_MALLOC, E_CALLOC, E_REALLOC, E_FREE, E_POSIX_MEMALIGN,
	E_ALIGNED_ALLOC, E_MEMALIGN, E_VALLOC, E_PVALLOC, E_PTHREAD_CREATE,
	E_COUNT
};
extern const char *const entry_names[E_COUNT];

/* Why a matched request got less than its rule asked for. */
enum skip {
	SK_BUDGET,   /* the budget was spent */
	SK_FAILED,   /* the kernel refused (mlock limit, populate error) */
	SK_TABLE,    /* the region table was full, so the charge could not be tracked */
	SK_QUEUE,    /* the background queue was full */
	SK_COUNT
};
extern const char *const skip_names[SK_COUNT];

struct hist {
	uint64_t maps[SIZE_CLASSES];
	uint64_t bytes[SIZE_CLASSES];
};

struct rule_stats {
	uint64_t matched, bytes, prefaulted_bytes, ns, faults;
	uint64_t skipped[SK_COUNT];
	/* background */
	uint64_t queued_bytes;        /* handed to the workers */
	uint64_t background_bytes;    /* chunks the workers finished */
	uint64_t program_first_bytes; /* already resident when a worker got there */
	uint64_t cancelled_bytes;     /* unmapped, remapped or freed while queued */
	/* huge pages */
	uint64_t huge_bytes;          /* backed by huge pages by our populate */
	uint64_t small_fallbacks;     /* asked for huge pages, got small ones */
	/* recycle */
	uint64_t recycle_kept;        /* regions kept at munmap */
	uint64_t recycle_reused;      /* regions handed back by mmap */
	uint64_t recycle_reused_bytes;
	uint64_t recycle_zeroed_bytes; /* resident bytes cleared for reuse */
	uint64_t recycle_zero_ns;
	uint64_t recycle_peak_bytes;  /* cache high-water mark */
	uint64_t recycle_dropped;     /* not kept: cache full, budget, memory short */
	struct hist sizes;
};

/* Notes: things the report should say once, e.g. a fallback taken. */
enum note {
	N_NO_POPULATE,     /* kernel lacks MADV_POPULATE_*: touched pages instead */
	N_MLOCK_FAILED,    /* mlock/mlockall refused */
	N_TABLE_FULL,      /* region table full */
	N_BUDGET,          /* budget spent at least once */
	N_NO_THP,          /* THP disabled: hugepage rules fell back to small pages */
	N_THP_FALLBACK,    /* huge pages asked for, small pages given */
	N_QUEUE_FULL,      /* background queue full */
	N_COUNT
};
extern const char *const note_texts[N_COUNT];

struct stats {
	uint64_t calls[E_COUNT];
	uint64_t failed[E_COUNT];
	struct rule_stats rules[POL_MAX_RULES];
	struct rule_stats unmatched[2]; /* [0] mmap, [1] malloc family */
	uint64_t pf_minor, pf_major;    /* faults taken inside the shim's prefault work */
	uint64_t notes;                  /* bit per enum note */
};

extern struct stats g_stats;

static inline void st_add(uint64_t *c, uint64_t v) { __atomic_fetch_add(c, v, __ATOMIC_RELAXED); }
static inline uint64_t st_get(const uint64_t *c) { return __atomic_load_n(c, __ATOMIC_RELAXED); }
static inline int size_class(uint64_t v) { return v ? 63 - __builtin_clzll(v) : 0; }

void stats_count_request(struct rule_stats *rs, uint64_t len);
/* Hot paths: counted in the calling thread's block. */
void stats_call(enum entry e);
void stats_unmatched(int kind, uint64_t len); /* kind 0 mmap, 1 malloc */
/* Everything counted so far, thread blocks included. */
void stats_snapshot(struct stats *out);
/* Once, from the constructor: the key whose destructor folds a block in. */
void stats_thread_init(void);
void stats_lock(void);
void stats_unlock(void);
/* Returns 1 the first time the note is raised in this process. */
int stats_note(enum note n);
void stats_reset(void);

#endif
