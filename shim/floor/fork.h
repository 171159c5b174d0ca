/* fork.h: the three moments of fork, as every module's atfork hook sees
 * them (after musl's __*_atfork(who)).  init.c calls the hooks from one list
 * that states the lock order: prepare in list order, parent and child in
 * reverse. */
#ifndef PREFAULT_FORK_H
#define PREFAULT_FORK_H
enum { FORK_PREPARE, FORK_PARENT, FORK_CHILD };
#endif
