/* profile_data.h: per-process profiles as the shim writes them
 * (lib/profile_format.h), named and merged. */
#ifndef PREFAULT_PROFILE_DATA_H
#define PREFAULT_PROFILE_DATA_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "profile_format.h"

struct psite {
	char caller[128], symbol[256], call[8], kind[24], prot[8];
	uint64_t size_class;
	PROFILE_SITE_COUNTS(PROFILE_X_MEMBER) /* lib/profile_format.h */
	/* where it was seen (profile_program fills these in the merged view) */
	int in_root;             /* in the process we started */
	char programs[128];      /* the other processes' program names, space separated */
};

struct pcount {
	char *a, *b; /* code: object, symbol; other: where; stack: folded frames */
	uint64_t n;
};

struct profile {
	long pid, ppid;
	char program[256], exe[1024];
	int perf_ok;
	char perf_why[256];
	PROFILE_COUNTS(PROFILE_X_MEMBER) /* lib/profile_format.h */
	/* A snapshot: the process did not reach its exit (killed, or exec'd),
	 * and its file is the last snapshot the shim wrote of it.  In a merged
	 * view, how many processes left only a snapshot. */
	int snapshot;
	uint64_t snap_ns;        /* when (CLOCK_MONOTONIC) */
	uint64_t snap_age_ns;    /* how long after the process's start */
	int64_t snap_before_end_ns; /* how long before its end, where known (the program we ran); -1: unknown */
	struct psite *sites;
	size_t nsites;
	struct pcount *code, *stacks, *other;
	size_t ncode, nstacks, nother;
};

/* The program's faults: the process's, less the shim's own. */
uint64_t program_faults(const struct profile *p);
/* The program's sampled faults (the shares in the tables are of these). */
uint64_t program_sampled(const struct profile *p);

/* Every *.prof file in dir, its code addresses named (symbols.h); returns
 * 0, or -1 on an unreadable directory.  A file of another format version
 * is skipped with a message on stderr naming both versions. */
int load_profiles(const char *dir, struct profile **out, int *n);
/* One file (0, or -1 with a message in why[cap]: unreadable, another
 * version, no "end" line, a record with the wrong number of fields). */
int load_profile(const char *path, struct profile *p, char *why, size_t cap);
void merge_profiles(const struct profile *p, int n, struct profile *m);
/* The same site (caller, symbol, call, size class, kind)? */
int same_site(const struct psite *a, const struct psite *b);
/* A site as people read it: the symbol, or object and symbol. */
void site_label(char *out, size_t cap, const struct psite *s);
int write_profile_json(const char *path, const struct profile *m, const struct profile *procs, int n, char **cmd,
                       int status);
int write_folded(const char *path, const struct profile *m);
int write_svg(const char *path, const struct profile *m, char **cmd);
/* The table's first lines: the faults, the program's and the shim's, and
 * how many of the program's were sampled: figures that add up. */
void print_profile_counts(FILE *o, const struct profile *m, int nproc, const char *cmd);
int write_suggestion(const char *path, const struct profile *m, char **cmd);
#endif
