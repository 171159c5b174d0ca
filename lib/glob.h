/* glob.h: shell-style name matching (* ? [set] [!set] [a-z]), pure.
 * Our own because fnmatch may allocate for multibyte locales, and it is
 * called from inside the wrappers when a new calling object is first seen. */
#ifndef PREFAULT_GLOB_H
#define PREFAULT_GLOB_H
int glob_match(const char *pat, const char *s);
/* 0 if `pat` is well formed, else a static message saying what is wrong. */
const char *glob_check(const char *pat);
#endif
