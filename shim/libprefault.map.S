/* The only symbols the shim exports: the wrappers, from entries.h.
 * Everything else is hidden, so it can never collide with (or be
 * interposed by) the program.  The Makefile runs this through cpp. */
#include "entries.h"
#define PF_EXPORT(name) name;
{
	global:
		PF_ENTRIES(PF_EXPORT)
	local: *;
};
