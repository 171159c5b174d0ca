/* auto.h: the learner (PREFAULT_POLICY=auto, `prefault run --auto`): no
 * policy file; the shim decides per call site, online, from what it
 * measures in this run (auto.c says how).  Its decisions are rules of a
 * policy of its own, which prefault.c plans and applies as it does a policy
 * file's: the hooks below are where prefault.c hands it what it sees. */
#ifndef PREFAULT_AUTO_H
#define PREFAULT_AUTO_H
#include <stddef.h>
#include <stdint.h>
#include "figs.h"
#include "policy.h"

/* The least malloc block the learner looks at: populating a smaller one
 * saves a few faults for a system call. */
#define AUTO_BLOCK_MIN (256u << 10)

/* Set once at start-up (auto_setup), read by every hook's caller. */
extern int auto_on __attribute__((visibility("hidden")));
/* From the constructor: the watcher's stack, see glue_warm_add. */
void auto_warm(void);
/* From the constructor, once threads may start: the watcher, for mappings
 * watched before it (glue_spawn starts no thread until then). */
void auto_kick(void);

struct settings;
struct request;
struct region;

/* From init.c, when PREFAULT_POLICY is "auto": the learner's policy (no
 * rules yet: it adds them as it decides), or NULL after a warning when
 * PREFAULT_AUTO_BUDGET is bad (the program then runs without the shim). */
struct policy *auto_setup(const struct settings *set);
/* A request of the program's (an mmap the rules did not match, a malloc
 * block of AUTO_BLOCK_MIN or more): the rule the learner has for its site,
 * or -1; *watch is then the site the result is to be watched under (or -1).
 * Sets rq->epoch and rq->weight, for the region the result is tracked as.
 * No system call. */
int auto_request(struct request *rq, int *watch);
/* *watch from auto_request for a length the learner recycles: the mmap
 * wrapper calls auto_taken after its take, with the pages the reused
 * region had resident, or (size_t)-1 when none was kept for it, and the
 * epoch recycle_take gave for it; rq->epoch becomes the one the mapping
 * counts in. */
#define AUTO_TAKEN (-2)
void auto_taken(size_t len, size_t resident, uint32_t kept_epoch, struct request *rq);
/* After the real call: the program got [start, start+len) for the site
 * (key: the malloc block of size bytes, [start, start+len) its whole pages
 * inside; NULL for an mmap; rq: its request, for the epoch and weight it
 * counts in).  No system call. */
void auto_mapped(int site, uintptr_t start, size_t len, const void *key, size_t size, const struct request *rq);
/* A tracked region or block goes away whole (munmap of exactly it, or
 * free), still mapped: what it teaches, if it was watched (RF_AUTO).
 * With unmap (a munmap, or a free: the allocator may unmap the block),
 * returns the bytes it will free that the learner counts no more (0
 * mostly; a mincore per 256 pages when not 0), less what the learner's
 * windows ahead in it held charged (their charge goes now): the wrapper
 * passes them to auto_unmapped once the memory is seen gone (the munmap
 * done; after a free, the block's page unmapped: an allocator that keeps
 * it frees nothing).  Without (a realloc: the block may move with its
 * pages), 0. */
uint64_t auto_gone(const struct region *r, int unmap);
/* A region auto_gone took for one to be kept (a recycle rule's) was not
 * kept after all: the program's munmap unmaps it.  Returns as auto_gone. */
uint64_t auto_dropped(const struct region *r, int unmap);
/* A region was kept (after auto_gone): soft, while what is kept passes the
 * extra, the watcher looks at RSS every 10 ms (growth the shim does not see
 * would pass the line by what is kept until a call looked). */
void auto_kept(void);
/* What auto_gone or auto_dropped returned has left RSS. */
void auto_unmapped(uint64_t resident);
/* The program changes [start, start+len) otherwise (munmap of a part,
 * MAP_FIXED, mremap, mprotect, madvise, userfaultfd): stop watching it,
 * before the call (the watcher never advises a range that may be something
 * else, nor one the program advised itself). */
void auto_forget(uintptr_t start, size_t len);
void auto_atfork(int who);
void auto_atfork_trim(int who);

/* For the report: the budget's figures into p, and up to max sites into
 * out (p->autos, p->nauto). */
void auto_figs(struct figs_proc *p, struct figs_auto *out, int max);
#endif
