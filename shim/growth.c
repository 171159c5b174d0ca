/* growth.c: the program's page faults as a signal to the learner's watcher
 * (the contract is growth.h).
 *
 * A software page-fault event, user space only (it opens unprivileged at
 * perf_event_paranoid 2), on the thread that opens it and, inherited, on
 * the threads started after (inherit_thread: not a fork's child, whose
 * faults are its own process's).  No ring buffer (the kernel refuses one on
 * an inherited per-task event): each overflow's only effect is the signal
 * F_SETSIG names, sent to the owner F_SETOWN_EX names, the watcher's
 * thread, which has every signal blocked and takes it in glue_wait_sig.
 * An inherited event's overflow signals through its parent's file.
 *
 * Opened at the first arm, not at start-up: a program that never keeps past
 * the extra (most) never has the descriptor.  On the main thread, from the
 * watcher: the main thread and the threads started after are heard, threads
 * already running are not (the guard still looks every 10 ms for them).
 * The descriptor is the program's table too: moved high and close-on-exec,
 * and every control first asks PERF_EVENT_IOC_ID: a program that closed it
 * (closefrom) and got the number back for a file of its own keeps it
 * untouched.  Nothing here runs on the program's calls, all on the
 * watcher's thread.  A seccomp filter in place: no event (a filter may kill
 * a process for perf_event_open; one the program installs later sends the
 * watcher away first, init.c).
 */
#include "growth.h"
#include "glue.h"
#include "os.h"
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/* The signal: one glibc leaves to programs, high in the range.  A program
 * that uses it and takes it with sigwait gets it back (glue_wait_sig), and
 * the guard polls from then on. */
#define GROWTH_SIG (SIGRTMAX - 2)

static struct {
	int fd;         /* -1: none */
	uint64_t id;    /* PERF_EVENT_IOC_ID: still ours? */
	int armed;      /* the watcher is its owner, and it counts */
	int refused;    /* the program's signal: never armed again */
	int allowed;    /* growth_init: soft, and no test's PREFAULT_TEST_NO_PERF */
	int tried;      /* opening was tried (once a process) */
} G = { -1, 0, 0, 0, 0, 0 };

static int no_filter(void)
{
	char buf[4096], *p;
	long n = os_read_file("/proc/self/status", buf, sizeof buf - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nSeccomp:");
	if (!p) /* (a kernel with no seccomp, if the file was read whole) */
		return n < (long)sizeof buf - 1;
	p += 9;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p == '0';
}

static int ours(void)
{
	uint64_t now = 0;
	return G.fd >= 0 && sys_n(SC_ioctl, G.fd, (long)PERF_EVENT_IOC_ID, (long)&now, 0, 0, 0) == 0 && now == G.id;
}

/* Above the numbers a program expects for its own files. */
static int fd_high(int fd)
{
	struct rlimit rl;
	long lo = 1000, nfd;
	if (sys_getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)(rl.rlim_cur * 3 / 4) < lo)
		lo = (long)(rl.rlim_cur * 3 / 4);
	if (fd >= lo)
		return fd;
	nfd = sys_n(SC_fcntl, fd, F_DUPFD_CLOEXEC, lo, 0, 0, 0);
	if (nfd < 0)
		return fd;
	sys_close(fd);
	return (int)nfd;
}

static int open_event(void)
{
	struct perf_event_attr a;
	long fd;
	uint64_t id = 0;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = GROWTH_PERIOD / page_size ? GROWTH_PERIOD / page_size : 1;
	a.wakeup_events = 1;
	a.disabled = 1;
	a.inherit = 1;
	a.inherit_thread = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	/* (the main thread's id is the process's) */
	fd = sys_n(SC_perf_event_open, (long)&a, sys_getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	fd = fd_high((int)fd);
	if (sys_n(SC_ioctl, fd, (long)PERF_EVENT_IOC_ID, (long)&id, 0, 0, 0) != 0) {
		sys_close((int)fd);
		return -1;
	}
	G.fd = (int)fd;
	G.id = id;
	return 0;
}

void growth_init(int allowed) { G.allowed = allowed; }

int growth_arm(void)
{
	struct f_owner_ex o;
	if (G.armed)
		return 0;
	if (G.refused || !G.allowed)
		return -1;
	if (G.fd < 0) {
		if (G.tried)
			return -1;
		G.tried = 1;
		if (!no_filter() || open_event() != 0)
			return -1;
	}
	if (!ours()) {
		G.fd = -1;
		return -1;
	}
	o.type = F_OWNER_TID;
	o.pid = (pid_t)sys_n(SC_gettid, 0, 0, 0, 0, 0, 0);
	if (sys_n(SC_fcntl, G.fd, F_SETOWN_EX, (long)&o, 0, 0, 0) != 0 ||
	    sys_n(SC_fcntl, G.fd, F_SETSIG, GROWTH_SIG, 0, 0, 0) != 0 ||
	    sys_n(SC_fcntl, G.fd, F_SETFL, O_ASYNC, 0, 0, 0) != 0 ||
	    sys_n(SC_ioctl, G.fd, (long)PERF_EVENT_IOC_ENABLE, 0, 0, 0, 0) != 0) {
		growth_disarm();
		return -1;
	}
	G.armed = 1;
	return 0;
}

int growth_armed(void) { return G.armed; }

int growth_wait(uint32_t *w, uint32_t seen, uint64_t timeout_ns)
{
	int r = glue_wait_sig(w, seen, timeout_ns, GROWTH_SIG, G.fd);
	if (r < 0) {
		G.refused = 1;
		growth_disarm();
	}
	return r;
}

void growth_disarm(void)
{
	struct f_owner_ex o = { F_OWNER_TID, 0 };
	G.armed = 0;
	if (!ours())
		return;
	/* Disabled first (its inherited events with it), then nobody's: no
	 * signal reaches the thread id once the watcher has left. */
	sys_n(SC_ioctl, G.fd, (long)PERF_EVENT_IOC_DISABLE, 0, 0, 0, 0);
	sys_n(SC_fcntl, G.fd, F_SETOWN_EX, (long)&o, 0, 0, 0);
}

void growth_atfork_child(void)
{
	/* (the parent's event: closed here, never controlled; the parent's
	 * watcher owns it) */
	if (G.fd >= 0 && ours())
		sys_close(G.fd);
	G.fd = -1;
	G.armed = 0;
	G.tried = 0; /* (its own, at its first arm) */
}
