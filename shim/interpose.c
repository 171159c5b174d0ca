/* interpose.c: the exported wrappers, and nothing else.
 *
 * Each wrapper forwards to the next definition and, when the shim is on and
 * this thread is not already inside the shim, counts the request, matches it
 * against the policy and applies the rule's actions.  The program sees what
 * it would see without us: the same return value and the same errno (saved
 * right after the real call and restored after our own work).
 *
 * The shim's own work runs with shim_guard raised, never the real call: a
 * stacked allocator's mmap made from inside malloc is still seen.
 */
#include "glue.h"
#include "shim.h"
#include "match.h"
#include "os.h"
#include "prefault.h"
#include "profile.h"
#include "recycle.h"
#include "regions.h"
#include "stack.h"
#include "stats.h"
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RET __builtin_return_address(0)
#define PAGE_UP(x) (((x) + pf_page - 1) & ~(pf_page - 1))
#define PAGE_DOWN(x) ((x) & ~(pf_page - 1))

/* ---- mmap family ---- */

static void *wrap_mmap(enum entry e, enum real_id rid, void *addr, size_t len, int prot, int flags,
                       int fd, off_t off, const void *ret)
{
	mmap_fn f = (mmap_fn)real_fn(rid);
	struct request rq;
	struct plan pl;
	int rule = -1, err;
	void *p;
	if (unlikely(!f))
		return sys_mmap(addr, len, prot, flags, fd, off);
	if (!shim_on())
		return f(addr, len, prot, flags, fd, off);
	stats_call(e);
	rq.entry = e;
	rq.call = CALL_MMAP;
	rq.len = len;
	rq.off = off;
	rq.hint = addr;
	rq.ret = ret;
	match_classify_mmap(&rq, prot, flags, fd);
	pl.extra_flags = 0;
	pl.align_huge = 0;
	pl.recycled_resident = (size_t)-1;
	shim_guard++;
	if (len >= match_min_size[0] && (rule = match_request(&rq)) >= 0)
		pf_plan(&rq, rule, &pl);
	if (flags & MAP_FIXED) /* whatever was there goes away */
		pf_unmapped(addr, PAGE_UP(len));
	if (addr) /* a hint, MAP_FIXED or MAP_FIXED_NOREPLACE: the range must look as it would without us */
		pf_claim_range(addr, PAGE_UP(len));
	p = MAP_FAILED;
	if (rule >= 0 && pl.recyclable) {
		size_t res;
		uintptr_t a = recycle_take(rule, PAGE_UP(len), prot, flags, &res);
		if (a) {
			p = (void *)a;
			pl.recycled_resident = res;
		}
	}
	shim_guard--;
	if (p == MAP_FAILED) {
		if (pl.align_huge)
			p = pf_mmap_huge(f, len, prot, flags, fd, off);
		else
			p = f(addr, len, prot, flags | pl.extra_flags, fd, off);
		if (p == MAP_FAILED && errno == ENOMEM) {
			/* Kept regions count against RLIMIT_AS and overcommit: give
			 * them back and try once more, as if they had been unmapped. */
			shim_guard++;
			recycle_flush();
			shim_guard--;
			p = f(addr, len, prot, flags | pl.extra_flags, fd, off);
		}
	}
	err = errno;
	shim_guard++;
	if (p == MAP_FAILED) {
		st_add(&g_stats.failed[e], 1);
		if (rule >= 0)
			pf_cancel(&pl);
	} else {
		if (rule >= 0) {
			stats_count_request(&g_stats.rules[rule], len);
			pf_apply(&rq, &pl, p, PAGE_UP(len), NULL);
		} else {
			stats_unmatched(0, len);
		}
		if (unlikely(profiling))
			profile_map((uintptr_t)p, PAGE_UP(len), CALL_MMAP, ret, rq.mk, rq.pk);
	}
	shim_guard--;
	errno = err;
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return wrap_mmap(E_MMAP, R_MMAP, addr, len, prot, flags, fd, off, RET);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return wrap_mmap(E_MMAP64, R_MMAP64, addr, len, prot, flags, fd, off, RET);
}

