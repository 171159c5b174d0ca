/* mlock a 1 MiB mapping, unmap it, then lock 2 MiB elsewhere under a 2 MiB RLIMIT_MEMLOCK */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
int main(void)
{
	struct rlimit rl = { 2 << 20, 2 << 20 };
	if (setrlimit(RLIMIT_MEMLOCK, &rl)) perror("setrlimit");
	for (int i = 0; i < 4; i++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mlock(p, 1 << 20)) { printf("mlock 1M #%d: %s\n", i, strerror(errno)); return 1; }
		munmap(p, 1 << 20);
	}
	char *q = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r = mlock(q, 2 << 20);
	printf("mlock 2M: %s\n", r ? strerror(errno) : "ok");
	FILE *f = fopen("/proc/self/status", "r"); char line[256];
	while (fgets(line, sizeof line, f)) if (!strncmp(line, "VmLck", 5)) fputs(line, stdout);
	return r != 0;
}
