/* A sparse table: 4 GiB of address space, one 8-byte slot written every
 * 2 MiB over the first 1 GiB (a hash table or an arena touched thinly). */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
int main(void)
{
	size_t len = 4ull << 30;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); return 2; }
	for (size_t o = 0; o < (1ull << 30); o += 2 << 20)
		p[o] = 1;
	struct rusage ru; getrusage(RUSAGE_SELF, &ru);
	printf("done, peak RSS %ld MiB\n", ru.ru_maxrss / 1024);
	return 0;
}
