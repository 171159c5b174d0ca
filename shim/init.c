/* init.c: how the shim comes to life, forks, and reports at exit.
 *
 * Two once-only steps, both reachable from every wrapper (calls can arrive
 * before our constructor: other libraries' constructors, jemalloc
 * initialising through mmap):
 *   1. real_fn(): find the next definition of each wrapped symbol.  dlsym
 *      may call calloc, so while a thread is inside dlsym its malloc family
 *      calls are served from a static arena and its mmap calls become raw
 *      syscalls.  A second thread arriving mid-resolution looks up just the
 *      symbol it needs instead of waiting (waiting could deadlock against
 *      the loader lock).
 *   2. shim_init(): read the environment and the policy.  Nothing here may
 *      allocate: it can run inside the allocator's own first mmap.  Things
 *      that allocate (pthread_atfork) wait for the constructor.
 * A process image replaced by exec starts afresh: its counts begin at its
 * own start, so one process writes one report, from its last image.
 */
#include "glue.h"
#include "shim.h"
#include "match.h"
#include "os.h"
#include "prefault.h"
#include "profile.h"
#include "recycle.h"
#include "regions.h"
#include "report.h"
#include "sbuf.h"
#include "stack.h"
#include "stats.h"
#include "worker.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- raw system calls ---- */

void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
int sys_munmap(void *addr, size_t len) { return (int)syscall(SYS_munmap, addr, len); }
void *sys_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, oldlen, newlen, flags, new_addr);
}
int sys_madvise(void *addr, size_t len, int advice) { return (int)syscall(SYS_madvise, addr, len, advice); }
pid_t sys_getpid(void) { return (pid_t)syscall(SYS_getpid); }
pid_t sys_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/* ---- step 1: the next definitions ---- */

static const char *const real_names[R_COUNT] = {
	"mmap", "mmap64", "munmap", "mremap", "madvise", "mprotect",
	"malloc", "calloc", "realloc", "free", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc",
	"_exit", "_Exit", "pthread_create",
};
static void *real[R_COUNT];
static int real_state; /* 0 unresolved, 1 resolving, 2 resolved */
static TLS int in_dlsym;

