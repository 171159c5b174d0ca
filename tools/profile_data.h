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
	struct psite *sites;
	size_t nsites;
	struct pcount *code, *stacks, *other;
	size_t ncode, nstacks, nother;
};

/* Every *.prof file in dir; returns 0, or -1 on an unreadable directory. */
int load_profiles(const char *dir, struct profile **out, int *n);
void merge_profiles(const struct profile *p, int n, struct profile *m);
void site_label(char *out, size_t cap, const struct psite *s);
/* 1.5 MiB, 320 KiB, 12 B */
void human_size(char *out, size_t cap, uint64_t v);
void json_string(FILE *f, const char *s);
int write_profile_json(const char *path, const struct profile *m, const struct profile *procs, int n, char **cmd,
                       int status);
int write_folded(const char *path, const struct profile *m);
int write_svg(const char *path, const struct profile *m, char **cmd);
int write_suggestion(const char *path, const struct profile *m, char **cmd);
#endif
