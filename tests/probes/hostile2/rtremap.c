/* A growable buffer: part of it released with MADV_DONTNEED (as allocators
 * purge), then the whole buffer grown with mremap. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
int main(void)
{
	size_t M = 1 << 20;
	char *p = mmap(NULL, 8 * M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 1, 8 * M);
	if (madvise(p + M, M, MADV_DONTNEED)) perror("madvise");
	char *q = mremap(p, 8 * M, 16 * M, MREMAP_MAYMOVE);
	printf("mremap 8 -> 16 MiB: %s\n", q == MAP_FAILED ? strerror(errno) : "ok");
	return q == MAP_FAILED;
}
