/* process_madvise(2) on our own pidfd changes a slice's VMA without madvise():
 * after munmap and a fresh mmap of the same size, does the new mapping carry it? */
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#define M (1 << 20)
static sigjmp_buf jb;
static void segv(int s) { (void)s; siglongjmp(jb, 1); }
static int pmadv(void *p, size_t len, int adv)
{
	int pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	struct iovec iov = { p, len };
	long r = syscall(SYS_process_madvise, pidfd, &iov, 1, adv, 0);
	int e = errno;
	close(pidfd);
	errno = e;
	return (int)r;
}
static char *fresh(void)
{
	char *p = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p;
}
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "guard";
	int adv = !strcmp(mode, "guard") ? MADV_GUARD_INSTALL : !strcmp(mode, "wipe") ? MADV_WIPEONFORK : MADV_DONTFORK;
	char *p = fresh();
	memset(p, 7, M);
	long r = pmadv(p, 4096, adv);
	printf("process_madvise(%s) = %ld %s\n", mode, r, r < 0 ? strerror(errno) : "");
	munmap(p, M);
	char *q = fresh();
	signal(SIGSEGV, segv);
	if (sigsetjmp(jb, 1)) {
		printf("new mapping: SIGSEGV on first byte\n");
		return 0;
	}
	q[0] = 'x';
	printf("new mapping: first byte writable, reads %c\n", q[0]);
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		signal(SIGSEGV, SIG_DFL);
		printf("child reads %d\n", q[0]); fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	printf("child status %s %d\n", WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return 0;
}
