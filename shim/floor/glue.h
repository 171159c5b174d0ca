/* glue.h: the shim's one floor.  Everything that touches libc's internals or
 * makes a raw system call lives behind this header (glue.c); every other
 * module reaches the kernel and the next definitions of our wrappers only
 * through it.  It calls nothing of the shim's own.
 *
 * Next definitions.  The shim forwards to the *next* definition of each
 * symbol (RTLD_NEXT), so it stacks with other preloaded libraries (jemalloc,
 * another shim).  dlsym itself may call calloc: while a thread is inside
 * dlsym, real_fn() answers NULL and the caller must make a raw system call
 * or allocate from the bootstrap arena.  The malloc family never sees NULL:
 * its slots start out as bootstrap stubs that resolve on first use, so the
 * hot wrappers call through the slot with no test at all.
 *
 * Helper threads (background workers, populate helpers, the profile's
 * reader) are started here, with every signal blocked and the thread guard
 * up, and can be told to leave: unshare(CLONE_NEWUSER) and setns need a
 * single-threaded process (glue_quiesce).
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
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include "entries.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/* No sanitizer instrumentation: for code that runs before a sanitizer's
 * shadow memory exists (limits set while its runtime starts), that makes
 * the raw system call, that reads the allocator's words before a block,
 * or that may end a fork child whose parent's thread held the sanitizer
 * allocator's lock (ASan instruments a noreturn call with a stack query
 * that mallocs).  The plain build is the same with or without it. */
#define UNSANITIZED __attribute__((no_sanitize("address", "thread", "undefined")))

/* Kernel 5.14 added these; older headers lack them. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4 /* Linux 5.7 */
#endif

/* Everything declared below is the shim's own: hidden, so that it is
 * reached PC-relative, never through the GOT (the hot wrappers read these). */
#pragma GCC visibility push(hidden)

/* ---- the wrapped entry points ---- */

#define PF_ENUM(name) E_##name,
enum entry { PF_ENTRIES(PF_ENUM) E_COUNT };
#undef PF_ENUM
extern const char *const entry_names[E_COUNT];

extern void *glue_next[E_COUNT];
void *glue_resolve(enum entry e);

/* The next definition of entry e, or NULL while this thread is inside dlsym
 * (or if no later object defines it). */
static inline void *real_fn(enum entry e)
{
	void *p = __atomic_load_n(&glue_next[e], __ATOMIC_RELAXED);
	return likely(p != NULL) ? p : glue_resolve(e);
}
/* Typed: REAL(mmap)(addr, len, ...). */
#define REAL(name) ((__typeof__(name) *)real_fn(E_##name))
/* The malloc family's slots are never NULL (see above). */
#define NEXT(name) ((__typeof__(name) *)__atomic_load_n(&glue_next[E_##name], __ATOMIC_RELAXED))

/* ---- bootstrap arena: allocations made by dlsym before malloc is known ---- */

#define BOOT_SIZE (64 * 1024)
extern char glue_boot_buf[BOOT_SIZE];
void *boot_alloc(size_t size, size_t align);
static inline int boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)glue_boot_buf < BOOT_SIZE;
}
size_t boot_size(const void *p);

/* ---- raw system calls: never re-enter a wrapper, never a cancellation point ---- */

/* Every system call the shim makes goes through here, straight to the
 * kernel (never through libc's wrappers: those are cancellation points, and
 * the shim exports syscall(), ioctl() and mincore() itself), and is counted
 * by kind: the cost ledger the report prints (shim.syscalls).  A helper
 * thread's start is counted as its clone3 (glibc also maps its stack). */
#include "syscalls.h"
#define PF_SC_ENUM(name) SC_##name,
enum sc { PF_SYSCALLS(PF_SC_ENUM) SC_COUNT };
#undef PF_SC_ENUM
extern const char *const sc_names[SC_COUNT];
/* Calls made so far, per kind (relaxed atomics: read them with sc_count). */
extern uint64_t glue_sc[SC_COUNT];
static inline uint64_t sc_count(enum sc k) { return __atomic_load_n(&glue_sc[k], __ATOMIC_RELAXED); }
static inline void sc_note(enum sc k) { __atomic_fetch_add(&glue_sc[k], 1, __ATOMIC_RELAXED); }

