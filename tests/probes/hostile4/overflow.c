/* overflow [PAIRS [ROUNDS]]: a signal handler makes 2 x PAIRS calls of its own (mmap+munmap
 * of 4 KiB) while the interrupted thread is inside the shim: past GLUE_NESTED (16) notes the
 * shim cannot know which ranges changed.  Once, it forgot everything: every kept region
 * dropped from its table unmapped (a leak: still mapped, its budget given back, so the shim
 * kept more), and the address the program freed stayed mapped behind its back:
 * mmap(MAP_FIXED_NOREPLACE) there said EEXIST.  (Hostile review of c13cd3a.) */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define M (1 << 20)
#define N 8
static pthread_t main_t;
static volatile int stop;
static int pairs = 9;
static void handler(int sig)
{
	(void)sig;
	for (int i = 0; i < pairs; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, 4096);
	}
}
static void *kicker(void *a)
{
	(void)a;
	while (!stop) {
		pthread_kill(main_t, SIGUSR1);
		usleep(100);
	}
	return NULL;
}
static long status(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}
int main(int argc, char **argv)
{
	main_t = pthread_self();
	int rounds = argc > 2 ? atoi(argv[2]) : 300;
	if (argc > 1) pairs = atoi(argv[1]);
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	sigaction(SIGUSR1, &sa, NULL);
	long vm0 = status("VmSize");
	pthread_t t;
	pthread_create(&t, NULL, kicker, NULL);
	char *p[N];
	char *live = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(live, 'L', M);
	long nonzero = 0;
	for (int i = 0; i < rounds; i++) {
		for (int j = 0; j < N; j++) {
			p[j] = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			for (int k = 0; k < M; k += 4096)
				nonzero += p[j][k] != 0;
			memset(p[j], 1, M);
		}
		for (int j = 0; j < N; j++)
			munmap(p[j], M);
	}
	stop = 1;
	pthread_join(t, NULL);
	int eexist = 0;
	for (int j = 0; j < N; j++) {
		void *q = mmap(p[j], M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (q == MAP_FAILED && errno == EEXIST)
			eexist++;
		else if (q != MAP_FAILED)
			munmap(q, M);
	}
	long bad = 0;
	for (int k = 0; k < M; k++)
		bad += live[k] != 'L';
	printf("fresh pages not zero: %ld; live region bytes changed: %ld\n", nonzero, bad);
	long grow = status("VmSize") - vm0;
	printf("MAP_FIXED_NOREPLACE at the freed addresses: %d of %d EEXIST\n", eexist, N);
	printf("VmSize grew by more than 64 MiB: %s\n", grow > 65536 ? "yes" : "no");
	if (getenv("VERBOSE"))
		fprintf(stderr, "VmSize growth %ld kB, VmRSS %ld kB\n", grow, status("VmRSS"));
	return 0;
}
