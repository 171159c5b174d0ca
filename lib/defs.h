/* defs.h: constants the shim and the command-line tool share, defined once. */
#ifndef PREFAULT_DEFS_H
#define PREFAULT_DEFS_H

#define PF_VERSION "0.2.0"

/* recycle_max when a rule does not say: the most a rule keeps for reuse. */
#define RECYCLE_MAX_DEFAULT (64ull << 20)

/* reserve when a carve rule does not say: the most one of its reserves
 * maps (a whole number of huge pages, at least one; the huge page size is
 * the system's, hpage_pmd_size). */
#define CARVE_RESERVE_DEFAULT (64ull << 20)
/* At most this many slices to a huge page: past it, RSS would come in steps
 * too large for what carving is for (a 1 MiB arena on arm64's 32 MiB huge
 * pages with 16 KiB base pages, or 512 MiB with 64 KiB: one touch, 32 or 512
 * MiB resident), and hugepage_check would populate a quarter of one to
 * judge.  CPython's arenas on 2 MiB huge pages: 2 (1 MiB) or 8 (256 KiB). */
#define CARVE_SLICES_MAX 8
/* The reserves carve keeps track of at once, for the report (carve.c):
 * past it, more are made and left out of the report's figures. */
#define CARVE_RESERVES_MAX 1024

/* A constant as a string, for messages: DEFS_STR(CARVE_SLICES_MAX) is "8". */
#define DEFS_STR_(x) #x
#define DEFS_STR(x) DEFS_STR_(x)

/* The largest policy file, in bytes: the shim reads it into a static
 * buffer before main, `prefault check` into the same size. */
#define POL_FILE_MAX (64u << 10)

#endif
