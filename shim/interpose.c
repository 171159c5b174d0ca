/* interpose.c: the exported wrappers, and nothing else.
 *
 * Each wrapper forwards to the next definition and, when the shim is on and
 * this thread is not already inside the shim, makes one call into the module
 * that decides (prefault.c; stack.c for pthread_create).  The program sees
 * what it would see without us: the same return value and the same errno.
 *
 * The malloc family is the hot path.  malloc calls the next malloc through
 * its slot (glue.h: never NULL, so no test), and then compares the size
 * with pf_block_min: below it (every block, when no rule or profile wants
 * blocks) that comparison is all the shim costs.  free tests one flag.
 */
#include "glue.h"
#include "shim.h"
#include "prefault.h"
#include "regions.h"
#include "stack.h"
#include "stats.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/personality.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define RET __builtin_return_address(0)

/* ---- the mmap family ---- */

/* Under the guard (a signal handler that interrupted the shim, or libc
 * called from it), with the shim on: what a call changed is noted for the
 * shim to forget when the guard comes down (glue.h, glue_nested). */
static inline __attribute__((always_inline)) int nested(void)
{
	return unlikely(shim_guard) && __atomic_load_n(&shim_state, __ATOMIC_RELAXED) == SHIM_ON;
}
static inline void nested_note(enum entry e, const void *addr, size_t len, int gone)
{
	if (nested()) {
		stats_call_nested(e);
		glue_nested_note((uintptr_t)addr, len, gone);
	}
}
/* mremap's: the old range is gone when it moved or shrank (with
 * MREMAP_DONTUNMAP it stays, emptied: changed), the new one is new; where
 * the call failed, a MREMAP_FIXED target may have been unmapped already. */
static void nested_remap(const void *old, size_t oldlen, size_t newlen, int flags, const void *new_addr, const void *r)
{
	int err = errno;
	if (r != MAP_FAILED) {
		glue_nested_note((uintptr_t)old, oldlen, !(flags & MREMAP_DONTUNMAP));
		glue_nested_note((uintptr_t)r, newlen, 1);
	} else if (flags & MREMAP_FIXED) {
		glue_nested_note((uintptr_t)new_addr, newlen, 1);
	}
	errno = err;
}
/* mmap's: a new mapping's range was free, so any record there is stale;
 * a MAP_FIXED that failed may have unmapped the old mapping even so. */
static void nested_mmap(const void *addr, size_t len, int flags, const void *p)
{
	int err = errno;
	if (p != MAP_FAILED)
		glue_nested_note((uintptr_t)p, len, 1);
	else if (flags & MAP_FIXED)
		glue_nested_note((uintptr_t)addr, len, 1);
	errno = err;
}

static void *fwd_mmap(enum entry e, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	__typeof__(mmap) *f = (__typeof__(mmap) *)real_fn(e);
	void *p = f ? f(addr, len, prot, flags, fd, off) : sys_mmap(addr, len, prot, flags, fd, off);
	if (nested()) {
		stats_call_nested(e);
		nested_mmap(addr, len, flags, p);
	}
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (shim_on())
		return pf_mmap(E_mmap, addr, len, prot, flags, fd, off, RET);
	return fwd_mmap(E_mmap, addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (shim_on())
		return pf_mmap(E_mmap64, addr, len, prot, flags, fd, off, RET);
	return fwd_mmap(E_mmap64, addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
	__typeof__(munmap) *f;
	int r;
	if (shim_on())
		return pf_munmap(addr, len);
	f = REAL(munmap);
	r = f ? f(addr, len) : sys_munmap(addr, len);
	if (nested()) {
		stats_call_nested(E_munmap);
		if (r == 0) /* (a failed munmap unmapped nothing) */
			glue_nested_note((uintptr_t)addr, len, 1);
	}
	return r;
}

EXPORT void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
	void *(*f)(void *, size_t, size_t, int, ...);
	void *new_addr = NULL;
	/* (the address comes with MREMAP_FIXED, and as a hint with
	 * MREMAP_DONTUNMAP: as glibc 2.37's wrapper reads it) */
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	void *r;
	if (shim_on())
		return pf_mremap(old, oldlen, newlen, flags, new_addr, RET);
	f = REAL(mremap);
	r = f ? f(old, oldlen, newlen, flags, new_addr) : sys_mremap(old, oldlen, newlen, flags, new_addr);
	if (nested()) {
		stats_call_nested(E_mremap);
		nested_remap(old, oldlen, newlen, flags, new_addr, r);
	}
	return r;
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	__typeof__(mprotect) *f = REAL(mprotect);
	if (shim_on()) {
		stats_call(E_mprotect);
		pf_reprotect(addr, len);
	} else {
		nested_note(E_mprotect, addr, len, 0);
	}
	return f ? FORWARD(SYS_mprotect, addr, len, f(addr, len, prot)) : sys_mprotect(addr, len, prot);
}

EXPORT int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
	__typeof__(pkey_mprotect) *f = REAL(pkey_mprotect);
	if (shim_on()) {
		stats_call(E_pkey_mprotect);
		pf_reprotect(addr, len);
	} else {
		nested_note(E_pkey_mprotect, addr, len, 0);
	}
	return f ? FORWARD(SYS_pkey_mprotect, addr, len, f(addr, len, prot, pkey)) : (int)sys_call(SYS_pkey_mprotect, (long)addr, (long)len, (long)prot, (long)pkey, 0, 0);
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	__typeof__(madvise) *f;
	if (shim_on())
		return pf_madvise(addr, len, advice);
	nested_note(E_madvise, addr, len, 0);
	f = REAL(madvise);
	return f ? f(addr, len, advice) : sys_madvise(addr, len, advice);
}