EXPORT int munmap(void *addr, size_t len)
{
	munmap_fn f = (munmap_fn)real_fn(R_MUNMAP);
	if (unlikely(!f))
		return sys_munmap(addr, len);
	if (shim_on() && len && !((uintptr_t)addr & (pf_page - 1))) {
		int kept;
		stats_call(E_MUNMAP);
		/* Forget before unmapping: once the range is free, another thread's
		 * mmap may get it, and its tracking must not be the one we drop. */
		shim_guard++;
		if (unlikely(profiling))
			profile_unmap((uintptr_t)addr, PAGE_UP(len));
		kept = pf_munmap(addr, PAGE_UP(len));
		shim_guard--;
		if (kept)
			return 0; /* kept for recycling: to the program, it is gone */
	}
	return f(addr, len);
}

EXPORT void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
	mremap_fn f = (mremap_fn)real_fn(R_MREMAP);
	void *new_addr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (unlikely(!f))
		return sys_mremap(old, oldlen, newlen, flags, new_addr);
	if (shim_on()) {
		void *r;
		stats_call(E_MREMAP);
		shim_guard++;
		if (unlikely(profiling))
			profile_unmap((uintptr_t)old, PAGE_UP(oldlen));
		pf_unmapped(old, PAGE_UP(oldlen));
		if (PAGE_UP(newlen) > PAGE_UP(oldlen)) /* growing in place needs what follows */
			pf_claim_range((char *)old + PAGE_UP(oldlen), PAGE_UP(newlen) - PAGE_UP(oldlen));
		if (flags & MREMAP_FIXED) {
			pf_unmapped(new_addr, PAGE_UP(newlen));
			pf_claim_range(new_addr, PAGE_UP(newlen));
		}
		shim_guard--;
		r = f(old, oldlen, newlen, flags, new_addr);
		if (unlikely(profiling) && r != MAP_FAILED) {
			int err = errno;
			shim_guard++;
			profile_map((uintptr_t)r, PAGE_UP(newlen), CALL_MMAP, RET, MK_ANON | MK_PRIVATE, PK_READ | PK_WRITE);
			shim_guard--;
			errno = err;
		}
		return r;
	}
	return f(old, oldlen, newlen, flags, new_addr);
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	mprotect_fn f = (mprotect_fn)real_fn(R_MPROTECT);
	if (unlikely(!f))
		return (int)syscall(SYS_mprotect, addr, len, prot);
	if (shim_on()) {
		stats_call(E_MPROTECT);
		shim_guard++;
		pf_reprotected(addr, PAGE_UP(len));
		shim_guard--;
	}
	return f(addr, len, prot);
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	madvise_fn f = (madvise_fn)real_fn(R_MADVISE);
	if (unlikely(!f))
		return sys_madvise(addr, len, advice);
	if (shim_on()) {
		stats_call(E_MADVISE);
		shim_guard++;
		pf_advised(addr, PAGE_UP(len), advice);
		shim_guard--;
	}
	return f(addr, len, advice);
}

/* ---- threads ---- */

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	pthread_create_fn f = (pthread_create_fn)real_fn(R_PTHREAD_CREATE);
	int wrapped = 0, r;
	if (unlikely(!f))
		return EAGAIN;
	if (shim_on()) {
		stats_call(E_PTHREAD_CREATE);
		shim_guard++;
		wrapped = stack_wrap(&fn, &arg, attr, RET);
		shim_guard--;
	}
	r = f(t, attr, fn, arg);
	if (r != 0 && wrapped)
		stack_unwrap(arg);
	return r;
}

/* ---- malloc family ---- */

/* A block came back from the allocator: count it and act on its
 * page-aligned interior (the edges share pages with other blocks). */
static void after_alloc(enum entry e, void *p, size_t size, const void *ret)
{
	struct request rq;
	struct plan pl;
	uintptr_t s, t;
	int rule, err;
	stats_call(e);
	if (unlikely(profiling)) {
		shim_guard++;
		profile_block(p, size, ret);
		shim_guard--;
	}
	if (size < match_min_size[1]) {
		stats_unmatched(1, size);
		return;
	}
	err = errno;
	shim_guard++;
	match_anon_request(&rq, e, CALL_MALLOC, size, ret);
	rule = match_request(&rq);
	if (rule < 0) {
		stats_unmatched(1, size);
	} else {
		stats_count_request(&g_stats.rules[rule], size);
		pf_plan(&rq, rule, &pl);
		s = PAGE_UP((uintptr_t)p);
		t = PAGE_DOWN((uintptr_t)p + size);
		pf_apply(&rq, &pl, (void *)s, t > s ? t - s : 0, p);
	}
	shim_guard--;
	errno = err;
}

