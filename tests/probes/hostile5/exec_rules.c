/* exec_rules MODE SIZE: a region is mapped, written and unmapped (kept, under
 * a recycle policy), then the rules new mappings are made by change, and a
 * mapping of the same size is made again (helper-37's C and D):
 *   mdwe   prctl(PR_SET_MDWE): an rwx mapping must then fail with EACCES
 *   rie    personality(READ_IMPLIES_EXEC): an rw mapping comes back rwx
 *   rieraw the same through syscall(SYS_personality)
 *   query, negquery, mdwe0: personality(0xffffffff), personality(-1) and
 *          PR_SET_MDWE with no flags, which change nothing
 * Prints what the program can see: the mapping's error or its permissions
 * in /proc/self/maps, and whether code in it ran. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#endif

static void perms(const void *q)
{
	char l[512];
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(l, sizeof l, f))
		if (strtoul(l, NULL, 16) == (unsigned long)q)
			printf("perms=%.4s\n", strchr(l, ' ') + 1);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	size_t s = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
	int rwx = PROT_READ | PROT_WRITE | PROT_EXEC, mdwe = argc > 1 && !strcmp(argv[1], "mdwe");
	int prot = mdwe ? rwx : PROT_READ | PROT_WRITE;
	unsigned char *p = mmap(NULL, s, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
	if (p == MAP_FAILED)
		return 2;
	memset(p, 0xc3, s); /* (ret) */
	munmap(p, s);
	if (mdwe) {
		if (prctl(PR_SET_MDWE, 1, 0, 0, 0) != 0)
			return printf("no MDWE here\n"), 0;
	} else if (!strcmp(argv[1], "query")) {
		personality(0xffffffff);
	} else if (!strcmp(argv[1], "negquery")) {
		personality((unsigned long)-1);
		syscall(SYS_personality, -1L);
	} else if (!strcmp(argv[1], "mdwe0")) {
		prctl(PR_SET_MDWE, 0, 0, 0, 0);
	} else if (!strcmp(argv[1], "rieraw")) {
		syscall(SYS_personality, (unsigned long)syscall(SYS_personality, 0xffffffffUL) | READ_IMPLIES_EXEC);
	} else {
		personality((unsigned long)personality(0xffffffff) | READ_IMPLIES_EXEC);
	}
	q = mmap(NULL, s, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 0;
	}
	perms(q);
	printf("zero=%d\n", q[0] == 0 && q[s - 1] == 0);
	if (strncmp(argv[1], "rie", 3)) /* (the queries changed nothing: rw, no code) */
		return 0;
	q[0] = 0xc3;
	((void (*)(void))q)();
	printf("executed\n");
	return 0;
}
