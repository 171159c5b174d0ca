/* arena: the mmap / touch / munmap loop of a pymalloc-like allocator.
 *
 *   arena ITER SIZE_KIB TOUCH_PAGES
 * ITER times: mmap SIZE, write one byte in each of the first TOUCH_PAGES
 * pages, munmap.  Prints ns per iteration and the faults taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long iter = argc > 1 ? atol(argv[1]) : 100000, i, warm = iter / 10;
	size_t size = (size_t)(argc > 2 ? atol(argv[2]) : 256) << 10, pg = (size_t)sysconf(_SC_PAGESIZE);
	long touch = argc > 3 ? atol(argv[3]) : 1, k;
	struct timespec a, b;
	struct rusage r0, r1;
	for (i = -warm; i < iter; i++) {
		char *p;
		if (i == 0) {
			getrusage(RUSAGE_SELF, &r0);
			clock_gettime(CLOCK_MONOTONIC, &a);
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (k = 0; k < touch && (size_t)k * pg < size; k++)
			p[(size_t)k * pg] = 1;
		munmap(p, size);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &r1);
	printf("%.1f %ld\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iter, r1.ru_minflt - r0.ru_minflt);
	return 0;
}