/* ---- locking: the program's own ---- */

EXPORT int mlock(const void *addr, size_t len)
{
	__typeof__(mlock) *f;
	if (shim_on())
		return pf_mlock(E_mlock, addr, len, 0);
	f = REAL(mlock);
	return f ? f(addr, len) : sys_mlock(addr, len);
}

EXPORT int mlock2(const void *addr, size_t len, unsigned int flags)
{
	__typeof__(mlock2) *f;
	if (shim_on())
		return pf_mlock(E_mlock2, addr, len, flags);
	f = REAL(mlock2);
	return f ? f(addr, len, flags) : (int)sys_call(SYS_mlock2, (long)addr, (long)len, (long)flags, 0, 0, 0);
}

EXPORT int munlock(const void *addr, size_t len)
{
	__typeof__(munlock) *f;
	if (shim_on())
		return pf_munlock(addr, len);
	f = REAL(munlock);
	return f ? f(addr, len) : sys_munlock(addr, len);
}

EXPORT int mlockall(int flags)
{
	__typeof__(mlockall) *f;
	if (shim_on())
		return pf_mlockall(flags);
	f = REAL(mlockall);
	return f ? f(flags) : (int)sys_call(SYS_mlockall, (long)flags, 0, 0, 0, 0, 0);
}

EXPORT int munlockall(void)
{
	__typeof__(munlockall) *f;
	if (shim_on())
		return pf_munlockall();
	f = REAL(munlockall);
	return f ? f() : (int)sys_call(SYS_munlockall, 0, 0, 0, 0, 0, 0);
}

/* ---- threads and namespaces ---- */

/* A thread or process could not be made (EAGAIN: RLIMIT_NPROC, a pids
 * cgroup): the shim's own helper threads count against the same limits,
 * so they leave (they come back on their next need), and the caller tries
 * once more.  1 if any left. */
static int helpers_left(void)
{
	int err = errno, n = glue_helpers() ? glue_quiesce() : 0;
	errno = err;
	return n > 0;
}


EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	__typeof__(pthread_create) *f = REAL(pthread_create);
	int wrapped = 0, r;
	if (unlikely(!f))
		return EAGAIN;
	if (shim_on()) {
		struct guard g = guard_enter();
		stats_call(E_pthread_create);
		wrapped = stack_wrap(&fn, &arg, attr, RET);
		guard_leave(g);
	}
	r = f(t, attr, fn, arg);
	if (r == EAGAIN && helpers_left())
		r = f(t, attr, fn, arg);
	if (r != 0 && wrapped)
		stack_unwrap(arg);
	return r;
}

/* ---- processes and threads: the shim's helpers must not take the program's room ---- */

EXPORT pid_t fork(void)
{
	pid_t (*f)(void) = real_fn(E_fork);
	pid_t pid;
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	pid = f();
	if (pid < 0 && errno == EAGAIN && helpers_left())
		pid = f();
	return pid;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                       char *const argv[], char *const envp[])
{
	__typeof__(posix_spawn) *f = REAL(posix_spawn);
	int r = f ? f(pid, path, fa, attr, argv, envp) : ENOSYS;
	if (r == EAGAIN && helpers_left())
		r = f(pid, path, fa, attr, argv, envp);
	return r;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	__typeof__(posix_spawnp) *f = REAL(posix_spawnp);
	int r = f ? f(pid, file, fa, attr, argv, envp) : ENOSYS;
	if (r == EAGAIN && helpers_left())
		r = f(pid, file, fa, attr, argv, envp);
	return r;
}

/* ---- privileges: locking gives way after a drop too ---- */

/* After a change of uid or capabilities, the policy's mlockall may no
 * longer be allowed to hold what it locks (RLIMIT_MEMLOCK binds without
 * CAP_IPC_LOCK): prefault.c looks, and gives way before the program's next
 * mapping would fail. */
static int privileges_after(enum entry e, int rc)
{
	if (rc == 0 && shim_on()) {
		int err = errno;
		stats_call(e);
		pf_privileges();
		errno = err;
	}
	return rc;
}

EXPORT int setuid(uid_t u)
{
	__typeof__(setuid) *f = REAL(setuid);
	return privileges_after(E_setuid, f ? f(u) : (int)sys_call(SYS_setuid, (long)u, 0, 0, 0, 0, 0));
}

EXPORT int seteuid(uid_t u)
{
	__typeof__(seteuid) *f = REAL(seteuid);
	return privileges_after(E_seteuid, f ? f(u) : (int)sys_call(SYS_setresuid, -1, (long)u, -1, 0, 0, 0));
}

EXPORT int setreuid(uid_t r, uid_t e)
{
	__typeof__(setreuid) *f = REAL(setreuid);
	return privileges_after(E_setreuid, f ? f(r, e) : (int)sys_call(SYS_setreuid, (long)r, (long)e, 0, 0, 0, 0));
}

EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
	__typeof__(setresuid) *f = REAL(setresuid);
	return privileges_after(E_setresuid,
	                        f ? f(r, e, s) : (int)sys_call(SYS_setresuid, (long)r, (long)e, (long)s, 0, 0, 0));
}

int capset(void *hdr, const void *data); /* (not in every libc's headers) */
EXPORT int capset(void *hdr, const void *data)
{
	int (*f)(void *, const void *) = real_fn(E_capset);
	return privileges_after(E_capset, f ? f(hdr, data) : (int)sys_call(SYS_capset, (long)hdr, (long)data, 0, 0, 0, 0));
}

/* A thread that asks for asynchronous cancellation can be cancelled at any
 * instruction: the shim then keeps cancellation off while it runs on that
 * thread (guard_enter), so that no lock of ours is left held. */
EXPORT int pthread_setcanceltype(int type, int *old)
{
	__typeof__(pthread_setcanceltype) *f = REAL(pthread_setcanceltype);
	int r = f ? f(type, old) : ENOSYS;
	if (r == 0)
		glue_async_cancel = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	return r;
}

/* Joining or making a user namespace (and joining a mount namespace) needs
 * a single-threaded process: the shim's helper threads leave first, and come
 * back on their next need. */
EXPORT int unshare(int flags)
{
	__typeof__(unshare) *f = REAL(unshare);
	if (flags & (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) {
		int err = errno;
		glue_quiesce();
		errno = err;
	}
	if (shim_on())
		stats_call(E_unshare);
	return f ? FORWARD(SYS_unshare, flags, FWD_ANY, f(flags)) : (int)sys_call(SYS_unshare, (long)flags, 0, 0, 0, 0, 0);
}

EXPORT int setns(int fd, int nstype)
{
	__typeof__(setns) *f = REAL(setns);
	int err = errno;
	glue_quiesce();
	errno = err;
	if (shim_on())
		stats_call(E_setns);
	return f ? FORWARD(SYS_setns, fd, nstype, f(fd, nstype)) : (int)sys_call(SYS_setns, (long)fd, (long)nstype, 0, 0, 0, 0);
}

/* ---- limits: kept memory must never count against the program's own ---- */

/* Sanitizer runtimes set limits while they start, before their shadow
 * memory exists: these wrappers carry no instrumentation, start nothing of
 * ours (before the shim is on there is nothing kept to give back), and
 * until the next definitions are known they make the system call. */
UNSANITIZED static inline int limits_watched(void)
{
	return __atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) == SHIM_ON && shim_guard == 0;
}

UNSANITIZED static inline void *next_of(enum entry e) { return __atomic_load_n(&glue_next[e], __ATOMIC_RELAXED); }

/* Before the program's change (kept regions go back first), and after it
 * (the shim keeps what it knows of the limits: recycle never asks per call). */
UNSANITIZED static int limit_before(enum entry e, pid_t pid, int resource, const void *new)
{
	if (!new || !limits_watched() || (pid != 0 && pid != sys_getpid()))
		return 0;
	stats_call(e);
	pf_limit(resource, 0);
	return 1;
}

UNSANITIZED static int limit_after(int watched, int resource, int rc)
{
	if (watched && rc == 0) {
		int err = errno;
		pf_limit(resource, 1);
		errno = err;
	}
	return rc;
}

UNSANITIZED EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	__typeof__(setrlimit) *f = next_of(E_setrlimit);
	int w = limit_before(E_setrlimit, 0, (int)resource, rl);
	return limit_after(w, (int)resource,
	                   f ? FORWARD(FWD_LIMIT, resource, FWD_ANY, f(resource, rl)) : (int)sys_call(SYS_prlimit64, 0, (long)resource, (long)rl, 0, 0, 0));
}

UNSANITIZED EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	__typeof__(setrlimit64) *f = next_of(E_setrlimit64);
	int w = limit_before(E_setrlimit64, 0, (int)resource, rl);
	return limit_after(w, (int)resource,
	                   f ? FORWARD(FWD_LIMIT, resource, FWD_ANY, f(resource, rl)) : (int)sys_call(SYS_prlimit64, 0, (long)resource, (long)rl, 0, 0, 0));
}

UNSANITIZED EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *new, struct rlimit *old)
{
	__typeof__(prlimit) *f = next_of(E_prlimit);
	int w = limit_before(E_prlimit, pid, (int)resource, new);
	return limit_after(w, (int)resource,
	                   f ? FORWARD(FWD_LIMIT, resource, FWD_ANY, f(pid, resource, new, old))
	                     : (int)sys_call(SYS_prlimit64, (long)pid, (long)resource, (long)new, (long)old, 0, 0));
}

UNSANITIZED EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *new, struct rlimit64 *old)
{
	__typeof__(prlimit64) *f = next_of(E_prlimit64);
	int w = limit_before(E_prlimit64, pid, (int)resource, new);
	return limit_after(w, (int)resource,
	                   f ? FORWARD(FWD_LIMIT, resource, FWD_ANY, f(pid, resource, new, old))
	                     : (int)sys_call(SYS_prlimit64, (long)pid, (long)resource, (long)new, (long)old, 0, 0));
}

