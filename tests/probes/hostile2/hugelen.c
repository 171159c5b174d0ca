/* mmap(NULL, (size_t)-1 MiB): must fail with ENOMEM and leave the buffer mapped just below it alone */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>
int main(void)
{
	char *keep = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(keep, 0x5a, 4 << 20);
	void *p = mmap(NULL, (size_t)-(1 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char v[1024];
	int r = mincore(keep, 4 << 20, v);
	dprintf(2, "mmap(len=-1MiB) = %s (%s); buffer [%p, +4 MiB) %s\n", p == MAP_FAILED ? "MAP_FAILED" : "a pointer",
	        strerror(errno), keep, r == 0 ? "still mapped" : "GONE (mincore ENOMEM)");
	return 0;
}
