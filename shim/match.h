/* match.h: which rule, if any, a request falls under.
 *
 * Rules are tried in file order and the first match wins.  Everything a rule
 * tests is a property of the request except the calling object, which is
 * found from the wrapper's return address with dladdr and cached by address,
 * so dladdr runs once per call site, not once per call.  The cache is
 * dropped whenever a library has been unloaded since it was filled
 * (dl_iterate_phdr's load and unload counters): a library loaded later at
 * the same address is another object.
 */
#ifndef PREFAULT_MATCH_H
#define PREFAULT_MATCH_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "policy.h"

struct request {
	unsigned call;      /* CALL_MMAP, CALL_MALLOC or CALL_STACK */
	size_t len;         /* bytes requested */
	unsigned mk;        /* MK_* properties of the request */
	unsigned pk;        /* PK_* */
	int prot, flags, fd;
	off_t off;
	const void *hint;   /* the address argument of mmap */
	const void *ret;    /* return address in the calling object */
	uint32_t epoch;     /* the learner's age count when it saw it (auto_request), else 0 */
	uint16_t weight;    /* of each 1024 bytes of it, what the learner counts as coming (auto_request), else 0 */
};

/* Compile the policy for this process (program-name globs are decided here). */
void match_setup(const struct policy *pol, const char *argv0_base, const char *exe_base);
/* Smallest size any enabled rule of this call kind could match. */
extern uint64_t match_min_size[2]; /* [0] mmap, [1] malloc */
extern int match_nrules;
int match_request(const struct request *rq);
/* A request for anonymous private read-write memory (malloc blocks, stacks). */
void match_anon_request(struct request *rq, unsigned call, size_t len, const void *ret);
/* Describe mmap arguments as MK_* / PK_* bits. */
void match_classify_mmap(struct request *rq, int prot, int flags, int fd);
/* The object a return address lies in, as caller globs see its name (the
 * main program by its file's name), and its load base: 0, or -1 if dladdr
 * does not know it.  The name stays valid (the table only grows). */
int match_caller(const void *ret, const char **name, uintptr_t *base);
/* fork: the object table's lock is held across it. */
void match_atfork(int who);
#endif