/* ---- calls that change a range behind the shim's back, or a process's nature ---- */

/* userfaultfd: a registered range must never be kept for reuse (it would
 * stay registered), and one already given back must look unmapped. */
EXPORT int ioctl(int fd, unsigned long request, ...)
{
	__typeof__(ioctl) *f = REAL(ioctl);
	void *arg;
	va_list ap;
	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (unlikely(request == UFFDIO_REGISTER) && arg && shim_on()) {
		/* (read before the call, and read safely: a bad pointer is the
		 * kernel's EFAULT to give, not a SIGSEGV of ours; helper-32) */
		struct uffdio_register r;
		if (glue_copy_in(&r, arg, sizeof r) == 0)
			pf_uffd((void *)(uintptr_t)r.range.start, (size_t)r.range.len,
			        (r.mode & UFFDIO_REGISTER_MODE_MISSING) != 0, (r.mode & UFFDIO_REGISTER_MODE_MINOR) != 0);
	}
	if (unlikely(request == UFFDIO_UNREGISTER) && arg && shim_on()) {
		const struct uffdio_range *r = arg;
		int rc = f ? FORWARD(SYS_ioctl, fd, request, f(fd, request, arg)) : (int)sys_call(SYS_ioctl, (long)fd, (long)request, (long)arg, 0, 0, 0);
		if (rc == 0)
			pf_uffd_unregistered((void *)(uintptr_t)r->start, (size_t)r->len);
		return rc;
	}
	return f ? FORWARD(SYS_ioctl, fd, request, f(fd, request, arg)) : (int)sys_call(SYS_ioctl, (long)fd, (long)request, (long)arg, 0, 0, 0);
}

/* shmat at an address: the range must look as it would without us, and with
 * SHM_REMAP what was there is replaced. */
EXPORT void *shmat(int id, const void *addr, int flags)
{
	__typeof__(shmat) *f = REAL(shmat);
	int on = addr && shim_on();
	if (on || (addr && (flags & SHM_REMAP) && nested())) { /* (under the guard: a remap replaces) */
		struct shmid_ds ds;
		int err = errno;
		if (on)
			stats_call(E_shmat);
		if (sys_n(SC_shmctl, id, IPC_STAT, (long)&ds, 0, 0, 0) == 0) {
			if (on)
				pf_claim((void *)addr, ds.shm_segsz, (flags & SHM_REMAP) ? CLAIM_REPLACE : CLAIM_PROBE);
			else
				glue_nested_note((uintptr_t)addr, ds.shm_segsz, 1);
		}
		errno = err;
	}
	return f ? FORWARD(SYS_shmat, id, addr, f(id, addr, flags)) : (void *)sys_call(SYS_shmat, (long)id, (long)addr, (long)flags, 0, 0, 0);
}

/* Probes of whether memory is mapped: a kept region is not the program's. */
EXPORT int mincore(void *addr, size_t len, unsigned char *vec)
{
	__typeof__(mincore) *f = REAL(mincore);
	if (shim_on()) {
		stats_call(E_mincore);
		pf_claim(addr, len, CLAIM_PROBE);
	}
	return f ? FORWARD(SYS_mincore, addr, len, f(addr, len, vec)) : (int)sys_call(SYS_mincore, (long)addr, (long)len, (long)vec, 0, 0, 0);
}

#ifndef SYS_mseal
#define SYS_mseal 462 /* Linux 6.10, the same number on every architecture */
#endif

/* mseal (glibc 2.41; older programs make the system call): a sealed region
 * can never be kept, since its munmap must fail with EPERM.  Learned here,
 * when it happens, so that recycling never asks the kernel per call. */
int mseal(void *addr, size_t len, unsigned long flags); /* (not in older headers) */
EXPORT int mseal(void *addr, size_t len, unsigned long flags)
{
	int (*f)(void *, size_t, unsigned long) = real_fn(E_mseal);
	if (shim_on()) {
		stats_call(E_mseal);
		pf_claim(addr, len, CLAIM_KEEP_OUT);
	} else {
		nested_note(E_mseal, addr, len, 0);
	}
	return f ? FORWARD(SYS_mseal, addr, len, f(addr, len, flags)) : (int)sys_call(SYS_mseal, (long)addr, (long)len, (long)flags, 0, 0, 0);
}

/* Calls that hand the kernel a list of the program's ranges: vmsplice (a
 * pipe then holds the pages themselves: a kept region cleared and handed
 * out again would change what the pipe gives, where without us the pages
 * stay the pipe's after munmap), and process_madvise (it changes them as
 * madvise would: MADV_DONTFORK, MADV_WIPEONFORK and guard pages would
 * follow a kept region into the next mapping; on any process, as the shim
 * cannot tell a pidfd of its own from another's without a system call).
 * Such a range is never kept.  The list is read after the call succeeded:
 * the kernel has read it then, so it is good memory. */
