/* A fork child frees 64 MiB with MADV_DONTNEED (issue 22 #13: mlockall is
 * not inherited across fork, but the shim's record of it was, so under the
 * realtime policy the child locked the range again and faulted it all
 * back).  The child prints its VmLck and its VmRSS in MiB, rounded down to
 * 16 MiB steps. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../probe.h"
int main(void)
{
	size_t n = 64u << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t c;
	int st;
	memset(p, 1, n);
	fflush(stdout);
	c = fork();
	if (c == 0) {
		madvise(p, n, MADV_DONTNEED);
		printf("child: VmLck %ld kB, VmRSS under %ld MiB, reads %d\n", status_kb("VmLck:"),
		       (status_kb("VmRSS:") / 1024 / 16 + 1) * 16, p[0]);
		return 0;
	}
	waitpid(c, &st, 0);
	return WEXITSTATUS(st);
}
