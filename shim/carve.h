/* carve.h: huge pages for mappings smaller than a huge page (see carve.c). */
#ifndef PREFAULT_CARVE_H
#define PREFAULT_CARVE_H
#include <stddef.h>
#include <stdint.h>
#include "figs.h"
#include "policy.h"

struct settings;
/* Once, from pf_setup: the policy's carve rules, and the huge page size
 * (the system's hpage_pmd_size, or the test setting). */
void carve_setup(const struct policy *pol, const struct settings *set);
/* May this request of a carve rule (a recyclable one: anonymous, private,
 * writable, placed by the kernel) be carved?  No where the huge page size
 * is unknown, not larger than len, or not a multiple of it, or where the
 * flags ask for more than a plain mapping; then it is recycled instead,
 * counted (carve.uncarved) and noted.  No system call. */
int carve_fits(int rule, size_t len, int flags);
/* The rule's hugepage_check found small pages faster here (prefault.c
 * measures before each reserve): from now on the rule's requests are not
 * carved but recycled, counted as above, and noted.  What is stocked
 * already is still served. */
void carve_small_won(int rule);
/* carve_min_rss: has the process's peak RSS reached the rule's (always yes
 * without one)?  Asked where a request would open a reserve: no costs a
 * getrusage, once a fresh mapping of the rule's (the request is recycled
 * instead, counted in carve.uncarved and carve.waited); the first yes is
 * kept, and then it costs nothing. */
int carve_rss_reached(int rule);
/* Nothing of this class was kept: map a new reserve for the rule, stock it
 * with recycle (recycle_stock) and take its first slice, as recycle_take
 * does.  0 where no reserve could be had (budget, table, limits, memory
 * short, mmap failed): the caller maps as it would have. */
uintptr_t carve_take(int rule, size_t len, int prot, int flags, size_t *resident);
/* At exit, for the report: what each rule's reserves hold (Rss, and
 * AnonHugePages) from /proc/self/smaps, added into rules[] (indexed by
 * rule).  Reads nothing where no reserve was made. */
void carve_report(struct figs_rule *rules);
void carve_atfork(int who);
#endif
