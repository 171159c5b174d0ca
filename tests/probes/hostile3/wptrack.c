/* Write tracking: 8 MiB mapped and registered with userfaultfd for write
 * protection at once (as a dirty tracker would), then left alone for 300 ms.
 * Pages a background worker populates after that count as written for the
 * tracker (issue 22 #31).  Prints how many pages became resident after the
 * registration: 0 without the shim, and a background rule must leave a
 * range registered this way alone (what a worker did in the moment before
 * the registration is not the tracker's to see). */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define LEN (8u << 20)
int main(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	struct uffdio_register reg;
	unsigned char vec[LEN / 4096];
	long pg = sysconf(_SC_PAGESIZE), n = 0, before = 0, i;
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	char *p;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 2;
	}
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(&reg, 0, sizeof reg);
	reg.range.start = (unsigned long)p;
	reg.range.len = LEN;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 2;
	}
	mincore(p, LEN, vec);
	for (i = 0; i < (long)(LEN / pg); i++)
		before += vec[i] & 1;
	usleep(300000);
	mincore(p, LEN, vec);
	for (i = 0; i < (long)(LEN / pg); i++)
		n += vec[i] & 1;
	printf("pages made resident after the registration: %ld\n", n - before);
	return 0;
}
