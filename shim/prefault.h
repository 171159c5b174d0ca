/* prefault.h: the module that decides.  The wrappers (interpose.c) forward
 * and make one call here; this module plans each request, makes the real
 * call where it must come in the middle (mmap: placement, reuse, retry),
 * and carries out the rule's actions on the result.
 *
 * The contract with the program: nothing it can observe changes.  Actions
 * are advice (MADV_*), population (MADV_POPULATE_*, which maps pages without
 * writing to them), or locking; errno is saved and restored around our own
 * work.  Everything that makes memory resident is charged to the budget
 * first, and skipped (and counted) when the budget is spent.
 *
 * The malloc family at the floor: a wrapper calls the next malloc and then
 * compares the size with pf_block_min, which is decided once at start-up:
 * SIZE_MAX when no rule can match a block and nothing profiles them (the
 * wrappers then only forward), else the smallest size a rule or the profile
 * wants.  Only blocks from there on reach pf_block; free looks at its block
 * only if it lies within the bounds of the tracked blocks (regions.h).
 */
#ifndef PREFAULT_PREFAULT_H
#define PREFAULT_PREFAULT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "glue.h"
#include "policy.h"

extern size_t pf_block_min __attribute__((visibility("hidden"))); /* 0 until start-up is done */

/* From init.c, once: the policy (NULL: observe only), and the settings. */
struct settings;
void pf_setup(const struct policy *pol, int profile, const struct settings *set);
/* The shim is off (a bad policy, a set-user-ID program): forward only. */
void pf_off(void);

/* The mmap family: called with the shim on, this thread's guard down. */
void *pf_mmap(enum entry e, void *addr, size_t len, int prot, int flags, int fd, off_t off, const void *ret);
int pf_munmap(void *addr, size_t len);
void *pf_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *new_addr, const void *ret);
/* A call on a range the shim does not otherwise follow: give back what is
 * kept there (so the kernel answers as it would without us), and, as `how`
 * says, nothing more (mincore, msync), forget what is tracked there (shmat
 * over it), or never keep it for reuse (registered with userfaultfd, or
 * sealed with mseal: its munmap must fail with EPERM). */
enum { CLAIM_PROBE, CLAIM_REPLACE, CLAIM_KEEP_OUT };
void pf_claim(void *addr, size_t len, int how);
/* The program registers [addr, addr+len) with userfaultfd (missing mode
 * or not): before the real call.  See prefault.c. */
void pf_uffd(void *addr, size_t len, int missing, int minor);
/* After a successful UFFDIO_UNREGISTER. */
void pf_uffd_unregistered(void *addr, size_t len);
/* The program changed its privileges (setuid, capset, ...): after the call. */
void pf_privileges(void);
/* A call of the program's failed with ENOMEM or EAGAIN: give back what the
 * shim holds that may be why; 1 if anything was (then try once more). */
int pf_give_way(void);
void pf_atfork(int who);
/* mprotect and pkey_mprotect: before the real call. */
void pf_reprotect(void *addr, size_t len);
int pf_madvise(void *addr, size_t len, int advice);

/* Locking: the program's own calls. */
int pf_mlock(enum entry e, const void *addr, size_t len, unsigned flags);
int pf_munlock(const void *addr, size_t len);
int pf_mlockall(int flags);
int pf_munlockall(void);

/* The program is about to set a resource limit (done 0), or has set it
 * (done 1). */
void pf_limit(int resource, int done);
/* The program changed its persona or its exec rules (personality,
 * PR_SET_MDWE): recycle_never. */
void pf_exec_rules(void);

/* The malloc family: a block of pf_block_min or more came back. */
void pf_block(enum entry e, void *p, size_t size, const void *ret);
/* Before free (and realloc) of p, when p lies within the blocks' bounds.
 * A free (fate non-null) of a block the learner no longer counts as coming
 * returns in *fate what pf_freed needs once the allocator is done with it;
 * a realloc passes NULL (the block may move with its pages: nothing fell). */
struct fate {
	uintptr_t at;  /* a page of the block's own */
	uint64_t fell; /* its resident bytes (0: nothing to tell) */
};
void pf_free(void *p, struct fate *fate);
/* After the allocator's free of a block pf_free filled *fate for: if the
 * allocator unmapped it, RSS fell by what it had resident (auto_unmapped);
 * if it kept it, nothing fell. */
void pf_freed(const struct fate *fate);
#endif
