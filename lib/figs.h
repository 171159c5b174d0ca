/* figs.h: the report's figures, described once.
 *
 * Each line of PF_RULE_FIGS is one figure of a rule: its field (in the
 * shim's counters and in the plain struct the text is rendered from), its
 * path in the JSON report, how it adds up across the processes of a tree,
 * and whether unmatched requests have it too.  From it come the shim's
 * counters (stats.h), the JSON the shim writes (report.c), the struct the
 * tool reads back from that JSON and sums over a tree (tools/reports.c),
 * and the text both print (report_text.c).  PF_PROC_FIGS does the same for
 * a process's own figures.  A new counter is one line here, and the line of
 * code that counts it.
 *
 * Pure: constants and plain structs, shared by the shim and the tool.
 */
#ifndef PREFAULT_FIGS_H
#define PREFAULT_FIGS_H
#include <stdint.h>

/* How a figure adds up across processes, and how it is written. */
enum fig_kind {
	FK_SUM,   /* a count or bytes: summed */
	FK_MAX,   /* a bound: the largest */
	FK_NS,    /* nanoseconds, written as seconds with 6 decimals: summed */
	FK_MIN,   /* the least (the profile's smallest size at a site) */
	FK_FIRST, /* the same in every process: the first one's (the profile's period) */
};
/* Who has it: every rule and the unmatched requests, or rules only. */
enum { FS_ALL, FS_RULE };

/* field, JSON path, kind, scope.  In JSON order: a group ("background.")
 * is written where its first figure stands. */
#define PF_RULE_FIGS(X)                                                                      \
	X(matched, "matched", FK_SUM, FS_ALL)                                                \
	X(bytes, "bytes", FK_SUM, FS_ALL)                                                    \
	X(prefaulted_bytes, "prefaulted_bytes", FK_SUM, FS_ALL)                              \
	X(ns, "seconds", FK_NS, FS_ALL)                                                      \
	X(faults, "faults", FK_SUM, FS_ALL)                                                  \
	X(skipped, "skipped", FK_SUM, FS_ALL)                                                \
	X(skip_budget, "skipped_by.budget", FK_SUM, FS_ALL)                                  \
	X(skip_failed, "skipped_by.failed", FK_SUM, FS_ALL)                                  \
	X(skip_table, "skipped_by.table_full", FK_SUM, FS_ALL)                               \
	X(skip_queue, "skipped_by.queue_full", FK_SUM, FS_ALL)                               \
	X(queued_bytes, "background.queued_bytes", FK_SUM, FS_RULE)                          \
	X(background_bytes, "background.populated_bytes", FK_SUM, FS_RULE)                  \
	X(program_first_bytes, "background.program_first_bytes", FK_SUM, FS_RULE)           \
	X(cancelled_bytes, "background.cancelled_bytes", FK_SUM, FS_RULE)                    \
	X(left_bytes, "background.left_bytes", FK_SUM, FS_RULE)                              \
	X(leaps, "background.leaps", FK_SUM, FS_RULE)                                        \
	X(behind, "background.windows_behind", FK_SUM, FS_RULE)                              \
	X(twice_max, "background.twice_faults_max", FK_MAX, FS_RULE)                         \
	X(huge_bytes, "huge_bytes", FK_SUM, FS_RULE)                                         \
	X(small_fallbacks, "small_fallbacks", FK_SUM, FS_RULE)                               \
	X(recycle_kept, "recycle.kept", FK_SUM, FS_RULE)                                     \
	X(recycle_reused, "recycle.recycled", FK_SUM, FS_RULE)                               \
	X(recycle_reused_bytes, "recycle.bytes_reused", FK_SUM, FS_RULE)                     \
	X(recycle_zeroed_bytes, "recycle.zeroed_bytes", FK_SUM, FS_RULE)                     \
	X(recycle_zero_ns, "recycle.zeroing_s", FK_NS, FS_RULE)                              \
	X(recycle_peak_bytes, "recycle.cache_peak_bytes", FK_SUM, FS_RULE)                   \
	X(cache_bytes, "recycle.cache_bytes", FK_SUM, FS_RULE)                               \
	X(recycle_dropped, "recycle.dropped", FK_SUM, FS_RULE)                               \
	X(carve_reserves, "carve.reserves", FK_SUM, FS_RULE)                                 \
	X(carve_reserved_bytes, "carve.reserved_bytes", FK_SUM, FS_RULE)                     \
	X(carve_fresh, "carve.fresh", FK_SUM, FS_RULE)                                       \
	X(carve_uncarved, "carve.uncarved", FK_SUM, FS_RULE)                                 \
	X(carve_waited, "carve.waited", FK_SUM, FS_RULE)                                     \
	X(carve_resident_bytes, "carve.resident_bytes", FK_SUM, FS_RULE)                     \
	X(carve_huge_bytes, "carve.huge_bytes", FK_SUM, FS_RULE) \
	X(carve_untracked, "carve.untracked", FK_SUM, FS_RULE) \
	X(hc_checks, "hugepage_check.checks", FK_SUM, FS_RULE)                               \
	X(hc_huge_won, "hugepage_check.huge_won", FK_SUM, FS_RULE)                           \
	X(hc_small_pages, "hugepage_check.small_pages", FK_SUM, FS_RULE)                     \
	X(hc_small_ns, "hugepage_check.small_s", FK_NS, FS_RULE)                             \
	X(hc_huge_pages, "hugepage_check.huge_pages", FK_SUM, FS_RULE)                       \
	X(hc_huge_ns, "hugepage_check.huge_s", FK_NS, FS_RULE)                               \
	X(hc_unjudged, "hugepage_check.unjudged", FK_SUM, FS_RULE)

