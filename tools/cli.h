/* cli.h: the command-line tool's internal interfaces. */
#ifndef PREFAULT_CLI_H
#define PREFAULT_CLI_H
#include <stddef.h>
#include <stdio.h>
#include "defs.h"
#include "policy.h"

#define EXIT_USAGE 2

/* libc_io.c: libc's file calls, for lib/ (io.h). */
struct io;
extern const struct io libc_io;

/* paths.c: where the shim and the shipped policies are. */
/* The shim's path as the loader may be handed it in LD_PRELOAD: where the
 * shim is, or, when that path holds a space, ':' or '$', a link to it in a
 * private directory (removed at exit, or by shim_alias_remove).
 * PREFAULT_SHIM, when set, is handed on as it is (it may be a list: a
 * sanitizer's runtime first).  NULL if there is none (a message may have
 * been printed). */
const char *find_shim(void);
void shim_alias_remove(void);
/* A policy argument: a path (it has a '/'), or the name of a shipped
 * policy, never a file in the current directory (that is ./NAME; a note
 * says which was taken when both exist).  Returns a malloc'd absolute
 * path, or NULL (with a message printed). */
char *resolve_policy(const char *arg);
/* Read and parse; on error print FILE:LINE: msg and return -1. */
int load_policy_file(const char *path, const char *shown, struct policy *pol);
void list_shipped(FILE *out);

/* cause.c: why the shim cannot load into PROGRAM (argv[0], looked up in
 * PATH), as read from its file: statically linked, set-user-ID or -group-ID,
 * file capabilities; a sentence ending in "(checked)...".  NULL if the file
 * shows no such cause. */
const char *shim_cannot_load(const char *program);
/* Why PROGRAM, which ended with wait status WSTATUS, left no report: killed
 * by a signal, one of the causes above, or what is left once they are ruled
 * out.  A clause for after "...: ", in buf. */
const char *why_no_report(const char *program, int wstatus, char *buf, size_t cap);

/* env.c: the environment a program runs in under the shim. */
int prepare_env(const char *policy_arg, const char *report);
/* The policy prepare_env checked, or NULL if none was given. */
const struct policy *prepared_policy(void);
int set_preload(const char *shim);
/* Under a seccomp filter the tool inherited: PREFAULT_SECCOMP=trust:N for
 * the shim where a child of ours lived through the shim's calls, or a
 * warning that the shim will stay out of the program's way (seccomp.c). */
void seccomp_vouch(void);
/* Does LD_PRELOAD hold the shim already? */
int preload_holds(const char *shim);
/* The same environment size as set_preload(shim), without the shim. */
int set_preload_twin(const char *shim);
/* What one transparent huge page covers here: the kernel's
 * hpage_pmd_size, read once; 2 MiB where it does not say (x86-64's, and
 * arm64's with 4 KiB pages). */
size_t cli_hpage_size(void);

/* spread.c: a sample's least, median and greatest (v is sorted in place; n >= 1). */
struct spread {
	double lo, med, hi;
};
struct spread spread_of(double *v, int n);

/* The commands: prefault.c's table (git's commands[]) drives dispatch,
 * `prefault --help` and each command's usage error. */
struct command;
typedef int command_fn(const struct command *self, int argc, char **argv);
struct command {
	const char *name;
	command_fn *fn;          /* argv[0] is the command's name */
	const char *synopsis;    /* after "prefault NAME " */
	const char *help;        /* what it does, lines indented for --help */
	unsigned flags;          /* CMD_* */
};
/* The options end at the first word that is not one: CMD [ARGS...] (else
 * the operands may stand anywhere among the options). */
#define CMD_PROGRAM 1u
/* The exit status is the program's: the tool dies of the signal the
 * program died of (child_exit). */
#define CMD_PROGRAM_STATUS 2u
command_fn cmd_run, cmd_check, cmd_profile, cmd_trial, cmd_tune, cmd_bench;

/* options.c: the one option parser.  An array of these, ended by one with
 * a NULL name. */
enum opt_kind {
	OPT_FLAG, /* dst: int *, set to 1 */
	OPT_STR,  /* dst: const char **, the next word */
	OPT_INT,  /* dst: int *, the next word, a whole number from min to max */
};
struct opt {
	const char *name;  /* "-p" */
	const char *alias; /* "--policy", or NULL */
	enum opt_kind kind;
	void *dst;
	const char *what;  /* the value, as the synopsis names it: "POLICY" */
	int min, max;      /* OPT_INT */
	int required;
};
#define OPT_S(name, alias, dst, what) { name, alias, OPT_STR, dst, what, 0, 0, 0 }
#define OPT_F(name, dst) { name, NULL, OPT_FLAG, dst, NULL, 0, 0, 0 }
#define OPT_I(name, dst, what, lo, hi) { name, NULL, OPT_INT, dst, what, lo, hi, 0 }
#define OPT_END { NULL, NULL, OPT_FLAG, NULL, NULL, 0, 0, 0 }
/* Parse argv[1..] (argv[0] is the command's name).  Returns the index of
 * the first operand (for a CMD_PROGRAM command, CMD) with *nargs set to
 * the number of operands, or -1 after printing what is wrong (exit 2).
 * For other commands the operands are moved to argv[1..*nargs]. */
int opt_parse(const struct command *c, int argc, char **argv, const struct opt *opts, int *nargs);
/* "usage: prefault NAME SYNOPSIS" */
void command_usage(const struct command *c, FILE *out);
#endif
