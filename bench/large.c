/* large: how long until a large buffer is ready for a fault-free hot loop.
 *
 *   large SIZE_MIB [WORK_MS]
 * mmaps SIZE, optionally burns WORK_MS of CPU (the program's "other work"),
 * then writes one byte per page twice.  Prints, per 4 KiB-equivalent page:
 *   map_ns    the mmap call (includes any synchronous prefault by the shim)
 *   pass1_ns  the first write pass (first touch, unless prefaulted)
 *   pass2_ns  the second pass: memory already mapped, the floor
 *   faults    faults this thread took in the first pass
 *   total_faults  every thread's (the shim's workers too), from before the
 *             mmap to the end of the first pass
 *   ready_ms  from before the mmap to the end of the first pass
 * bench/large.sh and bench/background.sh run it under several policies,
 * alternating.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long faults_of(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}
#define faults() faults_of(RUSAGE_THREAD)

int main(int argc, char **argv)
{
	size_t size = (size_t)atol(argc > 1 ? argv[1] : "512") << 20, pg = (size_t)sysconf(_SC_PAGESIZE), i;
	double work = argc > 2 ? atof(argv[2]) : 0, t0, t1, t2, t3, pages = (double)size / 4096;
	volatile unsigned long x = 0;
	long f, all;
	char *p;
	all = faults_of(RUSAGE_SELF);
	t0 = now();
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t1 = now();
	if (p == MAP_FAILED)
		return 1;
	while (now() < t1 + work * 1e6)
		for (i = 0; i < 1000; i++)
			x += i * x + 1;
	f = faults();
	t2 = now();
	for (i = 0; i < size; i += pg)
		p[i] = 1;
	t3 = now();
	f = faults() - f;
	all = faults_of(RUSAGE_SELF) - all;
	printf("map_ns=%.1f pass1_ns=%.1f faults=%ld total_faults=%ld ready_ms=%.2f", (t1 - t0) / pages,
	       (t3 - t2) / pages, f, all, (t3 - t0) / 1e6);
	t2 = now();
	for (i = 0; i < size; i += pg)
		p[i] = 2;
	printf(" pass2_ns=%.1f pages=%zu\n", (now() - t2) / pages, size / pg);
	return 0;
}