/* syscall(n, a[0..5]) straight to the kernel, uncounted: -1 with errno on
 * failure.  (For the program's own calls that the shim's syscall() passes
 * on; the shim's own calls use sys_n or the typed calls below.) */
long glue_syscall6(long n, const long *a);
long sys_call(long n, long a0, long a1, long a2, long a3, long a4, long a5);
/* The shim's own call of kind k, counted. */
long sys_n(enum sc k, long a0, long a1, long a2, long a3, long a4, long a5);
void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int sys_munmap(void *addr, size_t len);
void *sys_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *new_addr);
int sys_madvise(void *addr, size_t len, int advice);
int sys_mprotect(void *addr, size_t len, int prot);
int sys_mlock(const void *addr, size_t len);
int sys_munlock(const void *addr, size_t len);
int sys_mincore(void *addr, size_t len, unsigned char *vec);

/* A mapping of len bytes on an align boundary (align: a power of two, the
 * huge page size), made with f (the next mmap; the shim's own call when own
 * is set: counted), or MAP_FAILED with f's errno.  Linux 6.7+ places an
 * anonymous mapping of an align multiple on a boundary itself, right below
 * its neighbour (top-down), so neighbours made so merge into one VMA: its
 * placement is taken when it is aligned (learned once a process: one
 * misplaced answer, unmapped, and it is not asked again).  Otherwise len +
 * align is mapped and trimmed to the boundary (a gap of the slack's rest
 * below each: no merging).  MAP_FAILED too when there is no room for the
 * slack: the caller maps plainly. */
void *glue_map_aligned(void *(*f)(void *, size_t, int, int, int, off_t), size_t len, size_t align, int prot,
                       int flags, int fd, off_t off, int own);

/* Copy len bytes of the program's from src, or -1 where they cannot be
 * read (unmapped, PROT_NONE, a bad pointer): the kernel copies, so a bad
 * argument the program hands a call costs the program its EFAULT, never a
 * SIGSEGV in the shim.  Two system calls. */
int glue_copy_in(void *dst, const void *src, size_t len);

/* Zeroed memory for a table of the shim's, mapped by its module (at
 * start-up where the configuration needs it, else on first need) instead
 * of lying in the object's BSS.  Every byte mapped counts against
 * the program's limits, used or not: mlockall(MCL_CURRENT) checks the whole
 * address space against RLIMIT_MEMLOCK and makes all of it resident, and
 * RLIMIT_AS and RLIMIT_DATA count it too (2.9 MB of tables in BSS made a
 * program's mlockall fail under a 4 MiB limit, with no policy at all).
 * NULL when the system refuses (the caller does without: under the
 * program's MCL_FUTURE a table is locked, so the limit can refuse it).
 * keep: a table for the process's life, listed for glue_tables; else a
 * scratch table, given back with glue_table_free. */
void *glue_table(size_t bytes, int keep);
void glue_table_free(void *p, size_t bytes);
/* List a table mapped with keep 0 as kept after all (the winner of a race
 * to map one). */
void glue_table_list(void *p, size_t bytes);
/* The kept tables' spans, at most max of them (their residency is the
 * shim's own memory, with its object's: os_image_resident); their count. */
int glue_tables(uintptr_t (*span)[2], int max);

/* The shim's own mappings (its tables, its helpers' stacks), in bytes:
 * counted by who maps and unmaps them, for the learner's hard bound. */
