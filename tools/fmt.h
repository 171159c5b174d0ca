/* fmt.h: sbuf's helpers for stdio output (fmt.c). */
#ifndef PREFAULT_FMT_H
#define PREFAULT_FMT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 1.5 MiB, 320 KiB, 12 B */
void human_size(char *out, size_t cap, uint64_t v);
/* A JSON string literal, quotes included (valid UTF-8, always). */
void json_string(FILE *f, const char *s);
/* All of buf to fd with write(2), again after EINTR; gives up on an error
 * (no stdio, no malloc: safe beside a fork and in a child before exec). */
void write_all(int fd, const void *buf, size_t n);
#endif