static void iov_changed(const struct iovec *iov, size_t n)
{
	size_t i;
	for (i = 0; i < n && i < 16384; i++) { /* (UIO_MAXIOV 1024, io_uring's buffers 16384: the kernel refuses more) */
		if (shim_guard)
			glue_nested_note((uintptr_t)iov[i].iov_base, iov[i].iov_len, 0);
		else
			pf_reprotect(iov[i].iov_base, iov[i].iov_len);
	}
}
static ssize_t iov_after(enum entry e, ssize_t r, const struct iovec *iov, size_t n)
{
	int err = errno;
	if (r < 0 || !iov)
		return r;
	if (shim_on()) {
		stats_call(e);
		iov_changed(iov, n);
	} else if (nested()) {
		iov_changed(iov, n);
	}
	errno = err;
	return r;
}

ssize_t process_madvise(int pidfd, const struct iovec *iov, size_t n, int advice, unsigned int flags); /* (glibc 2.36) */
EXPORT ssize_t process_madvise(int pidfd, const struct iovec *iov, size_t n, int advice, unsigned int flags)
{
	ssize_t (*f)(int, const struct iovec *, size_t, int, unsigned int) = real_fn(E_process_madvise);
	ssize_t r = f ? FORWARD(SYS_process_madvise, pidfd, iov, f(pidfd, iov, n, advice, flags))
	              : (ssize_t)sys_call(SYS_process_madvise, (long)pidfd, (long)iov, (long)n, (long)advice, (long)flags, 0);
	return iov_after(E_process_madvise, r, iov, n);
}

EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t n, unsigned int flags)
{
	__typeof__(vmsplice) *f = REAL(vmsplice);
	ssize_t r = f ? FORWARD(SYS_vmsplice, fd, iov, f(fd, iov, n, flags)) : (ssize_t)sys_call(SYS_vmsplice, (long)fd, (long)iov, (long)n, (long)flags, 0, 0);
	return iov_after(E_vmsplice, r, iov, n);
}

EXPORT int msync(void *addr, size_t len, int flags)
{
	__typeof__(msync) *f = REAL(msync);
	if (shim_on()) {
		stats_call(E_msync);
		pf_claim(addr, len, CLAIM_PROBE);
	}
	return f ? FORWARD(SYS_msync, addr, len, f(addr, len, flags)) : (int)sys_call(SYS_msync, (long)addr, (long)len, (long)flags, 0, 0, 0);
}

/* _Fork (glibc 2.34) runs no fork handlers: locks another thread held stay
 * held in the child, so the shim is off there. */
EXPORT pid_t _Fork(void)
{
	pid_t (*f)(void) = real_fn(E__Fork);
	pid_t pid;
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	pid = f();
	if (pid == 0)
		shim_child_off();
	return pid;
}

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65 /* Linux 6.3 */
#endif

/* The rules new mappings are made by changed (helper-37's C and D: a kept
 * rw region came back where the kernel now gives rwx, READ_IMPLIES_EXEC; a
 * kept rwx one where PR_SET_MDWE now refuses it): recycle_never. */
static void exec_rules_changed(void)
{
	int err = errno;
	if (limits_watched())
		pf_exec_rules();
	errno = err;
}

/* (the kernel reads an unsigned int: 0xffffffff, or -1, is a query; only
 * the flags that change what a new mapping is or where it goes count) */
#define PERSONA_MAPS (READ_IMPLIES_EXEC | ADDR_LIMIT_32BIT | ADDR_LIMIT_3GB | ADDR_COMPAT_LAYOUT | MMAP_PAGE_ZERO)
static long persona_after(unsigned long persona, long old)
{
	if (old != -1 && (unsigned)persona != 0xffffffffu && (((unsigned)old ^ (unsigned)persona) & PERSONA_MAPS))
		exec_rules_changed();
	return old;
}

/* PR_SET_MDWE with flags (none refuses nothing), through prctl or syscall */
static long mdwe_after(unsigned long flags, long r)
{
	if (r == 0 && flags)
		exec_rules_changed();
	return r;
}

EXPORT int personality(unsigned long persona)
{
	__typeof__(personality) *f = REAL(personality);
	return (int)persona_after(persona, f ? FORWARD(SYS_personality, persona, FWD_ANY, f(persona)) : sys_call(SYS_personality, (long)persona, 0, 0, 0, 0, 0));
}

/* A seccomp filter: from then on a system call the program did not make may
 * kill it, so the shim reports now and then only passes calls through. */
UNSANITIZED EXPORT int prctl(int option, ...)
{
	__typeof__(prctl) *f = next_of(E_prctl);
	unsigned long a[4];
	va_list ap;
	int i, r;
	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (unlikely(option == PR_SET_SECCOMP))
		shim_sandboxed();
	r = f ? f(option, a[0], a[1], a[2], a[3]) : (int)sys_call(SYS_prctl, (long)option, (long)a[0], (long)a[1], (long)a[2], (long)a[3], 0);
	return unlikely(option == PR_SET_MDWE) ? (int)mdwe_after(a[0], r) : r;
}

/* The program's raw system calls on memory are the same calls as its libc
 * ones: a mapping, a seal, a lock, an madvise or a limit made through
 * syscall() is seen as the wrapper of the same name would see it (a raw
 * mmap over a kept region, a raw MADV_DONTNEED on memory the shim locked).
 * Hidden aliases, so that these calls stay inside the shim. */
