/* fmt.h: sbuf's helpers for stdio output (fmt.c). */
#ifndef PREFAULT_FMT_H
#define PREFAULT_FMT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 1.5 MiB, 320 KiB, 12 B */
void human_size(char *out, size_t cap, uint64_t v);
/* s as a line of text may show it: control characters and bytes that are
 * not UTF-8 escaped (\x1b, \n: sbuf.h's sb_text), so that a program's
 * name, a path or a policy's text cannot drive the terminal nor forge a
 * line.  For every such string the tool prints, on a terminal or into a
 * policy's comments.  One of 4 static buffers, taken in turn: up to 4 in
 * one printf. */
const char *tty_str(const char *s);
/* A JSON string literal, quotes included (valid UTF-8, always). */
void json_string(FILE *f, const char *s);
/* Close an output file the tool wrote with stdio: 0, or -1 with "TOOL:
 * cannot write PATH: why" said, if any write or the close failed (a full
 * disk, /dev/full): a file that is not whole is never reported written. */
int close_output(FILE *f, const char *path, const char *tool);
/* Open an output file the user named, as fopen(path, "w") does, but never
 * through a symlink that another user made in a sticky shared directory
 * (/tmp), on the way (path_walk.h) or as the file itself: NULL with errno
 * (EPERM for such a link).  For every file the tool writes for the user. */
FILE *open_output(const char *path);
/* Can an output file be written at path when the work is done?  (Asked
 * before a long run, not found out after it; errno says why not.) */
int output_writable(const char *path);
/* All of buf to fd with write(2), again after EINTR; gives up on an error
 * (no stdio, no malloc: safe beside a fork and in a child before exec). */
void write_all(int fd, const void *buf, size_t n);
#endif
