/* io.c: the tool's side of shim/io.h: libc's own calls. */
#include "io.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int io_open(const char *path, int flags) { return open(path, flags); }
long io_read(int fd, void *buf, size_t n) { return (long)read(fd, buf, n); }
long io_write(int fd, const void *buf, size_t n) { return (long)write(fd, buf, n); }
int io_close(int fd) { return close(fd); }
int io_fstat(int fd, struct stat *st) { return fstat(fd, st); }
