/* cli.h: the command-line tool's internal interfaces. */
#ifndef PREFAULT_CLI_H
#define PREFAULT_CLI_H
#include <stddef.h>
#include <stdio.h>
#include "defs.h"
#include "policy.h"

#define EXIT_USAGE 2

/* paths.c: where the shim and the shipped policies are. */
const char *find_shim(void);
/* A policy argument: a path, or the name of a shipped policy.  Returns a
 * malloc'd absolute path, or NULL (with a message printed). */
char *resolve_policy(const char *arg);
/* Read and parse; on error print FILE:LINE: msg and return -1. */
int load_policy_file(const char *path, const char *shown, struct policy *pol);
void list_shipped(FILE *out);

/* cli_run.c */
int prepare_env(const char *policy_arg, const char *report);
/* The policy prepare_env checked, or NULL if none was given. */
const struct policy *prepared_policy(void);
int set_preload(const char *shim);
/* Does LD_PRELOAD hold the shim already? */
int preload_holds(const char *shim);
/* The same environment size as set_preload(shim), without the shim. */
int set_preload_twin(const char *shim);
int cmd_run(int argc, char **argv);

/* spread.c: a sample's least, median and greatest (v is sorted in place; n >= 1). */
struct spread {
	double lo, med, hi;
};
struct spread spread_of(double *v, int n);
int cmd_check(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_trial(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_bench(int argc, char **argv);
void usage(FILE *out);
#endif
