/* report_file.h: may a report go over a file that is there already?
 *
 * One verdict for the shim (os_open_report, as it writes the report) and
 * the CLI (before the program starts: a run whose report the shim would
 * refuse is refused at once, with the reason, since the program may have
 * closed its stderr by the time the shim finds out).  Pure: the callers
 * make the system calls (the shim's own, the CLI libc's) and pass what
 * they found.
 *
 * A report may replace a regular file of ours with one link, on a real file
 * system, that is empty or an earlier report or profile.  Not a FIFO (it
 * would block the exit), a device or someone else's file (not ours to
 * overwrite), a hard link (it could point anywhere), a file in /proc or
 * sysfs (a switch: a hostname, a sysctl), nor the user's notes (`report =
 * notes.txt` must not cost them).  A symlink is never followed: callers
 * open with O_NOFOLLOW and take ELOOP for REPORT_SYMLINK.
 */
#ifndef PREFAULT_REPORT_FILE_H
#define PREFAULT_REPORT_FILE_H
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>

/* The verdicts: every one but REPORT_OK refuses (the shim's errno: EEXIST
 * for REPORT_NOT_A_REPORT, else EPERM). */
enum { REPORT_OK, REPORT_NOT_A_REPORT, REPORT_SYMLINK, REPORT_NOT_REGULAR, REPORT_NOT_YOURS, REPORT_LINKED,
       REPORT_KERNEL_FS, REPORT_FOREIGN_LINK };

/* Kernel file systems whose "files" are knobs, not storage. */
static inline int report_pseudo_fs(unsigned long type)
{
	static const unsigned long kinds[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,
		TRACEFS_MAGIC, SECURITYFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, BPF_FS_MAGIC, PSTOREFS_MAGIC,
		EFIVARFS_MAGIC, DEVPTS_SUPER_MAGIC, BINFMTFS_MAGIC, NSFS_MAGIC, 0x62656570 /* configfs */,
		0x65735543 /* fusectl */, 0x19800202 /* mqueue */,
	};
	size_t i;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (type == kinds[i])
			return 1;
	return 0;
}

/* Do the first n bytes (up to 12) start as a report or profile does
 * ("prefault: " text, "prefault-profile", {"prefault": JSON)? */
static inline int report_head_ours(const char *head, long n)
{
	return (n >= 8 && !memcmp(head, "prefault", 8)) || (n >= 12 && !memcmp(head, "{\"prefault\":", 12));
}

/* The verdict on an open file: st and its file system's type as fstat and
 * fstatfs gave them, euid the writer's, head its first n bytes (read only
 * when st says it is a regular file that is not empty). */
static inline int report_verdict(const struct stat *st, unsigned long fs_type, unsigned long euid, const char *head,
                                 long n)
{
	if (!S_ISREG(st->st_mode))
		return REPORT_NOT_REGULAR;
	if (st->st_uid != euid)
		return REPORT_NOT_YOURS;
	if (st->st_nlink != 1)
		return REPORT_LINKED;
	if (report_pseudo_fs(fs_type))
		return REPORT_KERNEL_FS;
	return st->st_size != 0 && !report_head_ours(head, n) ? REPORT_NOT_A_REPORT : REPORT_OK;
}

/* May a symlink met on the way to a report be followed?  The kernel's
 * fs.protected_symlinks rule, whatever that setting is: not one in a
 * sticky directory anyone may write (/tmp, /dev/shm) unless it is the
 * writer's or the directory owner's (another user's link there could send
 * a root process's report into a directory of the link's choosing:
 * helper-34).  dir and link as fstat gave them. */
static inline int report_link_ok(const struct stat *dir, const struct stat *link, unsigned long euid)
{
	if ((dir->st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 1;
	return link->st_uid == euid || link->st_uid == dir->st_uid;
}

/* Why, in words (for the CLI's message: "which is ..."). */
static inline const char *report_why(int v)
{
	switch (v) {
	case REPORT_NOT_A_REPORT: return "there and not a prefault report";
	case REPORT_SYMLINK: return "a symbolic link (never followed)";
	case REPORT_NOT_REGULAR: return "not a regular file";
	case REPORT_NOT_YOURS: return "someone else's file";
	case REPORT_LINKED: return "a file with another hard link";
	case REPORT_KERNEL_FS: return "in a kernel file system (a setting, not storage)";
	case REPORT_FOREIGN_LINK: return "behind a symbolic link another user made in a shared directory (never followed)";
	default: return "fine";
	}
}
#endif
