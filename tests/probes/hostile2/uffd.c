/* A region handed to userfaultfd (lazy loading), its first page served,
 * then unmapped; then a fresh 1 MiB mapping, touched.  A fresh mapping has
 * no userfaultfd: the touches must not block. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>
int main(void)
{
	size_t n = 1 << 20;
	/* userfaultfd */
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	struct uffdio_api api = { .api = UFFD_API };
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) { perror("userfaultfd"); return 2; }
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct uffdio_register reg = { .range = { (unsigned long)p, n }, .mode = UFFDIO_REGISTER_MODE_MISSING };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) { perror("UFFDIO_REGISTER"); return 2; }
	static char page[4096] __attribute__((aligned(4096)));
	struct uffdio_copy cp = { .dst = (unsigned long)p, .src = (unsigned long)page, .len = 4096 };
	ioctl(uffd, UFFDIO_COPY, &cp); /* served the first page */
	munmap(p, n); /* done with it */
	char *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("fresh mapping %s; touching it...\n", q == p ? "at the old address" : "elsewhere"); fflush(stdout);
	alarm(3);
	for (size_t o = 0; o < n; o += 4096) q[o] = 1;
	printf("touched\n");
	return 0;
}
