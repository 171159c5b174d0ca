/* single: what glibc's __libc_single_threaded says at main, after a thread
 * of the program's own (joined), and whether that thread ran (helper-34:
 * the shim's start-up threads, joined before main, left it 0 for good under
 * --auto and a background rule; libstdc++ takes its paths by it).
 *
 *   single [thread]   prints main=N [after=N]
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>

static void *nothing(void *arg) { return arg; }

int main(int argc, char **argv)
{
	pthread_t t;
	printf("main=%d", __libc_single_threaded);
	if (argc > 1 && !strcmp(argv[1], "thread")) {
		if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		printf(" after=%d", __libc_single_threaded);
	}
	printf("\n");
	return 0;
}