void glue_own_add(int64_t bytes);
uint64_t glue_own_bytes(void);
pid_t sys_getpid(void);
pid_t sys_getppid(void);
void sys_exit_group(int status) __attribute__((noreturn));
struct stat;
struct statfs;
struct rlimit;
struct rusage;
struct timespec;
int sys_open(const char *path, int flags, int mode);
long sys_read(int fd, void *buf, size_t n);
long sys_pread(int fd, void *buf, size_t n, off_t off);
long sys_write(int fd, const void *buf, size_t n);
int sys_close(int fd);
int sys_fstat(int fd, struct stat *st);
int sys_fstatfs(int fd, struct statfs *st);
int sys_ftruncate(int fd, off_t len);
long sys_readlink(const char *path, char *buf, size_t n);
/* rename(2) and unlink(2), relative to the working directory. */
int sys_rename(const char *from, const char *to);
int sys_unlink(const char *path);
/* The same relative to a directory's descriptor (AT_FDCWD: the working
 * directory); readlinkat with "" reads the link an O_PATH fd is open on. */
int sys_openat(int dfd, const char *path, int flags, int mode);
/* openat2 (Linux 5.6) with how.resolve = resolve (RESOLVE_NO_SYMLINKS...):
 * -1 with errno, ENOSYS on older kernels (or EPERM under a filter). */
int sys_openat2(int dfd, const char *path, int flags, int mode, uint64_t resolve);
long sys_readlinkat(int dfd, const char *path, char *buf, size_t n);
int sys_renameat(int from_dfd, const char *from, int to_dfd, const char *to);
int sys_unlinkat(int dfd, const char *path);
/* The working directory into buf; its length, or -1. */
long sys_getcwd(char *buf, size_t n);
int sys_getrlimit(int resource, struct rlimit *rl);
int sys_getrusage(int who, struct rusage *ru);
uid_t sys_geteuid(void);
int sys_sched_yield(void);
int sys_nanosleep(const struct timespec *ts);
/* Signal masks and waits on the kernel's 64-signal sets (sigset_t's first
 * word): glibc's internal signals are never touched by the shim's sets. */
int sys_sigprocmask(int how, const sigset_t *set, sigset_t *old);
int sys_sigpending(sigset_t *set);
int sys_sigtimedwait(const sigset_t *set, const struct timespec *ts);
/* These, as lib/io.h's calls, for lib's modules. */
extern const struct io glue_io;

/* ---- the thread guard ---- */

/* Nonzero while this thread runs the shim's own code: wrappers entered then
 * (dladdr, a signal handler, our own allocations) pass straight through. */
extern TLS int shim_guard;

/* The program set PTHREAD_CANCEL_ASYNCHRONOUS on this thread (interpose.c
 * follows pthread_setcanceltype): it could then be cancelled at any
 * instruction, a lock of ours held. */
extern TLS int glue_async_cancel;
int glue_cancel_off(void);         /* the old state and type, for glue_cancel_restore */
void glue_cancel_restore(int old);
/* glibc's SIGCANCEL blocked (1 if this call blocked it), and unblocked:
 * around the fork handlers (init.c), where a cancellation marked in the
 * thread's memory would be copied into the child and act there. */
int glue_cancel_block(void);
void glue_cancel_unblock(void);

/* Calls made under the guard.  A wrapper reached while this thread's guard
 * is up goes straight to the kernel: a signal handler that interrupted the
 * shim, or libc called from it.  What such a call does to the address
 * space the shim's records do not see, and a record gone stale is
 * dangerous (a file mapped later where a kept region's record still lies
 * would be "kept" at its munmap and cleared at the next mmap).  So the
 * wrappers of calls that unmap, map or change mappings note the range
 * here, async-signal-safe (an atomic add and two stores to this thread's
 * own memory), and the outermost guard_leave hands the notes to the hook
 * (prefault.c, nested_changed).  gone: the range was unmapped or mapped
 * anew (what the shim held there is forgotten; kept regions there are no
 * longer ours); 0: changed in place (mprotect, madvise, mseal: never kept
 * later, records kept).  Past GLUE_NESTED notes before the guard comes
 * down, the hook is called with end 0: where is unknown. */
