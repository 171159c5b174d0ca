/* _Fork (glibc 2.34, async-signal-safe, no fork handlers) from a
 * multi-threaded program; the child maps and unmaps a buffer and exits. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
static void *churn(void *a)
{
	for (;;) {
		void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		((char *)p)[0] = 1;
		munmap(p, 1 << 20);
	}
	return a;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, churn, NULL);
	for (int i = 0; i < 300; i++) {
		pid_t c = _Fork();
		if (c == 0) {
			void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			munmap(p, 1 << 20);
			_exit(0);
		}
		int st;
		waitpid(c, &st, 0);
	}
	printf("300 children\n");
	return 0;
}
