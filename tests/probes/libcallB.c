/* libcallB: a library whose lib_map maps 1 MiB, for tests of caller
 * matching across dlclose and dlopen (issue 14 #27).  libcallA.c and
 * libcallB.c are the same code, so that one can load where the other was. */
#include <stddef.h>
#include <sys/mman.h>

void *lib_map(size_t len);

void *lib_map(size_t len)
{
	/* Use the result, so the call is not a tail call: the shim must see
	 * this library, not our caller, as the calling object. */
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		p[0] = 'B';
	return p;
}
