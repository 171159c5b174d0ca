/* os.c: see os.h. */
#include "glue.h"
#include "os.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

size_t os_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : (size_t)getauxval(AT_PAGESZ); /* (sysconf cannot fail for this on Linux) */
}

int os_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

long os_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
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
 * above it (a parent's limit binds too), found once at start. */
#define CG_LEVELS 8
static char cg_limit[CG_LEVELS][300], cg_usage[CG_LEVELS][300];
static int cg_levels;

/* The mount point of the memory controller: cgroup2, or cgroup v1 with the
 * "memory" option.  From /proc/self/mountinfo. */
static int cg_mount(int v2, char *out, size_t cap)
{
	char buf[16384], *line, *save = NULL;
	if (os_read_file("/proc/self/mountinfo", buf, sizeof buf) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
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
	char cg[2048], mnt[256], rel[1024], *line, *save = NULL;
	int v2 = 0, found = 0;
	cg_levels = 0;
	if (os_read_file("/proc/self/cgroup", cg, sizeof cg) < 0)
		return;
	for (line = strtok_r(cg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
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
		if (strlen(c2 + 1) >= sizeof rel)
			return;
		strcpy(rel, c2 + 1);
		if (found)
			break;
	}
	if ((!found && !v2) || cg_mount(v2, mnt, sizeof mnt) < 0)
		return;
	for (;;) {
		size_t n = strlen(rel);
		if (cg_levels < CG_LEVELS && strlen(mnt) + n + 32 < sizeof cg_limit[0]) {
			char *l = cg_limit[cg_levels], *u = cg_usage[cg_levels];
			strcpy(l, mnt);
			strcat(l, n > 1 ? rel : "");
			strcpy(u, l);
			strcat(l, v2 ? "/memory.max" : "/memory.limit_in_bytes");
			strcat(u, v2 ? "/memory.current" : "/memory.usage_in_bytes");
			cg_levels++;
		}
		if (n <= 1)
			break;
		line = strrchr(rel, '/');
		if (!line)
			break;
		if (line == rel)
			rel[1] = '\0';
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

int os_open_report(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
	if (fd < 0)
		return -1;
	/* Refuse anything but a regular file of ours with one link: a FIFO would
	 * block exit, a device or someone else's file is not ours to overwrite,
	 * and a hard link could point anywhere. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	if (ftruncate(fd, 0) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

size_t os_resident_pages(uintptr_t s, uintptr_t e, size_t page)
{
	unsigned char vec[512];
	size_t n = 0, i;
	s &= ~(uintptr_t)(page - 1);
	while (s < e) {
		size_t pages = (e - s + page - 1) / page;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (mincore((void *)s, pages * page, vec) != 0)
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

void os_write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}
