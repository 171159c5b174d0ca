/* io.h: the few file calls of the modules the shim shares with the
 * command-line tool (policy_file.c, sbuf.c).  Each side links its own:
 * the shim's (shim/floor/glue.c) are its raw, counted system calls, which are never
 * cancellation points; the tool's (tools/io.c) are libc's.  Same contract
 * as the libc calls of the same names: -1 with errno on failure. */
#ifndef PREFAULT_IO_H
#define PREFAULT_IO_H
#include <stddef.h>
#include <sys/types.h>

struct stat;
int io_open(const char *path, int flags);
long io_read(int fd, void *buf, size_t n);
long io_write(int fd, const void *buf, size_t n);
int io_close(int fd);
int io_fstat(int fd, struct stat *st);
#endif
