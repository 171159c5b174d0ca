/* fwd: the floor for any preloaded malloc (issue 10).
 *
 *   LD_PRELOAD=build/bench/libfwd.so PROGRAM...
 *
 * A bare forwarding preload of the malloc family: each wrapper calls the next
 * definition (libc's) through a pointer cached from dlsym(RTLD_NEXT), behind
 * one predictable branch, and does nothing else.  Whatever a preloaded malloc
 * costs beyond this is its own work; bench/observe.sh measures the shim
 * against it.
 *
 * The one branch:
 *  - malloc, calloc, posix_memalign, aligned_alloc, memalign, valloc, pvalloc:
 *    "is the pointer still unresolved?"  Until it is resolved (the first call
 *    resolves every pointer), requests made while dlsym itself runs (glibc's
 *    dlsym calls calloc for its error buffer) are served from a small static
 *    buffer.
 *  - free and realloc: "is this one of the static buffer's blocks?"  (free of
 *    such a block does nothing; realloc moves it into the real heap.)  Their
 *    pointers start at a stand-in that resolves first, so they need no second
 *    check.
 *
 * No locks: resolution happens on the first allocation, before any thread is
 * started.  The static buffer serves only requests made during resolution.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define unlikely(x) __builtin_expect(!!(x), 0)

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void (*free_fn)(void *);
typedef void *(*realloc_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);

static void stub_free(void *p);
static void *stub_realloc(void *p, size_t n);

static malloc_fn real_malloc;
static calloc_fn real_calloc;
static free_fn real_free = stub_free;
static realloc_fn real_realloc = stub_realloc;
static posix_memalign_fn real_posix_memalign;
static memalign_fn real_aligned_alloc;
static memalign_fn real_memalign;
static malloc_fn real_valloc;
static malloc_fn real_pvalloc;

/* ---- the static buffer, for dlsym's own requests ---- */

#define BOOT_SIZE (64 << 10)
static _Alignas(64) unsigned char boot[BOOT_SIZE];
static size_t boot_used;
/* volatile: GCC otherwise drops the store before the dlsym calls (it assumes
 * dlsym cannot read a static whose address never escapes, but dlsym can call
 * back into our calloc), and a dlsym that allocates recurses without end. */
static volatile int resolving;

/* A block: its size in the 16 bytes before it, aligned to at least 16. */
static void *boot_alloc(size_t n, size_t align)
{
	uintptr_t base = (uintptr_t)boot, at;
	if (align < 16)
		align = 16;
	if (align & (align - 1) || n > BOOT_SIZE) {
		errno = align & (align - 1) ? EINVAL : ENOMEM;
		return NULL;
	}
	at = (base + boot_used + 16 + align - 1) & ~(uintptr_t)(align - 1);
	if (at + n > base + BOOT_SIZE) {
		errno = ENOMEM;
		return NULL;
	}
	((size_t *)at)[-1] = n;
	boot_used = at + n - base;
	return (void *)at; /* static storage: already zero, good for calloc */
}

static inline int boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot < BOOT_SIZE;
}

static void resolve(void)
{
	resolving = 1;
	/* Everything but malloc first: malloc's pointer is the sign that all
	 * are set (the others check their own pointer anyway). */
	real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
	real_free = (free_fn)dlsym(RTLD_NEXT, "free");
	real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
	real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = (memalign_fn)dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
	real_valloc = (malloc_fn)dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = (malloc_fn)dlsym(RTLD_NEXT, "pvalloc");
	real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	resolving = 0;
	if (!real_malloc || !real_calloc || !real_free || !real_realloc || !real_posix_memalign ||
	    !real_aligned_alloc || !real_memalign || !real_valloc || !real_pvalloc) {
		static const char msg[] = "libfwd: dlsym(RTLD_NEXT) missed part of the malloc family\n";
		(void)!write(2, msg, sizeof msg - 1);
		_exit(127);
	}
}

/* The slow path of every allocating wrapper: serve dlsym, or resolve. */
static int must_boot(void)
{
	if (resolving)
		return 1;
	if (!real_malloc)
		resolve();
	return 0;
}

__attribute__((constructor)) static void fwd_init(void)
{
	if (!real_malloc && !resolving)
		resolve();
}

static void stub_free(void *p)
{
	if (must_boot())
		return; /* freed while dlsym runs: it can only be a boot block */
	real_free(p);
}

static void *stub_realloc(void *p, size_t n)
{
	if (must_boot())
		return p ? NULL : boot_alloc(n, 16);
	return real_realloc(p, n);
}

static __attribute__((noinline)) void *boot_realloc(void *old, size_t n)
{
	size_t had = ((size_t *)old)[-1];
	void *p;
	if (must_boot())
		return boot_alloc(n, 16); /* leaves old in place: fine, it is static */
	p = real_malloc(n);
	if (p)
		memcpy(p, old, had < n ? had : n);
	return p;
}

/* ---- the wrappers ---- */

EXPORT void *malloc(size_t n)
{
	if (unlikely(!real_malloc))
		return must_boot() ? boot_alloc(n, 16) : real_malloc(n);
	return real_malloc(n);
}

EXPORT void free(void *p)
{
	if (unlikely(boot_owns(p)))
		return;
	real_free(p);
}

EXPORT void *calloc(size_t k, size_t n)
{
	if (unlikely(!real_calloc)) {
		size_t t;
		if (!must_boot())
			return real_calloc(k, n);
		if (__builtin_mul_overflow(k, n, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return boot_alloc(t, 16);
	}
	return real_calloc(k, n);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (unlikely(boot_owns(p)))
		return boot_realloc(p, n);
	return real_realloc(p, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (unlikely(!real_posix_memalign)) {
		if (!must_boot())
			return real_posix_memalign(out, align, n);
		if (align % sizeof(void *))
			return EINVAL;
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	return real_posix_memalign(out, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (unlikely(!real_aligned_alloc))
		return must_boot() ? boot_alloc(n, align) : real_aligned_alloc(align, n);
	return real_aligned_alloc(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (unlikely(!real_memalign))
		return must_boot() ? boot_alloc(n, align) : real_memalign(align, n);
	return real_memalign(align, n);
}

EXPORT void *valloc(size_t n)
{
	if (unlikely(!real_valloc))
		return must_boot() ? boot_alloc(n, (size_t)sysconf(_SC_PAGESIZE)) : real_valloc(n);
	return real_valloc(n);
}

EXPORT void *pvalloc(size_t n)
{
	if (unlikely(!real_pvalloc)) {
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);
		return must_boot() ? boot_alloc((n + pg - 1) & ~(pg - 1), pg) : real_pvalloc(n);
	}
	return real_pvalloc(n);
}
