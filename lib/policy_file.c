/* policy_file.c: see policy_file.h. */
#include "policy_file.h"
#include "defs.h"
#include "io.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

int policy_file_read(const char *path, char *buf, size_t cap, size_t *len, const struct io *io)
{
	struct stat st;
	size_t n = 0;
	int fd, e;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer.  It is
	 * refused below before anything is read. */
	fd = io->open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return PFR_ERRNO;
	if (io->fstat(fd, &st) != 0) {
		e = errno;
		io->close(fd);
		errno = e;
		return PFR_ERRNO;
	}
	if (!S_ISREG(st.st_mode)) {
		io->close(fd);
		return PFR_NOT_REG;
	}
	for (;;) {
		long r;
		if (n == cap - 1) { /* full: one byte more than the limit was asked for */
			io->close(fd);
			return PFR_TOO_BIG;
		}
		r = io->read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			io->close(fd);
			errno = e;
			return PFR_ERRNO;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > POL_FILE_MAX) {
			io->close(fd);
			return PFR_TOO_BIG;
		}
	}
	io->close(fd);
	buf[n] = '\0';
	*len = n;
	return PFR_OK;
}

const char *policy_file_error(int reason)
{
	switch (reason) {
	case PFR_NOT_REG: return "not a regular file (a policy is a text file)";
	case PFR_TOO_BIG: return "policy larger than 64 KiB";
	default: break;
	}
	switch (errno) {
	case ENOENT: return "no such file or directory";
	case EACCES: return "permission denied";
	case ELOOP: return "too many levels of symbolic links";
	case ENAMETOOLONG: return "file name too long";
	case ENOTDIR: return "a component of the path is not a directory";
	case EISDIR: return "is a directory";
	case EIO: return "input/output error";
	default: return "cannot read";
	}
}
