/* proctree.c: see proctree.h.  The readers use open, read and close only
 * (async-signal-safe): child.c asks from its signal handler who sent a
 * signal. */
#include "proctree.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* /proc/PID/stat into buf; 0, or -1 if the process is gone. */
static int read_stat(pid_t pid, char *buf, size_t cap)
{
	char path[32] = "/proc/", digits[16];
	int nd = 0, fd;
	unsigned v = (unsigned)pid;
	ssize_t n;
	if (pid <= 0)
		return -1;
	do
		digits[nd++] = (char)('0' + v % 10);
	while ((v /= 10) && nd < (int)sizeof digits);
	{
		size_t k = strlen(path);
		while (nd)
			path[k++] = digits[--nd];
		memcpy(path + k, "/stat", 6);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Field k (1 is the state) after the name, which may hold ')' and spaces. */
static const char *field(const char *stat, int k)
{
	const char *p = strrchr(stat, ')');
	if (!p)
		return NULL;
	for (p++; k > 0; k--) {
		while (*p == ' ')
			p++;
		if (!*p)
			return NULL;
		if (k > 1)
			while (*p && *p != ' ')
				p++;
	}
	return p;
}

static unsigned long long number(const char *p)
{
	unsigned long long v = 0;
	while (p && *p >= '0' && *p <= '9')
		v = v * 10 + (unsigned)(*p++ - '0');
	return v;
}

char proc_state(pid_t pid)
{
	char buf[512];
	const char *s;
	return read_stat(pid, buf, sizeof buf) == 0 && (s = field(buf, 1)) ? *s : 0;
}

pid_t proc_parent(pid_t pid)
{
	char buf[512];
	return read_stat(pid, buf, sizeof buf) == 0 ? (pid_t)number(field(buf, 2)) : -1;
}

int proc_in_tree(pid_t pid, pid_t root)
{
	int depth;
	for (depth = 0; depth < 64 && pid > 1; depth++) {
		if (pid == root)
			return 1;
		pid = proc_parent(pid);
	}
	return 0;
}

static unsigned long long start_time(pid_t pid)
{
	char buf[512];
	return read_stat(pid, buf, sizeof buf) == 0 ? number(field(buf, 20)) : 0;
}

void proc_tree(pid_t root, struct proc_list *l)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	l->n = 0;
	while (d && (e = readdir(d)) && l->n < PROC_LIST_MAX) {
		pid_t p = (pid_t)number(e->d_name);
		if (p > 1 && proc_in_tree(p, root) && (l->start[l->n] = start_time(p)))
			l->pid[l->n++] = p;
	}
	if (d)
		closedir(d);
}

void proc_list_signal(const struct proc_list *l, int sig)
{
	int i;
	for (i = 0; i < l->n; i++)
		if (start_time(l->pid[i]) == l->start[i]) /* (the same process, not a new one with its pid) */
			kill(l->pid[i], sig);
}
