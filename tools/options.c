/* options.c: the one option parser of the commands, and their usage lines
 * (see struct command and struct opt in cli.h).
 *
 * Every command reads its options the same way: "-p POLICY" (the value as
 * the next word), flags, "--" to end them; a command that runs a program
 * stops at the first word that is not an option, which starts CMD; the
 * others (check, bench) take their operands from anywhere among the
 * options.  The messages are the same for every command:
 *   prefault NAME: unknown option -x          (then the usage line)
 *   prefault NAME: -p takes POLICY             (a value is missing; usage)
 *   prefault NAME: -n takes a whole number from 1 to 100
 *   prefault NAME: -p POLICY is required       (usage)
 *   prefault NAME: no command given            (usage)
 *   usage: prefault NAME SYNOPSIS
 * -h and --help print the usage line on stdout and exit 0. */
#include "cli.h"
#include "fmt.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void command_usage(const struct command *c, FILE *out)
{
	fprintf(out, "usage: prefault %s %s\n", c->name, c->synopsis);
}

static const struct opt *find_opt(const struct opt *opts, const char *w)
{
	for (; opts && opts->name; opts++)
		if (!strcmp(w, opts->name) || (opts->alias && !strcmp(w, opts->alias)))
			return opts;
	return NULL;
}

static int usage_error(const struct command *c)
{
	command_usage(c, stderr);
	return -1;
}

/* One option's value; 0, or -1 with a message printed. */
static int take(const struct command *c, const struct opt *o, const char *v)
{
	char *end;
	long n;
	switch (o->kind) {
	case OPT_FLAG:
		*(int *)o->dst = 1;
		return 0;
	case OPT_STR:
		*(const char **)o->dst = v;
		return 0;
	case OPT_INT:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno || end == v || *end || n < o->min || n > o->max) {
			fprintf(stderr, "prefault %s: %s takes a whole number from %d to %d\n", c->name, o->name, o->min, o->max);
			return -1;
		}
		*(int *)o->dst = (int)n;
		return 0;
	}
	return -1;
}

int opt_parse(const struct command *c, int argc, char **argv, const struct opt *opts, int *nargs)
{
	const struct opt *o;
	int i, w = 1, seen_dashes = 0;
	unsigned given = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (seen_dashes || a[0] != '-' || !a[1]) {
			if (c->flags & CMD_PROGRAM)
				break;
			argv[w++] = argv[i]; /* an operand, kept in order */
			continue;
		}
		if (!strcmp(a, "--")) {
			seen_dashes = 1;
			if (c->flags & CMD_PROGRAM) {
				i++;
				break;
			}
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			command_usage(c, stdout);
			exit(0);
		}
		o = find_opt(opts, a);
		if (!o) {
			fprintf(stderr, "prefault %s: unknown option %s\n", c->name, tty_str(a));
			return usage_error(c);
		}
		if (o->kind != OPT_FLAG && ++i == argc) {
			fprintf(stderr, "prefault %s: %s takes %s\n", c->name, a, o->what);
			return usage_error(c);
		}
		if (take(c, o, argv[i]) < 0)
			return -1;
		given |= 1u << (o - opts);
	}
	for (o = opts; o && o->name; o++)
		if (o->required && !(given & (1u << (o - opts)))) {
			fprintf(stderr, "prefault %s: %s %s is required\n", c->name, o->name, o->what);
			return usage_error(c);
		}
	if (!(c->flags & CMD_PROGRAM)) {
		*nargs = w - 1;
		return 1;
	}
	if (i >= argc) {
		fprintf(stderr, "prefault %s: no command given\n", c->name);
		return usage_error(c);
	}
	*nargs = argc - i;
	return i;
}
