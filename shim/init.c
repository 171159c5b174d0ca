/* init.c: how the shim comes to life, forks, and reports at exit.
 *
 * Two once-only steps, both reachable from every wrapper (calls can arrive
 * before our constructor: other libraries' constructors, jemalloc
 * initialising through mmap):
 *   1. glue_resolve() finds the next definition of each wrapped symbol
 *      (glue.c; dlsym may call calloc, which the bootstrap arena serves);
 *   2. shim_init() reads the environment and the policy and hands each
 *      module its set-up.  Nothing here may allocate: it can run inside the
 *      allocator's own first mmap.  Things that allocate (pthread_atfork)
 *      wait for the constructor.
 * Modules get their set-up from here (pf_setup, match_setup, stack_setup,
 * ...); none of them calls up for the policy.  A process image replaced by
 * exec starts afresh: its counts begin at its own start, so one process
 * writes one report, from its last image.
 */
#include "shim.h"
#include "carve.h"
#include "auto.h"
#include "defs.h"
#include "fork.h"
#include "lock.h"
#include "match.h"
#include "os.h"
#include "policy_file.h"
#include "pool.h"
#include "prefault.h"
#include "profile.h"
#include "recycle.h"
#include "regions.h"
#include "report.h"
#include "sbuf.h"
#include "settings.h"
#include "stack.h"
#include "stats.h"
#include "worker.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int shim_state;
static struct policy g_pol;
/* The module's state, in one place (its tables stand apart). */
static struct {
	int have_policy;
	struct policy *pol; /* in force: the file's, the learner's (auto), or NULL */
	int report_quiet; /* PREFAULT_REPORT_QUIET: the CLI collects; stay silent */
	struct settings set; /* PREFAULT_*, read once (settings.h) */
	int reported;
	int may_wait; /* the report may wait for a lock (see shim_report) */
	uint64_t fork_t0; /* when the last fork began: the child's start */
} S;
/* aligned(8): without it the compiler gives a large object 32-byte
 * alignment, and --sort-section=alignment would place it among the big
 * tables instead of on the page of small variables every process writes. */
static struct proc_info pinfo __attribute__((aligned(8)));
static char policy_path[PATH_MAX];
static const char *report_dest = "stderr"; /* template: "stderr", "none" or report_path */
static char report_path[PATH_MAX];  /* (written only when the report goes to a file) */

/* One line on stderr (os_warn: only the stderr we started with), its parts
 * escaped: names and paths come from outside. */
static void warn(const char *a, const char *b, const char *c, const char *d)
{
	static char buf[600]; /* (one warning at a time: start-up, or the report) */
	struct sbuf sb;
	sb_init(&sb, buf, sizeof buf, -1);
	sb_str(&sb, "prefault: ");
	sb_text(&sb, a);
	if (b)
		sb_text(&sb, b);
	if (c)
		sb_text(&sb, c);
	if (d)
		sb_text(&sb, d);
	os_warn(sb_cstr(&sb));
}

/* "(at most N bytes)": the longest path there is room for. */
static const char *at_most_path(void)
{
	static char m[48];
	struct sbuf sb;
	sb_init(&sb, m, sizeof m, -1);
	sb_str(&sb, "(at most ");
	sb_u64(&sb, PATH_MAX - 1);
	sb_str(&sb, " bytes)");
	return sb_cstr(&sb);
}

static const char *report_errno_text(int e)
{
	switch (e) {
	case ENOENT: return "no such file or directory";
	case EACCES: return "permission denied";
	case EPERM: return "not a regular file of ours on a real file system (refused)";
	case ELOOP: return "is a symbolic link (refused), or the path has a loop of them";
	case ENOLINK: return "goes through a symbolic link another user made in a shared directory (refused)";
	case EISDIR: return "is a directory";
	case ENOSPC: return "no space left on device";
	case EDQUOT: return "disk quota exceeded";
	case EFBIG: return "file too large (RLIMIT_FSIZE)";
	case EROFS: return "read-only file system";
	case ENAMETOOLONG: return "name too long";
	case ENOTDIR: return "a component of the path is not a directory";
	case ENXIO: return "a FIFO or device (refused)";
	case EIO: return "input/output error";
	case EMFILE: return "too many open files (the process's limit: writing the report takes one more)";
	case ENFILE: return "too many open files in the system";
	case ENOMEM: return "out of memory";
	default: return "cannot write";
	}
}

/* The report's destination, from the environment or the policy.  A
 * relative path is taken from where the program started, not where it is
 * at exit.  A path that does not fit is refused, never cut. */
