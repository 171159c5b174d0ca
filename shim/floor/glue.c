/* glue.c: the floor (see glue.h).  Calls only libc and the kernel. */
#include "glue.h"
#include "backoff.h"
#include "io.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437 /* (one number on every architecture: Linux 5.6) */
#endif

#define PF_NAME(name) #name,
const char *const entry_names[E_COUNT] = { PF_ENTRIES(PF_NAME) };
#undef PF_NAME

size_t page_size;
size_t hpage_bytes = 2ul << 20;
TLS int shim_guard;
TLS struct glue_fwd glue_fwd;
TLS struct glue_nested glue_nested;
void (*glue_nested_hook)(uintptr_t start, uintptr_t end, int gone);

/* The notes, oldest first, with the guard up (the hook takes locks; a
 * handler's calls meanwhile add notes, and the loop takes them too).  A
 * note handled twice is forgotten twice: no harm. */
void glue_nested_run(void)
{
	uint32_t n, i;
	shim_guard++;
	for (;;) {
		n = __atomic_load_n(&glue_nested.n, __ATOMIC_RELAXED);
		if (!n)
			break;
		if (glue_nested_hook) {
			if (n > GLUE_NESTED)
				glue_nested_hook(0, 0, 1);
			else
				for (i = 0; i < n; i++)
					glue_nested_hook(glue_nested.r[i][0] & ~(uintptr_t)1, glue_nested.r[i][1],
					                 (int)(glue_nested.r[i][0] & 1));
		}
		if (__atomic_compare_exchange_n(&glue_nested.n, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	shim_guard--;
}
TLS int glue_async_cancel;

/* The type goes to deferred before the state goes to disabled: glibc up
 * to 2.36 acts on a SIGCANCEL already on its way (sent while the state was
 * enabled) with the state disabled, as its handler checks only the type
 * (tests/probes/hostile3/cancelinflight.c; CI's TSan pass hung on it).
 * With the type deferred the handler only marks the cancellation, and it
 * acts when glue_cancel_restore enables the state again, no lock held.
 * REAL: the program's pthread_setcanceltype is our wrapper, which would
 * take the thread for a deferred one.  Both are calls into libc, no system
 * call, and only for threads of asynchronous type. */
int glue_cancel_off(void)
{
	__typeof__(pthread_setcanceltype) *settype = REAL(pthread_setcanceltype);
	int state = PTHREAD_CANCEL_ENABLE, type = PTHREAD_CANCEL_ASYNCHRONOUS;
	if (settype)
		settype(PTHREAD_CANCEL_DEFERRED, &type);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	return state | type << 4;
}

void glue_cancel_restore(int old)
{
	__typeof__(pthread_setcanceltype) *settype = REAL(pthread_setcanceltype);
	if (settype) /* (still disabled: nothing acts in between) */
		settype(old >> 4, NULL);
	pthread_setcancelstate(old & 15, NULL);
}

/* glibc's SIGCANCEL is __SIGRTMIN (32), which sigaddset refuses: its bit
 * is set by hand, in the first word the kernel reads.  Other C libraries
 * check the state in their handler: nothing to do there. */
#ifdef __GLIBC__
#define CANCEL_BIT (1ul << (32 - 1))
/* SIG_BLOCK or SIG_UNBLOCK glibc's SIGCANCEL; whether it was blocked
 * before (1), or -1 if the call failed. */
static int cancel_mask(int how)
{
	sigset_t set, old;
	memset(&set, 0, sizeof set);
	memset(&old, 0, sizeof old);
	((unsigned long *)&set)[0] = CANCEL_BIT;
	if (sys_sigprocmask(how, &set, &old) != 0)
		return -1;
	return !!(((unsigned long *)&old)[0] & CANCEL_BIT);
}
int glue_cancel_block(void)
{
	return cancel_mask(SIG_BLOCK) == 0; /* (1: this call blocked it) */
}
void glue_cancel_unblock(void)
{
	cancel_mask(SIG_UNBLOCK);
}
#else
int glue_cancel_block(void) { return 0; }
void glue_cancel_unblock(void) {}
#endif

void glue_init(void)
{
	long p = sysconf(_SC_PAGESIZE);
	page_size = p > 0 ? (size_t)p : (size_t)getauxval(AT_PAGESZ);
}

/* ---- raw system calls ---- */

#define MAX_ERRNO 4095L

/* The kernel, directly: the shim exports its own syscall() (to see a
 * program install a seccomp filter), so its own raw calls must not go
 * through the symbol.  Returns like syscall(2): -1 with errno set. */
UNSANITIZED long glue_syscall6(long n, const long *a)
{
	long r;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a[3], r8 __asm__("r8") = a[4], r9 __asm__("r9") = a[5];
	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"(n), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a[0], x1 __asm__("x1") = a[1],
	                                  x2 __asm__("x2") = a[2], x3 __asm__("x3") = a[3], x4 __asm__("x4") = a[4],
	                                  x5 __asm__("x5") = a[5];
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	r = x0;
#else
	long (*f)(long, ...) = glue_resolve(E_syscall);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(n, a[0], a[1], a[2], a[3], a[4], a[5]);
#endif
	/* The kernel returns -errno, and errno values end at 4095 (MAX_ERRNO in
	 * include/linux/err.h): any other value, negative or not, is a result.
	 * (Not a page size: the error range is the same with 16 KiB pages.) */
	if (r < 0 && r >= -MAX_ERRNO) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* (Uninstrumented: the wrappers of calls a sanitizer's runtime makes while
 * it starts, before its shadow memory exists, fall back to it.) */
UNSANITIZED long sys_call(long n, long a0, long a1, long a2,
                                                                             long a3, long a4, long a5)
{
	long a[6] = { a0, a1, a2, a3, a4, a5 };
	return glue_syscall6(n, a);
}

/* ---- the shim's own calls, counted ---- */

#define PF_SC_NAME(name) #name,
const char *const sc_names[SC_COUNT] = { PF_SYSCALLS(PF_SC_NAME) };
#undef PF_SC_NAME
#define PF_SC_NR(name) SYS_##name,
static const short sc_nr[SC_COUNT] = { PF_SYSCALLS(PF_SC_NR) };
#undef PF_SC_NR
uint64_t glue_sc[SC_COUNT];

#ifdef PF_LOCK_CHECK
TLS int glue_locks_held;

static void __attribute__((noinline, cold)) lock_check_failed(enum sc k)
{
	static const char m[] = "prefault: lock check: a system call with a shim lock held: ";
	long w[6] = { 2, (long)m, sizeof m - 1, 0, 0, 0 };
	glue_syscall6(SYS_write, w);
	w[1] = (long)sc_names[k];
	w[2] = (long)strlen(sc_names[k]);
	glue_syscall6(SYS_write, w);
	w[1] = (long)"\n";
	w[2] = 1;
	glue_syscall6(SYS_write, w);
	__builtin_trap();
}
#endif

long sys_n(enum sc k, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long a[6] = { a0, a1, a2, a3, a4, a5 };
#ifdef PF_LOCK_CHECK
	/* (sched_yield: spin_lock's own wait for a second lock) */
	if (glue_locks_held > 0 && k != SC_sched_yield)
		lock_check_failed(k);
#endif
	sc_note(k);
	return glue_syscall6(sc_nr[k], a);
}
#define sys6 sys_n

void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)sys6(SC_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);
}
int sys_munmap(void *addr, size_t len) { return (int)sys6(SC_munmap, (long)addr, (long)len, 0, 0, 0, 0); }
#define TABLES 16
static uintptr_t tables[TABLES][2];
static int ntables;

void glue_table_list(void *p, size_t bytes)
{
	int i = __atomic_fetch_add(&ntables, 1, __ATOMIC_ACQ_REL);
	if (i < TABLES) {
		tables[i][0] = (uintptr_t)p;
		__atomic_store_n(&tables[i][1], (uintptr_t)p + PAGE_UP(bytes), __ATOMIC_RELEASE);
	}
}

void *glue_table(size_t bytes, int keep)
{
	void *p = sys_mmap(NULL, PAGE_UP(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (keep)
		glue_table_list(p, bytes);
	return p;
}

void glue_table_free(void *p, size_t bytes)
{
	if (p)
		sys_munmap(p, PAGE_UP(bytes));
}

int glue_tables(uintptr_t (*span)[2], int max)
{
	int i, n = __atomic_load_n(&ntables, __ATOMIC_ACQUIRE), k = 0;
	for (i = 0; i < n && i < TABLES && k < max; i++) {
		uintptr_t hi = __atomic_load_n(&tables[i][1], __ATOMIC_ACQUIRE);
		if (hi) {
			span[k][0] = tables[i][0];
			span[k++][1] = hi;
		}
	}
	return k;
}

void *sys_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *new_addr)
{
	return (void *)sys6(SC_mremap, (long)old, (long)oldlen, (long)newlen, flags, (long)new_addr, 0);
}
int sys_madvise(void *addr, size_t len, int advice) { return (int)sys6(SC_madvise, (long)addr, (long)len, advice, 0, 0, 0); }
int sys_mprotect(void *addr, size_t len, int prot) { return (int)sys6(SC_mprotect, (long)addr, (long)len, prot, 0, 0, 0); }
int sys_mlock(const void *addr, size_t len) { return (int)sys6(SC_mlock, (long)addr, (long)len, 0, 0, 0, 0); }
int sys_munlock(const void *addr, size_t len) { return (int)sys6(SC_munlock, (long)addr, (long)len, 0, 0, 0, 0); }
int sys_mincore(void *addr, size_t len, unsigned char *vec)
{
	return (int)sys6(SC_mincore, (long)addr, (long)len, (long)vec, 0, 0, 0);
}
void *glue_map_aligned(void *(*f)(void *, size_t, int, int, int, off_t), size_t len, size_t align, int prot,
                       int flags, int fd, off_t off, int own)
{
	static int kernel_aligns; /* 1 yes, -1 no, 0 not seen (a process's; a fork child's the same kernel's) */
	int seen = __atomic_load_n(&kernel_aligns, __ATOMIC_RELAXED);
	size_t span = PAGE_UP(len) + align, head;
	char *q, *a;
	if (!(len & (align - 1)) && seen >= 0) {
		if (own)
			sc_note(SC_mmap);
		q = FORWARD(SYS_mmap, NULL, len, f(NULL, len, prot, flags, fd, off));
		if (q == MAP_FAILED || !((uintptr_t)q & (align - 1))) {
			if (q != MAP_FAILED && !seen && (flags & MAP_ANONYMOUS))
				__atomic_store_n(&kernel_aligns, 1, __ATOMIC_RELAXED);
			return q;
		}
		sys_munmap(q, len);
		if (flags & MAP_ANONYMOUS) /* an older kernel: do not ask it again */
			__atomic_store_n(&kernel_aligns, -1, __ATOMIC_RELAXED);
	}
	if (own)
		sc_note(SC_mmap);
	if ((q = FORWARD(SYS_mmap, NULL, span, f(NULL, span, prot, flags, fd, off))) == MAP_FAILED)
		return MAP_FAILED;
	a = (char *)(((uintptr_t)q + align - 1) & ~(uintptr_t)(align - 1));
	head = (size_t)(a - q);
	if (head)
		sys_munmap(q, head);
	if (align - head)
		sys_munmap(a + span - align, align - head);
	return a;
}
int glue_copy_in(void *dst, const void *src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)src, len };
	return sys6(SC_process_vm_readv, sys_getpid(), (long)&l, 1, (long)&r, 1, 0) == (long)len ? 0 : -1;
}
pid_t sys_getpid(void) { return (pid_t)sys6(SC_getpid, 0, 0, 0, 0, 0, 0); }
pid_t sys_getppid(void) { return (pid_t)sys6(SC_getppid, 0, 0, 0, 0, 0, 0); }
uid_t sys_geteuid(void) { return (uid_t)sys6(SC_geteuid, 0, 0, 0, 0, 0, 0); }
void sys_exit_group(int status)
{
	for (;;)
		sys6(SC_exit_group, status, 0, 0, 0, 0, 0);
}
int sys_open(const char *path, int flags, int mode)
{
	return (int)sys6(SC_openat, AT_FDCWD, (long)path, flags, mode, 0, 0);
}
long sys_read(int fd, void *buf, size_t n) { return sys6(SC_read, fd, (long)buf, (long)n, 0, 0, 0); }
long sys_pread(int fd, void *buf, size_t n, off_t off) { return sys6(SC_pread64, fd, (long)buf, (long)n, (long)off, 0, 0); }
long sys_write(int fd, const void *buf, size_t n) { return sys6(SC_write, fd, (long)buf, (long)n, 0, 0, 0); }
int sys_close(int fd) { return (int)sys6(SC_close, fd, 0, 0, 0, 0, 0); }
/* (struct stat and struct statfs are the kernel's own layouts on the 64-bit
 * targets glibc supports here) */
int sys_fstat(int fd, struct stat *st) { return (int)sys6(SC_fstat, fd, (long)st, 0, 0, 0, 0); }
int sys_fstatfs(int fd, struct statfs *st) { return (int)sys6(SC_fstatfs, fd, (long)st, 0, 0, 0, 0); }
int sys_ftruncate(int fd, off_t len) { return (int)sys6(SC_ftruncate, fd, (long)len, 0, 0, 0, 0); }
long sys_readlink(const char *path, char *buf, size_t n)
{
	return sys6(SC_readlinkat, AT_FDCWD, (long)path, (long)buf, (long)n, 0, 0);
}
int sys_rename(const char *from, const char *to)
{
	return (int)sys6(SC_renameat2, AT_FDCWD, (long)from, AT_FDCWD, (long)to, 0, 0);
}
int sys_unlink(const char *path) { return sys_unlinkat(AT_FDCWD, path); }
int sys_openat(int dfd, const char *path, int flags, int mode)
{
	return (int)sys6(SC_openat, dfd, (long)path, flags, mode, 0, 0);
}
int sys_openat2(int dfd, const char *path, int flags, int mode, uint64_t resolve)
{
	/* (struct open_how, linux/openat2.h: its size is its version) */
	uint64_t how[3] = { (uint64_t)(unsigned)flags, (uint64_t)(unsigned)mode, resolve };
	return (int)sys6(SC_openat2, dfd, (long)path, (long)how, (long)sizeof how, 0, 0);
}
long sys_readlinkat(int dfd, const char *path, char *buf, size_t n)
{
	return sys6(SC_readlinkat, dfd, (long)path, (long)buf, (long)n, 0, 0);
}
int sys_renameat(int from_dfd, const char *from, int to_dfd, const char *to)
{
	return (int)sys6(SC_renameat2, from_dfd, (long)from, to_dfd, (long)to, 0, 0);
}
int sys_unlinkat(int dfd, const char *path) { return (int)sys6(SC_unlinkat, dfd, (long)path, 0, 0, 0, 0); }
long sys_getcwd(char *buf, size_t n)
{
	/* The kernel's length counts the NUL. */
	long r = sys6(SC_getcwd, (long)buf, (long)n, 0, 0, 0, 0);
	return r > 0 ? r - 1 : -1;
}
int sys_getrlimit(int resource, struct rlimit *rl)
{
	return (int)sys6(SC_prlimit64, 0, resource, 0, (long)rl, 0, 0);
}
int sys_getrusage(int who, struct rusage *ru) { return (int)sys6(SC_getrusage, who, (long)ru, 0, 0, 0, 0); }
int sys_sched_yield(void) { return (int)sys6(SC_sched_yield, 0, 0, 0, 0, 0, 0); }
int sys_nanosleep(const struct timespec *ts) { return (int)sys6(SC_nanosleep, (long)ts, 0, 0, 0, 0, 0); }
/* lib/io.h: lib's file calls, as the shim makes them */
static int io_open(const char *path, int flags) { return sys_open(path, flags, 0); }
static int io_openat(int dfd, const char *path, int flags) { return sys_openat(dfd, path, flags, 0); }
const struct io glue_io = { io_open, sys_read, sys_write, sys_close, sys_fstat, io_openat, sys_readlinkat, sys_fstatfs };

#define KSIGSET 8 /* the kernel's sigset: 64 signals */
int sys_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)sys6(SC_rt_sigprocmask, how, (long)set, (long)old, KSIGSET, 0, 0);
}
int sys_sigpending(sigset_t *set) { return (int)sys6(SC_rt_sigpending, (long)set, KSIGSET, 0, 0, 0, 0); }
int sys_sigtimedwait(const sigset_t *set, const struct timespec *ts)
{
	return (int)sys6(SC_rt_sigtimedwait, (long)set, 0, (long)ts, KSIGSET, 0, 0);
}

