/* userfaultfd in missing mode, as a lazy loader uses it: 16 MiB mapped and
 * registered, a handler thread serves each page touched with 0xab; the
 * program touches two pages (issue 22 #5 and #30).  Without the shim:
 * "values 0xab 0xab, faults served: 2".  Under background the worker's
 * populate went through the handler (4096 faults served) or blocked in the
 * kernel; under populate or recycle the pages were there before the
 * registration and the handler never ran (values 0x0).
 *
 *   uffdserve [reuse|ro]  reuse: map, touch and unmap 16 MiB first (a recycle
 *                       rule keeps it, and the next mapping reuses it);
 *                       ro: map it read-only (as the kernel selftest mkdirty
 *                       does: mlockall future maps the zero page there);
 *                       dontneed: after the two touches, MADV_DONTNEED the
 *                       range twice and touch page 0 again (uffd-stress
 *                       does): "dontneed 0 0, value 0xab, faults served: 3"
 *                       (under a lock rule, the shim's lock taken again
 *                       after the first went through the handler or failed
 *                       half done, and the second gave EINVAL) */
#include <errno.h>
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
static void *handler(void *a)
{
	static char page[1 << 16] __attribute__((aligned(1 << 16)));
	(void)a;
	memset(page, 0xab, sizeof page);
	for (;;) {
		struct uffd_msg m;
		struct pollfd pf = { uffd, POLLIN, 0 };
		if (poll(&pf, 1, -1) < 0 || read(uffd, &m, sizeof m) != sizeof m)
			continue;
		if (m.event == UFFD_EVENT_PAGEFAULT) {
			struct uffdio_copy cp = { m.arg.pagefault.address & ~(unsigned long)(pg - 1), (unsigned long)page,
			                          (unsigned long)pg, 0, 0 };
			ioctl(uffd, UFFDIO_COPY, &cp);
			__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}
int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_t t;
	char *p;
	pg = sysconf(_SC_PAGESIZE);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 2;
	}
	if (argc > 1 && !strcmp(argv[1], "reuse")) {
		p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(p, 7, LEN);
		munmap(p, LEN);
	}
	p = mmap(NULL, LEN, PROT_READ | (argc > 1 && !strcmp(argv[1], "ro") ? 0 : PROT_WRITE),
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	usleep(20000); /* (a background worker, if any, is at work now) */
	memset(&reg, 0, sizeof reg);
	reg.range.start = (unsigned long)p;
	reg.range.len = LEN;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 2;
	}
	pthread_create(&t, NULL, handler, NULL);
	alarm(10);
	printf("values 0x%x 0x%x", (unsigned char)p[0], (unsigned char)p[LEN / 2]);
	usleep(300000); /* (time for a worker to do harm) */
	printf(", faults served: %d\n", __atomic_load_n(&served, __ATOMIC_RELAXED));
	if (argc > 1 && !strcmp(argv[1], "dontneed")) {
		int e1 = madvise(p, LEN, MADV_DONTNEED) ? errno : 0;
		int e2 = madvise(p, LEN, MADV_DONTNEED) ? errno : 0;
		unsigned char v = (unsigned char)p[0];
		usleep(100000);
		printf("dontneed %d %d, value 0x%x, faults served: %d\n", e1, e2, v, __atomic_load_n(&served, __ATOMIC_RELAXED));
	}
	munmap(p, LEN);
	printf("unmapped\n");
	return 0;
}
