/* A signal handler munmaps a live slice while the interrupted code is inside the shim (its
 * guard up: the handler's munmap goes straight to the kernel, untracked).  The slice's record
 * stays; a file mapping later placed at that address and unmapped is then "kept" as if it were
 * the anonymous slice, and the next anonymous mmap gets the file mapping back, cleared: the
 * file's data are overwritten with zeros. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define M (1 << 20)
static char *volatile S;
static volatile int fired;
static pthread_t main_t;
static void handler(int sig)
{
	(void)sig;
	if (S && !fired) {
		munmap(S, M);
		fired = 1;
	}
}
static void *kicker(void *a)
{
	(void)a;
	for (;;) {
		if (S && !fired)
			pthread_kill(main_t, SIGUSR1);
		usleep(20);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	int outside = argc > 1;
	char path[] = "/tmp/h20sigunmapXXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	char *data = malloc(M);
	memset(data, 'F', M);
	write(fd, data, M);
	main_t = pthread_self();
	struct sigaction sa = { .sa_handler = handler };
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t;
	pthread_create(&t, NULL, kicker, NULL);
	int attempt;
	for (attempt = 0; attempt < 3000; attempt++) {
		char *s = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		s[0] = 1;
		fired = 0;
		S = s;
		while (!fired && outside)
			;
		while (!fired) { /* churn through the shim: mmap, touch, munmap */
			char *q = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			q[0] = 1;
			munmap(q, M);
		}
		S = NULL;
		/* s is unmapped now (the handler did it).  Map the file there. */
		char *f = mmap(s, M, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (f != s) {
			if (f != MAP_FAILED)
				munmap(f, M);
			continue;
		}
		munmap(f, M);
		char *n = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char c = 0;
		pread(fd, &c, 1, 0);
		if (c != 'F') {
			printf("attempt %d: file's first byte is now %d (was 'F'); anon mmap returned %s\n", attempt, c,
			       n == s ? "the file mapping's address" : "elsewhere");
			return 1;
		}
		munmap(n, M);
	}
	printf("file intact after %d attempts\n", attempt);
	return 0;
}
