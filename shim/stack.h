/* stack.h: prefaulting thread stacks (call = stack rules). */
#ifndef PREFAULT_STACK_H
#define PREFAULT_STACK_H
#include <pthread.h>
#include "policy.h"

void stack_setup(const struct policy *pol);
/* In place of pthread_create's start routine and argument when a stack rule
 * matches (or the profile needs every thread): the new thread prefaults its
 * own stack, then runs the program's routine.  Returns 1 if *fn and *arg
 * were replaced. */
int stack_wrap(void *(**fn)(void *), void **arg, const pthread_attr_t *attr, const void *ret);
/* pthread_create failed: give the trampoline back. */
void stack_unwrap(void *arg);
/* The main thread, once, from the constructor. */
void stack_main(void);
#endif
