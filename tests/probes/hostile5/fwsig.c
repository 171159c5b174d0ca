/* fwsig handler|jump FILE (with libsigmmap.so preloaded behind the shim, and a
 * recycle rule for 1 MiB mappings): a 1 MiB region is unmapped (kept), then
 * a signal arrives inside the next definition of the program's next mmap
 * (helper-38's two findings against FORWARD):
 *   handler  the handler maps FILE over the kept region's address with
 *            syscall(SYS_mmap, MAP_FIXED)
 *   jump     the handler siglongjmps out of that mmap, and the program then
 *            does the same mapping itself
 * A 1 MiB mapping after must not be handed that address, and FILE must keep
 * its bytes ('A', 65).  Prints "same=0|1 file=N". */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define S (1 << 20)

static void *target;
static int fd, jump;
static sigjmp_buf jb;

static void over(void)
{
	long r = syscall(SYS_mmap, target, S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (r != (long)target)
		_exit(3);
}

static void on_usr1(int s)
{
	(void)s;
	if (jump)
		siglongjmp(jb, 1);
	over();
}

int main(int argc, char **argv)
{
	static char buf[S];
	int *armed = dlsym(RTLD_DEFAULT, "x_armed");
	unsigned char *p, *r, c = 0;
	if (argc < 3 || !armed)
		return 2;
	jump = !strcmp(argv[1], "jump");
	memset(buf, 'A', S);
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, S) != S)
		return 2;
	signal(SIGUSR1, on_usr1);
	p = mmap(NULL, S, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 1, S);
	munmap(p, S);
	target = p;
	if (!sigsetjmp(jb, 1)) {
		*armed = 1;
		mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (jump)
		over();
	r = mmap(NULL, S, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r != MAP_FAILED)
		r[0] = 7;
	if (pread(fd, &c, 1, 0) != 1)
		return 2;
	printf("same=%d file=%d\n", r == target, c);
	return 0;
}
