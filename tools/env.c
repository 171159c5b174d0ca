/* env.c: the environment a program runs in under the shim: the shim first
 * in LD_PRELOAD (keeping what was there, libeatmydata style; after a
 * sanitizer's runtime, which must come first), the checked policy in
 * PREFAULT_POLICY, the report's destination.  Shared by run, profile,
 * trial and tune. */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int preload_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);
	const char *p = list;
	while ((p = strstr(p, lib))) {
		int start = p == list || p[-1] == ':' || p[-1] == ' ';
		int end = p[n] == '\0' || p[n] == ':' || p[n] == ' ';
		if (start && end)
			return 1;
		p += n;
	}
	return 0;
}

/* A sanitizer's runtime (libasan.so.8, libclang_rt.tsan-x86_64.so, ...):
 * it must be the first library loaded, or it aborts the program. */
static int sanitizer_runtime(const char *entry, size_t n)
{
	static const char *const kinds[] = { "asan", "hwasan", "tsan", "lsan", "msan" };
	const char *base = entry + n;
	size_t i, k;
	while (base > entry && base[-1] != '/')
		base--;
	k = (size_t)(entry + n - base);
	if (k > 3 && !strncmp(base, "lib", 3))
		base += 3, k -= 3;
	if (k > 9 && !strncmp(base, "clang_rt.", 9))
		base += 9, k -= 9;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		size_t m = strlen(kinds[i]);
		if (k > m && !strncmp(base, kinds[i], m) && (base[m] == '.' || base[m] == '-'))
			return 1;
	}
	return 0;
}

/* Where the shim goes in the caller's list: first, or just after the last
 * sanitizer runtime in it. */
static size_t shim_slot(const char *list)
{
	size_t at = 0, i = 0;
	while (list[i]) {
		size_t n = strcspn(list + i, " :");
		if (n && sanitizer_runtime(list + i, n))
			at = i + n;
		i += n;
		if (list[i])
			i++;
	}
	return at;
}

int set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	seccomp_vouch();
	if (old && *old) {
		size_t at;
		if (preload_has(old, shim))
			return 0;
		at = shim_slot(old);
		v = malloc(strlen(shim) + strlen(old) + 2);
		if (!v)
			return -1;
		if (at)
			sprintf(v, "%.*s:%s%s", (int)at, old, shim, old + at);
		else
			sprintf(v, "%s:%s", shim, old);
	} else {
		v = strdup(shim);
		if (!v)
			return -1;
	}
	setenv("LD_PRELOAD", v, 1);
	free(v);
	return 0;
}

int preload_holds(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	return old && preload_has(old, shim);
}

/* The side without the shim, in an environment of the same size as
 * set_preload's: LX_PRELOAD set to the shim's path, or, when an LD_PRELOAD
 * of the caller's is there, that one padded at the front with empty entries
 * (the loader skips them) as long as what set_preload would add. */
int set_preload_twin(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	size_t pad = strlen(shim) + 1;
	char *v;
	if (!old || !*old)
		return setenv("LX_PRELOAD", shim, 1);
	v = malloc(pad + strlen(old) + 1);
	if (!v)
		return -1;
	memset(v, ':', pad);
	strcpy(v + pad, old);
	setenv("LD_PRELOAD", v, 1);
	free(v);
	return 0;
}

static struct policy prepared;
static int have_prepared;

/* Shared by run, trial and profile: policy checked, environment set. */
int prepare_env(const char *policy_arg, const char *report)
{
	const char *shim = find_shim();
	have_prepared = 0;
	if (!shim) {
		fprintf(stderr, "prefault: cannot find libprefault.so (set PREFAULT_SHIM)\n");
		return -1;
	}
	if (policy_arg) {
		char *path = resolve_policy(policy_arg);
		if (!path)
			return -1;
		if (load_policy_file(path, strchr(policy_arg, '/') ? policy_arg : path, &prepared) < 0) {
			free(path);
			return -1;
		}
		setenv("PREFAULT_POLICY", path, 1);
		free(path);
		have_prepared = 1;
	} else {
		unsetenv("PREFAULT_POLICY");
	}
	if (report)
		setenv("PREFAULT_REPORT", report, 1);
	return set_preload(shim);
}

const struct policy *prepared_policy(void) { return have_prepared ? &prepared : NULL; }

size_t cli_hpage_size(void)
{
	static size_t size;
	if (!size) {
		unsigned long long v = 0;
		FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
		if (f) {
			if (fscanf(f, "%llu", &v) != 1)
				v = 0;
			fclose(f);
		}
		size = v && !(v & (v - 1)) ? (size_t)v : (size_t)2 << 20;
	}
	return size;
}