/* Called with the shim on: a tracked block gives back its charge and lock. */
static void before_free(void *p)
{
	int err;
	if (!blocks_count() && likely(!profiling))
		return;
	err = errno;
	shim_guard++;
	if (unlikely(profiling))
		profile_free(p);
	pf_freed(p);
	shim_guard--;
	errno = err;
}

EXPORT void *malloc(size_t size)
{
	malloc_fn f = (malloc_fn)real_fn(R_MALLOC);
	void *p;
	if (unlikely(!f))
		return boot_alloc(size, 16);
	p = f(size);
	if (p && shim_on())
		after_alloc(E_MALLOC, p, size, RET);
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	calloc_fn f = (calloc_fn)real_fn(R_CALLOC);
	size_t total;
	void *p;
	if (__builtin_mul_overflow(n, size, &total)) {
		if (f)
			return f(n, size); /* let the allocator say ENOMEM */
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!f))
		return boot_alloc(total, 16);
	p = f(n, size);
	if (p && shim_on())
		after_alloc(E_CALLOC, p, total, RET);
	return p;
}

EXPORT void free(void *p)
{
	free_fn f;
	if (!p || boot_owns(p))
		return;
	f = (free_fn)real_fn(R_FREE);
	if (unlikely(!f))
		return; /* freed while dlsym runs: leak it, the arena is tiny */
	if (shim_on()) {
		stats_call(E_FREE);
		before_free(p);
	}
	f(p);
}

EXPORT void *realloc(void *old, size_t size)
{
	realloc_fn f = (realloc_fn)real_fn(R_REALLOC);
	void *p;
	if (old && boot_owns(old)) {
		/* Moving a bootstrap block into the real heap. */
		size_t n = boot_size(old);
		p = malloc(size);
		if (p)
			memcpy(p, old, n < size ? n : size);
		return p;
	}
	if (unlikely(!f)) {
		p = boot_alloc(size, 16);
		return p; /* old is NULL or a bootstrap block here */
	}
	if (old && shim_on())
		before_free(old);
	p = f(old, size);
	if (p && size && shim_on())
		after_alloc(E_REALLOC, p, size, RET);
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	posix_memalign_fn f = (posix_memalign_fn)real_fn(R_POSIX_MEMALIGN);
	int r;
	if (unlikely(!f)) {
		*out = boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	r = f(out, align, size);
	if (r == 0 && *out && shim_on())
		after_alloc(E_POSIX_MEMALIGN, *out, size, RET);
	return r;
}

static void *wrap_memalign(enum entry e, enum real_id rid, size_t align, size_t size, const void *ret)
{
	memalign_fn f = (memalign_fn)real_fn(rid);
	void *p;
	if (unlikely(!f))
		return boot_alloc(size, align);
	p = f(align, size);
	if (p && shim_on())
		after_alloc(e, p, size, ret);
	return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return wrap_memalign(E_ALIGNED_ALLOC, R_ALIGNED_ALLOC, align, size, RET);
}

EXPORT void *memalign(size_t align, size_t size)
{
	return wrap_memalign(E_MEMALIGN, R_MEMALIGN, align, size, RET);
}

/* valloc and pvalloc: page-aligned, like their bootstrap stand-in. */
static void *wrap_valloc(enum entry e, enum real_id rid, size_t size, const void *ret)
{
	malloc_fn f = (malloc_fn)real_fn(rid);
	void *p;
	if (unlikely(!f))
		return boot_alloc(size, os_page_size()); /* (before init: ask sysconf) */
	p = f(size);
	if (p && shim_on())
		after_alloc(e, p, size, ret);
	return p;
}

EXPORT void *valloc(size_t size) { return wrap_valloc(E_VALLOC, R_VALLOC, size, RET); }
EXPORT void *pvalloc(size_t size) { return wrap_valloc(E_PVALLOC, R_PVALLOC, size, RET); }

/* ---- exit without destructors ---- */

static void __attribute__((noreturn)) leave(enum real_id rid, int status)
{
	exit_fn f;
	shim_report();
	f = (exit_fn)real_fn(rid);
	if (f)
		f(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _exit(int status) { leave(R__EXIT, status); }
EXPORT void _Exit(int status) { leave(R__EXIT2, status); }
