/* profile_format.h: the per-process profile file, described once.
 *
 * The shim writes it (profile.c, profile_sample.c) and the tool reads it
 * (tools/profile_data.c), both from these tables: a new counter is one line
 * here, and the reader refuses a file of another version with a message
 * that says so, instead of reading fields by position from a layout it
 * does not know.
 *
 * A file is lines of tab-separated fields.  The first is the magic word and
 * the version; the last is "end".  (The shim writes each file beside its
 * name and renames it into place whole; a file without "end" is not read.)
 * The file is written at exit, and before that as snapshots (a "snapshot"
 * record says so): a process that never reached its exit (killed by a
 * signal, or one that exec'd a program the shim is not in) leaves its last
 * snapshot.  Every other line is a record: a tag,
 * then exactly the fields PROFILE_RECORDS gives it, each of a kind:
 *   u  a decimal number        x  an address, in hex (0x...)
 *   t  text (no tab, no newline: the writer replaces them)
 *   l  a list of addresses, comma-separated, innermost frame first
 *
 * Code is written as raw addresses, with the file mappings ("object"
 * records, from /proc/self/maps at exit) that hold them: the tool names them
 * after the run, from the files' symbol tables and debug files.  The shim
 * names nothing (no dladdr: it takes the loader's lock, at exit).
 */
#ifndef PREFAULT_PROFILE_FORMAT_H
#define PREFAULT_PROFILE_FORMAT_H
#include "figs.h" /* enum fig_kind: how a counter adds up across a tree */

#define PROFILE_MAGIC "prefault-profile"
#define PROFILE_VERSION 5
/* Snapshots: the first this many seconds after a process's start, then at
 * most one this often (longer after one that took long). */
#define PROFILE_SNAP_S 1
#define PROFILE_STR_(x) #x
#define PROFILE_STR(x) PROFILE_STR_(x)
#define PROFILE_VERSION_STR PROFILE_STR(PROFILE_VERSION)

/* X(tag, kinds): the records.  Fields, in order:
 *   process  pid, ppid, program, exe
 *   snapshot when it was taken (CLOCK_MONOTONIC, ns), and how long after
 *            the process's start (ns): the file is a snapshot, not the
 *            exit's; absent in the exit's
 *   count    name (of PROFILE_COUNTS), value
 *   perf     "ok" or "refused", why (or "-")
 *   object   start, end, file offset, inode, path: an executable file mapping
 *   code     address of the faulting instruction, sampled faults
 *   stack    sampled faults, the call chain (the first address is the
 *            faulting instruction, the rest return addresses)
 *   other    where (what /proc/self/maps says is there), sampled faults
 *   site     return address of the call, call, kind, prot, size class (a
 *            power of two), then PROFILE_SITE_COUNTS in order */
#define PROFILE_RECORDS(X)                                                                                             \
	X(process, "uutt")                                                                                             \
	X(snapshot, "uu")                                                                                              \
	X(count, "tu")                                                                                                 \
	X(perf, "tt")                                                                                                  \
	X(object, "xxxut")                                                                                             \
	X(code, "xu")                                                                                                  \
	X(stack, "ul")                                                                                                 \
	X(other, "tu")                                                                                                 \
	X(site, "xtttu")                                                                                               \
	X(end, "")

/* X(member, JSON key, kind): the process's counters, one "count" record
 * each (by name: a reader skips names it does not know).  A JSON key with a
 * dot is a member of an object ("faults.minor").  The figures add up:
 * sampled = the program's samples + in_shim, and faults counts every fault
 * of the process while its events were open, the shim's own included
 * (shim_faults: its tables, sampled, plus its threads' and its thread
 * starts', measured).  lost is worked out from each event's own count (its
 * faults, less those its samples read stood for): the kernel's notice of
 * a loss comes only once the ring has room again, never after the last
 * drain. */
#define PROFILE_COUNTS(X)                                                                                              \
	X(minor, "faults.minor", FK_SUM)                                                                          \
	X(major, "faults.major", FK_SUM)                                                                          \
	X(shim_faults, "faults.shim", FK_SUM)                                                                     \
	X(period, "period", FK_FIRST)                                                                             \
	X(sampled, "sampled", FK_SUM)                                                                             \
	X(lost, "lost", FK_SUM) /* faults whose samples a full ring dropped, or the exit left unread */           \
	X(unattributed, "outside_sites", FK_SUM)                                                                  \
	X(in_shim, "in_shim", FK_SUM)                                                                             \
	X(unsampled_threads, "limits.unsampled_threads", FK_SUM)                                                  \
	X(dropped_code, "limits.dropped_code", FK_SUM)                                                            \
	X(dropped_stacks, "limits.dropped_stacks", FK_SUM)                                                        \
	X(dropped_other, "limits.dropped_other", FK_SUM)                                                          \
	X(merged_sites, "limits.merged_sites", FK_SUM)                                                            \
	X(untracked_ranges, "limits.untracked_ranges", FK_SUM)                                                  \
	X(exit_locked, "limits.exit_locked", FK_SUM) /* exit inside the shim: last samples unread */

/* X(member, JSON key, kind): a mapping site's counters, the last fields of
 * its "site" record, in this order. */
#define PROFILE_SITE_COUNTS(X)                                                                                         \
	X(size_min, "size_min", FK_MIN)                                                                           \
	X(size_max, "size_max", FK_MAX)                                                                           \
	X(maps, "maps", FK_SUM)                                                                                   \
	X(unmaps, "unmaps", FK_SUM)                                                                               \
	X(bytes, "bytes", FK_SUM)                                                                                 \
	X(touched, "touched_bytes", FK_SUM)                                                                       \
	X(faults, "faults", FK_SUM)                                                                               \
	X(ranges_faulted, "ranges_faulted", FK_SUM) /* mapped ranges that took a sampled fault */                 \
	X(ranges_early, "ranges_early", FK_SUM)     /* ... whose first came within 5 ms of the map */             \
	X(faults_early, "faults_early", FK_SUM)     /* sampled faults within 5 ms of their range's map */         \
	X(delay_us, "delay_us", FK_SUM)             /* sum over ranges of map-to-first-fault time */         \
	X(huge, "huge_bytes_at_exit", FK_SUM)       /* AnonHugePages of its live ranges, when written */

#define PROFILE_X_MEMBER(m, key, merge) uint64_t m;
#endif