/* (An alias may promise less than libc's declaration of its target: these
 * call back into the shim, so they are no "leaf".) */
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#define ALIAS(name) extern __typeof__(name) a_##name __attribute__((alias(#name), visibility("hidden")))
ALIAS(mprotect);
ALIAS(pkey_mprotect);
ALIAS(madvise);
ALIAS(mlock);
ALIAS(mlock2);
ALIAS(munlock);
ALIAS(mlockall);
ALIAS(munlockall);
ALIAS(unshare);
ALIAS(setns);
ALIAS(prlimit64);
ALIAS(ioctl);
ALIAS(shmat);
ALIAS(mincore);
ALIAS(mseal);
ALIAS(process_madvise);
ALIAS(vmsplice);

/* io_uring_register's buffers (read after the kernel took them: good
 * memory): IORING_REGISTER_BUFFERS (an iovec array), _BUFFERS2 and
 * _BUFFERS_UPDATE (a struct naming one); the opcode may carry
 * IORING_REGISTER_USE_REGISTERED_RING in its top bit. */
static void ring_buffers(unsigned op, const void *arg, unsigned nr)
{
	const uint64_t *w = arg;
	switch (op & ~(1u << 31)) {
	case 0: iov_changed(arg, nr); break;
	case 15: /* struct io_uring_rsrc_register { u32 nr, flags; u64 resv2, data, tags; } */
		iov_changed((const struct iovec *)(uintptr_t)w[2], (uint32_t)w[0]);
		break;
	case 16: /* struct io_uring_rsrc_update2 { u32 offset, resv; u64 data, tags; u32 nr, resv2; } */
		iov_changed((const struct iovec *)(uintptr_t)w[1], (uint32_t)w[3]);
		break;
	}
}

/* 1 with *r set if n is such a call (the shim is on, this thread outside it). */
static int memory_call(long n, const long *a, const void *ret, long *r)
{
	switch (n) {
	case SYS_mmap: *r = (long)pf_mmap(E_mmap, (void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5], ret); break;
	case SYS_munmap: *r = pf_munmap((void *)a[0], (size_t)a[1]); break;
	case SYS_mremap: *r = (long)pf_mremap((void *)a[0], (size_t)a[1], (size_t)a[2], (int)a[3], (void *)a[4], ret); break;
	case SYS_mprotect: *r = a_mprotect((void *)a[0], (size_t)a[1], (int)a[2]); break;
	case SYS_pkey_mprotect: *r = a_pkey_mprotect((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3]); break;
	case SYS_madvise: *r = a_madvise((void *)a[0], (size_t)a[1], (int)a[2]); break;
	case SYS_mlock: *r = a_mlock((void *)a[0], (size_t)a[1]); break;
	case SYS_mlock2: *r = a_mlock2((void *)a[0], (size_t)a[1], (unsigned)a[2]); break;
	case SYS_munlock: *r = a_munlock((void *)a[0], (size_t)a[1]); break;
	case SYS_mlockall: *r = a_mlockall((int)a[0]); break;
	case SYS_munlockall: *r = a_munlockall(); break;
	case SYS_unshare: *r = a_unshare((int)a[0]); break;
	case SYS_setns: *r = a_setns((int)a[0], (int)a[1]); break;
	case SYS_prlimit64:
		*r = a_prlimit64((pid_t)a[0], (__rlimit_resource_t)a[1], (const struct rlimit64 *)a[2], (struct rlimit64 *)a[3]);
		break;
	case SYS_setrlimit: *r = a_prlimit64(0, (__rlimit_resource_t)a[0], (const struct rlimit64 *)a[1], NULL); break;
	case SYS_ioctl: *r = a_ioctl((int)a[0], (unsigned long)a[1], (void *)a[2]); break;
	case SYS_shmat: *r = (long)a_shmat((int)a[0], (const void *)a[1], (int)a[2]); break;
	case SYS_mincore: *r = a_mincore((void *)a[0], (size_t)a[1], (unsigned char *)a[2]); break;
	case SYS_mseal: *r = a_mseal((void *)a[0], (size_t)a[1], (unsigned long)a[2]); break;
	case SYS_process_madvise:
		*r = a_process_madvise((int)a[0], (const struct iovec *)a[1], (size_t)a[2], (int)a[3], (unsigned)a[4]);
		break;
	case SYS_vmsplice: *r = a_vmsplice((int)a[0], (const struct iovec *)a[1], (size_t)a[2], (unsigned)a[3]); break;
	/* (raw, as the program asked: a raw setuid changes this thread alone,
	 * glibc's all of them; msync through glibc would be a cancellation
	 * point) */
	case SYS_setuid: case SYS_setreuid: case SYS_setresuid: case SYS_capset:
		*r = privileges_after(E_syscall, (int)glue_syscall6(n, a));
		break;
	case SYS_msync:
		pf_claim((void *)a[0], (size_t)a[1], CLAIM_PROBE);
		*r = glue_syscall6(n, a);
		break;
	case SYS_io_uring_register: /* buffers registered: the ring holds their pages (see vmsplice) */
		*r = glue_syscall6(n, a);
		if (*r >= 0) {
			int err = errno;
			ring_buffers((unsigned)a[1], (const void *)a[2], (unsigned)a[3]);
			errno = err;
		}
		break;
	default: return 0;
	}
	return 1;
}

