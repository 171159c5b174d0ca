/* A 4 MiB buffer grown to 6 MiB with mremap, then released with
 * MADV_DONTNEED, then another 4 MiB locked by the program itself
 * (RLIMIT_MEMLOCK 8 MiB, no CAP_IPC_LOCK). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
int main(void)
{
	size_t M = 1 << 20;
	struct rlimit rl = { 8 * M, 8 * M };
	setrlimit(RLIMIT_MEMLOCK, &rl);
	char *p = mmap(NULL, 4 * M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *q = mremap(p, 4 * M, 6 * M, MREMAP_MAYMOVE);
	if (q == MAP_FAILED) { perror("mremap"); return 2; }
	int r = madvise(q, 6 * M, MADV_DONTNEED);
	printf("madvise(DONTNEED) on the grown buffer: %s\n", r ? strerror(errno) : "ok");
	char *s = mmap(NULL, 4 * M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	r = mlock(s, 4 * M);
	printf("program's own mlock of 4 MiB: %s\n", r ? strerror(errno) : "ok");
	return 0;
}
