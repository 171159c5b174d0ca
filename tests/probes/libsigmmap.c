/* libsigmmap.so: an mmap interposer preloaded behind the shim that, once
 * armed (x_armed = 1), raises SIGUSR1 inside the next mmap, before making
 * it: the program's signal handler then runs while the shim is passing the
 * program's call on (helper-38: FORWARD let a handler's own mmap through
 * unseen). */
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>

int x_armed;

void *mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	static void *(*n)(void *, size_t, int, int, int, off_t);
	if (!n)
		n = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (x_armed) {
		x_armed = 0;
		raise(SIGUSR1);
	}
	return n(a, l, p, f, fd, o);
}
