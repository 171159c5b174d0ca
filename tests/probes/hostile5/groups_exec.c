/* groups_exec N -- PROGRAM ARGS: set N supplementary groups (root), then
 * exec PROGRAM: its /proc/self/status then has a Groups line of about 11 N
 * bytes before its Seccomp lines (helper-38: 400 groups pushed them past
 * the 4 KiB the shim read, and it took the unknown for a filter). */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static gid_t g[65536];
	int n = argc > 1 ? atoi(argv[1]) : 400, i;
	if (argc < 4 || n < 0 || n > 65536)
		return 2;
	for (i = 0; i < n; i++)
		g[i] = (gid_t)(1000000000 + i);
	if (setgroups((size_t)n, g) != 0) {
		perror("setgroups");
		return 2;
	}
	execvp(argv[3], argv + 3);
	perror("exec");
	return 127;
}
