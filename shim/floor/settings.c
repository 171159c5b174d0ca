/* settings.c: see settings.h.  Calls only libc's getenv (which reads the
 * environment libc was started with: no system call). */
#include "settings.h"
#include <stdlib.h>

void settings_read(struct settings *s)
{
	const char *v;
#define PF_SETTING_READ(field, var, kind, test, what)                                        \
	v = getenv(var);                                                                     \
	s->field = (kind) == SET_FLAG ? (v ? "1" : NULL) : (v && *v ? v : NULL);
	PF_SETTINGS(PF_SETTING_READ)
#undef PF_SETTING_READ
}