/* Why a matched request got less than its rule asked for: the skip_ figures
 * above, in this order (the shim counts them by index). */
#define PF_SKIPS(X) X(budget) X(failed) X(table) X(queue)

#define SIZE_CLASSES 64

/* Power-of-two classes: class k holds [2^k, 2^(k+1)). */
struct hist {
	uint64_t maps[SIZE_CLASSES];
	uint64_t bytes[SIZE_CLASSES];
};

/* One rule's figures (or the unmatched requests'): the shim's counters, and
 * the plain numbers the text is rendered from. */
struct figs_rule {
#define PF_FIG_FIELD(field, path, kind, scope) uint64_t field;
	PF_RULE_FIGS(PF_FIG_FIELD)
#undef PF_FIG_FIELD
	struct hist sizes;
};

/* A process's own figures: field, JSON path, kind. */
#define PF_PROC_FIGS(X)                                                                      \
	X(pid, "pid", FK_SUM)                                                                \
	X(ppid, "ppid", FK_SUM)                                                              \
	X(wall_ns, "wall_s", FK_NS)                                                          \
	X(minor, "faults.minor", FK_SUM)                                                     \
	X(major, "faults.major", FK_SUM)                                                     \
	X(in_prefault, "faults.in_prefault", FK_SUM)                                         \
	X(in_program, "faults.in_program", FK_SUM)                                           \
	X(at_start, "faults.before_start", FK_SUM)                                           \
	X(budget_used, "budget.used", FK_SUM)                                                \
	X(budget_peak, "budget.peak", FK_MAX)

/* The learner (PREFAULT_POLICY=auto, shim/auto.c): one line per site it
 * acted on or chose to leave alone.  Why it acted (why: AW_*, with its
 * figures a, b, c), when, and why it backed off (off: AO_*, figures a, b).
 * program_faults: the whole program's faults (less the shim's own work)
 * before the decision and after it, with the time each took. */
#define PF_AUTO_FIGS(X)                                                                      \
	X(call, "call", FK_SUM)                                                              \
	X(size, "size", FK_SUM)                                                              \
	X(size_max, "size_max", FK_SUM)                                                      \
	X(offset, "offset", FK_SUM)                                                          \
	X(actions, "actions", FK_SUM)                                                        \
	X(rule, "rule", FK_SUM)                                                              \
	X(why, "why.code", FK_SUM)                                                           \
	X(why_a, "why.a", FK_SUM)                                                            \
	X(why_b, "why.b", FK_SUM)                                                            \
	X(why_c, "why.c", FK_SUM)                                                            \
	X(since_ns, "since_s", FK_NS)                                                        \
	X(off, "off.code", FK_SUM)                                                           \
	X(off_a, "off.a", FK_SUM)                                                            \
	X(off_b, "off.b", FK_SUM)                                                            \
	X(off_ns, "off.at_s", FK_NS)                                                         \
	X(maps, "maps", FK_SUM)                                                              \
	X(before, "program_faults.before", FK_SUM)                                           \
	X(before_ns, "program_faults.before_s", FK_NS)                                       \
	X(after, "program_faults.after", FK_SUM)                                             \
	X(after_ns, "program_faults.after_s", FK_NS)                                         \
	X(saved, "saved_faults", FK_SUM)                                                     \
	X(held_peak, "held_peak", FK_MAX)                                                    \
	X(cost_ns, "cost_s", FK_NS)

