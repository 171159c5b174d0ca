/* liblockalloc.so: an allocator that, like jemalloc, maps its first chunk
 * while holding its start-up lock.  Preloaded *before* the shim, its mmap
 * goes through the shim's wrapper, whose first call resolves the next
 * definitions with dlsym; anything in there that calls malloc comes back
 * here under the lock.  The lock is an error-checking mutex, so re-entry is
 * said at once ("liblockalloc: malloc re-entered") and the process exits 97,
 * where jemalloc would hang.  Later chunks (64 MiB, or the block's size) are
 * mapped under the lock too, as jemalloc maps extents under an arena's. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static char *arena;
static size_t used, cap;

static void *take(size_t n)
{
	void *p = NULL;
	if (pthread_mutex_lock(&lock) != 0) {
		static const char m[] = "liblockalloc: malloc re-entered\n";
		write(2, m, sizeof m - 1);
		_exit(97);
	}
	n = (n + 15) & ~(size_t)15;
	if (!arena || n + 16 > cap - used) { /* a chunk, mapped under the lock */
		size_t want = n + 16 > (64u << 20) ? n + 16 : 64u << 20;
		void *a = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a != MAP_FAILED) {
			arena = a;
			cap = want;
			used = 0;
		}
	}
	if (arena && n + 16 <= cap - used) {
		p = arena + used + 16;
		((size_t *)p)[-1] = n;
		used += n + 16;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

void *malloc(size_t n) { return take(n); }
void free(void *p) { (void)p; }
void *calloc(size_t n, size_t s) { return n && s > SIZE_MAX / n ? NULL : take(n * s); } /* (fresh: zero) */
void *realloc(void *old, size_t n)
{
	void *p = take(n);
	if (p && old) {
		size_t o = ((size_t *)old)[-1];
		memcpy(p, old, o < n ? o : n);
	}
	return p;
}
void *memalign(size_t a, size_t n)
{
	char *p = take(n + a);
	if (!p)
		return NULL;
	p = (char *)(((uintptr_t)p + a - 1) & ~(uintptr_t)(a - 1));
	((size_t *)p)[-1] = n;
	return p;
}
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **r, size_t a, size_t n)
{
	void *p = memalign(a < 16 ? 16 : a, n);
	if (!p)
		return 12; /* ENOMEM */
	*r = p;
	return 0;
}