#define GLUE_NESTED 16
struct glue_nested {
	uint32_t n;                  /* notes made since the last run */
	uintptr_t r[GLUE_NESTED][2]; /* start (low bit: gone), end */
};
extern TLS struct glue_nested glue_nested;
extern void (*glue_nested_hook)(uintptr_t start, uintptr_t end, int gone); /* end 0: everything */
static inline void glue_nested_note(uintptr_t start, size_t len, int gone)
{
	uint32_t i = __atomic_fetch_add(&glue_nested.n, 1, __ATOMIC_RELAXED);
	if (i < GLUE_NESTED) {
		glue_nested.r[i][0] = (start & ~(uintptr_t)1) | (gone != 0);
		glue_nested.r[i][1] = start + len;
	}
}
void glue_nested_run(void);

/* The next definition of the program's own call, made by a wrapper that
 * has done its part: FORWARD(SYS_mmap, addr, len, f(addr, len, ...)).
 * Another interposer below us may make the call with syscall() (gperftools'
 * tcmalloc does for mmap, munmap and mremap), and our syscall() must then
 * pass it on, not handle the same call again: it recursed until the stack
 * ran out, with no policy (helper-37's E).  Only that call is passed on so:
 * its number and first two arguments (FWD_ANY: not compared; FWD_LIMIT:
 * setrlimit's or prlimit64's, a0 the resource), made from below the
 * wrapper's frame.  A signal handler's call meanwhile that differs is
 * handled as ever (helper-38: a handler's MAP_FIXED over a kept region,
 * passed on unseen, had the region cleared over a file), and a marker left
 * by a handler that jumped out of the call is ignored once the stack is
 * above it (and restored by the next FORWARD's end). */
#define FWD_ANY (-0x7fffffffffffffffL - 1)
#define FWD_LIMIT (-1L)
struct glue_fwd {
	long nr, a0, a1;
	uintptr_t sp; /* the wrapper's frame: the call is made below it */
};
extern TLS struct glue_fwd glue_fwd;
#define FORWARD(n, x0, x1, call)                                                                            \
	__extension__({                                                                                     \
		struct glue_fwd fwd_was_ = glue_fwd;                                                        \
		glue_fwd = (struct glue_fwd){ (n), (long)(x0), (long)(x1),                                  \
			                      (uintptr_t)__builtin_frame_address(0) };                      \
		__typeof__(call) fwd_r_ = (call);                                                           \
		glue_fwd = fwd_was_;                                                                        \
		fwd_r_;                                                                                     \
	})
/* Is syscall(n, a...) the one FORWARD passed on?  (sp: the caller's frame) */
static inline int glue_forwarded(long n, const long *a, uintptr_t sp)
{
	const struct glue_fwd *f = &glue_fwd;
	if (__builtin_expect(f->nr == 0, 1) || sp > f->sp)
		return 0;
	if (f->nr == FWD_LIMIT)
		return (n == SYS_setrlimit && a[0] == f->a0) || (n == SYS_prlimit64 && a[1] == f->a0);
	return n == f->nr && (f->a0 == FWD_ANY || a[0] == f->a0) && (f->a1 == FWD_ANY || a[1] == f->a1);
}

/* Into the shim's own code from a wrapper, and out again:
 *     struct guard g = guard_enter(); ... guard_leave(g);
 * The guard goes up (see above), errno is saved, and a thread that asked
 * for asynchronous cancellation cannot be cancelled in between; leaving
 * puts all three back as they were (heaptrack's RecursionGuard).  So a
 * reviewer sees every entry paired, and errno kept, by reading one line. */
struct guard {
	int err, cancel;
};
static inline struct guard guard_enter(void)
{
	struct guard g;
	g.err = errno;
	g.cancel = -1;
	shim_guard++;
	if (unlikely(glue_async_cancel))
		g.cancel = glue_cancel_off();
	return g;
}
static inline void guard_leave(struct guard g)
{
	shim_guard--;
	if (unlikely(glue_nested.n) && !shim_guard)
		glue_nested_run();
	if (unlikely(g.cancel >= 0))
		glue_cancel_restore(g.cancel);
	errno = g.err;
}
/* Around the program's real call in the middle of a wrapper whose two
 * halves belong together (pf_mmap charges the budget or takes a kept
 * region before the call and records it after): the guard comes down as
 * with guard_leave, but cancellation stays off until the last guard_leave,
 * so that a cancellation cannot act in between and strand what the first
 * half took.  The real calls are not cancellation points: a cancellation
 * acts just after the call instead of just before it. */