/* Why the learner acted on a site, or left it alone. */
enum auto_why {
	AW_NONE,
	AW_CHURN,      /* recycle: a unmaps of one size within b us */
	AW_DENSE,      /* populate: a mappings came back b per mille touched */
	AW_LATE,       /* background: as AW_DENSE, first touched c ms after the map (mean) */
	AW_FRONT,      /* populate ahead: a KiB filled from the front, first touched b ms after the map */
	AW_SPARSE,     /* left alone: a mappings came back b per mille touched */
	AW_SCATTERED,  /* left alone: a large mappings touched here and there, not from the front */
	AW_UNTOUCHED,  /* left alone: a large mapping not touched in a seconds */
	AW_COUNT
};
/* Why it backed off (returned the site to observing). */
enum auto_off {
	AO_NONE,
	AO_SPARSE,     /* a probe mapping came back a per mille touched */
	AO_DROPPED,    /* a of b unmapped regions were not kept (cap, budget, memory short) */
	AO_UNUSED,     /* a of b kept regions were used again */
	AO_COUNT
};

/* One site's figures, and the object its caller is in. */
struct figs_auto {
	const char *object;
#define PF_AUTO_FIELD(field, path, kind) uint64_t field;
	PF_AUTO_FIGS(PF_AUTO_FIELD)
#undef PF_AUTO_FIELD
};
#define FIGS_MAX_AUTO 96

/* The learner's budget: field, JSON path (in the report's "auto" object),
 * kind.  limit: what RSS may have over the program's own peak; over_peak:
 * the most it was seen to have; windows_cut: windows ahead of a buffer's
 * front made smaller than the program's 30 ms, or left out, for it;
 * guard_looks: the soft guard's looks at RSS; huge_holds: times the cache
 * was held within the room while a front mapped long ago and advised huge
 * pages was being filled (auto.c). */
#define PF_AUTO_PROC_FIGS(X)                                                                 \
	X(auto_limit, "budget.limit", FK_SUM)                                                \
	X(auto_held, "budget.held", FK_SUM)                                                  \
	X(auto_held_peak, "budget.held_peak", FK_MAX)                                        \
	X(auto_program_peak, "budget.program_peak", FK_MAX)                                  \
	X(auto_over_peak, "budget.over_peak", FK_MAX)                                        \
	X(auto_percent, "budget.percent", FK_MAX)                                            \
	X(auto_cap, "budget.cap", FK_MAX)                                                    \
	X(auto_hard, "budget.hard", FK_MAX)                                                  \
	X(auto_shim_own, "budget.shim_own", FK_MAX)                                          \
	X(auto_cut, "budget.windows_cut", FK_SUM)                                            \
	X(auto_guard_looks, "budget.guard_looks", FK_SUM)                                    \
	X(auto_huge_holds, "budget.huge_holds", FK_SUM)                                      \
	X(auto_sites, "sites_seen", FK_SUM)

/* A budget limit never worked out (JSON null: nothing needed one). */
#define FIGS_LIMIT_UNKNOWN (UINT64_MAX - 1)
/* The malloc family not counted (JSON null: no rule or profile watches it). */
#define FIGS_NOT_COUNTED UINT64_MAX

#define FIGS_MAX_KINDS 64 /* named counts: system calls by kind */
#define FIGS_MAX_NOTES 32

/* A process's report, as numbers and names (or a tree's, summed). */
struct figs_proc {
	const char *program, *exe;
	const char *policy; /* NULL: observe only */
#define PF_PROC_FIELD(field, path, kind) uint64_t field;
	PF_PROC_FIGS(PF_PROC_FIELD)
#undef PF_PROC_FIELD
	uint64_t budget_limit;      /* or FIGS_LIMIT_UNKNOWN; UINT64_MAX: unlimited */
	uint64_t malloc_from;       /* least malloc block counted, or FIGS_NOT_COUNTED */
	int has_ledger;             /* (older shims wrote none) */
	int nsc;                    /* the cost ledger: system calls by kind */
	const char *sc_name[FIGS_MAX_KINDS];
	uint64_t sc[FIGS_MAX_KINDS], sc_total;
	int nrules;
	const char *const *rule_name; /* [nrules] */
	const struct figs_rule *rules; /* [nrules] */
	struct figs_rule unmatched[2]; /* mmap, malloc family */
	int nnotes;
	const char *note[FIGS_MAX_NOTES];
	int auto_on;                /* PREFAULT_POLICY=auto: the learner's part below */
#define PF_AUTO_PROC_FIELD(field, path, kind) uint64_t field;
	PF_AUTO_PROC_FIGS(PF_AUTO_PROC_FIELD)
#undef PF_AUTO_PROC_FIELD
	int nauto;
	const struct figs_auto *autos; /* [nauto] */
};
#endif
