/* os.h: the operating-system primitives the shim needs, none of which
 * allocate or take a lock: clocks, fault counters, small file reads, the
 * memory limits the budget is derived from, and safe report files. */
#ifndef PREFAULT_OS_H
#define PREFAULT_OS_H
#include <stddef.h>
#include <stdint.h>

struct faults { uint64_t minor, major; };

uint64_t os_now_ns(void);              /* CLOCK_MONOTONIC */
void os_faults_self(struct faults *f); /* whole process, all threads */
void os_faults_thread(struct faults *f); /* calling thread only */
size_t os_page_size(void);             /* sysconf, cached by the caller */
int os_online_cpus(void);
/* Read up to cap-1 bytes of a (small, /proc-like) file; NUL-terminated.
 * Returns the length, or -1 with errno set. */
long os_read_file(const char *path, char *buf, size_t cap);
/* MemAvailable in bytes, 0 if unknown. */
uint64_t os_mem_available(void);
/* Find the memory cgroup's files (v2 memory.max, or v1 limit_in_bytes) for
 * this cgroup and its ancestors; once, at start. */
void os_cgroup_init(void);
/* The least room (limit minus usage) over those levels, UINT64_MAX if
 * none is limited. */
uint64_t os_cgroup_room(void);
/* Open a report file for writing without following a symlink in its last
 * component and only if it is (or becomes) a regular file we own.  Returns
 * an fd or -1 with errno set. */
int os_open_report(const char *path);
/* Nonzero for a set-user-ID / set-group-ID / capability-raising exec. */
int os_secure(void);
void os_write_all(int fd, const char *s, size_t n);
/* How many pages of [start, end) are resident (mincore); the partial pages
 * at either end count whole.  Stops counting where the range is unmapped. */
size_t os_resident_pages(uintptr_t start, uintptr_t end, size_t page);
#endif
