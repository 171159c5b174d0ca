/* libstack.so: a second preloaded library for stacking tests.  It wraps
 * mmap, mmap64 and malloc by forwarding to RTLD_NEXT, counts the calls it
 * saw, and says so at exit, so a test can check that both it and the shim
 * saw the program's calls, in either preload order. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned long n_mmap, n_malloc;
static __thread int busy;

void *mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	static void *(*next)(void *, size_t, int, int, int, off_t);
	if (!next)
		next = dlsym(RTLD_NEXT, "mmap");
	__atomic_fetch_add(&n_mmap, 1, __ATOMIC_RELAXED);
	return next(a, l, p, f, fd, o);
}

void *mmap64(void *a, size_t l, int p, int f, int fd, off_t o)
{
	static void *(*next)(void *, size_t, int, int, int, off_t);
	if (!next)
		next = dlsym(RTLD_NEXT, "mmap64");
	__atomic_fetch_add(&n_mmap, 1, __ATOMIC_RELAXED);
	return next(a, l, p, f, fd, o);
}

static char early[4096];
static size_t early_used;

void *malloc(size_t n)
{
	static void *(*next)(size_t);
	if (!next) {
		if (busy) { /* dlsym allocating: serve it from a static buffer */
			void *p = early + early_used;
			early_used += (n + 15) & ~(size_t)15;
			return p;
		}
		busy = 1;
		next = dlsym(RTLD_NEXT, "malloc");
		busy = 0;
	}
	__atomic_fetch_add(&n_malloc, 1, __ATOMIC_RELAXED);
	return next(n);
}

__attribute__((destructor)) static void report(void)
{
	char buf[128];
	int n = snprintf(buf, sizeof buf, "libstack: mmap=%lu malloc=%lu\n", n_mmap, n_malloc);
	if (write(2, buf, (size_t)n) < 0)
		return;
}
