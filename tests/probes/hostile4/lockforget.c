/* A signal handler's no-op mprotect on a range the shim locked (lock rule), while the
 * interrupted thread is inside the shim: the nested note (gone=0) makes nested_changed
 * call unmapped() -> regions_forget: the shim forgets its own lock.  The program's later
 * MADV_DONTNEED then meets a lock the program never took: EINVAL instead of 0. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define M (1 << 20)
#define L (64 << 10)
static char *volatile R;
static volatile long fired;
static pthread_t main_t;
static volatile int stop;
static void handler(int sig)
{
	(void)sig;
	mprotect(R, L, PROT_READ | PROT_WRITE); /* no change */
	fired++;
}
static void *kicker(void *a)
{
	(void)a;
	while (!stop) {
		pthread_kill(main_t, SIGUSR1);
		usleep(50);
	}
	return NULL;
}
int main(void)
{
	R = mmap(NULL, L, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(R, 7, L);
	main_t = pthread_self();
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t;
	pthread_create(&t, NULL, kicker, NULL);
	for (int i = 0; i < 20000; i++) {
		char *q = mmap(NULL, M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q[0] = 1;
		munmap(q, M);
	}
	stop = 1;
	pthread_join(t, NULL);
	errno = 0;
	int rc = madvise(R, L, MADV_DONTNEED);
	printf("madvise(DONTNEED) on the program's own region: rc=%d errno=%s\n", rc, rc ? strerror(errno) : "-");
	printf("byte after DONTNEED: %d\n", R[0]);
	return 0;
}
