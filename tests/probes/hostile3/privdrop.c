/* A daemon started as root drops to nobody, then allocates: malloc and mmap
 * of 16 MiB (issue 22 #28: under realtime the policy's mlockall, applied
 * while locking was unlimited, held on after the drop, and both failed for
 * want of RLIMIT_MEMLOCK).  Then a raw syscall(SYS_madvise, MADV_DONTNEED)
 * on 1 MiB it wrote (#29: it returned EINVAL on memory the shim locked and
 * left the old data).  Needs root and an RLIMIT_MEMLOCK under 16 MiB. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char *b, *m, *d;
	long r;
	if (argc > 1 && setuid(65534) != 0) {
		perror("setuid");
		return 2;
	}
	errno = 0;
	b = malloc(16 << 20);
	printf("malloc 16 MiB: %s\n", b ? "ok" : strerror(errno));
	m = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap 16 MiB: %s\n", m != MAP_FAILED ? "ok" : strerror(errno));
	d = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED)
		return 1;
	memset(d, 0x55, 1 << 20);
	r = syscall(SYS_madvise, d, 1 << 20, MADV_DONTNEED);
	printf("raw MADV_DONTNEED: %s, reads 0x%x\n", r == 0 ? "ok" : strerror(errno), (unsigned char)d[4096]);
	return 0;
}
