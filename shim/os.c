/* os.c: see os.h. */
#include "glue.h"
#include "os.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
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
	return p > 0 ? (size_t)p : 4096; /* sysconf cannot fail for this on Linux */
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
	char buf[8192];
	const char *p;
	if (os_read_file("/proc/meminfo", buf, sizeof buf) < 0)
		return 0;
	p = strstr(buf, "MemAvailable:");
	return p ? parse_u64(p + 13) * 1024 : 0;
}

uint64_t os_cgroup_room(void)
{
	/* /proc/self/cgroup for v2 is "0::/path"; walk the path up to the root. */
	char cg[1024], path[1400], val[64];
	uint64_t best = UINT64_MAX;
	char *rel, *nl;
	if (os_read_file("/proc/self/cgroup", cg, sizeof cg) < 0)
		return best;
	rel = strstr(cg, "0::");
	if (!rel)
		return best;
	rel += 3;
	nl = strchr(rel, '\n');
	if (nl)
		*nl = '\0';
	for (;;) {
		size_t n = strlen(rel);
		uint64_t max, cur;
		if (n + 40 < sizeof path) {
			memcpy(path, "/sys/fs/cgroup", 14);
			memcpy(path + 14, rel, n);
			memcpy(path + 14 + n, "/memory.max", 12);
			if (os_read_file(path, val, sizeof val) > 0 && val[0] >= '0' && val[0] <= '9') {
				max = parse_u64(val);
				memcpy(path + 14 + n, "/memory.current", 16);
				cur = os_read_file(path, val, sizeof val) > 0 ? parse_u64(val) : 0;
				if (max > cur && max - cur < best)
					best = max - cur;
				else if (max <= cur)
					best = 0;
			}
		}
		if (n <= 1)
			break;
		nl = strrchr(rel, '/');
		if (!nl)
			break;
		if (nl == rel)
			rel[1] = '\0';
		else
			*nl = '\0';
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
