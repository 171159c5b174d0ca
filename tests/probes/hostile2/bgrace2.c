/* As bgrace, with a shared file mapping the program only reads: the file's
 * modification time must not change. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
int main(int argc, char **argv)
{
	size_t n = 64 << 20;
	int fd = open(argc > 1 ? argv[1] : "bgrace.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ftruncate(fd, n);
	fsync(fd);
	struct stat a, b;
	fstat(fd, &a);
	long sum = 0;
	for (int i = 0; i < 200; i++) {
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p[0] = 1;
		munmap(p, n);
		char *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		usleep(2000);
		sum += q[4096];
		munmap(q, n);
	}
	fsync(fd);
	fstat(fd, &b);
	int changed = a.st_mtim.tv_sec != b.st_mtim.tv_sec || a.st_mtim.tv_nsec != b.st_mtim.tv_nsec;
	printf("file only read through its mappings: mtime %s (sum %ld)\n", changed ? "CHANGED" : "unchanged", sum);
	return changed;
}
