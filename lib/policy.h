/* policy.h: the policy language and its parser.
 *
 * policy_parse() takes a buffer and a length and fills a fixed-size struct:
 * no I/O, no globals, no allocation.  It returns 0, or the line of the first
 * error with a message in *err.  The shim, the CLI's `check` and the fuzzer
 * all call exactly this function, so what `check` accepts is what runs.
 */
#ifndef PREFAULT_POLICY_H
#define PREFAULT_POLICY_H
#include <stddef.h>
#include <stdint.h>

#define POL_MAX_RULES 64
#define POL_MAX_GLOBS 16
#define POL_NAME_MAX 48
#define POL_REPORT_MAX 512
#define POL_POOL 8192

/* call = ... */
enum { CALL_MMAP = 1, CALL_MALLOC = 2, CALL_STACK = 4 };
#define CALL_ANY (CALL_MMAP | CALL_MALLOC)

/* map = ... : properties a request must all have */
enum {
	MK_ANON = 1, MK_FILE = 2, MK_PRIVATE = 4, MK_SHARED = 8,
	MK_NORESERVE = 16, MK_FIXED = 32,
};

/* prot = ...: r w x (PROT_* values), or none */
enum { PK_READ = 1, PK_WRITE = 2, PK_EXEC = 4, PK_NONE = 8 };

/* action = ...: A_* and their description (actions.h) */
#include "actions.h"

struct pol_rule {
	char name[POL_NAME_MAX];
	int line;                 /* of the [rule ...] header */
	unsigned calls;           /* CALL_* */
	uint64_t size_lo, size_hi; /* inclusive */
	unsigned map_req;         /* MK_* */
	unsigned prot_req;        /* PK_* */
	unsigned actions;         /* A_* */
	uint16_t caller[POL_MAX_GLOBS]; /* offsets into policy.pool */
	uint16_t program[POL_MAX_GLOBS];
	uint8_t ncaller, nprogram;
	/* knobs of later actions; 0 means default */
	unsigned threads;         /* populate threads = N */
	uint64_t chunk;           /* background chunk */
	uint64_t recycle_max;     /* recycle cache per rule */
	uint64_t reserve;         /* carve: the largest reserve */
	uint64_t carve_min_rss;   /* carve: carve once the process's peak RSS is this much (0: at once) */
	uint64_t depth;           /* stack prefault depth */
	uint8_t huge_check;       /* hugepage_check = yes: measure huge pages against small, keep the faster */
	unsigned seen;            /* keys given (bit per key), for duplicates */
};

struct policy {
	uint64_t budget;          /* valid if has_budget */
	int has_budget;
	char report[POL_REPORT_MAX]; /* valid if has_report */
	int has_report;
	int mlockall;             /* MCL_CURRENT | MCL_FUTURE bits, or 0 */
	unsigned workers;         /* 0: default */
	unsigned gseen;
	int nrules;
	struct pol_rule rules[POL_MAX_RULES];
	size_t pool_len;
	char pool[POL_POOL];
};

struct pol_error {
	int line;
	char msg[256];
};

int policy_parse(const char *buf, size_t len, struct policy *pol, struct pol_error *err);

static inline const char *pol_str(const struct policy *p, uint16_t off) { return p->pool + off; }

/* The words of map = and action =, with their bits; NULL-terminated. */
struct pol_word {
	const char *s;
	unsigned bit;
};
extern const struct pol_word pol_map_words[], pol_action_words[];

struct sbuf;
/* One line describing a rule, as `prefault check` prints it. */
void policy_describe_rule(struct sbuf *sb, const struct policy *pol, const struct pol_rule *r);
/* Strict size parser shared with the CLI: digits with an optional K/M/G/T
 * suffix (powers of 1024).  Returns NULL or a static message. */
const char *parse_size(const char *s, size_t n, uint64_t *out);
/* The learner's budget (PREFAULT_AUTO_BUDGET, run --auto-budget): a
 * percentage of the program's peak RSS, a size, or both, comma-separated,
 * the lesser holding ("10%,256M"), and "hard" (all the learner holds
 * within that, wherever RSS is: see auto.c) or "soft" (the default: freed
 * regions kept in the room below the program's peak too) with either or
 * alone.  Sets only what is given.  NULL, or a static message. */
const char *parse_auto_budget(const char *s, uint64_t *pct, uint64_t *cap, int *hard);

#endif
