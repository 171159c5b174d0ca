/* mlockall(CURRENT|FUTURE), then a 4 MiB buffer, then MADV_DONTNEED on it */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
static long vmlck(void)
{
	FILE *f = fopen("/proc/self/status", "r"); char l[256]; long kb = -1;
	while (fgets(l, sizeof l, f)) if (!strncmp(l, "VmLck:", 6)) kb = atol(l + 6);
	fclose(f); return kb;
}
int main(void)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE)) { perror("mlockall"); return 2; }
	char *p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long before = vmlck();
	int r = madvise(p, 4 << 20, MADV_DONTNEED);
	printf("madvise(DONTNEED) on locked memory: %s; VmLck %ld -> %ld kB\n", r ? strerror(errno) : "0", before, vmlck());
	return 0;
}