static inline void guard_pause(struct guard *g)
{
	shim_guard--;
	errno = g->err;
}
static inline void guard_resume(struct guard *g)
{
	g->err = errno; /* (keeps the real call's errno) */
	shim_guard++;
}

/* ---- futexes: one wait and one wake for every module ---- */

/* Sleep while *w == seen, at most timeout_ns (0: no limit).  Returns 0 when
 * woken (or *w had already changed), -1 on timeout. */
int glue_wait(uint32_t *w, uint32_t seen, uint64_t timeout_ns);
void glue_wake(uint32_t *w);

/* ---- helper threads ---- */

/* Start fn(arg) on a new detached thread with a `stack`-byte stack, every
 * signal blocked, created with the next pthread_create (never through a
 * stack rule); the thread starts with its guard up.  `word` is the futex
 * word it sleeps on, so that glue_quiesce can wake it.  0; 1 when no
 * thread may start yet or any more (before the constructor, or leaving:
 * no call made); -1 when the system refused one. */
int glue_spawn(void *(*fn)(void *), void *arg, size_t stack, uint32_t *word);
/* Start helpers until *count reaches want (the caller's helpers decrement
 * *count as they return); a helper that could not start is not counted.
 * -1 when the system refused one, now or lately (no ask made: backoff.h),
 * for the caller's report note; else 0. */
int glue_spawn_upto(int *count, int want, void *(*fn)(void *), void *arg, size_t stack, uint32_t *word);
/* glue_warm_add asks for n more threads of up to `stack` bytes; glue_warm
 * starts and ends them all at once (so that each gets a stack of its own),
 * the largest stack asked for each, and waits (a bounded time) until they
 * have left, so that glibc's stack cache holds that many stacks with their
 * thread-local blocks already allocated (a cached stack serves a request
 * of a quarter of its size and up).  Called from
 * the constructor: pthread_create allocates a new thread's TLS vector with
 * the program's calloc, and a helper started later from a wrapper may be
 * inside an allocator that maps under its own lock (jemalloc, tcmalloc,
 * mimalloc call mmap through the PLT); with a cached stack it allocates
 * nothing. */
void glue_warm_add(int n, size_t stack);
void glue_warm(void);
/* From the constructor, after glue_warm: until then glue_spawn starts no
 * thread (a wrapper called before it may be inside another library's
 * constructor or an allocator's start, under a lock). */
void glue_spawn_allow(void);
/* Helpers must return from fn when this is nonzero. */
int glue_leaving(void);
/* Ask every helper to leave, and wait (a bounded time) until they have left
 * the process; helpers start again on their next need.  Returns the number
 * that were running. */
int glue_quiesce(void);
/* Helpers still running (started and not yet returned). */
int glue_helpers(void);

/* ---- the page size, from sysconf, set first thing at start-up ---- */

extern size_t page_size;
/* What one transparent huge page covers (the PMD size), and so the
 * alignment `hugepage` places mappings on: the system's hpage_pmd_size,
 * read at start-up where a rule or the learner may want huge pages (os.c).
 * Until then, and where the kernel does not say, 2 MiB (x86-64's, and
 * arm64's with 4 KiB pages; 32 MiB with 16 KiB pages, 512 MiB with 64
 * KiB).  Always a power of two. */
extern size_t hpage_bytes;
/* (read as an atomic: os.c sets it once, at start-up or at the first
 * wrapper that asks, possibly with other threads already running; relaxed
 * is a plain load here) */
#define hpage_size __atomic_load_n(&hpage_bytes, __ATOMIC_RELAXED)
#define PAGE_UP(x) (((x) + page_size - 1) & ~(page_size - 1))
#define PAGE_DOWN(x) ((x) & ~(page_size - 1))
void glue_init(void);

/* fork: the child has no helpers. */
void glue_atfork_child(void);

#pragma GCC visibility pop
#endif
