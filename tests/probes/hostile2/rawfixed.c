/* A JIT-style runtime reserves 1 MiB, then maps a file over it with a raw
 * mmap system call (as runtimes that bypass libc do), writes, unmaps it
 * with munmap, and maps fresh memory.  The file must keep what was written. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
int main(int argc, char **argv)
{
	size_t n = 1 << 20;
	int fd = open(argc > 1 ? argv[1] : "data.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ftruncate(fd, n);
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((char *)syscall(SYS_mmap, p, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != p) return 2;
	strcpy(p, "file contents");
	munmap(p, n);
	char *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q[100] = 1;
	char buf[32] = "";
	pread(fd, buf, sizeof buf - 1, 0);
	printf("file holds: \"%s\"\n", buf);
	return strcmp(buf, "file contents") != 0;
}
