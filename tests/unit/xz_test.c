/* xz_test.c: tools/xz.c as a command: decode FILE.xz to stdout (exit 0), or
 * say why it cannot (exit 1).  Built by `make probes`; tests/symbols.bats
 * compares it with xz -d on what xz writes with every option that matters
 * (checks, lc/lp/pb, dictionary size, blocks, stored chunks, concatenated
 * streams and stream padding) and feeds it corrupted files. */
#include "xz.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	FILE *f;
	uint8_t *in = NULL, *out;
	size_t n = 0, cap = 0, got, olen;
	const char *why;
	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: xz_test FILE.xz\n");
		return 2;
	}
	do {
		if (n == cap && !(in = realloc(in, cap = cap ? cap * 2 : 65536)))
			return 2;
		got = fread(in + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	if (xz_decode(in, n, (size_t)1 << 30, &out, &olen, &why) < 0) {
		fprintf(stderr, "xz_test: %s: %s\n", argv[1], why);
		free(in);
		return 1;
	}
	fwrite(out, 1, olen, stdout);
	free(out);
	free(in);
	return 0;
}
