#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
int main(void)
{
	char *p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	p[0] = 42;
	int r = madvise(p, 4 << 20, MADV_DONTNEED);
	printf("MAP_LOCKED buffer, madvise(DONTNEED): %s; p[0]=%d\n", r ? strerror(errno) : "0", p[0]);
	return 0;
}
