/* libc_io.c: the tool's file calls for lib/ (io.h): libc's own. */
#include "cli.h"
#include "io.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static int io_open(const char *path, int flags) { return open(path, flags); }
static long io_read(int fd, void *buf, size_t n) { return (long)read(fd, buf, n); }
static long io_write(int fd, const void *buf, size_t n) { return (long)write(fd, buf, n); }
static int io_close(int fd) { return close(fd); }
static int io_fstat(int fd, struct stat *st) { return fstat(fd, st); }
static int io_openat(int dfd, const char *path, int flags) { return openat(dfd, path, flags); }
static long io_readlinkat(int dfd, const char *path, char *buf, size_t n) { return (long)readlinkat(dfd, path, buf, n); }

static int io_fstatfs(int fd, struct statfs *st) { return fstatfs(fd, st); }

const struct io libc_io = { io_open, io_read, io_write, io_close, io_fstat, io_openat, io_readlinkat, io_fstatfs };
