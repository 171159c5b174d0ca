/* profile.h: fault profiling of an unmodified program (PREFAULT_PROFILE).
 * profile.c is the front, above profile_sample.c (the per-thread fault
 * events and their reader) and profile_tables.c (the mapping sites and the
 * ranges they mapped). */
#ifndef PREFAULT_PROFILE_H
#define PREFAULT_PROFILE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "os.h"

extern int profiling;
/* From init.c, with the settings: PREFAULT_PROFILE's path template (%p
 * %e %%), the sampling period, the test-only refused path. */
struct settings;
/* program, exe, ppid: the caller's, for the file (read when it is
 * written: exe may be filled later, ppid changes in a fork child). */
void profile_init(const struct settings *set, const char *program, const char *exe, const pid_t *ppid);
void profile_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk);
void profile_unmap(uintptr_t start, size_t len);
/* After a successful mremap(old, oldlen, newlen, flags) that returned dst
 * (lengths page-rounded): the range keeps its site and kind. */
void profile_remap(uintptr_t old, size_t oldlen, uintptr_t dst, size_t newlen, int flags);
void profile_block(const void *p, size_t len, const void *ret);
void profile_free(const void *p);
/* The smallest malloc block the profile records. */
#define PROFILE_MALLOC_MIN (64u << 10)
/* This thread's page-fault event (main thread at start, others at birth). */
void profile_thread_start(void);
/* Start the reader thread in this process if it is not running: it
 * drains the fault events and writes the snapshots. */
void profile_tick(void);
void profile_atfork(int who);
/* Fork's first hook: the reader's lock, taken before any wrapper's. */
void profile_atfork_drain(int who);
/* Stop sampling, drain, count what is still mapped, write the
 * per-process file (its fault counts are the profile's own window's) in
 * the place of the last snapshot.
 * may_wait: as for the report (init.c): 0 when this thread may hold one of
 * the profile's locks (exit from a signal handler that interrupted the
 * shim), and then nothing that needs one is done, and the file says so. */
void profile_finish(int may_wait);
#endif
