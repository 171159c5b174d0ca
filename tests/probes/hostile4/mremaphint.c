/* mremap's fifth argument without MREMAP_FIXED: glibc passes it on (as the register holds it);
 * the kernel reads it for MREMAP_DONTUNMAP (hint, and page-alignment check).  The shim drops it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#define M (1 << 20)
int main(void)
{
	char *area = mmap(NULL, 8 * M, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(area, 8 * M); /* a free range to hint at */
	char *hint = area + 4 * M;
	char *p = mmap(NULL, M, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 1, M);
	char *q = mremap(p, M, M, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, hint);
	printf("aligned hint: %s, at hint=%d\n", q == MAP_FAILED ? strerror(errno) : "ok", q == hint);
	char *p2 = mmap(NULL, M, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p2, 1, M);
	q = mremap(p2, M, M, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, hint + 1);
	printf("unaligned hint: %s\n", q == MAP_FAILED ? strerror(errno) : "ok");
	char *p3 = mmap(NULL, M, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p3, 1, M);
	q = mremap(p3, M, 2 * M, MREMAP_MAYMOVE, hint + 1); /* not DONTUNMAP: ignored? */
	printf("plain maymove, unaligned 5th arg: %s\n", q == MAP_FAILED ? strerror(errno) : "ok");
	return 0;
}
