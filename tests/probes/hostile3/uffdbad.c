/* uffdbad: ioctl(UFFDIO_REGISTER) with an argument the kernel cannot read
 * (a PROT_NONE page, a small number) on a userfaultfd and on a terminal:
 * EFAULT and ENOTTY without the shim (helper-32: the shim read the argument
 * before the call, and the program died of SIGSEGV).  Prints one line each. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK), r;
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0) {
		printf("userfaultfd=%d\n", errno);
		fd = 0;
	} else {
		struct uffdio_api api = { .api = UFFD_API };
		ioctl(fd, UFFDIO_API, &api);
	}
	errno = 0;
	r = ioctl(fd, UFFDIO_REGISTER, none);
	printf("prot_none=%d errno=%d\n", r, errno);
	errno = 0;
	r = ioctl(fd, UFFDIO_REGISTER, (void *)16);
	printf("small=%d errno=%d\n", r, errno);
	errno = 0;
	r = (int)syscall(SYS_ioctl, fd, UFFDIO_REGISTER, (void *)16);
	printf("raw=%d errno=%d\n", r, errno);
	errno = 0;
	r = ioctl(1, UFFDIO_REGISTER, (void *)16);
	printf("not_uffd=%d errno=%d\n", r, errno);
	return 0;
}
