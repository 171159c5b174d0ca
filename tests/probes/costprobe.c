/* costprobe: fixed amounts of the calls whose cost tests/cost.bats holds to a
 * budget.  Each mode does N operations and nothing else, so that the cost of
 * one operation is the difference between a run of 2N and a run of N (what
 * start-up and exit cost cancels out).
 *
 *   cycles N SIZE TOUCH    N times: mmap SIZE (anonymous, private, rw),
 *                          write one byte in each of the first TOUCH pages,
 *                          munmap (the sparse churn of issue 18 at TOUCH 1)
 *   takeback N SIZE K E    as cycles at TOUCH 1, but every E cycles of the
 *                          first half, K times at most, the program takes
 *                          back 8 pages of one of its last 8 unmapped
 *                          ranges (MAP_FIXED_NOREPLACE, then munmap), as
 *                          legitimate code may
 *   maps N SIZE            N times: mmap SIZE, write nothing, munmap
 *   keepmaps N SIZE        mmap SIZE N times, keeping them; then munmap all
 *   pairs N SIZE           N times: malloc SIZE, free
 *   tracked BIG N SIZE     malloc BIG (a rule may track it), then N times
 *                          malloc SIZE and free; then free BIG
 *   threads T BIG N SIZE   as tracked, in T threads at once
 *
 * Sizes take K, M, G suffixes.  Prints ok=1 and the faults taken (faults=).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include "probe.h"

static long n_ops;
static size_t op_size;

static void pairs(long n, size_t size)
{
	long i;
	for (i = 0; i < n; i++) {
		void *p = malloc(size);
		if (!p)
			exit(1);
		__asm__ volatile("" : : "r"(p) : "memory"); /* (kept a real pair) */
		free(p);
	}
}

static void *thread_pairs(void *arg)
{
	(void)arg;
	pairs(n_ops, op_size);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct rusage ru;
	long i, n;
	if (argc < 4) {
		fprintf(stderr, "usage: costprobe MODE ARGS (see the top of costprobe.c)\n");
		return 2;
	}
	n = atol(argv[2]);
	if (!strcmp(argv[1], "cycles") && argc >= 5) {
		size_t size = parse_size(argv[3]);
		long touch = atol(argv[4]), k;
		for (i = 0; i < n; i++) {
			char *p = probe_map(size);
			for (k = 0; k < touch && (size_t)k * pg < size; k++)
				p[(size_t)k * pg] = 1;
			munmap(p, size);
		}
	} else if (!strcmp(argv[1], "takeback") && argc >= 6) {
		size_t size = parse_size(argv[3]);
		long k = atol(argv[4]), every = atol(argv[5]), taken = 0;
		char *last[8] = { 0 };
		unsigned seed = 5;
		for (i = 0; i < n; i++) {
			char *p = probe_map(size), *a, *q;
			p[0] = 1;
			munmap(p, size);
			last[i % 8] = p;
			if (every && i % every == every - 1 && taken < k && i < n / 2) {
				a = last[rand_r(&seed) % 8] + (size_t)(rand_r(&seed) % 3) * (size / 8);
				q = mmap(a, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
				if (q != MAP_FAILED) {
					taken++;
					munmap(q, 8 * pg);
				}
			}
		}
		printf("taken=%ld\n", taken);
	} else if (!strcmp(argv[1], "maps")) {
		size_t size = parse_size(argv[3]);
		for (i = 0; i < n; i++)
			munmap(probe_map(size), size);
	} else if (!strcmp(argv[1], "keepmaps")) {
		size_t size = parse_size(argv[3]);
		char **v = calloc((size_t)n, sizeof *v);
		for (i = 0; i < n; i++)
			v[i] = probe_map(size);
		for (i = 0; i < n; i++)
			munmap(v[i], size);
		free(v);
	} else if (!strcmp(argv[1], "pairs")) {
		pairs(n, parse_size(argv[3]));
	} else if (!strcmp(argv[1], "tracked") && argc >= 5) {
		void *big = malloc(parse_size(argv[2]));
		pairs(atol(argv[3]), parse_size(argv[4]));
		free(big);
	} else if (!strcmp(argv[1], "threads") && argc >= 6) {
		int t = atoi(argv[2]), k;
		pthread_t tid[64];
		void *big = malloc(parse_size(argv[3]));
		n_ops = atol(argv[4]);
		op_size = parse_size(argv[5]);
		if (t > 64)
			t = 64;
		for (k = 0; k < t; k++)
			pthread_create(&tid[k], NULL, thread_pairs, NULL);
		for (k = 0; k < t; k++)
			pthread_join(tid[k], NULL);
		free(big);
	} else {
		fprintf(stderr, "costprobe: unknown mode %s\n", argv[1]);
		return 2;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("ok=1 faults=%ld\n", ru.ru_minflt + ru.ru_majflt);
	return 0;
}
