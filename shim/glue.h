/* glue.h: every coupling between the shim and libc lives here.
 *
 * The shim forwards to the *next* definition of each symbol (RTLD_NEXT), so
 * it stacks with other preloaded libraries (jemalloc, another shim).  Until
 * those pointers are known, and while dlsym itself runs, the shim must not
 * call into libc's allocator: mmap family calls go to raw syscalls, malloc
 * family calls to a static bootstrap arena (init.c).
 *
 * Thread-local state uses the initial-exec TLS model: a preloaded library
 * gets static TLS, and the general-dynamic model may call malloc from
 * __tls_get_addr, which would recurse into our own wrappers.
 */
#ifndef PREFAULT_GLUE_H
#define PREFAULT_GLUE_H

#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Kernel 5.14 added these; older headers lack them. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Entry points we forward.  The order is the order of real_names[] in init.c. */
enum real_id {
	R_MMAP, R_MMAP64, R_MUNMAP, R_MREMAP, R_MADVISE, R_MPROTECT,
	R_MALLOC, R_CALLOC, R_REALLOC, R_FREE, R_POSIX_MEMALIGN,
	R_ALIGNED_ALLOC, R_MEMALIGN, R_VALLOC, R_PVALLOC,
	R__EXIT, R__EXIT2, R_PTHREAD_CREATE,
	R_COUNT
};

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*madvise_fn)(void *, size_t, int);
typedef int (*mprotect_fn)(void *, size_t, int);
typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void (*exit_fn)(int);

/* The next definition of symbol `id`, or NULL while this thread is inside
 * dlsym (the caller must then use a raw syscall or the bootstrap arena). */
HIDDEN void *real_fn(enum real_id id);

/* Bootstrap arena for allocations made by dlsym before malloc is known. */
HIDDEN void *boot_alloc(size_t size, size_t align);
HIDDEN int boot_owns(const void *p);
HIDDEN size_t boot_size(const void *p);

/* Raw system calls: used while real_fn() cannot answer, and by the shim's own
 * work so that it never re-enters its wrappers. */
HIDDEN void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
HIDDEN int sys_munmap(void *addr, size_t len);
HIDDEN void *sys_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *new_addr);
HIDDEN int sys_madvise(void *addr, size_t len, int advice);
HIDDEN pid_t sys_getpid(void);
HIDDEN pid_t sys_gettid(void);

#endif
