/* entries.h: every symbol the shim exports, listed once.
 *
 * The list generates the table of next definitions (glue.h: enum entry,
 * entry_names), the report's per-call counts, and the linker's version
 * script (libprefault.map.S), so the three can never disagree.
 * Order is report order.  The malloc family comes last among the counted
 * calls: in observe mode its calls are not counted (see prefault.h).
 */
#ifndef PREFAULT_ENTRIES_H
#define PREFAULT_ENTRIES_H

#define PF_ENTRIES(X)                                                          \
	X(mmap) X(mmap64) X(munmap) X(mremap) X(mprotect) X(pkey_mprotect)     \
	X(madvise) X(mlock) X(mlock2) X(munlock) X(mlockall) X(munlockall)     \
	X(pthread_create) X(pthread_setcanceltype) X(unshare) X(setns)         \
	X(fork) X(posix_spawn) X(posix_spawnp)                                 \
	X(setuid) X(seteuid) X(setreuid) X(setresuid) X(capset)                \
	X(setrlimit) X(setrlimit64) X(prlimit) X(prlimit64)                    \
	X(prctl) X(personality) X(syscall) X(_Fork) X(ioctl) X(shmat) X(mincore) X(msync)      \
	X(mseal) X(process_madvise) X(vmsplice)                                \
	X(malloc) X(calloc) X(realloc) X(free) X(posix_memalign)               \
	X(aligned_alloc) X(memalign) X(valloc) X(pvalloc)                      \
	X(_exit) X(_Exit)

#endif
