/* candidates.h: from a profile to the rules worth trying, per site.
 *
 * One logic for `prefault tune` (which trials every candidate) and
 * `prefault profile --suggest` (which writes each site's first choice,
 * untested).  For each site heavy enough to matter (CAND_MIN_SHARE of the
 * faults or more; below that no rule can make the program that much
 * faster), in the order tried:
 *   recycle             an anonymous private writable mmap site that maps
 *                       and unmaps one size again and again;
 *   willneed            a file mapping;
 *   populate            a dense site (60% or more of what it maps touched);
 *   populate hugepage   dense, a huge page (cli_hpage_size) and up,
 *                       anonymous private or malloc;
 *   populate, threads = N            dense, 64 MiB and up;
 *   populate hugepage, threads = N   dense, 64 MiB and up, as above;
 *   background          dense, and the program works between mapping and
 *                       touching: most mapped ranges take their first
 *                       fault later than 5 ms after the map, and most of
 *                       the faults come later than that (never for a site
 *                       touched straight after mapping);
 *   background hugepage the same, a huge page and up, anonymous private or
 *                       malloc;
 *   nothing             for a sparse site.
 * A site seen only in processes other than the one started gets
 * `program =` with their names.  Every candidate's rule parses (checked
 * with the policy parser); one that would not is dropped.
 */
#ifndef PREFAULT_CANDIDATES_H
#define PREFAULT_CANDIDATES_H
#include <stddef.h>
#include <stdint.h>
#include "profile_data.h"

#define CAND_MIN_SHARE 0.03
#define CAND_DENSE 0.60
#define CAND_LARGE (64ull << 20)
#define CAND_MAX_SITES 16
#define CAND_MAX 96

struct candidate {
	int site;          /* index into plan.sites */
	char label[48];    /* "populate hugepage, threads = 2" */
	char rule[1200];   /* [rule NAME] ... action = ... (complete) */
	int hugepage;      /* changes memory use: said in the policy */
};

struct site_plan {
	const struct psite *s;
	uint64_t weight;   /* sampled faults, or pages touched without perf */
	double share;      /* of all the faults */
	double dense;      /* touched / mapped */
	int later;         /* works between mapping and touching */
	int first, n;      /* its candidates: cands[first .. first + n) */
	int primary;       /* the one --suggest writes, or -1 */
	char name[64];     /* the rule's name */
	char desc[400];    /* one line: what the site is and does */
	char none_why[160]; /* why no candidate, if n == 0 */
};

struct plan {
	int nsites, ncands;
	uint64_t total;    /* the faults the shares are of */
	int perf_ok;
	struct site_plan sites[CAND_MAX_SITES];
	struct candidate cands[CAND_MAX];
	int skipped_light; /* sites under CAND_MIN_SHARE, not in sites[] */
};

/* The plan for a merged profile (sites heaviest first).  Returns 0. */
int plan_candidates(const struct profile *m, struct plan *p);
/* A name the policy's globs can hold as it is: one word, on its line (a
 * caller or program name; else the rule goes without it). */
int glob_safe(const char *s);
/* A rule's size: "4M", or "1M..3M" for requests that vary. */
void size_spec(char *out, size_t cap, uint64_t lo, uint64_t hi);
/* The short form of a site for tables: "pfprobe map_touch mmap 4M". */
void site_short(char *out, size_t cap, const struct site_plan *sp);
#endif
