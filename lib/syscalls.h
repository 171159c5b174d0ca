/* syscalls.h: every kind of system call the shim makes of its own, listed
 * once.  The shim counts them by kind (its cost ledger, glue.h); the tool
 * tries them all in a child of its own under a seccomp filter it inherited
 * (tools/seccomp.c), so that the shim acts under that filter only where
 * none of them kills.  A new kind of call the shim makes goes here. */
#ifndef PREFAULT_SYSCALLS_H
#define PREFAULT_SYSCALLS_H

#define PF_SYSCALLS(X)                                                                   \
	X(mmap) X(munmap) X(mremap) X(madvise) X(mprotect) X(mlock) X(mlock2) X(munlock)  \
	X(mlockall) X(munlockall) X(mincore) X(getrusage) X(openat) X(read) X(pread64)    \
	X(write) X(close) X(fstat) X(fstatfs) X(ftruncate) X(readlinkat) X(getcwd) X(fcntl) \
	X(prlimit64) X(getpid) X(getppid) X(geteuid) X(capget) X(prctl) X(futex)          \
	X(sched_yield) X(nanosleep) X(rt_sigprocmask) X(rt_sigpending)                    \
	X(rt_sigtimedwait) X(fadvise64) X(shmctl) X(ioctl) X(perf_event_open) X(sendto)   \
	X(exit_group) X(clone3) X(renameat2) X(unlinkat) X(process_vm_readv) X(sendmsg)    \
	X(openat2)

#endif
