/* seccomp_exec kill|eperm CALL... -- PROGRAM ARGS: install a seccomp filter
 * that kills the process (or fails with EPERM) on the named system calls,
 * then exec PROGRAM under it, as a service manager's SystemCallFilter, a
 * sandbox or a container runtime does (helper-37's A: the shim, loaded
 * into PROGRAM, made a call the filter killed on, with no policy). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int nr(const char *s)
{
	static const struct { const char *name; int nr; } t[] = {
		{ "getrusage", SYS_getrusage }, { "mincore", SYS_mincore }, { "madvise", SYS_madvise },
		{ "getpid", SYS_getpid },       { "prctl", SYS_prctl },     { "clone3", SYS_clone3 },
	};
	size_t i;
	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(s, t[i].name))
			return t[i].nr;
	return atoi(s);
}

int main(int argc, char **argv)
{
	struct sock_filter f[64];
	struct sock_fprog prog;
	int n = 0, i, first = 2, k, cnt;
	if (argc < 4)
		return 2;
	for (i = first; i < argc && strcmp(argv[i], "--"); i++)
		;
	cnt = i - first;
	if (i + 1 >= argc || cnt > 60)
		return 2;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (k = 0; k < cnt; k++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr(argv[first + k]), (unsigned char)(cnt - k), 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	                                      strcmp(argv[1], "kill") ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_KILL_PROCESS);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 99;
	}
	execvp(argv[i + 1], argv + i + 1);
	perror("exec");
	return 98;
}
