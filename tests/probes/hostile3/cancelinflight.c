/* A cancellation already on its way when the shim turns cancellation off.
 *
 * glibc up to 2.36 acts on SIGCANCEL in a thread of asynchronous type even
 * with its state set to PTHREAD_CANCEL_DISABLE: pthread_cancel sees the
 * state enabled and sends the signal; if the thread disables cancellation
 * before the signal lands, the handler checks only the type.  The shim's
 * guard (glue.h) turns cancellation off in such threads so that no lock of
 * its own is left held; CI's TSan pass hung on that race about once in a
 * hundred runs of cancelmalloc (a thread cancelled in regions_take_exact,
 * the region lock held).  A plain C loop that disables, works and enables
 * again is cancelled with cancellation disabled about 7 times in 20,000
 * cancellations on Debian 12's glibc 2.36.
 *
 * Here the race is made certain: this program's own pthread_setcancelstate
 * (exported, so the shim's calls bind to it) sends SIGCANCEL to its thread
 * right after every PTHREAD_CANCEL_DISABLE, as a signal in flight would
 * land.  A cleanup handler counts the cancellations that act while the
 * state is still disabled.  The thread maps, touches and unmaps 1 MiB 64
 * times in asynchronous mode, and ends either cancelled (the cancellation
 * acted once the state was enabled again) or by returning (a glibc whose
 * handler checks the state ignores the bare signal).  Each map thread's
 * first mapping is made with MAP_FIXED over a PROT_NONE reservation of the
 * main thread's (so that no runtime's own mapping takes the range meanwhile,
 * as ASan's did) and is kept: it must be there afterwards, writable, as
 * without the shim (a cancellation acting
 * between pf_mmap's two halves left no mapping, and stranded its budget
 * charge or kept region: hostile review of d74664f).  Then 20 threads fork
 * once each in asynchronous mode: the shim's fork handlers hold every lock
 * of its own from prepare to parent, and block SIGCANCEL for it (a kernel
 * mask, which this program cannot race): each child must exit with its own
 * status and the thread must find SIGCANCEL unblocked after.  Then 20
 * threads whose first call into the shim is unshare(0), counted with no
 * guard: the first count of a thread takes the list lock (stats.c).
 * Prints: whether the shim disabled cancellation in the map and
 * first-count threads, the cancellations that acted while disabled, the
 * first mappings present, the children that exited with their own status,
 * the fork threads that found SIGCANCEL blocked, and how many threads ended
 * cancelled. */
#include <dlfcn.h>
#include <sched.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIGCANCEL_ (SIGRTMIN - 2) /* glibc's SIGCANCEL (32): SIGRTMIN is 34 */

static __thread volatile int victim, disabled;
static volatile int disables[4], while_disabled, own_status, left_blocked;
static char *volatile hint;

int pthread_setcancelstate(int state, int *old)
{
	static int (*real)(int, int *);
	int r;
	if (!real)
		real = (int (*)(int, int *))dlsym(RTLD_NEXT, "pthread_setcancelstate");
	if (state != PTHREAD_CANCEL_DISABLE)
		disabled = 0; /* (a cancellation may act inside the real call: no longer ours to count) */
	r = real(state, old);
	if (r == 0 && state == PTHREAD_CANCEL_DISABLE && victim && !disabled) {
		disabled = 1;
		__atomic_add_fetch(&disables[victim], 1, __ATOMIC_RELAXED);
		syscall(SYS_tgkill, getpid(), gettid(), SIGCANCEL_);
	}
	return r;
}

static void cleanup(void *a)
{
	(void)a;
	if (disabled)
		__atomic_add_fetch(&while_disabled, 1, __ATOMIC_RELAXED);
}

static void *worker(void *a)
{
	int i;
	pthread_cleanup_push(cleanup, NULL);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	victim = a ? *(int *)a : 1;
	if (victim == 3) /* a first call counted with no guard: unshare(0) changes nothing */
		unshare(0);
	if (victim == 2) { /* fork */
		unsigned long mask[2] = { 0, 0 };
		int st = -1;
		pid_t p = fork();
		if (p == 0)
			_exit(7);
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 7)
			__atomic_add_fetch(&own_status, 1, __ATOMIC_RELAXED);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, mask, 8);
		if (mask[0] & (1ul << (SIGCANCEL_ - 1)))
			__atomic_add_fetch(&left_blocked, 1, __ATOMIC_RELAXED);
	}
	if (victim == 1) /* kept: it must be there afterwards */
		mmap(hint, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	for (i = 0; i < 64 && victim == 1; i++) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			m[0] = 1;
			munmap(m, 1 << 20);
		}
	}
	victim = 0;
	pthread_cleanup_pop(0);
	return NULL;
}

/* Is the mapping that holds p writable?  (/proc/self/maps) */
static int writable_at(const void *p)
{
	char line[512];
	unsigned long s, e;
	char perms[8];
	int r = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 && s <= (unsigned long)p && (unsigned long)p < e) {
			r = perms[1] == 'w';
			break;
		}
	if (f)
		fclose(f);
	return r;
}

static void *idle(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	int i, cancelled = 0, present = 0, n = 20, kind[2] = { 2, 3 };
	pthread_t t0;
	/* glibc installs its SIGCANCEL handler at the first pthread_cancel:
	 * one first, as in the race (without it the bare signal kills). */
	pthread_create(&t0, NULL, idle, NULL);
	pthread_cancel(t0);
	pthread_join(t0, NULL);
	for (i = 0; i < 3 * n; i++) {
		pthread_t t;
		void *r;
		hint = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		pthread_create(&t, NULL, worker, i < n ? NULL : &kind[i / n - 1]);
		pthread_join(t, &r);
		cancelled += r == PTHREAD_CANCELED;
		present += i < n && writable_at(hint);
		munmap(hint, 1 << 20);
	}
	printf("disables in map %d count %d, cancelled while disabled %d; first mappings present %d, children's own "
	       "status %d, SIGCANCEL left blocked %d of %d; threads cancelled %d of %d\n",
	       disables[1] > 0, disables[3] > 0, while_disabled, present, own_status, left_blocked, n, cancelled, 3 * n);
	return 0;
}
