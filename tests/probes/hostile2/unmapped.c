/* Is the range gone after munmap?  The ways a program asks without touching it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
static const char *e(int r) { return r < 0 ? strerror(errno) : "ok"; }
int main(void)
{
	size_t n = 1 << 20;
	unsigned char vec[256];
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 7, n);
	munmap(p, n);
	int pf[2]; pipe(pf);
	printf("mincore: %s\n", e(mincore(p, 4096, vec)));
	printf("msync: %s\n", e(msync(p, 4096, MS_ASYNC)));
	printf("write from it: %s\n", e((int)write(pf[1], p, 16)));
	printf("read into it: %s\n", e((int)read(open("/dev/zero", O_RDONLY), p, 16)));
	struct iovec l = { vec, 16 }, r = { p, 16 };
	printf("process_vm_readv: %s\n", e((int)process_vm_readv(getpid(), &l, 1, &r, 1, 0)));
	char cmd[128]; snprintf(cmd, sizeof cmd, "grep -c %lx- /proc/%d/maps", (unsigned long)p, getpid());
	printf("lines for it in /proc/self/maps: "); fflush(stdout); if (system(cmd)) {}
	return 0;
}
