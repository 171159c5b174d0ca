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
 *   nochunk N SIZE         as cycles at TOUCH 1, run again under a seccomp
 *                          filter that fails every anonymous mmap of 32 to
 *                          128 KiB with ENOMEM: the shim's bookkeeping (chunks
 *                          of records, the blocks table), as in a process
 *                          out of memory; the program's own calls must all
 *                          succeed
 *   nochunkm N SIZE        the same with pairs (malloc SIZE, free)
 *   nothread N SIZE        as cycles at TOUCH 1, run again where no thread
 *                          can start (clone3 and clone fail with EAGAIN)
 *   notable N SIZE         as cycles at TOUCH 1, run again where every
 *                          anonymous mmap of 140 to 512 KiB fails with ENOMEM:
 *                          the shim's tables mapped when first used (the
 *                          caller matching's, the learner's sites)
 *
 * Sizes take K, M, G suffixes.  Prints ok=1 and the faults taken (faults=).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

static void install(struct sock_filter *f, unsigned short n)
{
	struct sock_fprog prog = { n, f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		exit(2);
	}
}

/* From here on, every anonymous mmap of 32 to 128 KiB that leaves the
 * address to the kernel fails with ENOMEM: the shim's bookkeeping (64 KiB
 * chunks of records, the first blocks table), not the program's SIZE, nor
 * the loader's own small maps and MAP_FIXED pieces. */
static void fail_maps(unsigned lo, unsigned hi)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 9),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 0, 7),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_FIXED | MAP_FIXED_NOREPLACE, 6, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, hi, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOMEM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	install(f, sizeof f / sizeof f[0]);
}

/* From here on, no thread can start: clone3 and clone fail with EAGAIN, as
 * at RLIMIT_NPROC. */
static void fail_threads(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	install(f, sizeof f / sizeof f[0]);
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
	} else if (!strcmp(argv[1], "nochunk") || !strcmp(argv[1], "nochunkm") || !strcmp(argv[1], "nothread") ||
	           !strcmp(argv[1], "notable")) {
		/* (the filter goes in before an exec: the shim steps aside for a
		 * program that installs one itself, tests/invisible.bats) */
		char *v[] = { argv[0], "cycles", argv[2], argv[3], "1", NULL };
		if (argv[1][7] == 'm') {
			v[1] = "pairs";
			v[4] = NULL;
		}
		if (!strcmp(argv[1], "nothread"))
			fail_threads();
		else if (!strcmp(argv[1], "notable"))
			fail_maps(140u << 10, 512u << 10);
		else
			fail_maps(32u << 10, 128u << 10);
		/* (and an inherited filter is trusted only when the shim is told:
		 * this one fails calls, it never kills, as Docker's profile) */
		setenv("PREFAULT_SECCOMP", "trust", 0);
		execv("/proc/self/exe", v);
		perror("execv");
		return 2;
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
