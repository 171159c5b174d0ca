/* Threads: in /proc/self/status right after allocating a 128 MiB buffer */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mman.h>
static void show(const char *when)
{
	FILE *f = fopen("/proc/self/status", "r"); char l[256];
	while (fgets(l, sizeof l, f)) if (!strncmp(l, "Threads:", 8)) printf("%s: %s", when, l);
	fclose(f);
}
int main(void)
{
	show("start");
	char *p = mmap(NULL, 128 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	show("after mmap");
	p[0] = 1;
	int r = unshare(CLONE_NEWNS); /* fine with threads */
	printf("unshare(NEWNS)=%d\n", r);
	r = unshare(CLONE_FS);
	printf("unshare(FS)=%d\n", r);
	show("end");
	return 0;
}
