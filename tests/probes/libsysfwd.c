/* libsysfwd.so: another interposer of the memory calls, preloaded behind
 * the shim, that makes each call with syscall() as gperftools' tcmalloc
 * does for mmap, munmap and mremap (helper-37's E: the shim's syscall()
 * took the call for the program's own and handled it again, until the
 * stack ran out).  At exit it writes "sysfwd: calls=N" to stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long calls;
#define COUNT() __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED)

void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	COUNT();
	return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}
void *mmap64(void *a, size_t n, int prot, int flags, int fd, off_t off) { return mmap(a, n, prot, flags, fd, off); }
int munmap(void *a, size_t n)
{
	COUNT();
	return (int)syscall(SYS_munmap, a, n);
}
void *mremap(void *old, size_t oldn, size_t n, int flags, ...)
{
	void *to = NULL;
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_list ap;
		va_start(ap, flags);
		to = va_arg(ap, void *);
		va_end(ap);
	}
	COUNT();
	return (void *)syscall(SYS_mremap, old, oldn, n, flags, to);
}
int mprotect(void *a, size_t n, int prot)
{
	COUNT();
	return (int)syscall(SYS_mprotect, a, n, prot);
}
int madvise(void *a, size_t n, int advice)
{
	COUNT();
	return (int)syscall(SYS_madvise, a, n, advice);
}
int mlock(const void *a, size_t n)
{
	COUNT();
	return (int)syscall(SYS_mlock, a, n);
}
int munlock(const void *a, size_t n)
{
	COUNT();
	return (int)syscall(SYS_munlock, a, n);
}
int mincore(void *a, size_t n, unsigned char *v)
{
	COUNT();
	return (int)syscall(SYS_mincore, a, n, v);
}

__attribute__((destructor)) static void said(void)
{
	char b[64];
	int k = snprintf(b, sizeof b, "sysfwd: calls=%lu\n", calls);
	if (write(2, b, (size_t)k) < 0)
		return;
}
