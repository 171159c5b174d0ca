/* fuzz_demangle.c: libFuzzer target for the C++ demangler (tools/demangle.c),
 * which reads symbol names from files the tool did not write (make
 * fuzz-symbols).  Any input must give a NUL-terminated name or NULL, in
 * both forms, within bounded time and stack. */
#include "demangle.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 3), *r;
	int full;
	if (!s)
		return 0;
	memcpy(s, "_Z", 2); /* (the demangler looks at nothing else) */
	memcpy(s + 2, data, size);
	s[size + 2] = 0;
	for (full = 0; full < 2; full++) {
		r = demangle(s, full);
		if (r && strlen(r) > 8192)
			abort();
		free(r);
	}
	free(s);
	return 0;
}
