/* 4 MiB working buffer, then a 6 MiB MAP_LOCKED ring under an 8 MiB RLIMIT_MEMLOCK */
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
	p[0] = 1;
	char *r = mmap(NULL, 6 * M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	printf("mmap(MAP_LOCKED, 6 MiB): %s\n", r == MAP_FAILED ? strerror(errno) : "ok");
	struct rlimit one = { 6 * M, 6 * M };
	int rc = mlockall(MCL_FUTURE);
	printf("mlockall(MCL_FUTURE): %s\n", rc ? strerror(errno) : "ok");
	return 0;
}
