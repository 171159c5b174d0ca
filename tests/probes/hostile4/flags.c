/* recycling/carving with MAP_POPULATE, MAP_NORESERVE, MAP_GROWSDOWN, MAP_STACK, MAP_32BIT */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#define M (1 << 20)
static sigjmp_buf jb;
static void segv(int s) { (void)s; siglongjmp(jb, 1); }
static int resident(char *p) { unsigned char v[256]; int n = 0; mincore(p, M, v); for (int i = 0; i < 256; i++) n += v[i] & 1; return n; }
static int allzero(const char *p) { for (int i = 0; i < M; i++) if (p[i]) return 0; return 1; }
int main(int argc, char **argv)
{
	int fl = 0;
	const char *m = argv[1];
	if (!strcmp(m, "populate")) fl = MAP_POPULATE;
	if (!strcmp(m, "noreserve")) fl = MAP_NORESERVE;
	if (!strcmp(m, "growsdown")) fl = MAP_GROWSDOWN;
	if (!strcmp(m, "stack")) fl = MAP_STACK;
	if (!strcmp(m, "32bit")) fl = MAP_32BIT;
	signal(SIGSEGV, segv);
	for (int round = 0; round < 3; round++) {
		char *p = mmap(NULL, M, 3, MAP_PRIVATE | MAP_ANONYMOUS | fl, -1, 0);
		if (p == MAP_FAILED) { printf("failed %s\n", strerror(errno)); return 1; }
		int r0 = resident(p), z = allzero(p);
		int grows = -1;
		if (fl == MAP_GROWSDOWN) {
			if (sigsetjmp(jb, 1)) grows = 0;
			else { volatile char *b = p - 4096; *b = 1; grows = 1; }
		}
		if (grows == 0 && getenv("DBG")) { char cmd[64]; sprintf(cmd, "grep -B2 -A1 %lx /proc/%d/maps", (unsigned long)p, getpid()); system(cmd); }
		printf("round %d: resident at map %d/256 zero=%d low32=%d grows=%d\n", round, fl == MAP_POPULATE ? r0 : -1, z,
		       (unsigned long)p < (1UL << 32), grows);
		madvise(p, M / 2, MADV_DONTNEED);
		memset(p + M / 2, 9, 4096);
		munmap(p - (grows == 1 ? 4096 : 0), M + (grows == 1 ? 4096 : 0));
	}
	return 0;
}