#ifndef SYS_fork
#define SYS_fork (-2) /* (arm64 has none: clone only) */
#endif
#ifndef SYS_clone3
#define SYS_clone3 435 /* Linux 5.3, the same number on every architecture */
#endif

/* A raw fork (SYS_fork, or clone and clone3 without CLONE_VM) runs no fork
 * handlers, as _Fork: locks other threads held stay held in the child, so
 * the shim is off there (its memory calls would wait for them for ever).
 * clone3's flags are read after the call: the kernel has read them, so
 * the pointer is good.  A child sharing our memory (CLONE_VM) is left
 * alone: what it would change is ours too. */
UNSANITIZED static long __attribute__((noinline)) raw_clone(long (*f)(long, ...), long n, const long *a)
{
	long r = likely(f != NULL) ? f(n, a[0], a[1], a[2], a[3], a[4], a[5]) : glue_syscall6(n, a);
	if (r == 0) {
		uint64_t flags = n == SYS_clone ? (uint64_t)a[0] : n == SYS_clone3 ? *(const uint64_t *)a[0] : 0;
		if (!(flags & CLONE_VM))
			shim_child_off();
	}
	return r;
}

/* A raw memory call under the guard (see nested()): made, and noted. */
UNSANITIZED static long __attribute__((noinline)) nested_syscall(long (*f)(long, ...), long n, const long *a)
{
	long r = likely(f != NULL) ? f(n, a[0], a[1], a[2], a[3], a[4], a[5]) : glue_syscall6(n, a);
	int err = errno;
	switch (n) {
	case SYS_munmap:
		if (r == 0)
			glue_nested_note((uintptr_t)a[0], (size_t)a[1], 1);
		break;
	case SYS_mmap: nested_mmap((void *)a[0], (size_t)a[1], (int)a[3], r == -1 ? MAP_FAILED : (void *)r); break;
	case SYS_mremap:
		nested_remap((void *)a[0], (size_t)a[1], (size_t)a[2], (int)a[3], (void *)a[4], r == -1 ? MAP_FAILED : (void *)r);
		break;
	case SYS_mprotect: case SYS_pkey_mprotect: case SYS_madvise: case SYS_mseal:
		glue_nested_note((uintptr_t)a[0], (size_t)a[1], 0);
		break;
	case SYS_process_madvise: case SYS_vmsplice:
		if (r >= 0)
			iov_changed((const struct iovec *)a[1], (size_t)a[2]);
		break;
	}
	errno = err;
	return r;
}

UNSANITIZED EXPORT long syscall(long number, ...)
{
	long (*f)(long, ...) = next_of(E_syscall);
	long a[6], r;
	va_list ap;
	int i;
	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (unlikely(number == SYS_seccomp || (number == SYS_prctl && a[0] == PR_SET_SECCOMP)))
		shim_sandboxed();
	else if (unlikely(number == SYS_clone || number == SYS_clone3 || number == SYS_fork))
		return raw_clone(f, number, a);
	else if (unlikely(number == SYS_personality))
		return persona_after((unsigned long)a[0], likely(f != NULL) ? f(number, a[0], a[1], a[2], a[3], a[4], a[5]) : glue_syscall6(number, a));
	else if (unlikely(number == SYS_prctl && a[0] == PR_SET_MDWE))
		return mdwe_after((unsigned long)a[1], likely(f != NULL) ? f(number, a[0], a[1], a[2], a[3], a[4], a[5]) : glue_syscall6(number, a));
	else if (unlikely(glue_forwarded(number, a, (uintptr_t)__builtin_frame_address(0))))
		; /* (the next definition's own: see FORWARD) */
	else if (limits_watched() && memory_call(number, a, RET, &r))
		return r;
	else if (nested())
		return nested_syscall(f, number, a);
	if (likely(f != NULL))
		return f(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	return glue_syscall6(number, a);
}

/* ---- the malloc family ---- */

/* A block big enough for the policy or the profile (or any block before
 * start-up is done): the slow path. */
static void __attribute__((noinline)) block(enum entry e, void *p, size_t size, const void *ret)
{
	struct guard g;
	if (!p || !shim_on())
		return;
	g = guard_enter();
	pf_block(e, p, size, ret);
	guard_leave(g);
}

static void __attribute__((noinline)) before_free(void *p, struct fate *fate)
{
	struct guard g;
	if (!p || !shim_on())
		return;
	g = guard_enter();
	pf_free(p, fate);
	guard_leave(g);
}

static void after_free(const struct fate *fate)
{
	struct guard g;
	if (likely(!fate->fell))
		return;
	g = guard_enter();
	pf_freed(fate);
	guard_leave(g);
}

static inline size_t block_min(void) { return __atomic_load_n(&pf_block_min, __ATOMIC_RELAXED); }
/* p may be a block the shim tracks (regions.h: the low end first). */
static inline int in_blocks(const void *p)
{
	uintptr_t lo = __atomic_load_n(&blocks_lo, __ATOMIC_ACQUIRE);
	return (uintptr_t)p - lo < __atomic_load_n(&blocks_span, __ATOMIC_RELAXED);
}
/* free must look at p: a bootstrap block, or one that may be tracked.  For
 * any other pointer, free costs two compares more than a bare wrapper, and
 * takes no lock. */
static inline int free_looks(const void *p) { return boot_owns(p) || in_blocks(p); }

/* A large allocation failed: what the shim holds (kept regions, its
 * locks, the policy's mlockall) may be why.  1 if the caller should try
 * once more (errno is ENOMEM, as the allocator left it). */
static int __attribute__((noinline)) alloc_again(void)
{
	return shim_on() && pf_give_way();
}

/* The floor: a size below pf_block_min is a compare and a tail call, the
 * same few instructions as a bare forwarding wrapper. */
static void *__attribute__((noinline)) malloc_slow(size_t size, const void *ret)
{
	void *p = NEXT(malloc)(size);
	if (unlikely(!p) && alloc_again())
		p = NEXT(malloc)(size);
	block(E_malloc, p, size, ret);
	return p;
}

/* The fast paths start on a cache line of their own (HOT), so that where
 * they fall does not move with unrelated code before them (pairs.sh,
 * 9 rounds, read 1.14 to 1.19 of no shim against 9ea6859's 1.09 to 1.14
 * with the same instructions one line apart; 15 rounds, either order, 1.11
 * both, aligned or not: a guard against layout noise, not a speed-up). */
#define HOT __attribute__((aligned(64)))

HOT EXPORT void *malloc(size_t size)
{
	if (likely(size < block_min()))
		return NEXT(malloc)(size);
	return malloc_slow(size, RET);
}

static void *__attribute__((noinline)) calloc_slow(size_t n, size_t size, size_t total, const void *ret)
{
	void *p = NEXT(calloc)(n, size);
	if (unlikely(!p) && alloc_again())
		p = NEXT(calloc)(n, size);
	block(E_calloc, p, total, ret);
	return p;
}

HOT EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	/* (an overflowing product: the allocator says ENOMEM) */
	if (likely(!__builtin_mul_overflow(n, size, &total) && total < block_min()) ||
	    __builtin_mul_overflow(n, size, &total))
		return NEXT(calloc)(n, size);
	return calloc_slow(n, size, total, RET);
}

