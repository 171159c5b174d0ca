/* xz.h: a small decoder for the .xz container with the LZMA2 filter, the
 * format of MiniDebugInfo (an ELF file's .gnu_debugdata section: an
 * xz-compressed ELF file holding a .symtab).  The product depends on libc
 * alone, so this stands in for liblzma: decoding only, whole buffers only,
 * LZMA2 as the only filter (what `xz` writes by default, and what
 * find-debuginfo uses).  The input is untrusted: every read is
 * bounds-checked, the CRC32 of each header and the index, and each block's
 * CRC32 or CRC64, are verified, and the output never grows past a limit the
 * caller sets.  Pure (malloc only); fuzzed by tests/fuzz/fuzz_xz.c. */
#ifndef PREFAULT_XZ_H
#define PREFAULT_XZ_H
#include <stddef.h>
#include <stdint.h>

/* Decode the .xz data in[0, n) (one stream or several concatenated, with
 * stream padding) into a malloc'd buffer of at most max_out bytes.
 * Returns 0 with *out (free it) and *out_len set, or -1 with *why a static
 * message saying what was wrong (and *out NULL). */
int xz_decode(const uint8_t *in, size_t n, size_t max_out, uint8_t **out, size_t *out_len, const char **why);

/* The checksums xz uses (also the CRC32 of .gnu_debuglink). */
uint32_t xz_crc32(uint32_t crc, const uint8_t *p, size_t n);
uint64_t xz_crc64(uint64_t crc, const uint8_t *p, size_t n);
#endif
