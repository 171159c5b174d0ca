/* os.c: see os.h.  Calls only libc, and glue.h's raw mincore (the shim
 * wraps mincore for the program). */
#include "os.h"
#include "glue.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

uint64_t os_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void faults_of(int who, struct faults *f)
{
	struct rusage ru;
	if (getrusage(who, &ru) != 0) {
		f->minor = f->major = 0;
		return;
	}
	f->minor = (uint64_t)ru.ru_minflt;
	f->major = (uint64_t)ru.ru_majflt;
}

void os_faults_self(struct faults *f) { faults_of(RUSAGE_SELF, f); }
void os_faults_thread(struct faults *f) { faults_of(RUSAGE_THREAD, f); }

void meter_start(struct meter *m)
{
	m->t0 = os_now_ns();
	os_faults_thread(&m->f0);
}

void meter_read(const struct meter *m, struct faults *f, uint64_t *ns)
{
	struct faults now;
	os_faults_thread(&now);
	f->minor = now.minor - m->f0.minor;
	f->major = now.major - m->f0.major;
	if (ns)
		*ns = os_now_ns() - m->t0;
}

int os_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

long os_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len = 0;
	if (fd < 0)
		return -1;
	while (len + 1 < cap) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return (long)len;
}

static uint64_t parse_u64(const char *s)
{
	uint64_t v = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	return v;
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
static int cg_levels, cg_once;
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

void os_cgroup_init(void)
{
	char *line, *save = NULL;
	int v2 = 0, found = 0;
	if (__atomic_exchange_n(&cg_once, 1, __ATOMIC_ACQ_REL))
		return;
	cg_levels = 0;
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
		if (cg_levels < CG_LEVELS && strlen(cg_mnt) + n + 32 < sizeof cg_limit[0]) {
			char *l = cg_limit[cg_levels], *u = cg_usage[cg_levels];
			strcpy(l, cg_mnt);
			strcat(l, n > 1 ? cg_rel : "");
			strcpy(u, l);
			strcat(l, v2 ? "/memory.max" : "/memory.limit_in_bytes");
			strcat(u, v2 ? "/memory.current" : "/memory.usage_in_bytes");
			cg_levels++;
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
	for (i = 0; i < cg_levels; i++) {
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

/* Kernel file systems whose "files" are knobs, not storage: writing a
 * report into one would set something (a hostname, a sysctl). */
static int pseudo_fs(long type)
{
	static const unsigned long kinds[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,
		TRACEFS_MAGIC, SECURITYFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, BPF_FS_MAGIC, PSTOREFS_MAGIC,
		EFIVARFS_MAGIC, DEVPTS_SUPER_MAGIC, BINFMTFS_MAGIC, NSFS_MAGIC, 0x62656570 /* configfs */,
		0x65735543 /* fusectl */, 0x19800202 /* mqueue */,
	};
	size_t i;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if ((unsigned long)type == kinds[i])
			return 1;
	return 0;
}

/* Does the open file start as a prefault report or profile does ("prefault:
 * " text, {"prefault": JSON, "prefault-profile" profile)? */
static int is_ours(int fd)
{
	char head[12];
	ssize_t n = pread(fd, head, sizeof head, 0);
	return (n >= 8 && !memcmp(head, "prefault", 8)) || (n == (ssize_t)sizeof head && !memcmp(head, "{\"prefault\":", 12));
}

int os_open_report(const char *path)
{
	struct stat st;
	struct statfs sf;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0)
		return -1;
	/* Refuse anything but a regular file of ours with one link on a real
	 * file system: a FIFO would block exit, a device or someone else's file
	 * is not ours to overwrite, a hard link could point anywhere, and a file
	 * in /proc or sysfs is a switch. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    fstatfs(fd, &sf) != 0 || pseudo_fs((long)sf.f_type)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	/* A file that is there already is overwritten only if it is an earlier
	 * report: `report = notes.txt` must not cost the user their notes.
	 * (A file we just made is empty: ftruncate costs a journal entry.) */
	if (st.st_size != 0 && !is_ours(fd)) {
		close(fd);
		errno = EEXIST;
		return -1;
	}
	if (st.st_size != 0 && ftruncate(fd, 0) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void os_fd_identity(int fd, struct fdid *id)
{
	struct stat st;
	id->ok = fstat(fd, &st) == 0;
	id->dev = id->ok ? st.st_dev : 0;
	id->ino = id->ok ? st.st_ino : 0;
}

int os_fd_same(int fd, const struct fdid *id)
{
	struct stat st;
	return id->ok && fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

void os_quiet_begin(struct quiet *q)
{
	sigset_t hold, pending;
	sigemptyset(&hold);
	sigaddset(&hold, SIGPIPE);
	sigaddset(&hold, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &hold, &q->old);
	sigpending(&pending);
	q->pipe_was_pending = sigismember(&pending, SIGPIPE) == 1;
	q->fsz_was_pending = sigismember(&pending, SIGXFSZ) == 1;
}

void os_quiet_end(struct quiet *q)
{
	sigset_t pending, one;
	struct timespec zero = { 0, 0 };
	int sig;
	sigpending(&pending);
	/* Discard only what our write raised; a signal the program had pending
	 * already stays pending for it. */
	for (sig = 0; sig < 2; sig++) {
		int s = sig ? SIGXFSZ : SIGPIPE, was = sig ? q->fsz_was_pending : q->pipe_was_pending;
		if (!was && sigismember(&pending, s) == 1) {
			sigemptyset(&one);
			sigaddset(&one, s);
			while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
				;
		}
	}
	pthread_sigmask(SIG_SETMASK, &q->old, NULL);
}

int os_write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
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

int os_secure(void)
{
	return getauxval(AT_SECURE) != 0;
}