static void __attribute__((noinline)) free_slow(void *p)
{
	struct fate fate = { 0, 0 };
	if (boot_owns(p))
		return; /* the bootstrap arena is never reused */
	before_free(p, &fate);
	NEXT(free)(p);
	after_free(&fate);
}

HOT EXPORT void free(void *p)
{
	if (likely(!free_looks(p)))
		return NEXT(free)(p);
	free_slow(p);
}

static void *__attribute__((noinline)) realloc_slow(void *old, size_t size, const void *ret)
{
	void *p;
	if (boot_owns(old)) {
		/* Moving a bootstrap block into the real heap. */
		size_t n = boot_size(old);
		p = malloc(size);
		if (p)
			memcpy(p, old, n < size ? n : size);
		return p;
	}
	if (old && in_blocks(old))
		before_free(old, NULL);
	p = NEXT(realloc)(old, size);
	if (size >= block_min() && size)
		block(E_realloc, p, size, ret);
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	if (likely(size < block_min() && !free_looks(old)))
		return NEXT(realloc)(old, size);
	return realloc_slow(old, size, RET);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	__typeof__(posix_memalign) *f = REAL(posix_memalign);
	int r;
	if (unlikely(!f)) {
		*out = boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	r = f(out, align, size);
	if (r == 0 && unlikely(size >= block_min()))
		block(E_posix_memalign, *out, size, RET);
	return r;
}

static void *wrap_memalign(enum entry e, size_t align, size_t size, const void *ret)
{
	void *(*f)(size_t, size_t) = real_fn(e);
	void *p;
	if (unlikely(!f))
		return boot_alloc(size, align);
	p = f(align, size);
	if (unlikely(size >= block_min()))
		block(e, p, size, ret);
	return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size) { return wrap_memalign(E_aligned_alloc, align, size, RET); }
EXPORT void *memalign(size_t align, size_t size) { return wrap_memalign(E_memalign, align, size, RET); }

/* valloc and pvalloc: page-aligned, like their bootstrap stand-in. */
static void *wrap_valloc(enum entry e, size_t size, const void *ret)
{
	void *(*f)(size_t) = real_fn(e);
	void *p;
	if (unlikely(!f)) {
		if (!page_size)
			glue_init(); /* (before start-up: ask sysconf) */
		return boot_alloc(size, page_size);
	}
	p = f(size);
	if (unlikely(size >= block_min()))
		block(e, p, size, ret);
	return p;
}

EXPORT void *valloc(size_t size) { return wrap_valloc(E_valloc, size, RET); }
EXPORT void *pvalloc(size_t size) { return wrap_valloc(E_pvalloc, size, RET); }

/* ---- exit without destructors ---- */

/* A signal handler may end its process here (a fork child's _exit while
 * its parent thread was inside the allocator): the exits carry no
 * sanitizer instrumentation (UNSANITIZED says why). */
UNSANITIZED static void __attribute__((noreturn)) leave(enum entry e, int status)
{
	void (*f)(int);
	shim_report();
	f = real_fn(e);
	if (f)
		f(status);
	sys_exit_group(status);
}

UNSANITIZED EXPORT void _exit(int status) { leave(E__exit, status); }
UNSANITIZED EXPORT void _Exit(int status) { leave(E__Exit, status); }
