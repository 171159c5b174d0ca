/* probe.h: helpers the test probes share (pfprobe, mmprobe, costprobe, autoprobe, ioprobe).
 * Header-only (each probe is one file, built on its own): static functions,
 * some unused in a given probe. */
#ifndef PREFAULT_PROBE_H
#define PREFAULT_PROBE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "64", "256K", "1M", "2G": bytes. */
static inline size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': v <<= 10; break;
	case 'M': case 'm': v <<= 20; break;
	case 'G': case 'g': v <<= 30; break;
	}
	return (size_t)v;
}

/* A fresh anonymous private read-write mapping of n bytes, or exit 1. */
#include <sys/mman.h>
static inline char *probe_map(size_t n)
{
	char *p = (char *)mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* A "Key:" line of /proc/self/status, in kB (or a count); -1 if absent. */
static inline long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

/* The number of /proc/self/maps entries that overlap [s, e). */
static inline long maps_entries_in(unsigned long s, unsigned long e)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long a, b;
	char line[512];
	long n = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < e && b > s)
			n++;
	fclose(f);
	return n;
}

/* Entries of a directory, . and .. aside (/proc/self/task: threads;
 * /proc/self/fd: open files, its own among them); -1 if it cannot be read. */
#include <dirent.h>
static inline int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}
#endif
