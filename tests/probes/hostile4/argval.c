/* mmap argument checks the kernel/glibc make, on requests a carve/recycle rule matches */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define M (1 << 20)
static void try(const char *what, off_t off, int prot, int flags, int fd)
{
	errno = 0;
	void *p = mmap(NULL, M, prot, flags, fd, off);
	printf("%-40s -> %s errno=%s\n", what, p == MAP_FAILED ? "MAP_FAILED" : "ok", p == MAP_FAILED ? strerrorname_np(errno) : "-");
	if (p != MAP_FAILED) {
		int bad = 0;
		for (size_t i = 0; i < M; i += 4096)
			bad |= ((char *)p)[i];
		if (bad) printf("  NONZERO\n");
		munmap(p, M);
	}
}
int main(int argc, char **argv)
{
	int warm = argc > 1;
	if (warm) { /* leave one kept region of the class */
		void *p = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(p, 1, M);
		munmap(p, M);
	}
	try("unaligned offset 1", 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	try("unaligned offset 100", 100, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	try("offset overflow", (off_t)0x7ffffffffffff000LL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	try("negative offset", (off_t)-4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	try("fd 12345 anon", 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, 12345);
	try("prot 0x1000003", 0, PROT_READ | PROT_WRITE | 0x1000000, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	try("PROT_GROWSDOWN", 0, PROT_READ | PROT_WRITE | PROT_GROWSDOWN, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	try("private|shared anon", 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_SHARED | MAP_ANONYMOUS, -1);
	try("flags 0x80000000", 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | 0x80000000, -1);
	try("plain", 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	return 0;
}
