/* recycle.h: keeping freed regions for reuse (see recycle.c). */
#ifndef PREFAULT_RECYCLE_H
#define PREFAULT_RECYCLE_H
#include <stddef.h>
#include <stdint.h>
#include "policy.h"

void recycle_setup(const struct policy *pol);
/* A limit of the program's own is set (RLIMIT_AS or RLIMIT_DATA): keep
 * nothing (prefault.c learns it at start-up and from the program's own
 * setrlimit and prlimit calls, so no call here asks the kernel). */
void recycle_limited(int on);
/* The program changed the rules new mappings are made by (personality,
 * PR_SET_MDWE): a kept region or a carved slice would come back as the
 * old ones made it (rw where the kernel now gives rwx under
 * READ_IMPLIES_EXEC; rwx where MDWE now refuses it).  Kept regions go
 * back, and none are kept, stocked or carved from then on. */
void recycle_never(void);
/* The program unmapped exactly this region of `rule`: keep it?  1 if kept
 * (the caller must not unmap it), 0 if it should really be unmapped.
 * `full`: every page was resident when last seen (a hint: reuse then
 * clears it whole without asking the kernel which pages are resident).
 * `slice`: it is a slice of a carve reserve (RF_CARVED): recycle_take says
 * so again when it hands it out. */
int recycle_keep(uintptr_t addr, size_t len, int rule, int prot, int flags, int full, int slice, uint32_t epoch);
/* A kept region for this request, zeroed where the program had touched it;
 * 0 if none.  *resident gets the pages that are resident (and zero), and
 * *epoch and *slice (if not NULL) what recycle_keep was given for it.  With
 * `beside`, it may answer 0 with *beside set: map this one fresh, with that
 * address as the kernel's hint, so that regions are kept side by side and
 * asked about together (see the top of recycle.c). */
uintptr_t recycle_take(int rule, size_t len, int prot, int flags, size_t *resident, uintptr_t *beside, uint32_t *epoch, int *slice);
/* Stock for carve.c: [start, start + total), a fresh mapping of this
 * rule's with this protection and these flags, cut into regions of len
 * bytes that the next requests of that length get as they are (they were
 * never the program's, so they read zero: no clearing).  Stock is not
 * counted as kept (recycle_max, cache_bytes); it is given back as kept
 * regions are, and each region of it is charged to the budget (the
 * caller reserved the whole).  Returns how many regions were stocked, the
 * last ones of the range: the caller unmaps the rest (no memory to track
 * them) and gives back their charge. */
size_t recycle_stock(uintptr_t start, size_t total, size_t len, int rule, int prot, int flags);
/* May stock be made now?  (No limit of the program's is set, and memory
 * is not short.) */
int recycle_stock_ok(void);
/* The program wants this address range (MAP_FIXED, a hint, mremap, or any
 * call on it): give back any kept region in it, so the kernel answers as it
 * would without us. */
void recycle_release_range(uintptr_t start, size_t len);
/* The kernel has unmapped [start, start + len) behind
 * the shim's back (a call under the guard, glue.h): kept regions there are
 * forgotten and their charges given back, and only their parts outside the
 * range unmapped. */
void recycle_forget_range(uintptr_t start, size_t len);
/* Give back everything kept (memory short, mmap ENOMEM, exit). */
void recycle_flush(void);
/* Something is kept (read without a lock). */
int recycle_any(void);
uint64_t recycle_kept_bytes(int rule);
/* The learner's: a rule that recycles, added while the program runs (its
 * cap per rule: max); the most all rules may keep together (kept regions
 * are not given back when it falls: only no more are kept); what they keep
 * now; and a rule's kept regions given back (it backed off). */
void recycle_add_rule(int rule, uint64_t max);
void recycle_cap(uint64_t total);
void recycle_cap_below(uint64_t total); /* lowered to total if above it */
uint64_t recycle_kept_total(void);
/* recycle_kept_total and what is being given back (its munmap not done):
 * what of RSS may be the cache's. */
uint64_t recycle_held_total(void);
/* Of the kept bytes given back so far (munmaps done; never falls), those
 * that were resident, and those a reused region scattered all over had
 * resident when dropped whole to clear it: what RSS fell by by the cache's
 * doing.  For the learner's count of what
 * the program itself made resident between two looks.  Counted only after
 * recycle_count_given(): then a region whose resident pages the cache does
 * not know (most of the learner's) costs a mincore per 256 pages when
 * given back, beside its munmap.  (Counted as its
 * whole length before, a region's pages not resident were taken for the
 * program's touches: the learner's guess of RSS read low.) */
uint64_t recycle_given_total(void);
void recycle_count_given(void);
/* Of a rule's recycle_dropped, those the cap of recycle_cap refused. */
uint64_t recycle_capped(int rule);
/* Of a rule's kept regions, those recycle_trim gave back. */
uint64_t recycle_trimmed(int rule);
uint64_t recycle_kept_peak(void);
void recycle_release_rule(int rule);
/* Give kept regions back until at most `most` bytes are kept; returns the
 * bytes this call gave back (what it took out of recycle_kept_total: other
 * threads may keep and take meanwhile, so a difference of two reads of the
 * total is not what left RSS). */
uint64_t recycle_trim(uint64_t most);
void recycle_atfork(int who);
#endif
