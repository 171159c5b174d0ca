/* os.h: what the shim asks of the operating system, beside glue.h's raw
 * calls: clocks and fault counters, small file reads, the memory limits the
 * budget is derived from, and safe report files.  Calls only libc (and the
 * raw mincore of glue.h); nothing
 * here allocates or takes a lock, and nothing puts more than a few hundred
 * bytes on the caller's stack (the shim may run on a 16 KiB thread stack). */
#ifndef PREFAULT_OS_H
#define PREFAULT_OS_H
#include "path_walk.h"
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct faults { uint64_t minor, major; };

uint64_t os_now_ns(void);                /* CLOCK_MONOTONIC */
/* CLOCK_MONOTONIC_COARSE: to a few ms, and a fifth of the cost (about 9 ns
 * here, against 45): for "has 100 ms passed" on a hot path. */
uint64_t os_coarse_ns(void);
void os_faults_self(struct faults *f);   /* whole process, all threads */
void os_faults_thread(struct faults *f); /* calling thread only */
/* The process's peak RSS in bytes (getrusage's ru_maxrss), 0 if it cannot
 * be read: one system call. */
uint64_t os_peak_rss(void);
int os_online_cpus(void);

/* The fault meter: faults and time of a piece of the shim's own work, in the
 * calling thread (RUSAGE_THREAD).  Time is a clock read (no system call);
 * faults cost a getrusage at each end, so they are read only when asked
 * for (faults nonzero): around work that can fault, never around work that
 * cannot. */
struct meter {
	uint64_t t0;
	struct faults f0;
	int faults;
};
void meter_start(struct meter *m, int faults);
/* Faults (minor + major in *f: zero if not asked for) and nanoseconds since
 * meter_start. */
void meter_read(const struct meter *m, struct faults *f, uint64_t *ns);

/* Could an anonymous private mapping of len bytes get pages larger than the
 * base page (a transparent huge page, or a multi-size THP folio), with
 * (advised) or without MADV_HUGEPAGE?  From sysfs and PR_GET_THP_DISABLE,
 * read once; 1 (yes) while another thread is still reading.  When the answer
 * is no, populating n fresh pages takes exactly n faults, and the shim
 * counts them without the meter's system calls. */
int os_large_pages_possible(size_t len, int advised);
/* The PMD huge page size (hpage_pmd_size) when a transparent huge page of
 * that size comes with MADV_HUGEPAGE here (THP enabled for it, as always or
 * madvise, and not disabled for this process); 0 if not, or if the size is
 * unknown; (size_t)-1 while another thread is still reading it. */
size_t os_thp_pmd_size(void);

/* Each mapping of /proc/self/smaps, in address order: its range, Rss,
 * AnonHugePages and whether it is advised for huge pages (VmFlags hg).
 * Reads the file in pieces into a 4 KiB buffer on the caller's stack, so
 * threads may call it at once (the profile's snapshots, the report at
 * exit); never from a hot path (a large program's smaps is thousands of
 * lines).  0, or -1 if the file cannot be read. */
struct os_vma {
	uintptr_t start, end;
	uint64_t rss, anon_huge;
	int advised;
};
int os_smaps_walk(void (*fn)(void *arg, const struct os_vma *v), void *arg);

/* Transparent huge pages for this process: THP_NONE (set to never, or
 * PR_SET_THP_DISABLE on this process, inherited across fork and exec:
 * either way MADV_HUGEPAGE gets nothing), THP_ALWAYS, or THP_MADVISE (only
 * where advised: then small pages and huge pages can both be had, and
 * compared).  Reads sysfs and asks prctl: once, at start-up. */
enum { THP_NONE, THP_ALWAYS, THP_MADVISE };
int os_thp_mode(void);

/* Read up to cap-1 bytes of a (small, /proc-like) file; NUL-terminated.
 * Returns the length, or -1 with errno set. */
long os_read_file(const char *path, char *buf, size_t cap);
/* The same, from an open file (left open). */
long os_read_fd(int fd, char *buf, size_t cap);
/* This process's resident set now (/proc/self/statm), in bytes; 0 if unknown. */
uint64_t os_rss_now(void);
/* MemAvailable in bytes, 0 if unknown. */
uint64_t os_mem_available(void);
/* Find the memory cgroup's files (v2 memory.max, or v1 limit_in_bytes) for
 * this cgroup and its ancestors; once (later calls do nothing).  Returns 1
 * when they are known, 0 while another thread is still finding them (it
 * never waits for it: see budget_limit). */
