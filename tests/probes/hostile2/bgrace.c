/* A staging buffer queued for background populate is unmapped at once and
 * a private file mapping of the same size takes its place (the kernel
 * reuses the address).  The program never writes to the file mapping, so it
 * must keep seeing the file as it changes (Linux shows a private mapping's
 * unwritten pages from the page cache). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
int main(int argc, char **argv)
{
	size_t n = 64 << 20;
	int fd = open(argc > 1 ? argv[1] : "bgrace.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ftruncate(fd, n);
	int stale = 0, same = 0, iters = 200;
	for (int i = 0; i < iters; i++) {
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p[0] = 1;
		munmap(p, n);
		char *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		same += q == p;
		usleep(2000); /* the program does something else */
		/* the file changes under the mapping */
		char tag = (char)(i + 1);
		for (size_t o = 0; o < n; o += 1 << 20) pwrite(fd, &tag, 1, o + 4096);
		for (size_t o = 0; o < n; o += 1 << 20) if (q[o + 4096] != tag) { stale++; break; }
		munmap(q, n);
	}
	printf("%d of %d private file mappings missed the file's change (%d at the old address)\n", stale, iters, same);
	return stale != 0;
}
