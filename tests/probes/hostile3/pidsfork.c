/* Maps 64 MiB (a background rule starts a worker thread), then forks at
 * once (issue 22 #14: in a pids cgroup of 2 tasks the worker took the
 * program's room, and fork failed with EAGAIN).  Prints whether fork
 * worked. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	char *p = mmap(NULL, 64u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t c;
	(void)p;
	fflush(stdout);
	c = fork();
	if (c < 0) {
		printf("fork failed: %s\n", strerror(errno));
		return 1;
	}
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	printf("fork ok\n");
	return 0;
}
