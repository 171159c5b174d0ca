#!/bin/sh
# pairs.sh BUILD [ROUNDS] [LIB...]: malloc/free pairs of 64 bytes on two
# threads beside one 8 MiB block that a `call = malloc, size = >=4M, action
# = populate` rule tracks (bench/pairs.c): no shim, BUILD's shim, and each
# LIB given (an older build), in an order (sides.sh, slot) that changes from
# round to round.  Prints ns per pair (median and range) and the per-round
# ratio of each side over no shim (1.00: free costs what it costs without
# us).
set -e
B=${1:-build}
ROUNDS=${2:-7}
shift $(($# < 2 ? $# : 2))
P="$B/bench/pairs"
[ -x "$P" ] || { echo "pairs.sh: build $P first (make $P)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf '[global]\nreport = none\n[rule big]\ncall = malloc\nsize = >=4M\naction = populate\n' >"$T/p"
LIBS="$(cd "$B" && pwd)/libprefault.so"
for l in "$@"; do LIBS="$LIBS $(cd "$(dirname "$l")" && pwd)/$(basename "$l")"; done
. "$(dirname "$0")/sides.sh"
side() {
	if [ "$1" -eq 0 ]; then
		"$P" 2 5000000 64 8388608
	else
		LD_PRELOAD="$(lib_of "$1")" PREFAULT_POLICY="$T/p" "$P" 2 5000000 64 8388608
	fi
}
run_rounds
echo "pairs: 2 threads x 5,000,000 malloc(64)/free beside a tracked 8 MiB block; $ROUNDS rounds"
print_sides ns/pair this/none
