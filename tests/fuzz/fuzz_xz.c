/* fuzz_xz.c: libFuzzer target for the xz decoder (tools/xz.c), which reads
 * MiniDebugInfo from files the tool did not write (make fuzz-symbols).
 *
 * Any input must decode within the limit or fail with a message; never a
 * read or write out of bounds (ASan), never more output than the limit.
 * The inputs are also decoded with a small limit, so the limit's own path
 * is taken. */
#include "xz.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t limits[] = { 1u << 24, 100 };
	size_t i;
	for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		uint8_t *out;
		size_t n;
		const char *why = NULL;
		if (xz_decode(data, size, limits[i], &out, &n, &why) == 0) {
			if (n > limits[i] || !out)
				abort();
			free(out);
		} else if (!why || !*why || out) {
			abort();
		}
	}
	return 0;
}