void *real_fn(enum real_id id)
{
	int expect = 0;
	void *p;
	if (likely(__atomic_load_n(&real_state, __ATOMIC_ACQUIRE) == 2))
		return real[id];
	if (in_dlsym)
		return NULL;
	in_dlsym = 1;
	if (__atomic_compare_exchange_n(&real_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		int i;
		for (i = 0; i < R_COUNT; i++)
			real[i] = dlsym(RTLD_NEXT, real_names[i]);
		__atomic_store_n(&real_state, 2, __ATOMIC_RELEASE);
		p = real[id];
	} else {
		p = dlsym(RTLD_NEXT, real_names[id]);
	}
	in_dlsym = 0;
	return p;
}

/* Bootstrap arena: bump allocation, never freed.  dlsym needs a few hundred
 * bytes; 256 KiB leaves room for other libraries' early calls too. */
#define BOOT_SIZE (256 * 1024)
static char boot_buf[BOOT_SIZE] __attribute__((aligned(64)));
static size_t boot_used;

void *boot_alloc(size_t size, size_t align)
{
	size_t old = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start, end;
	if (align < 16)
		align = 16;
	if (size > BOOT_SIZE)
		return NULL;
	do {
		start = (old + 16 + align - 1) & ~(align - 1); /* room for the size header */
		end = start + size;
		if (end > BOOT_SIZE)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &old, end, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*(size_t *)(boot_buf + start - sizeof(size_t)) = size;
	return boot_buf + start; /* zero: the arena is never reused */
}

int boot_owns(const void *p)
{
	return (const char *)p >= boot_buf && (const char *)p < boot_buf + BOOT_SIZE;
}

size_t boot_size(const void *p) { return *(const size_t *)((const char *)p - sizeof(size_t)); }

/* ---- step 2: policy and process state ---- */

int shim_state;
TLS int shim_guard;
struct policy g_pol;
static int have_policy;
static struct proc_info pinfo;
static char policy_path[1024];
static char report_dest[1024]; /* template: "stderr", "none" or an absolute path */
static char policy_text[64 * 1024];
static int reported;

static void warn(const char *a, const char *b, const char *c)
{
	char buf[600];
	struct sbuf sb;
	sb_init(&sb, buf, sizeof buf, 2);
	sb_str(&sb, "prefault: ");
	sb_str(&sb, a);
	if (b)
		sb_str(&sb, b);
	if (c)
		sb_str(&sb, c);
	sb_chr(&sb, '\n');
	sb_flush(&sb);
}

static const char *errno_text(int e)
{
	switch (e) {
	case ENOENT: return "no such file or directory";
	case EACCES: return "permission denied";
	case EPERM: return "not a regular file of ours (refused)";
	case ELOOP: return "is a symbolic link (refused)";
	case EISDIR: return "is a directory";
	case ENOSPC: return "no space left on device";
	case EROFS: return "read-only file system";
	case EFBIG: return "file too large";
	case ENAMETOOLONG: return "name too long";
	case ENOTDIR: return "a component of the path is not a directory";
	case ENXIO: return "a FIFO or device (refused)";
	default: return "cannot open";
	}
}

static void set_dest(const char *s)
{
	size_t n = strlen(s), cwd = 0;
	if (s[0] != '/' && strcmp(s, "stderr") && strcmp(s, "none")) {
		/* Relative to where the program started, not where it is at exit. */
		if (getcwd(report_dest, sizeof report_dest - 2)) {
			cwd = strlen(report_dest);
			report_dest[cwd++] = '/';
		}
	}
	if (cwd + n >= sizeof report_dest)
		n = sizeof report_dest - cwd - 1;
	memcpy(report_dest + cwd, s, n);
	report_dest[cwd + n] = '\0';
}

/* Returns 0 with g_pol filled, or -1 after warning. */
static int load_policy(const char *path)
{
	long n;
	int line;
	struct pol_error err;
	size_t pl = strlen(path);
	if (pl >= sizeof policy_path)
		pl = sizeof policy_path - 1;
	memcpy(policy_path, path, pl);
	policy_path[pl] = '\0';
	n = os_read_file(path, policy_text, sizeof policy_text);
	if (n < 0) {
		warn(path, ": cannot read the policy: ", errno_text(errno));
		return -1;
	}
	if ((size_t)n >= sizeof policy_text - 1) {
		warn(path, ": policy larger than 64 KiB", NULL);
		return -1;
	}
	line = policy_parse(policy_text, (size_t)n, &g_pol, &err);
	if (line) {
		char num[16];
		struct sbuf sb;
		sb_init(&sb, num, sizeof num, -1);
		sb_chr(&sb, ':');
		sb_u64(&sb, (uint64_t)line);
		sb_str(&sb, ": ");
		sb_cstr(&sb);
		{
			char msg[sizeof err.msg + 64];
			struct sbuf m;
			sb_init(&m, msg, sizeof msg, -1);
			sb_str(&m, num);
			sb_str(&m, err.msg);
			sb_str(&m, " (running the program without prefault)");
			warn(path, sb_cstr(&m), NULL);
		}
		return -1;
	}
	return 0;
}

static void read_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", pinfo.exe, sizeof pinfo.exe - 1);
	pinfo.exe[n > 0 ? n : 0] = '\0';
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void start_counting(void)
{
	pinfo.pid = sys_getpid();
	pinfo.ppid = getppid();
	pinfo.t0 = os_now_ns();
	os_faults_self(&pinfo.f0);
}

static uint64_t compute_budget(void)
{
	uint64_t avail, room, b;
	os_cgroup_init();
	avail = os_mem_available();
	room = os_cgroup_room();
	if (room < avail || !avail)
		avail = room;
	/* Default: half of what is free now.  An explicit budget is still capped
	 * by the cgroup's room: going past memory.max gets the program killed. */
	b = avail == UINT64_MAX ? UINT64_MAX : avail / 2;
	if (have_policy && g_pol.has_budget)
		b = g_pol.budget < room ? g_pol.budget : room;
	return b;
}

void shim_init(void)
{
	int expect = 0;
	const char *pol, *rep, *prog;
	if (!__atomic_compare_exchange_n(&shim_state, &expect, SHIM_INIT, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	shim_guard++;
	pf_page = os_page_size(); /* before anything else: every range is rounded with it */
	/* A set-user-ID program: act on nothing and write nothing.  (The loader
	 * already refuses LD_PRELOAD paths with a slash for such programs; this
	 * covers a shim installed in a system directory.) */
	if (os_secure()) {
		__atomic_store_n(&shim_state, SHIM_PASS, __ATOMIC_RELEASE);
		shim_guard--;
		return;
	}
	start_counting();
	prog = program_invocation_short_name;
	copy_str(pinfo.program, sizeof pinfo.program, prog && *prog ? prog : "?");
	pol = getenv("PREFAULT_POLICY");
	if (pol && *pol) {
		if (load_policy(pol) < 0) {
			/* A bad policy: the program runs exactly as without us. */
			__atomic_store_n(&shim_state, SHIM_PASS, __ATOMIC_RELEASE);
			shim_guard--;
			return;
		}
		have_policy = 1;
		pinfo.policy_path = policy_path;
	}
	{
		const char *prof = getenv("PREFAULT_PROFILE");
		if (prof && *prof)
			profile_init(prof);
	}
	rep = getenv("PREFAULT_REPORT");
	if (rep && *rep)
		set_dest(rep);
	else if (have_policy && g_pol.has_report)
		set_dest(g_pol.report);
	else
		set_dest("stderr");
	budget_set_lazy(compute_budget);
	pf_init(have_policy ? &g_pol : NULL);
	{
		/* The executable's own name is needed only to match program or
		 * caller globs (python3 is python3.11), and for the report. */
		const char *exe_base;
		int i, globs = 0;
		for (i = 0; have_policy && i < g_pol.nrules; i++)
			globs |= g_pol.rules[i].nprogram || g_pol.rules[i].ncaller;
		if (globs || profiling)
			read_exe();
		exe_base = strrchr(pinfo.exe, '/');
		match_setup(have_policy ? &g_pol : NULL, pinfo.program, exe_base ? exe_base + 1 : pinfo.exe);
	}
	if (have_policy && g_pol.mlockall && mlockall(g_pol.mlockall) != 0)
		stats_note(N_MLOCK_FAILED);
	__atomic_store_n(&shim_state, SHIM_ON, __ATOMIC_RELEASE);
	shim_guard--;
}

const struct policy *shim_policy(void) { return have_policy ? &g_pol : NULL; }

/* ---- fork ---- */

/* Every lock the shim has is held across fork, so that the child never
 * inherits one held by a thread that does not exist there.  The forking
 * thread's guard stays up from here until our parent or child handler: the
 * handlers other libraries registered before ours run in between (glibc
 * runs child and parent handlers in registration order, prepare handlers in
 * reverse), and if they allocate, map or start a thread (ThreadSanitizer's
 * child handler does) our wrappers must not wait for our own locks. */
static void atfork_prepare(void)
{
	shim_guard++;
	match_lock();
	regions_lock_all();
	worker_lock();
	recycle_lock();
	stats_lock();
	if (profiling)
		profile_lock();
}
static void atfork_parent(void)
{
	if (profiling)
		profile_unlock();
	stats_unlock();
	recycle_unlock();
	worker_unlock();
	regions_unlock_all();
	match_unlock();
	shim_guard--;
}
static void atfork_child(void)
{
	/* The child is a new process: it reports for itself, from now on.  Its
	 * mappings (and so the tracked regions and their charges) are the
	 * parent's, copied. */
	regions_reset();
	match_reset_lock();
	worker_fork_child();
	pool_fork_child();
	recycle_fork_child();
	stats_reset();
	if (profiling) {
		profile_unlock();
		profile_fork_child();
	}
	shim_guard--;
	__atomic_store_n(&reported, 0, __ATOMIC_RELAXED);
	start_counting();
}

/* ---- the report ---- */

static void expand(char *out, size_t cap, const char *tmpl)
{
	struct sbuf sb;
	sb_init(&sb, out, cap, -1);
	for (; *tmpl; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'p') {
			sb_u64(&sb, (uint64_t)sys_getpid());
			tmpl++;
		} else if (tmpl[0] == '%' && tmpl[1] == 'e') {
			const char *p;
			for (p = pinfo.program; *p; p++) /* a program name is not a path */
				sb_chr(&sb, *p == '/' ? '_' : *p);
			tmpl++;
		} else if (tmpl[0] == '%' && tmpl[1] == '%') {
			sb_chr(&sb, '%');
			tmpl++;
		} else {
			sb_chr(&sb, *tmpl);
		}
	}
	sb_cstr(&sb);
}

void shim_report(void)
{
	char path[1200];
	size_t n;
	int fd, json;
	int e = errno;
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) != SHIM_ON)
		return;
	/* A vfork child shares our memory and must not write our report. */
	if (sys_getpid() != pinfo.pid)
		return;
	if (__atomic_exchange_n(&reported, 1, __ATOMIC_ACQ_REL))
		return;
	shim_guard++;
	if (!pinfo.exe[0])
		read_exe();
	if (!strcmp(report_dest, "none")) {
		;
	} else if (!strcmp(report_dest, "stderr")) {
		report_write(2, 0, &pinfo, shim_policy());
	} else {
		expand(path, sizeof path, report_dest);
		n = strlen(path);
		json = n > 5 && !strcmp(path + n - 5, ".json");
		fd = os_open_report(path);
		if (fd < 0) {
			char msg[1300];
			struct sbuf m;
			sb_init(&m, msg, sizeof msg, -1);
			sb_str(&m, path);
			sb_str(&m, ": ");
			sb_str(&m, errno_text(errno));
			warn("cannot write the report to ", sb_cstr(&m), NULL);
		} else {
			report_write(fd, json, &pinfo, shim_policy());
			close(fd);
		}
	}
	if (profiling) {
		struct faults now, d;
		os_faults_self(&now);
		d.minor = now.minor - pinfo.f0.minor;
		d.major = now.major - pinfo.f0.major;
		profile_finish(pinfo.program, pinfo.exe, pinfo.ppid, &d);
	}
	shim_guard--;
	errno = e;
}

__attribute__((constructor)) static void shim_ctor(void)
{
	shim_init();
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) != SHIM_ON)
		return;
	shim_guard++;
	stats_thread_init();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (profiling) { /* the main thread's fault event, and the reader */
		profile_thread_start();
		profile_tick();
	}
	shim_guard--;
	stack_main();
}

__attribute__((destructor)) static void shim_dtor(void)
{
	shim_report();
	/* Give back what recycling kept (it is nobody's now); only once the
	 * report, which shows the cache's high-water mark, is out. */
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) == SHIM_ON && sys_getpid() == pinfo.pid) {
		shim_guard++;
		recycle_flush();
		shim_guard--;
	}
}
