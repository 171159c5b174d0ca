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

/* The largest policy file, in bytes: the shim reads it into a static
 * buffer before main, `prefault check` into the same size. */
#define POL_FILE_MAX (64u << 10)

#endif
