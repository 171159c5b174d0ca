/* A thread cancels itself, then calls exit(3).  exit is not a cancellation
 * point, so the process exits 3.  The shim's report at exit must not be one
 * either (issue 22 #1: with open and write it was, and the process hung or
 * left with the wrong status). */
#include <pthread.h>
#include <stdlib.h>
static void *thread(void *a)
{
	(void)a;
	pthread_cancel(pthread_self());
	exit(3);
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thread, NULL);
	pthread_join(t, NULL);
	return 0;
}
