/* policy_file.h: reading a policy file, the same way in the shim and in
 * `prefault check`, so both give the same answer for every file.
 *
 * Only a regular file of at most POL_FILE_MAX bytes is read.  A FIFO, a
 * terminal, /dev/stdin on a pipe, a directory or /proc/self/mem is refused
 * without blocking and without consuming anyone's input; a read error is an
 * error, never an early end of file.  Calls only the io.h calls it is
 * given; no allocation. */
#ifndef PREFAULT_POLICY_FILE_H
#define PREFAULT_POLICY_FILE_H
#include <stddef.h>

/* Read path into buf (cap must exceed POL_FILE_MAX); NUL-terminated.
 * Returns 0 with *len set, or a reason (see policy_file_error). */
struct io;
int policy_file_read(const char *path, char *buf, size_t cap, size_t *len, const struct io *io);
/* What a policy_file_read failure means, for "FILE: <text>". */
const char *policy_file_error(int reason);

enum {
	PFR_OK,
	PFR_ERRNO,     /* open or read failed: errno says why */
	PFR_NOT_REG,   /* not a regular file */
	PFR_TOO_BIG,   /* larger than POL_FILE_MAX */
};
/* The errno of the last PFR_ERRNO in this thread is left in errno. */
#endif
