/* A sandboxed worker: after set-up it allows only what it uses (mmap, munmap,
 * write, brk, getpid, exit_group), and is killed on anything else (as
 * OpenSSH's pre-auth child is).  It exits normally, with status 0. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/audit.h>
#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], 0, 0) : (1 << 20);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_mmap), ALLOW(SYS_munmap), ALLOW(SYS_write), ALLOW(SYS_exit_group), ALLOW(SYS_brk),
		ALLOW(SYS_exit), ALLOW(SYS_rt_sigreturn), ALLOW(SYS_getpid),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) { perror("seccomp"); return 2; }
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 1, n);
	munmap(p, n);
	write(1, "done\n", 5);
	return 0;
}