static void set_dest(const char *s)
{
	size_t n = strlen(s), cwd = 0;
	if (!strcmp(s, "stderr") || !strcmp(s, "none")) {
		report_dest = s[0] == 's' ? "stderr" : "none";
		return;
	}
	if (s[0] != '/') {
		long got = sys_getcwd(report_path, sizeof report_path - 2);
		if (got > 0) {
			cwd = (size_t)got;
			report_path[cwd++] = '/';
		}
	}
	if (cwd + n >= sizeof report_path) {
		warn("the report path is too long ", at_most_path(), ": no report will be written", NULL);
		report_dest = "none";
		return;
	}
	memcpy(report_path + cwd, s, n);
	report_path[cwd + n] = '\0';
	report_dest = report_path;
}

/* Returns 0 with g_pol filled, or -1 after warning. */
static int load_policy(const char *path)
{
	enum { TEXT = POL_FILE_MAX + 2 };
	size_t n, cap, pl = strlen(path);
	int line, r;
	struct pol_error err;
	char *text;
	if (pl >= sizeof policy_path) {
		warn("the policy path is too long (running the program without prefault)", NULL, NULL, NULL);
		return -1;
	}
	memcpy(policy_path, path, pl + 1);
	/* Its text in a scratch table (the rules keep copies of their
	 * strings): 16 KiB, which most policies fit, and the largest allowed
	 * only for one that does not. */
	for (cap = 16 << 10;; cap = TEXT) {
		if (!(text = glue_table(cap, 0))) {
			warn(path, ": cannot use the policy: no memory to read it (running the program without prefault)",
			     NULL, NULL);
			return -1;
		}
		r = policy_file_read(path, text, cap, &n, &glue_io);
		if (r != PFR_TOO_BIG || cap == TEXT)
			break;
		glue_table_free(text, cap);
	}
	line = r == PFR_OK ? policy_parse(text, n, &g_pol, &err) : 0;
	glue_table_free(text, cap);
	if (r != PFR_OK) {
		warn(path, ": cannot use the policy: ", policy_file_error(r), " (running the program without prefault)");
		return -1;
	}
	if (line) {
		static char msg[sizeof err.msg + 80];
		struct sbuf m;
		sb_init(&m, msg, sizeof msg, -1);
		sb_chr(&m, ':');
		sb_u64(&m, (uint64_t)line);
		sb_str(&m, ": ");
		sb_str(&m, err.msg);
		sb_str(&m, " (running the program without prefault)");
		warn(path, sb_cstr(&m), NULL, NULL);
		return -1;
	}
	return 0;
}

static void read_exe(void)
{
	long n = sys_readlink("/proc/self/exe", pinfo.exe, sizeof pinfo.exe - 1);
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
	pinfo.ppid = sys_getppid();
	pinfo.t0 = os_now_ns();
	os_faults_self(&pinfo.f0);
}

static uint64_t compute_budget(void)
{
	uint64_t avail, room, b;
	if (!os_cgroup_init())
		return BUDGET_UNKNOWN; /* another thread is finding the cgroup */
	avail = os_mem_available();
	room = os_cgroup_room();
	if (room < avail || !avail)
		avail = room;
	/* Default: half of what is free now.  An explicit budget is still capped
	 * by the cgroup's room: going past memory.max gets the program killed. */
	b = avail == UINT64_MAX ? UINT64_MAX : avail / 2;
	if (S.have_policy && g_pol.has_budget)
		b = g_pol.budget < room ? g_pol.budget : room;
	return b;
}

/* A seccomp filter in force when the program started (a service's
 * SystemCallFilter, a sandbox, a container's) may kill the process on any
 * call the program never makes itself, and no unprivileged process can read
 * the filter: the shim stays out of the way from the start, with no call
 * of its own after this look (not even a warning: a write to stderr may be
 * one; prefault run says it).  PREFAULT_SECCOMP=trust says the filter lets
 * the shim's calls through; trust:N is prefault run's word, after it tried
 * them under the same N filters in a child of its own (a filter added since,
 * by a sandbox the program started in, is not vouched for).  A filter the
 * program installs itself: shim_sandboxed. */
static int seccomp_untrusted(void)
{
	const char *t = getenv("PREFAULT_SECCOMP");
	long filters, n = -1;
	int mode = os_seccomp(&filters);
	/* (-1: no /proc to look in, a chroot's or a bare namespace's; the shim
	 * acts there as it always has: helper-38) */
	if (mode <= 0)
		return 0;
	if (!t || strncmp(t, "trust", 5) || (t[5] && t[5] != ':'))
		return 1;
	if (!t[5])
		return 0;
	for (n = 0, t += 6; *t >= '0' && *t <= '9' && n < 1 << 20; t++)
		n = n * 10 + (*t - '0');
	return *t || mode != 2 || filters < 0 || filters != n;
}

