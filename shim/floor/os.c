/* os.c: see os.h.  Every system call goes through glue.h's raw, counted
 * calls: none is a cancellation point, and each is in the cost ledger. */
#include "os.h"
#include "fork.h"
#include "glue.h"
#include "path_walk.h"
#include "report_file.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04 /* (linux/openat2.h, Linux 5.6) */
#endif

uint64_t os_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t os_coarse_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return os_now_ns();
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void faults_of(int who, struct faults *f)
{
	struct rusage ru;
	if (sys_getrusage(who, &ru) != 0) {
		f->minor = f->major = 0;
		return;
	}
	f->minor = (uint64_t)ru.ru_minflt;
	f->major = (uint64_t)ru.ru_majflt;
}

void os_faults_self(struct faults *f) { faults_of(RUSAGE_SELF, f); }
void os_faults_thread(struct faults *f) { faults_of(RUSAGE_THREAD, f); }

uint64_t os_peak_rss(void)
{
	struct rusage ru;
	return sys_getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss << 10 : 0;
}

void meter_start(struct meter *m, int faults)
{
	m->faults = faults;
	m->t0 = os_now_ns();
	if (faults)
		os_faults_thread(&m->f0);
}

void meter_read(const struct meter *m, struct faults *f, uint64_t *ns)
{
	struct faults now;
	f->minor = f->major = 0;
	if (m->faults) {
		os_faults_thread(&now);
		f->minor = now.minor - m->f0.minor;
		f->major = now.major - m->f0.major;
	}
	if (ns)
		*ns = os_now_ns() - m->t0;
}

/* ---- transparent huge pages: which sizes a fault may give ---- */

#define THP_DIR "/sys/kernel/mm/transparent_hugepage/"
/* The module's state, in one place (its tables stand apart). */
static struct {
	int thp_state; /* 0 not read, 1 reading, 2 read */
	size_t thp_least[2]; /* least large page size: [0] unadvised, [1] advised (0: none) */
	size_t thp_pmd; /* hpage_pmd_size, if a page of that size comes with MADV_HUGEPAGE (else 0) */
	int cg_levels;
	int cg_state; /* 0: not looked for, 1: being found, 2: found */
	struct fdid stderr_id; /* fd 2 as the process started with it */
	int sock_fd;           /* the tool's socket, or -1 */
	char *sock_text;       /* os_socket_text's buffer */
	struct fdid sock_id;
} S = {
	.sock_fd = -1,
};

/* "always [madvise] never" -> 2, 1, 0; "inherit" -> -1; unknown -> 2 (the safe side). */
static int thp_mode(const char *path)
{
	char buf[64];
	if (os_read_file(path, buf, sizeof buf) <= 0)
		return -2; /* absent */
	if (strstr(buf, "[never]"))
		return 0;
	if (strstr(buf, "[madvise]"))
		return 1;
	if (strstr(buf, "[inherit]"))
		return -1;
	return 2;
}

static void thp_read(void)
{
	char path[96], pmd_text[32];
	size_t pmd = (size_t)2 << 20, size, known = 0;
	int top = thp_mode(THP_DIR "enabled");
	if (top == -2 || sys_n(SC_prctl, PR_GET_THP_DISABLE, 0, 0, 0, 0, 0) == 1)
		return; /* no THP here, or off for this process */
	if (os_read_file(THP_DIR "hpage_pmd_size", pmd_text, sizeof pmd_text) > 0)
		pmd = known = (size_t)strtoull(pmd_text, NULL, 10);
	if (known >= page_size && !(known & (known - 1)))
		__atomic_store_n(&hpage_bytes, known, __ATOMIC_RELAXED);
	/* Every size from two base pages to the PMD size, as mTHP names them;
	 * a kernel without per-size controls has only the PMD size, under the
	 * top-level mode. */
	for (size = page_size * 2; size && size <= pmd; size *= 2) {
		int mode, i;
		char *p = path;
		size_t kb = size >> 10, d;
		memcpy(p, THP_DIR "hugepages-", sizeof THP_DIR "hugepages-" - 1);
		p += sizeof THP_DIR "hugepages-" - 1;
		for (d = 1; kb / d >= 10; d *= 10)
			;
		for (; d; d /= 10)
			*p++ = (char)('0' + kb / d % 10);
		memcpy(p, "kB/enabled", sizeof "kB/enabled");
		mode = thp_mode(path);
		if (mode == -2)
			mode = size == pmd ? top : 0;
		if (mode == -1)
			mode = top;
		if (size == known && mode >= 1)
			S.thp_pmd = known;
		for (i = 0; i < 2; i++)
			if (mode == 2 || (mode == 1 && i == 1))
				if (!S.thp_least[i] || size < S.thp_least[i])
					S.thp_least[i] = size;
	}
}

