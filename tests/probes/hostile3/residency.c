/* What a reused region shows (issue 22 #32): 1 MiB mapped, 16 pages written,
 * unmapped; then 1 MiB mapped again.  Prints how many of its pages are
 * resident (mincore) and whether every byte reads zero.  Without the shim:
 * 0 resident.  Under recycle the README says what it shows: the pages the
 * program had touched are still resident, cleared. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	size_t n = 1u << 20, pg = (size_t)sysconf(_SC_PAGESIZE), i, res = 0, nonzero = 0;
	unsigned char vec[(1u << 20) / 4096];
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < 16; i++)
		p[i * pg] = 1;
	munmap(p, n);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mincore(p, n, vec);
	for (i = 0; i < n / pg; i++)
		res += vec[i] & 1;
	for (i = 0; i < n; i++)
		nonzero += p[i] != 0;
	printf("resident %zu of %zu pages, nonzero bytes %zu\n", res, n / pg, nonzero);
	return 0;
}
