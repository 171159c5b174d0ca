/* A sparse table: 1 GiB reserved with MAP_NORESERVE, two pages used (issue
 * 22 #12: under the realtime policy, where locking is unlimited, mlockall's
 * future part populated and locked it whole).  Prints VmRSS in MiB,
 * rounded down to 16 MiB steps (what else a process has varies). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "../probe.h"
int main(void)
{
	size_t n = (size_t)1 << 30;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p[0] = 1;
	p[n / 2] = 1;
	printf("table: 1 GiB, 2 pages used; VmRSS under %ld MiB\n", (status_kb("VmRSS:") / 1024 / 16 + 1) * 16);
	return 0;
}
