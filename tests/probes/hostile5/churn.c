/* churn N SIZE: maps SIZE bytes, checks they read zero, writes them and
 * unmaps them, N times (what a recycle rule keeps), with no system call a
 * seccomp filter of seccomp_exec's would stop: "churn=ok" or "churn=dirty". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, i;
	size_t s = argc > 2 ? strtoul(argv[2], NULL, 0) : 1 << 20, k;
	for (i = 0; i < n; i++) {
		unsigned char *p = mmap(NULL, s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 2;
		for (k = 0; k < s; k += 512)
			if (p[k])
				return printf("churn=dirty\n"), 1;
		memset(p, 0x5a, s);
		munmap(p, s);
	}
	printf("churn=ok\n");
	return 0;
}
