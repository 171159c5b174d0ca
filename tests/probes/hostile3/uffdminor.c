/* userfaultfd in minor mode, as live migration of a shared memory guest
 * uses it: a 16 MiB memfd filled with 0x11 and mapped shared, registered
 * for minor faults; the handler writes 0xcd into each page it is asked for
 * (through a second mapping) and lets the fault continue; the program reads
 * two pages.  Without the shim: "values 0xcd 0xcd, minor faults served: 2".
 * Where the shim had mapped the pages (populate or background on a shared
 * mapping), the program read 0x11 and the handler never ran (H3's finding
 * with uffd-unit-tests' minor tests).  Exit 2 when minor mode is not
 * available (shmem minor faults: Linux 5.14+). */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define LEN (16u << 20)
static int uffd, served;
static long pg;
static char *alias;
static void *handler(void *a)
{
	char *p = a;
	for (;;) {
		struct uffd_msg m;
		struct pollfd pf = { uffd, POLLIN, 0 };
		if (poll(&pf, 1, -1) < 0 || read(uffd, &m, sizeof m) != sizeof m)
			continue;
		if (m.event == UFFD_EVENT_PAGEFAULT && (m.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR)) {
			unsigned long at = m.arg.pagefault.address & ~(unsigned long)(pg - 1);
			struct uffdio_continue c = { { at, (unsigned long)pg }, 0, 0 };
			memset(alias + (at - (unsigned long)p), 0xcd, (size_t)pg);
			ioctl(uffd, UFFDIO_CONTINUE, &c);
			__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}
int main(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MINOR_SHMEM };
	struct uffdio_register reg;
	pthread_t t;
	char *p, buf[4096];
	size_t off;
	int fd;
	pg = sysconf(_SC_PAGESIZE);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd (minor faults on shmem)");
		return 2;
	}
	fd = memfd_create("guest", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, LEN))
		return 3;
	memset(buf, 0x11, sizeof buf);
	for (off = 0; off < LEN; off += sizeof buf)
		if (pwrite(fd, buf, sizeof buf, (off_t)off) != (ssize_t)sizeof buf)
			return 3;
	alias = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || alias == MAP_FAILED)
		return 3;
	usleep(20000); /* (a background worker, if any, is at work now) */
	memset(&reg, 0, sizeof reg);
	reg.range.start = (unsigned long)p;
	reg.range.len = LEN;
	reg.mode = UFFDIO_REGISTER_MODE_MINOR;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER (minor)");
		return 2;
	}
	pthread_create(&t, NULL, handler, p);
	alarm(10);
	printf("values 0x%x 0x%x", (unsigned char)p[0], (unsigned char)p[LEN / 2]);
	for (off = 0; off < 200 && __atomic_load_n(&served, __ATOMIC_RELAXED) < 2; off++)
		usleep(1000); /* (the handler counts after the fault it served has gone on) */
	printf(", minor faults served: %d\n", __atomic_load_n(&served, __ATOMIC_RELAXED));
	return 0;
}