/* ---- bootstrap arena: bump allocation, never freed ---- */

/* dlsym needs a few hundred bytes; 64 KiB leaves room for other
 * libraries' early calls too.  (Not more: every byte of the object counts
 * against the program's RLIMIT_MEMLOCK at its mlockall: glue_table.) */
char glue_boot_buf[BOOT_SIZE] __attribute__((aligned(64)));
/* The module's state, in one place (its tables stand apart). */
static struct {
	size_t boot_used;
	int resolve_state; /* 0 unresolved, 1 resolving, 2 resolved */
	int nwords;
	int helpers; /* started, not yet returned */
	uint32_t leaving; /* nonzero while glue_quiesce runs */
	int spawn_ok;      /* the constructor has warmed the stacks: see glue_warm */
	uint64_t own;      /* glue_own_add */
} S;

void glue_own_add(int64_t bytes) { __atomic_add_fetch(&S.own, (uint64_t)bytes, __ATOMIC_RELAXED); }
uint64_t glue_own_bytes(void) { return __atomic_load_n(&S.own, __ATOMIC_RELAXED); }

void *boot_alloc(size_t size, size_t align)
{
	size_t old = __atomic_load_n(&S.boot_used, __ATOMIC_RELAXED), start, end;
	if (align < 16)
		align = 16;
	if (size > BOOT_SIZE || align > BOOT_SIZE / 2)
		return NULL;
	do {
		start = (old + 16 + align - 1) & ~(align - 1); /* room for the size header */
		end = start + size;
		if (end > BOOT_SIZE)
			return NULL;
	} while (!__atomic_compare_exchange_n(&S.boot_used, &old, end, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*(size_t *)(glue_boot_buf + start - sizeof(size_t)) = size;
	return glue_boot_buf + start; /* zero: the arena is never reused */
}

size_t boot_size(const void *p) { return *(const size_t *)((const char *)p - sizeof(size_t)); }

/* ---- next definitions ---- */

/* The malloc family's first callers land here, resolve, and go on; while
 * this thread is inside dlsym they are served from the bootstrap arena. */
static void *boot_malloc(size_t n)
{
	void *(*f)(size_t) = glue_resolve(E_malloc);
	return f ? f(n) : boot_alloc(n, 16);
}
static void *boot_calloc(size_t n, size_t size)
{
	void *(*f)(size_t, size_t) = glue_resolve(E_calloc);
	size_t total;
	if (f)
		return f(n, size);
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return boot_alloc(total, 16); /* zero already */
}
static void *boot_realloc(void *old, size_t n)
{
	void *(*f)(void *, size_t) = glue_resolve(E_realloc);
	return f ? f(old, n) : boot_alloc(n, 16); /* (old is NULL or a bootstrap block) */
}
static void boot_free(void *p)
{
	void (*f)(void *) = glue_resolve(E_free);
	if (f)
		f(p); /* else freed while dlsym runs: leak it, the arena is tiny */
}

void *glue_next[E_COUNT] = {
	[E_malloc] = (void *)boot_malloc,
	[E_calloc] = (void *)boot_calloc,
	[E_realloc] = (void *)boot_realloc,
	[E_free] = (void *)boot_free,
};
static void *const boot_stub[E_COUNT] = {
	[E_malloc] = (void *)boot_malloc,
	[E_calloc] = (void *)boot_calloc,
	[E_realloc] = (void *)boot_realloc,
	[E_free] = (void *)boot_free,
};

static TLS int in_dlsym;

/* Entries some C libraries lack (mseal before glibc 2.41, process_madvise
 * before 2.36, _Fork before 2.34,
 * pkey_mprotect and mlock2 before 2.27).  dlsym reports a missing symbol by
 * building an error message with malloc, and the first resolution can run
 * inside another allocator's start-up, under its lock (jemalloc preloaded
 * before the shim maps its first chunk while holding its init mutex; its
 * malloc then waits on itself).  So these are looked up alone, on their own
 * first call, never in the bulk resolution. */
static const unsigned char late[E_COUNT] = {
	[E_mseal] = 1, [E__Fork] = 1, [E_pkey_mprotect] = 1, [E_mlock2] = 1, [E_process_madvise] = 1,
};
static unsigned char late_done[E_COUNT];

static void *resolve_late(enum entry e)
{
	void *f;
	if (in_dlsym)
		return NULL;
	in_dlsym = 1;
	f = dlsym(RTLD_NEXT, entry_names[e]);
	in_dlsym = 0;
	__atomic_store_n(&glue_next[e], f, __ATOMIC_RELAXED);
	__atomic_store_n(&late_done[e], 1, __ATOMIC_RELEASE);
	return f;
}

/* Resolve every entry once.  A second thread arriving mid-resolution looks
 * up just the symbol it needs instead of waiting: waiting could deadlock
 * against the loader lock.  NULL while this thread is inside dlsym. */
static void *resolve_bulk(enum entry e)
{
	int expect = 0;
	void *p;
	if (in_dlsym)
		return NULL;
	in_dlsym = 1;
	if (__atomic_compare_exchange_n(&S.resolve_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		int i;
		for (i = 0; i < E_COUNT; i++) {
			void *f;
			if (late[i])
				continue;
			f = dlsym(RTLD_NEXT, entry_names[i]);
			/* A missing definition leaves a malloc-family stub in place
			 * (it then answers from the arena); others read NULL. */
			if (f || !boot_stub[i])
				__atomic_store_n(&glue_next[i], f, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&S.resolve_state, 2, __ATOMIC_RELEASE);
		p = __atomic_load_n(&glue_next[e], __ATOMIC_RELAXED);
	} else {
		p = dlsym(RTLD_NEXT, entry_names[e]);
	}
	in_dlsym = 0;
	return p;
}

void *glue_resolve(enum entry e)
{
	void *p;
	if (__atomic_load_n(&S.resolve_state, __ATOMIC_ACQUIRE) == 2)
		p = __atomic_load_n(&glue_next[e], __ATOMIC_RELAXED);
	else
		p = resolve_bulk(e);
	if (p && p == boot_stub[e])
		return NULL;
	/* (the bulk resolution skips late entries: each is looked up alone) */
	if (!p && late[e] && !__atomic_load_n(&late_done[e], __ATOMIC_ACQUIRE))
		return resolve_late(e);
	return p;
}

/* ---- futexes ---- */

int glue_wait(uint32_t *w, uint32_t seen, uint64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	if (timeout_ns) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
		ts.tv_nsec = (long)(timeout_ns % 1000000000u);
		tp = &ts;
	}
	if (sys6(SC_futex, (long)w, FUTEX_WAIT_PRIVATE, seen, (long)tp, 0, 0) != 0 && errno == ETIMEDOUT)
		return -1;
	return 0;
}

void glue_wake(uint32_t *w) { sys6(SC_futex, (long)w, FUTEX_WAKE_PRIVATE, 1 << 30, 0, 0, 0); }

/* ---- helper threads ---- */

#define WORDS 8
static uint32_t *words[WORDS]; /* the futex words helpers sleep on */

struct start {
	void *(*fn)(void *);
	void *arg;
	size_t stack;
};
#define STARTS 16
static struct start starts[STARTS];
static int start_used[STARTS];

static void *helper_main(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	size_t stack = s->stack;
	__atomic_store_n(&start_used[s - starts], 0, __ATOMIC_RELEASE);
	shim_guard = 1; /* everything this thread calls passes straight through */
	fn(arg);
	glue_own_add(-(int64_t)stack);
	if (__atomic_sub_fetch(&S.helpers, 1, __ATOMIC_ACQ_REL) == 0)
		glue_wake((uint32_t *)&S.helpers);
	return NULL;
}

static void remember_word(uint32_t *w)
{
	int i, n = __atomic_load_n(&S.nwords, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (words[i] == w)
			return;
	if (n < WORDS) {
		words[n] = w;
		__atomic_store_n(&S.nwords, n + 1, __ATOMIC_RELEASE);
	}
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* How the shim starts a thread: glibc's pthread_create, or, under a
 * sanitizer, its interceptor, which must see our threads start (it then
 * reaches our wrapper with the guard up, and glibc).  NULL: none. */
static create_fn creator(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	return pthread_create;
#else
	return REAL(pthread_create);
#endif
}

/* A new thread inherits its creator's mask: the shim's start with every
 * signal blocked, so none of the program's handlers runs on them.  (glibc's
 * own mask call: it keeps its internal signals unblocked.) */
static void block_all(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	sc_note(SC_rt_sigprocmask);
}

static void unblock(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
	sc_note(SC_rt_sigprocmask);
}

int glue_spawn(void *(*fn)(void *), void *arg, size_t stack, uint32_t *word)
{
	pthread_attr_t attr;
	sigset_t old;
	pthread_t t;
	int i, rc = -1;
	create_fn create = creator();
	/* Before the constructor, a wrapper may be inside another library's
	 * constructor, in an allocator's first map under its lock (libstdc++'s
	 * start allocates; jemalloc maps under its init lock): no thread is
	 * started then.  Callers do the work themselves or leave it queued; the
	 * constructor starts what was queued. */
	if (!create || __atomic_load_n(&S.leaving, __ATOMIC_ACQUIRE) || !__atomic_load_n(&S.spawn_ok, __ATOMIC_ACQUIRE))
		return 1;
	if (word)
		remember_word(word);
	for (i = 0; i < STARTS; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&start_used[i], &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	if (i == STARTS || pthread_attr_init(&attr) != 0) {
		if (i < STARTS)
			__atomic_store_n(&start_used[i], 0, __ATOMIC_RELEASE);
		return -1;
	}
	starts[i].fn = fn;
	starts[i].arg = arg;
	starts[i].stack = stack;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, stack);
	block_all(&old);
	__atomic_add_fetch(&S.helpers, 1, __ATOMIC_ACQ_REL);
	sc_note(SC_clone3);
	glue_own_add((int64_t)stack); /* (before: the helper may end at once) */
	if (create(&t, &attr, helper_main, &starts[i]) == 0) {
		rc = 0;
	} else {
		glue_own_add(-(int64_t)stack);
		__atomic_sub_fetch(&S.helpers, 1, __ATOMIC_ACQ_REL);
		__atomic_store_n(&start_used[i], 0, __ATOMIC_RELEASE);
	}
	unblock(&old);
	pthread_attr_destroy(&attr);
	return rc;
}

/* Callers ask on every wrapper call that has work for a helper: a
 * process at RLIMIT_NPROC (or out of memory) would try a thread, and fail,
 * each time.  One backoff for all: what stops one thread stops the rest. */
static struct backoff spawn_fail;

int glue_spawn_upto(int *count, int want, void *(*fn)(void *), void *arg, size_t stack, uint32_t *word)
{
	for (;;) {
		int rc, n = __atomic_load_n(count, __ATOMIC_ACQUIRE);
		if (n >= want)
			return 0;
		if (backoff_skip(&spawn_fail))
			return -1;
		if (!__atomic_compare_exchange_n(count, &n, n + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		rc = glue_spawn(fn, arg, stack, word);
		if (rc != 0) {
			__atomic_sub_fetch(count, 1, __ATOMIC_ACQ_REL);
			/* "Not yet" is no failure: the constructor's own ask
			 * (auto_kick, worker and pool starts) must not be skipped. */
			if (rc < 0)
				backoff_failed(&spawn_fail);
			return rc < 0 ? -1 : 0;
		}
		backoff_ok(&spawn_fail);
	}
}

static void *warm_main(void *arg)
{
	shim_guard = 1;
	return arg;
}

/* As many as the shim can run at once: a pool's 63 helpers, the workers
 * and the learner's watcher (pool.c, worker.c, auto.c). */
#define WARM_MAX 80
static int warm_n;
static size_t warm_stack;

void glue_warm_add(int n, size_t stack)
{
	warm_n += n > 0 ? n : 0;
	if (stack > warm_stack)
		warm_stack = stack;
}

/* Joinable, and joined: glibc gives a joined thread's stack back to its
 * cache at once, and pthread_join's own waiting is not the shim's (so the
 * cost ledger counts the same calls every run: the clones and the masks). */
void glue_warm(void)
{
	pthread_t t[WARM_MAX];
	pthread_attr_t attr;
	sigset_t old;
	int i, n = warm_n < WARM_MAX ? warm_n : WARM_MAX, made = 0;
	create_fn create = creator();
	if (!create || n <= 0 || pthread_attr_init(&attr) != 0)
		return;
	warm_n = 0;
	pthread_attr_setstacksize(&attr, warm_stack);
	block_all(&old);
	for (i = 0; i < n; i++) {
		sc_note(SC_clone3);
		if (create(&t[made], &attr, warm_main, NULL) != 0)
			break;
		made++;
	}
	unblock(&old);
	pthread_attr_destroy(&attr);
	for (i = 0; i < made; i++)
		pthread_join(t[i], NULL);
}

void glue_spawn_allow(void) { __atomic_store_n(&S.spawn_ok, 1, __ATOMIC_RELEASE); }

int glue_leaving(void) { return __atomic_load_n(&S.leaving, __ATOMIC_ACQUIRE) != 0; }
int glue_helpers(void) { return __atomic_load_n(&S.helpers, __ATOMIC_ACQUIRE); }

/* Threads in this process, from /proc/self/stat (field 20), or -1. */
static long threads_now(void)
{
	char buf[512];
	long n = -1;
	int fd = sys_open("/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
	long len;
	if (fd < 0)
		return -1;
	len = sys_read(fd, buf, sizeof buf - 1);
	sys_close(fd);
	if (len > 0) {
		char *p = memrchr(buf, ')', (size_t)len); /* the name may hold spaces */
		int field = 2;
		buf[len] = '\0';
		for (; p && *p && field < 20; p++)
			if (*p == ' ')
				field++;
		if (p && field == 20)
			n = strtol(p, NULL, 10);
	}
	return n;
}

int glue_quiesce(void)
{
	int had = glue_helpers(), i, tries, cancel;
	long before;
	if (!had)
		return 0;
	/* (called before any guard, from unshare, setns and a failed fork or
	 * thread: cancelled in between, leaving would stay up for good) */
	cancel = unlikely(glue_async_cancel) ? glue_cancel_off() : -1;
	before = threads_now();
	__atomic_add_fetch(&S.leaving, 1, __ATOMIC_ACQ_REL);
	for (i = 0; i < __atomic_load_n(&S.nwords, __ATOMIC_ACQUIRE); i++) {
		__atomic_add_fetch(words[i], 1, __ATOMIC_RELEASE);
		glue_wake(words[i]);
	}
	/* Each returns from its function within one chunk of work. */
	for (tries = 0; tries < 2000; tries++) {
		int h = glue_helpers();
		if (!h)
			break;
		glue_wait((uint32_t *)&S.helpers, (uint32_t)h, 1000000);
	}
	/* A thread that has returned is gone from the process a moment later
	 * (the kernel reaps it after clearing its tid): wait for that too. */
	for (tries = 0; before > 0 && tries < 1000; tries++) {
		struct timespec ts = { 0, 100000 };
		long now = threads_now();
		if (now < 0 || now <= before - had)
			break;
		sys_nanosleep(&ts);
	}
	__atomic_sub_fetch(&S.leaving, 1, __ATOMIC_ACQ_REL);
	if (cancel >= 0)
		glue_cancel_restore(cancel);
	return had;
}

void glue_atfork_child(void)
{
	int i;
	/* The child is a process of its own: its ledger starts empty. */
	memset(glue_sc, 0, sizeof glue_sc);
	/* A thread of the parent that was resolving the next definitions is
	 * gone: the next call here resolves them again. */
	if (S.resolve_state == 1)
		S.resolve_state = 0;
	S.helpers = 0;
	S.leaving = 0;
	for (i = 0; i < STARTS; i++)
		start_used[i] = 0;
}