int os_cgroup_init(void);
/* fork: the child resets what a thread of the parent was in the middle of
 * finding out (the cgroup's files, the huge page sizes). */
void os_atfork(int who);
/* The least room (limit minus usage) over those levels, UINT64_MAX if
 * none is limited. */
uint64_t os_cgroup_room(void);

/* Open a report file for writing, mode 0600, without following a symlink
 * in its last component, nor on the way one that another user planted in
 * a sticky shared directory (report_link_ok), and only if it is (or
 * becomes) a regular file of ours with one link on a real file system
 * (never /proc, sysfs, a FIFO or a device), empty or an earlier prefault
 * report or profile (never a file of the user's).  Returns an fd or -1 with
 * errno set (EPERM: refused; EEXIST: a file that is not a report). */
int os_open_report(const char *path, struct path_walk *w);
/* Put the file tmp (made with os_open_report and written) in the place of
 * path, whole, by rename: only if path is absent or would be accepted by
 * os_open_report (a symlink there is refused, never followed or replaced).
 * 0, or -1 with errno (tmp is then removed). */
int os_replace_report(const char *tmp, const char *path, struct path_walk *w);
/* Nonzero for a set-user-ID / set-group-ID / capability-raising exec. */
int os_secure(void);
/* The process's seccomp mode (/proc/self/status: 0 none, 1 strict, 2
 * filters; -1 unknown) and, where the kernel says (5.9+), how many filters
 * (*filters, -1 unknown).  One open, read and close: the calls the loader
 * made to load the shim. */
int os_seccomp(long *filters);

/* The one warning channel, for every layer: stderr as the process started
 * with it (os_stderr_remember, first thing at start-up), and never another
 * file the program opened on fd 2 after closing it (its data would get our
 * line).  os_warn writes one line (a newline is added), SIGPIPE and SIGXFSZ
 * held (os_quiet_begin). */
void os_stderr_remember(void);
int os_stderr_same(void);
void os_warn(const char *line);

/* The tool's socket (PREFAULT_REPORT_FD: see tools/child.h), for a file the
 * process cannot write where the tool asked (it dropped its privileges,
 * sandboxed itself, went into a chroot).  os_socket_remember at start-up
 * (one fstat, and only under the tool); os_socket_send delivers one file,
 * "NAME\n" and its text, as one message, without waiting: 0, or -1. */
void os_socket_remember(const char *fd_text);
int os_socket_send(const char *name, const char *text, size_t len);
/* A buffer to render the file into for os_socket_send, mapped at start-up
 * with the socket (a program short of memory at exit still gets its file
 * to the tool), and its size in *cap; NULL when there is none. */
char *os_socket_text(size_t *cap);

/* Which open file an fd is, to tell later whether the fd still is it. */
struct fdid {
	dev_t dev;
	ino_t ino;
	int ok;
};
void os_fd_identity(int fd, struct fdid *id);
/* 1 if fd is open and is the same file as id. */
int os_fd_same(int fd, const struct fdid *id);

/* Around a write the program did not ask for: SIGPIPE and SIGXFSZ are
 * held and, if our write raised them, discarded, so a closed pipe or a full
 * RLIMIT_FSIZE can never kill the program or show it a signal. */
struct quiet {
	sigset_t old;
	int pipe_was_pending, fsz_was_pending;
};
void os_quiet_begin(struct quiet *q);
void os_quiet_end(struct quiet *q);

/* Write all of s; 0, or -1 with errno set. */
int os_write_all(int fd, const char *s, size_t n);
/* How many pages of [start, end) are resident (mincore); the partial pages
 * at either end count whole.  Stops counting where the range is unmapped. */
size_t os_resident_pages(uintptr_t start, uintptr_t end, size_t page);
/* Bytes of the shim's own object (code, data, tables in its bss) and of
 * the tables it mapped (glue_table) resident now, a mincore per 256 pages:
 * conservative (a code page in the page cache counts whether or not this
 * process touched it). */
uint64_t os_image_resident(size_t page);
#endif