int os_thp_mode(void)
{
	int m = thp_mode(THP_DIR "enabled");
	if (m <= 0 || sys_n(SC_prctl, PR_GET_THP_DISABLE, 0, 0, 0, 0, 0) == 1)
		return THP_NONE;
	return m == 1 ? THP_MADVISE : THP_ALWAYS;
}

/* Read the sizes once; 0 while another thread is still reading them (never
 * wait for it here: it may be stopped, or be the one a signal interrupted). */
static int thp_known(void)
{
	int st = __atomic_load_n(&S.thp_state, __ATOMIC_ACQUIRE), expect = 0;
	if (st == 2)
		return 1;
	if (st == 1 || !__atomic_compare_exchange_n(&S.thp_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	thp_read();
	__atomic_store_n(&S.thp_state, 2, __ATOMIC_RELEASE);
	return 1;
}

int os_large_pages_possible(size_t len, int advised)
{
	size_t least;
	if (!thp_known())
		return 1; /* (until it is read, say yes) */
	least = S.thp_least[advised ? 1 : 0];
	return least && len >= least;
}

size_t os_thp_pmd_size(void)
{
	return thp_known() ? S.thp_pmd : (size_t)-1;
}

/* ---- /proc/self/smaps: what each mapping holds ---- */

/* "Key:   123 kB" -> bytes. */
static uint64_t smaps_kb(const char *v)
{
	uint64_t n = 0;
	while (*v == ' ' || *v == '\t')
		v++;
	for (; *v >= '0' && *v <= '9'; v++)
		n = n * 10 + (uint64_t)(*v - '0');
	return n << 10;
}

static int is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* One line of smaps into *v; a mapping's header line hands the one before
 * it to fn first. */
static void smaps_line(const char *l, struct os_vma *v, int *open, void (*fn)(void *, const struct os_vma *), void *arg)
{
	if (is_hex(l[0])) {
		char *end;
		if (*open)
			fn(arg, v);
		memset(v, 0, sizeof *v);
		v->start = (uintptr_t)strtoull(l, &end, 16);
		v->end = *end == '-' ? (uintptr_t)strtoull(end + 1, NULL, 16) : v->start;
		*open = 1;
	} else if (!strncmp(l, "Rss:", 4)) {
		v->rss = smaps_kb(l + 4);
	} else if (!strncmp(l, "AnonHugePages:", 14)) {
		v->anon_huge = smaps_kb(l + 14);
	} else if (!strncmp(l, "VmFlags:", 8)) {
		v->advised = strstr(l, " hg") != NULL;
	}
}

/* One read, again after a signal: what it gave (0 at the end), or -1. */
static long read_again(int fd, char *buf, size_t n)
{
	long r;
	while ((r = sys_read(fd, buf, n)) < 0 && errno == EINTR)
		;
	return r;
}

int os_smaps_walk(void (*fn)(void *, const struct os_vma *), void *arg)
{
	char buf[4096 + 1]; /* (on the stack: see os.h) */
	struct os_vma v;
	size_t have = 0;
	int open = 0, fd = sys_open("/proc/self/smaps", O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
	if (fd < 0)
		return -1;
	for (;;) {
		long n = read_again(fd, buf + have, sizeof buf - 1 - have);
		char *l, *nl;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		for (l = buf; (nl = strchr(l, '\n')); l = nl + 1) {
			*nl = '\0';
			smaps_line(l, &v, &open, fn, arg);
		}
		have -= (size_t)(l - buf);
		memmove(buf, l, have);
		if (have == sizeof buf - 1) /* a line longer than the buffer: not one we read */
			have = 0;
	}
	sys_close(fd);
	if (open)
		fn(arg, &v);
	return 0;
}

/* From /proc's neighbour in sysfs, as glibc's sysconf reads it ("0-3,6"),
 * but through the counted calls. */
int os_online_cpus(void)
{
	char buf[256];
	const char *p = buf;
	long n = 0;
	if (os_read_file("/sys/devices/system/cpu/online", buf, sizeof buf) <= 0)
		return 1;
	while (*p >= '0' && *p <= '9') {
		long lo = strtol(p, (char **)&p, 10), hi = lo;
		if (*p == '-')
			hi = strtol(p + 1, (char **)&p, 10);
		if (hi >= lo)
			n += hi - lo + 1;
		if (*p != ',')
			break;
		p++;
	}
	return n > 0 ? (int)n : 1;
}

/* To the end, or (once) what the first read gives: a one-line /proc file
 * is given whole by its first read, and the end's read is a system call
 * more (os_rss_now). */
static long read_fd(int fd, char *buf, size_t cap, int once)
{
	size_t len = 0;
	while (len + 1 < cap) {
		long n = sys_read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += (size_t)n;
		if (once)
			break;
	}
	buf[len] = '\0';
	return (long)len;
}

long os_read_fd(int fd, char *buf, size_t cap) { return read_fd(fd, buf, cap, 0); }

static long read_file(const char *path, char *buf, size_t cap, int once)
{
	int fd = sys_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0), e;
	long n;
	if (fd < 0)
		return -1;
	n = read_fd(fd, buf, cap, once);
	e = errno;
	sys_close(fd);
	errno = e;
	return n;
}

long os_read_file(const char *path, char *buf, size_t cap) { return read_file(path, buf, cap, 0); }

static uint64_t parse_u64(const char *s)
{
	uint64_t v = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	return v;
}

uint64_t os_rss_now(void)
{
	/* (one read: the soft guard reads it every 1 to 10 ms, 3 system
	 * calls a look, not 4) */
	char buf[128];
	const char *p = buf;
	if (read_file("/proc/self/statm", buf, sizeof buf, 1) <= 0)
		return 0;
	while (*p && *p != ' ')
		p++;
	return parse_u64(p) * page_size;
}

uint64_t os_mem_available(void)
{
	/* MemTotal, MemFree, MemAvailable are the first three lines: a small
	 * read keeps this cheap and light on the caller's stack. */
	char buf[256];
	const char *p;
	if (os_read_file("/proc/meminfo", buf, sizeof buf) < 0)
		return 0;
	p = strstr(buf, "MemAvailable:");
	return p ? parse_u64(p + 13) * 1024 : 0;
}

/* The memory cgroup's limit and usage files, for this cgroup and each one
 * above it (a parent's limit binds too), found once.  The file texts are
 * read into static buffers, not onto the caller's stack: the first budget
 * question may come from a thread with a 16 KiB stack. */
#define CG_LEVELS 8
static char cg_limit[CG_LEVELS][300], cg_usage[CG_LEVELS][300];
static char cg_text[64 * 1024], cg_mnt[256], cg_rel[1024];

/* The mount point of the memory controller: cgroup2, or cgroup v1 with the
 * "memory" option.  From /proc/self/mountinfo. */
static int cg_mount(int v2, char *out, size_t cap)
{
	char *line, *save = NULL;
	if (os_read_file("/proc/self/mountinfo", cg_text, sizeof cg_text) < 0)
		return -1;
	for (line = strtok_r(cg_text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* id parent maj:min root mountpoint opts ... - fstype source superopts */
		char *f[5], *dash = strstr(line, " - "), *p = line;
		int i;
		if (!dash)
			continue;
		for (i = 0; i < 5; i++) {
			f[i] = p;
			p = strchr(p, ' ');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (i < 5)
			continue;
		if (v2 ? !strncmp(dash + 3, "cgroup2 ", 8)
		       : (!strncmp(dash + 3, "cgroup ", 7) && (strstr(dash, ",memory") || strstr(dash, " memory")))) {
			size_t n = strlen(f[4]);
			if (n >= cap)
				return -1;
			memcpy(out, f[4], n + 1);
			return 0;
		}
	}
	return -1;
}

static void cgroup_find(void);

/* A thread arriving while another finds the cgroup waits for it, a bounded
 * time (cgroup_find is a dozen small reads): answering "unknown" at once
 * made the first mappings of a program whose threads start together go
 * unprefaulted, reported as a spent budget.  Never from the finding thread
 * itself (a signal handler that interrupted it), and never long: the finder
 * may be stopped, cancelled, or not exist (a fork child, which resets). */
static TLS int cg_finding;
#define CG_WAIT_NS (20u * 1000 * 1000)

int os_cgroup_init(void)
{
	int expect = 0;
	uint64_t until;
	if (__atomic_load_n(&S.cg_state, __ATOMIC_ACQUIRE) == 2)
		return 1;
	if (!__atomic_compare_exchange_n(&S.cg_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (cg_finding)
			return 0;
		until = os_coarse_ns() + CG_WAIT_NS;
		while (__atomic_load_n(&S.cg_state, __ATOMIC_ACQUIRE) == 1 && os_coarse_ns() < until)
			sys_sched_yield();
		return __atomic_load_n(&S.cg_state, __ATOMIC_ACQUIRE) == 2;
	}
	cg_finding = 1;
	cgroup_find();
	cg_finding = 0;
	__atomic_store_n(&S.cg_state, 2, __ATOMIC_RELEASE);
	return 1;
}

void os_atfork(int who)
{
	if (who != FORK_CHILD)
		return;
	if (S.cg_state == 1)
		S.cg_state = 0;
	if (S.thp_state == 1)
		S.thp_state = 0;
}

static void cgroup_find(void)
{
	char *line, *save = NULL;
	int v2 = 0, found = 0;
	S.cg_levels = 0;
	if (os_read_file("/proc/self/cgroup", cg_text, sizeof cg_text) < 0)
		return;
	for (line = strtok_r(cg_text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		if (!strcmp(c1 + 1, "memory") || (!strncmp(c1 + 1, "memory,", 7)) || strstr(c1 + 1, ",memory")) {
			v2 = 0; /* v1 memory controller: it is the one that limits */
			found = 1;
		} else if (!found && !strcmp(line, "0") && c1[1] == '\0') {
			v2 = 1;
		} else {
			continue;
		}
		if (strlen(c2 + 1) >= sizeof cg_rel)
			return;
		strcpy(cg_rel, c2 + 1);
		if (found)
			break;
	}
	if ((!found && !v2) || cg_mount(v2, cg_mnt, sizeof cg_mnt) < 0)
		return;
	for (;;) {
		size_t n = strlen(cg_rel);
		if (S.cg_levels < CG_LEVELS && strlen(cg_mnt) + n + 32 < sizeof cg_limit[0]) {
			char *l = cg_limit[S.cg_levels], *u = cg_usage[S.cg_levels];
			strcpy(l, cg_mnt);
			strcat(l, n > 1 ? cg_rel : "");
			strcpy(u, l);
			strcat(l, v2 ? "/memory.max" : "/memory.limit_in_bytes");
			strcat(u, v2 ? "/memory.current" : "/memory.usage_in_bytes");
			S.cg_levels++;
		}
		if (n <= 1)
			break;
		line = strrchr(cg_rel, '/');
		if (!line)
			break;
		if (line == cg_rel)
			cg_rel[1] = '\0';
		else
			*line = '\0';
	}
}

uint64_t os_cgroup_room(void)
{
	uint64_t best = UINT64_MAX;
	int i;
	for (i = 0; i < S.cg_levels; i++) {
		char val[32];
		uint64_t max, cur;
		if (os_read_file(cg_limit[i], val, sizeof val) <= 0 || val[0] < '0' || val[0] > '9')
			continue; /* "max": no limit here */
		max = parse_u64(val);
		if (max >= (1ull << 62))
			continue; /* v1's "no limit" is a huge number */
		cur = os_read_file(cg_usage[i], val, sizeof val) > 0 ? parse_u64(val) : 0;
		if (max <= cur)
			return 0;
		if (max - cur < best)
			best = max - cur;
	}
	return best;
}

/* May the open file be overwritten as a report?  (report_file.h says
 * which files may.)  0, or -1 with errno (EPERM: not ours; EEXIST: not a
 * report). */
static int replaceable(int fd, struct stat *st)
{
	struct statfs sf;
	char head[12];
	long n = 0;
	int v;
	if (sys_fstat(fd, st) != 0 || sys_fstatfs(fd, &sf) != 0) {
		errno = EPERM;
		return -1;
	}
	if (S_ISREG(st->st_mode) && st->st_size != 0)
		n = sys_pread(fd, head, sizeof head, 0);
	v = report_verdict(st, (unsigned long)sf.f_type, (unsigned long)sys_geteuid(), head, n);
	if (v == REPORT_OK)
		return 0;
	errno = v == REPORT_NOT_A_REPORT ? EEXIST : EPERM;
	return -1;
}

int os_open_report(const char *path, struct path_walk *w)
{
	const int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat st;
	const char *last;
	int dfd, fd, e;
	/* A path with no link on it (the usual one) in one call and one
	 * descriptor, as before the walk: a program that used all its files
	 * but one still gets its report.  A link anywhere on it (ELOOP), a
	 * kernel before 5.6 (ENOSYS) or a filter's refusal takes the walk. */
	fd = sys_openat2(AT_FDCWD, path, flags, 0600, RESOLVE_NO_SYMLINKS);
	if (fd < 0 && (errno == ELOOP || errno == ENOSYS || errno == EPERM || errno == EINVAL)) {
		dfd = path_walk_dir(&glue_io, (unsigned long)sys_geteuid(), path, &last, w);
		if (dfd < 0)
			return -1;
		fd = sys_openat(dfd, last, flags, 0600);
		e = errno;
		sys_close(dfd);
		errno = e;
	}
	if (fd < 0)
		return -1;
	if (replaceable(fd, &st) != 0) {
		e = errno;
		sys_close(fd);
		errno = e;
		return -1;
	}
	/* (A file we just made is empty: ftruncate costs a journal entry.) */
	if (st.st_size != 0 && sys_ftruncate(fd, 0) != 0) {
		e = errno;
		sys_close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* (tmp is in path's directory: path with a suffix, as its callers make it) */
int os_replace_report(const char *tmp, const char *path, struct path_walk *w)
{
	struct stat st;
	const char *last, *tmp_last = strrchr(tmp, '/');
	int dfd = path_walk_dir(&glue_io, (unsigned long)sys_geteuid(), path, &last, w), fd, e;
	tmp_last = tmp_last ? tmp_last + 1 : tmp;
	if (dfd < 0) {
		e = errno;
		sys_unlink(tmp);
		errno = e;
		return -1;
	}
	fd = sys_openat(dfd, last, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	if (fd >= 0) {
		int ok = replaceable(fd, &st) == 0;
		e = errno;
		sys_close(fd);
		if (!ok)
			goto refuse;
	} else if (errno != ENOENT) { /* a symlink (ELOOP), or unreadable: left as it is */
		e = errno == ELOOP ? EPERM : errno;
		goto refuse;
	}
	if (sys_renameat(dfd, tmp_last, dfd, last) == 0) {
		sys_close(dfd);
		return 0;
	}
	e = errno;
refuse:
	sys_unlinkat(dfd, tmp_last);
	sys_close(dfd);
	errno = e;
	return -1;
}

void os_fd_identity(int fd, struct fdid *id)
{
	struct stat st;
	id->ok = sys_fstat(fd, &st) == 0;
	id->dev = id->ok ? st.st_dev : 0;
	id->ino = id->ok ? st.st_ino : 0;
}

int os_fd_same(int fd, const struct fdid *id)
{
	struct stat st;
	return id->ok && sys_fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}


void os_stderr_remember(void) { os_fd_identity(2, &S.stderr_id); }

#define SOCK_TEXT (1u << 17) /* os_socket_text's buffer */

void os_socket_remember(const char *fd_text)
{
	struct stat st;
	long fd = 0;
	S.sock_fd = -1;
	if (!fd_text || !*fd_text)
		return;
	for (; *fd_text >= '0' && *fd_text <= '9' && fd < 1 << 20; fd_text++)
		fd = fd * 10 + (*fd_text - '0');
	if (*fd_text || fd < 3 || sys_fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return;
	S.sock_fd = (int)fd;
	os_fd_identity((int)fd, &S.sock_id);
	S.sock_text = glue_table(SOCK_TEXT, 1);
}

char *os_socket_text(size_t *cap)
{
	*cap = SOCK_TEXT;
	return S.sock_text;
}

int os_socket_send(const char *name, const char *text, size_t len)
{
	size_t n = strlen(name);
	char head[NAME_MAX + 2];
	struct iovec iov[2];
	struct msghdr mh;
	/* Still the tool's socket?  A program that closed its descriptors and
	 * opened another on the number gets nothing of ours. */
	if (S.sock_fd < 0 || !os_fd_same(S.sock_fd, &S.sock_id) || n > NAME_MAX || n + 1 + len > 1 << 18) {
		errno = ENOTCONN;
		return -1;
	}
	/* (gathered by the kernel into one message: no copy of the text) */
	memcpy(head, name, n);
	head[n] = '\n';
	iov[0].iov_base = head;
	iov[0].iov_len = n + 1;
	iov[1].iov_base = (void *)text;
	iov[1].iov_len = len;
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	return sys_n(SC_sendmsg, S.sock_fd, (long)&mh, MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0, 0) < 0 ? -1 : 0;
}
int os_stderr_same(void) { return os_fd_same(2, &S.stderr_id); }

void os_warn(const char *line)
{
	struct quiet q;
	if (!os_stderr_same())
		return;
	os_quiet_begin(&q);
	os_write_all(2, line, strlen(line));
	os_write_all(2, "\n", 1);
	os_quiet_end(&q);
}

void os_quiet_begin(struct quiet *q)
{
	sigset_t hold, pending;
	sigemptyset(&hold);
	sigemptyset(&pending);
	sigaddset(&hold, SIGPIPE);
	sigaddset(&hold, SIGXFSZ);
	sys_sigprocmask(SIG_BLOCK, &hold, &q->old);
	sys_sigpending(&pending);
	q->pipe_was_pending = sigismember(&pending, SIGPIPE) == 1;
	q->fsz_was_pending = sigismember(&pending, SIGXFSZ) == 1;
}

void os_quiet_end(struct quiet *q)
{
	sigset_t pending, one;
	struct timespec zero = { 0, 0 };
	int sig;
	sigemptyset(&pending);
	sys_sigpending(&pending);
	/* Discard only what our write raised; a signal the program had pending
	 * already stays pending for it. */
	for (sig = 0; sig < 2; sig++) {
		int s = sig ? SIGXFSZ : SIGPIPE, was = sig ? q->fsz_was_pending : q->pipe_was_pending;
		if (!was && sigismember(&pending, s) == 1) {
			sigemptyset(&one);
			sigaddset(&one, s);
			while (sys_sigtimedwait(&one, &zero) < 0 && errno == EINTR)
				;
		}
	}
	sys_sigprocmask(SIG_SETMASK, &q->old, NULL);
}

int os_write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		long w = sys_write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

size_t os_resident_pages(uintptr_t s, uintptr_t e, size_t page)
{
	unsigned char vec[256];
	size_t n = 0, i;
	s &= ~(uintptr_t)(page - 1);
	while (s < e) {
		size_t pages = (e - s + page - 1) / page;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (sys_mincore((void *)s, pages * page, vec) != 0)
			return n;
		for (i = 0; i < pages; i++)
			n += vec[i] & 1;
		s += pages * page;
	}
	return n;
}

/* The shim's own object, from the linker's symbol for its ELF header: no
 * call into the loader (dl_iterate_phdr takes its lock, which a wrapper
 * called from inside dlopen would wait on forever). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

uint64_t os_image_resident(size_t page)
{
	const char *base = (const char *)&__ehdr_start;
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[16];
	uintptr_t bias = 0, tab[16][2];
	uint64_t n = 0;
	int i, k;
	/* (copied out, not read in place: the header and the table after it
	 * are one object to the loader, two to a bounds checker) */
	memcpy(&eh, base, sizeof eh);
	k = eh.e_phnum < 16 ? eh.e_phnum : 16;
	for (i = 0; i < k; i++)
		memcpy(&ph[i], base + eh.e_phoff + (size_t)i * eh.e_phentsize, sizeof ph[i]);
	/* (the header is the first byte of the segment that maps offset 0) */
	for (i = 0; i < k; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
			bias = (uintptr_t)base - ph[i].p_vaddr;
	for (i = 0; i < k; i++)
		if (ph[i].p_type == PT_LOAD)
			n += os_resident_pages(bias + ph[i].p_vaddr, bias + ph[i].p_vaddr + ph[i].p_memsz, page);
	/* (and the tables it mapped apart from its object: glue_table) */
	for (i = 0, k = glue_tables(tab, 16); i < k; i++)
		n += os_resident_pages(tab[i][0], tab[i][1], page);
	return n * page;
}

int os_secure(void)
{
	return getauxval(AT_SECURE) != 0;
}

/* the number after "\nkey:" in text, or -1 */
static long status_field(const char *text, const char *key)
{
	size_t k = strlen(key);
	const char *p;
	long v;
	for (p = text; (p = strchr(p, '\n')); p++) {
		if (strncmp(p + 1, key, k) || p[1 + k] != ':')
			continue;
		for (p += k + 2; *p == ' ' || *p == '\t'; p++)
			;
		if (*p < '0' || *p > '9')
			return -1;
		for (v = 0; *p >= '0' && *p <= '9' && v < 1L << 40; p++)
			v = v * 10 + (*p - '0');
		return *p == '\n' ? v : -1;
	}
	return -1;
}

/* Read in windows, each with the end of the one before (the lines looked
 * for are short; a Groups line of thousands of groups comes before them:
 * helper-38's 400 groups pushed them past 4 KiB). */
int os_seccomp(long *filters)
{
	char buf[2048];
	const size_t keep = 64;
	size_t have = 1;
	long mode = -1, n;
	int fd = sys_open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY, 0), e = errno;
	*filters = -1;
	if (fd < 0)
		return -1;
	buf[0] = '\n';
	for (;;) {
		n = read_again(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		if (mode < 0)
			mode = status_field(buf, "Seccomp");
		if (*filters < 0)
			*filters = status_field(buf, "Seccomp_filters");
		if (mode >= 0 && *filters >= 0)
			break;
		if (have > keep) { /* (a line cut at the window's end is read whole next time) */
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	sys_close(fd);
	errno = e;
	return (int)mode;
}
