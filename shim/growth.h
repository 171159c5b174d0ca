/* growth.h: the program's page faults, counted by the kernel, as a signal
 * to the learner's watcher (growth.c).
 *
 * Soft budget: what is kept past the extra is safe only while the program
 * does not grow with no call the shim sees.  The watcher looked at RSS
 * every 10 ms, and a program that wrote an old mapping at 5 us a page grew
 * 7.7 MiB between two looks, past the line by that.  With this, while the
 * event is armed, every GROWTH_PERIOD bytes of faults (at the base page
 * size) end the watcher's sleep, and it looks then.
 *
 *   growth_init      at start-up: may the guard have one (soft; not a
 *                    test's PREFAULT_TEST_NO_PERF)?  No system call.
 *   growth_arm       from the watcher, its thread the signal's target:
 *                    opened at the first (on the main thread, the threads
 *                    it starts after inheriting it), then enabled.  -1:
 *                    none (perf refused, a seccomp filter in place): the
 *                    guard polls as before.
 *   growth_wait      the watcher's sleep on its word while armed: 1 when
 *                    faults came, 0 a wake or the time, -1 never again
 *                    (the signal is the program's too).
 *   growth_disarm    disabled, the signal sent to nobody: before the
 *                    watcher sleeps otherwise or leaves.
 *   growth_atfork_child  the child's descriptor is its parent's event:
 *                    let go of, never controlled; the child opens its own
 *                    at its first arm.
 */
#ifndef PREFAULT_GROWTH_H
#define PREFAULT_GROWTH_H
#include <stdint.h>

#define GROWTH_PERIOD (256u << 10)

void growth_init(int allowed);
int growth_arm(void);
int growth_wait(uint32_t *w, uint32_t seen, uint64_t timeout_ns);
void growth_disarm(void);
void growth_atfork_child(void);
int growth_armed(void);

#endif