static void pass(void)
{
	pf_off();
	__atomic_store_n(&shim_state, SHIM_PASS, __ATOMIC_RELEASE);
}

void shim_init(void)
{
	int expect = 0;
	const char *pol, *rep, *prog;
	struct guard g;
	/* Too early: a call from a sanitizer's start (its .preinit_array runs
	 * before libc has set up the environment and the program's name), or
	 * any other before libc's own start.  The shim starts with a later
	 * call, or with its constructor; this one passes straight through. */
	if (!__atomic_load_n(&environ, __ATOMIC_RELAXED) || !program_invocation_name)
		return;
	if (!__atomic_compare_exchange_n(&shim_state, &expect, SHIM_INIT, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	g = guard_enter();
	glue_init(); /* the page size, before anything else: every range is rounded with it */
	/* A set-user-ID program: act on nothing and write nothing.  (The loader
	 * already refuses LD_PRELOAD paths with a slash for such programs; this
	 * covers a shim installed in a system directory.) */
	if (os_secure() || seccomp_untrusted()) {
		pass();
		guard_leave(g);
		return;
	}
	os_stderr_remember();
	start_counting();
	prog = program_invocation_short_name;
	copy_str(pinfo.program, sizeof pinfo.program, prog && *prog ? prog : "?");
	settings_read(&S.set);
	os_socket_remember(S.set.report_fd);
	if ((pol = S.set.policy) && !strcmp(pol, "auto")) { /* no file: the learner (auto.c) */
		if (!(S.pol = auto_setup(&S.set))) {
			warn("PREFAULT_AUTO_BUDGET: expected a percentage of the program's peak and/or a size, like 10%,256M "
			     "(running the program without prefault)", NULL, NULL, NULL);
			pass();
			guard_leave(g);
			return;
		}
		pinfo.policy_path = "auto";
	} else if (pol) {
		if (load_policy(pol) < 0) { /* a bad policy: the program runs exactly as without us */
			pass();
			guard_leave(g);
			return;
		}
		S.have_policy = 1;
		S.pol = &g_pol;
		pinfo.policy_path = policy_path;
	}
	if (S.set.profile)
		profile_init(&S.set, pinfo.program, pinfo.exe, &pinfo.ppid);
	S.report_quiet = S.set.report_quiet != NULL;
	if ((rep = S.set.report))
		set_dest(rep);
	else if (S.have_policy && g_pol.has_report)
		set_dest(g_pol.report);
	else
		set_dest("stderr");
	budget_set_lazy(compute_budget);
	{
		/* The executable's own name is needed only to match program or
		 * caller globs (python3 is python3.11), and for the report. */
		const char *exe_base;
		int i, globs = 0;
		for (i = 0; S.have_policy && i < g_pol.nrules; i++)
			globs |= g_pol.rules[i].nprogram || g_pol.rules[i].ncaller;
		if (globs || profiling || auto_on) /* (the learner names sites by their object) */
			read_exe();
		exe_base = strrchr(pinfo.exe, '/');
		match_setup(S.pol, pinfo.program, exe_base ? exe_base + 1 : pinfo.exe);
	}
	stack_setup(S.pol);
	pf_setup(S.pol, profiling, &S.set);
	__atomic_store_n(&shim_state, SHIM_ON, __ATOMIC_RELEASE);
	guard_leave(g);
}

/* ---- fork ---- */

/* Every module's atfork hook, in lock order: prepare takes the locks in
 * this order, parent and child release (and the child resets) in reverse.
 * stats comes after recycle so that its child hook, which zeroes the
 * counts, runs first and recycle's can count what the child inherited.
 * The first two take no lock: their prepare makes system calls (the
 * learner's cache trimmed to the child's line, the profile drained). */
static void (*const atfork_hooks[])(int) = {
	auto_atfork_trim, profile_atfork_drain, pf_atfork, auto_atfork, match_atfork, regions_atfork, worker_atfork, pool_atfork, carve_atfork, recycle_atfork, stats_atfork, profile_atfork,
	os_atfork,
};
#define NHOOKS (int)(sizeof atfork_hooks / sizeof atfork_hooks[0])

/* The forking thread's guard stays up from prepare until our parent or
 * child handler: the handlers other libraries registered before ours run in
 * between (glibc runs child and parent handlers in registration order,
 * prepare handlers in reverse), and if they allocate, map or start a thread
 * (ThreadSanitizer's child handler does) our wrappers must not wait for our
 * own locks. */
/* fork from a signal handler that interrupted the shim's own code on this
 * thread: this thread may hold any of our locks, so none is taken (waiting
 * for it would wait forever), and the child, whose tables may be half
 * updated, leaves them alone: the shim is off there. */
static TLS int fork_nested;
/* A thread of asynchronous cancellation type that forks: no cancellation
 * may act while prepare holds every lock of ours.  Not the guard's way
 * (type deferred, state disabled): a cancellation marked in the thread's
 * memory meanwhile would be copied into the child and act there, where
 * without us it never does.  SIGCANCEL is blocked instead: a cancellation
 * sent meanwhile waits in the parent's pending signals, which the child
 * does not inherit, and acts once the parent handler unblocks it. */
static TLS int fork_cancel;

static void fork_cancel_restore(void)
{
	if (fork_cancel) {
		fork_cancel = 0;
		glue_cancel_unblock();
	}
}

static void atfork_prepare(void)
{
	int i;
	fork_nested = shim_guard > 0;
	shim_guard++;
	if (fork_nested)
		return;
	if (unlikely(glue_async_cancel))
		fork_cancel = glue_cancel_block();
	S.fork_t0 = os_now_ns();
	for (i = 0; i < NHOOKS; i++)
		atfork_hooks[i](FORK_PREPARE);
}

static void atfork_parent(void)
{
	int i;
	for (i = NHOOKS - 1; i >= 0 && !fork_nested; i--)
		atfork_hooks[i](FORK_PARENT);
	fork_nested = 0;
	shim_guard--;
	fork_cancel_restore();
}

/* A child whose tables cannot be trusted (see above, and _Fork, which runs
 * no fork handlers): the shim passes everything through and writes no
 * report.  Only async-signal-safe work here. */
void shim_child_off(void)
{
	glue_atfork_child();
	pf_off();
	__atomic_store_n(&S.reported, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&shim_state, SHIM_PASS, __ATOMIC_RELEASE);
}

static void atfork_child(void)
{
	int i;
	LOCK_HELD_SET(-(1 << 20)); /* (lock.h) */
	if (fork_nested) {
		fork_nested = 0;
		shim_child_off();
		shim_guard--;
		LOCK_HELD_SET(0);
		return;
	}
	/* The child is a new process: it reports for itself, from now on.  Its
	 * mappings (and so the tracked regions and their charges) are the
	 * parent's, copied; it has no helper threads. */
	glue_atfork_child();
	for (i = NHOOKS - 1; i >= 0; i--)
		atfork_hooks[i](FORK_CHILD);
	LOCK_HELD_SET(0);
	shim_guard--;
	__atomic_store_n(&S.reported, 0, __ATOMIC_RELAXED);
	/* The child's fault counts start from zero at fork (the kernel resets
	 * them), and its clock from the prepare hook: no getrusage and no clock
	 * read here, so a fork-and-exec child costs what it would without us. */
	pinfo.pid = sys_getpid();
	pinfo.ppid = sys_getppid();
	pinfo.t0 = S.fork_t0;
	pinfo.f0.minor = pinfo.f0.major = 0;
	fork_cancel_restore(); /* (the mask as it was: nothing is pending in a child) */
}

/* ---- the report ---- */

/* The report could not be a file where the tool asked (permission, a
 * sandbox, a chroot): through the tool's socket instead, if there is one.
 * 1 if it went. */
static int deliver(const char *path, int json)
{
	size_t cap;
	char *text = os_socket_text(&cap);
	const char *name = strrchr(path, '/');
	long n = -1;
	int err = errno, sent;
	if (text)
		n = report_render(text, cap, json, &pinfo, S.have_policy ? &g_pol : NULL, S.may_wait);
	sent = n >= 0 && os_socket_send(name ? name + 1 : path, text, (size_t)n) == 0;
	errno = err;
	return sent;
}

static void report_to_file(void)
{
	static char path[PATH_MAX + 64];
	static struct path_walk walk;
	struct sbuf sb;
	size_t n;
	int fd, json;
	sb_init(&sb, path, sizeof path, -1);
	sb_template(&sb, report_dest, (uint64_t)sys_getpid(), pinfo.program);
	sb_cstr(&sb);
	if (sb.trunc || strlen(path) >= PATH_MAX) {
		if (!S.report_quiet)
			warn("cannot write the report: its path is too long ", at_most_path(), NULL, NULL);
		return;
	}
	n = strlen(path);
	json = n > 5 && !strcmp(path + n - 5, ".json");
	fd = os_open_report(path, &walk);
	if (fd < 0 && errno != EEXIST && deliver(path, json))
		return; /* (it could not be a file here: it went to the tool) */
	if (fd < 0) {
		if (!S.report_quiet)
			warn("cannot write the report to ", path, ": ",
			     errno == EEXIST ? "the file is there and is not a prefault report (left as it was)" :
			                       report_errno_text(errno));
		return;
	}
	if (report_write(fd, json, &pinfo, S.pol, S.may_wait) != 0 && !S.report_quiet)
		warn("the report is incomplete: ", path, ": ", report_errno_text(errno));
	sys_close(fd);
}

static void report_once(void)
{
	struct quiet q;
	struct guard g;
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) != SHIM_ON)
		return;
	/* A vfork child shares our memory and must not write our report. */
	if (sys_getpid() != pinfo.pid)
		return;
	if (__atomic_exchange_n(&S.reported, 1, __ATOMIC_ACQ_REL))
		return;
	if (!strcmp(report_dest, "none") && !profiling)
		return;
	/* Called with this thread inside the shim: exit or _exit from a signal
	 * handler that interrupted it.  A lock of ours may be held by the very
	 * code the handler interrupted, so the report waits for none. */
	S.may_wait = shim_guard == 0;
	g = guard_enter();
	if (!pinfo.exe[0])
		read_exe();
	/* A closed pipe or RLIMIT_FSIZE must not kill the program at exit. */
	os_quiet_begin(&q);
	if (profiling) /* first: its window ends before the shim's exit work */
		profile_finish(S.may_wait);
	if (!strcmp(report_dest, "none")) {
		;
	} else if (!strcmp(report_dest, "stderr")) {
		/* Only into the stderr the process started with: a program that
		 * closed it and opened a file in its place would find our report
		 * in its data.  (prefault run collects the report instead.) */
		if (os_stderr_same())
			report_write(2, 0, &pinfo, S.pol, S.may_wait);
	} else {
		report_to_file();
	}
	os_quiet_end(&q);
	guard_leave(g);
}

