/* vmsplice(2) puts references to a slice's pages in a pipe; the program unmaps the slice and
 * maps a fresh one of the same size; then reads the pipe. Without the shim the pipe holds what
 * was written (the pages are the pipe's now); with recycling the pages are reused and cleared. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#define M (1 << 20)
int main(void)
{
	int fd[2];
	pipe(fd);
	char *p = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 'A', M);
	struct iovec iov = { p, 8192 };
	printf("vmsplice = %zd\n", vmsplice(fd[1], &iov, 1, 0));
	munmap(p, M);
	char *q = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(q, 'B', 4096); /* the program writes its new mapping */
	char buf[8192];
	ssize_t n = read(fd[0], buf, sizeof buf);
	printf("read %zd: first byte %d, byte 4096 %d (wrote 'A'=65)\n", n, buf[0], buf[4096]);
	return 0;
}
