/* libstack.so: a second preloaded library for stacking tests.  It wraps
 * mmap, mmap64 and malloc by forwarding to RTLD_NEXT, counts the calls it
 * saw, and says so at exit, so a test can check that both it and the shim
 * saw the program's calls, in either preload order.
 *
 * Its constructor maps 4 MiB and mallocs 4 MiB and records how much of each
 * was resident when the call returned: preloaded after the shim, it runs
 * before the shim's constructor, so this shows calls arriving early.  It
 * also registers fork handlers (before the shim's) that allocate and map,
 * as other libraries' handlers may.
 *
 * With LIBSTACK_FILL_MS=N its constructor also maps 16 MiB and starts a
 * thread that, N ms later, writes it page by page from the front: a
 * mapping made before the shim's constructor and filled after it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static unsigned long n_mmap, n_malloc;
static __thread int busy;

void *mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	static void *(*next)(void *, size_t, int, int, int, off_t);
	if (!next)
		next = dlsym(RTLD_NEXT, "mmap");
	__atomic_fetch_add(&n_mmap, 1, __ATOMIC_RELAXED);
	return next(a, l, p, f, fd, o);
}

void *mmap64(void *a, size_t l, int p, int f, int fd, off_t o)
{
	static void *(*next)(void *, size_t, int, int, int, off_t);
	if (!next)
		next = dlsym(RTLD_NEXT, "mmap64");
	__atomic_fetch_add(&n_mmap, 1, __ATOMIC_RELAXED);
	return next(a, l, p, f, fd, o);
}

static char early[4096];
static size_t early_used;

void *malloc(size_t n)
{
	static void *(*next)(size_t);
	if (!next) {
		if (busy) { /* dlsym allocating: serve it from a static buffer */
			void *p = early + early_used;
			early_used += (n + 15) & ~(size_t)15;
			return p;
		}
		busy = 1;
		next = dlsym(RTLD_NEXT, "malloc");
		busy = 0;
	}
	__atomic_fetch_add(&n_malloc, 1, __ATOMIC_RELAXED);
	return next(n);
}

static size_t early_map_res, early_malloc_res;
int libstack_ctor_ran;

static size_t resident(char *p, size_t len)
{
	static unsigned char vec[1024];
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n, i, r = 0;
	char *a = (char *)(((unsigned long)p + pg - 1) & ~(pg - 1));
	len -= (size_t)(a - p);
	n = len / pg;
	if (n > sizeof vec || mincore(a, n * pg, vec))
		return 0;
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

static void fork_handler(void)
{
	void *p = malloc(100), *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	free(p);
	if (m != MAP_FAILED)
		munmap(m, 1 << 20);
}

static char *fill_map;
static long fill_ms;

static void *filler(void *arg)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), i;
	struct timespec ts = { fill_ms / 1000, (fill_ms % 1000) * 1000000 };
	(void)arg;
	nanosleep(&ts, NULL);
	for (i = 0; i < (16u << 20); i += pg)
		fill_map[i] = 1;
	return NULL;
}

__attribute__((constructor)) static void early_calls(void)
{
	const char *f = getenv("LIBSTACK_FILL_MS");
	pthread_atfork(fork_handler, fork_handler, fork_handler);
	if (f && (fill_ms = atol(f)) > 0) {
		pthread_t t;
		fill_map = mmap(NULL, 16u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fill_map != MAP_FAILED && pthread_create(&t, NULL, filler, NULL) == 0)
			pthread_detach(t);
	}
	char *m = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = malloc(4 << 20);
	early_map_res = m == MAP_FAILED ? 0 : resident(m, 4 << 20);
	early_malloc_res = b ? resident(b, 4 << 20) : 0;
	libstack_ctor_ran = 1;
}

__attribute__((destructor)) static void report(void)
{
	char buf[160];
	int n = snprintf(buf, sizeof buf, "libstack: mmap=%lu malloc=%lu early_map_resident=%zu early_malloc_resident=%zu\n",
	                 n_mmap, n_malloc, early_map_res, early_malloc_res);
	if (write(2, buf, (size_t)n) < 0)
		return;
}