void shim_report(void)
{
	/* From a signal handler that interrupted the shim, the locks this
	 * thread may hold are not the report's: lock.h's count (a checking
	 * build) looks away while it runs, and counts again after it returns. */
	int inside = shim_guard != 0;
	if (inside)
		LOCK_HELD(-(1 << 20));
	report_once();
	if (inside)
		LOCK_HELD(1 << 20);
}

/* The program is about to install a seccomp filter: from then on any system
 * call it did not make itself may kill it.  The report is written now (what
 * came before the sandbox), the helpers leave, kept regions are given back,
 * and the shim passes everything through. */
void shim_sandboxed(void)
{
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) != SHIM_ON || sys_getpid() != pinfo.pid)
		return;
	shim_report();
	{
		struct guard g = guard_enter();
		glue_quiesce();
		recycle_flush();
		pf_off();
		guard_leave(g);
	}
	__atomic_store_n(&shim_state, SHIM_PASS, __ATOMIC_RELEASE);
}

/* Threads the policy may start later from a wrapper get their stacks now,
 * outside any allocator's lock (glue_warm). */
static void warm_helpers(void)
{
	unsigned threads = 0;
	int i, bg = 0;
	for (i = 0; S.have_policy && i < g_pol.nrules; i++) {
		bg |= (g_pol.rules[i].actions & A_BACKGROUND) != 0;
		if (g_pol.rules[i].threads > threads)
			threads = g_pol.rules[i].threads;
	}
	if (bg || auto_on)
		worker_warm();
	if (auto_on)
		auto_warm();
	pool_warm(threads);
	glue_warm();
	glue_spawn_allow();
	worker_kick(); /* work queued before the constructor */
	auto_kick();   /* mappings watched before it */
}

__attribute__((constructor)) static void shim_ctor(void)
{
	struct guard g;
	shim_init();
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) != SHIM_ON)
		return;
	g = guard_enter();
	stats_thread_init();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	warm_helpers();
	if (profiling) { /* the main thread's fault event, and the reader */
		profile_thread_start();
		profile_tick();
	}
	guard_leave(g);
	stack_main();
}

__attribute__((destructor)) static void shim_dtor(void)
{
	shim_report();
	/* Give back what recycling kept (it is nobody's now); only once the
	 * report, which shows the cache's high-water mark, is out.  Not from
	 * exit() in a signal handler that interrupted the shim: its lock may be
	 * held below us, and the process unmaps it all anyway. */
	if (__atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) == SHIM_ON && sys_getpid() == pinfo.pid && !shim_guard) {
		struct guard g = guard_enter();
		recycle_flush();
		guard_leave(g);
	}
}
