/* profile_data.h: per-process profiles as the shim writes them, merged. */
#ifndef PREFAULT_PROFILE_DATA_H
#define PREFAULT_PROFILE_DATA_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct psite {
	char caller[128], symbol[256], call[8], kind[24], prot[8];
	uint64_t size_class, size_min, size_max, maps, unmaps, bytes, touched, faults;
	/* how soon after the map the program touches it (profile format 2) */
	uint64_t ranges_faulted; /* mapped ranges that took a sampled fault */
	uint64_t ranges_early;   /* ... whose first one came within 5 ms of the map */
	uint64_t faults_early;   /* sampled faults within 5 ms of their range's map */
	uint64_t delay_us;       /* sum over ranges of the time from map to first fault */
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
	uint64_t period, sampled, lost, unattributed, in_shim, minor, major;
	/* what the shim's fixed tables could not hold (a "limits" line) */
	uint64_t unsampled_threads, dropped_code, dropped_stacks, dropped_other, merged_sites, untracked_ranges;
	struct psite *sites;
	size_t nsites;
	struct pcount *code, *stacks, *other;
	size_t ncode, nstacks, nother;
};

/* Every *.prof file in dir; returns 0, or -1 on an unreadable directory. */
int load_profiles(const char *dir, struct profile **out, int *n);
void merge_profiles(const struct profile *p, int n, struct profile *m);
/* The same site (caller, symbol, call, size class, kind)? */
int same_site(const struct psite *a, const struct psite *b);
/* A site as people read it: the symbol, or object and symbol. */
void site_label(char *out, size_t cap, const struct psite *s);
int write_profile_json(const char *path, const struct profile *m, const struct profile *procs, int n, char **cmd,
                       int status);
int write_folded(const char *path, const struct profile *m);
int write_svg(const char *path, const struct profile *m, char **cmd);
int write_suggestion(const char *path, const struct profile *m, char **cmd);
#endif
