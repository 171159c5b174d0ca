/* io.h: the few file calls lib's modules make (policy_file.c reads a
 * policy, sbuf.c writes a bound buffer out), given to them by the caller:
 * the shim hands them its floor's raw, counted system calls, which are
 * never cancellation points (glue_io, shim/floor/glue.c); the tool hands
 * them libc's (libc_io, tools/libc_io.c).  So lib/ calls nothing of anyone's: it
 * stays pure and below both.  Same contracts as the libc calls of the same
 * names: -1 with errno on failure. */
#ifndef PREFAULT_IO_H
#define PREFAULT_IO_H
#include <stddef.h>
#include <sys/types.h>

struct stat;
struct statfs;
struct io {
	int (*open)(const char *path, int flags);
	long (*read)(int fd, void *buf, size_t n);
	long (*write)(int fd, const void *buf, size_t n);
	int (*close)(int fd);
	int (*fstat)(int fd, struct stat *st);
	/* relative to a directory's descriptor (path_walk.h) */
	int (*openat)(int dfd, const char *path, int flags);
	long (*readlinkat)(int dfd, const char *path, char *buf, size_t n);
	int (*fstatfs)(int fd, struct statfs *st);
};
#endif
