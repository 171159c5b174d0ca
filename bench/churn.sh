#!/bin/sh
# churn.sh BUILD [ROUNDS] [ITER] [SIZE_KIB] [TOUCH] [LIB...]: the sparse churn of
# issue 18 (the zero-fill article's emulator case): ITER times mmap SIZE_KIB,
# write one byte in each of the first TOUCH pages, munmap (bench/arena.c),
# under a `call = mmap, size = 256K..1M, action = recycle` rule.
#
# Sides: no shim, then BUILD's shim, then each LIB given (another build of
# the shim, e.g. one of an older commit, to compare before and after in one
# run).  Each round runs every side once, in an order (sides.sh, slot) that
# changes from round to round; the figures are ns per cycle (median and
# range over the rounds) and the per-round ratio of no shim over each side
# (median and range: above 1, the side is faster than the kernel alone).
#
# Then the system calls per cycle, two ways: what reaches the kernel in all
# (`strace -f -c`, 20000 cycles; recycling serves the program's mmap and
# munmap itself), and the shim's own from its report's ledger
# (shim.syscalls: under strace it looks at free memory more often, since
# its 100 ms between looks pass in fewer cycles).
set -e
B=${1:-build}
ROUNDS=${2:-7}
ITER=${3:-50000}
SIZE=${4:-256}
TOUCH=${5:-1}
shift $(($# < 5 ? $# : 5))
ARENA="$B/bench/arena"
[ -x "$ARENA" ] || { echo "churn.sh: build $ARENA first (make $ARENA)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf '[global]\nreport = none\n[rule churn]\ncall = mmap\nsize = 256K..1M\naction = recycle\n' >"$T/p"
printf '[rule churn]\ncall = mmap\nsize = 256K..1M\naction = recycle\n' >"$T/pr"
LIBS="$(cd "$B" && pwd)/libprefault.so"
for l in "$@"; do LIBS="$LIBS $(cd "$(dirname "$l")" && pwd)/$(basename "$l")"; done
. "$(dirname "$0")/sides.sh"
side() {
	if [ "$1" -eq 0 ]; then
		"$ARENA" "$ITER" "$SIZE" "$TOUCH" | awk '{ print $1 }'
	else
		LD_PRELOAD="$(lib_of "$1")" PREFAULT_POLICY="$T/p" "$ARENA" "$ITER" "$SIZE" "$TOUCH" | awk '{ print $1 }'
	fi
}
run_rounds
echo "churn: $ITER cycles of mmap $SIZE KiB, touch $TOUCH page(s), munmap; $ROUNDS rounds, sides in balanced order"
print_sides ns/cycle none/this
# System calls per cycle: what reaches the kernel (strace -f -c, every call
# of the process: without the shim, the program's own mmap and munmap), and
# the shim's own from its report's ledger.
if command -v strace >/dev/null 2>&1; then
	n=20000
	c=$((n + n / 10)) # (arena.c warms up with a tenth more)
	total() { awk '$NF == "total" { print $4 }' "$1"; }
	strace -f -c -o "$T/s0" "$ARENA" $n "$SIZE" "$TOUCH" >/dev/null
	awk -v s="$(total "$T/s0")" -v n=$c 'BEGIN { printf "  %-60s %.2f system calls a cycle reach the kernel (strace, %d cycles)\n", "none", s / n, n }'
	for lib in $LIBS; do
		strace -f -c -o "$T/s1" env LD_PRELOAD="$lib" PREFAULT_POLICY="$T/pr" PREFAULT_REPORT="$T/r.json" \
			"$ARENA" $n "$SIZE" "$TOUCH" >/dev/null
		led=$(sed -n 's/.*"syscalls":{"total":\([0-9]*\).*/\1/p' "$T/r.json" 2>/dev/null)
		awk -v s="$(total "$T/s1")" -v l="${led:-}" -v n=$c -v name="$lib" 'BEGIN {
			printf "  %-60s %.2f system calls a cycle reach the kernel", name, s / n
			if (l != "") printf "; made by the shim (its ledger): %.2f", l / n
			printf "\n" }'
		awk -v n=$c '$NF != "total" && $4 ~ /^[0-9]+$/ && $4 > n / 10 { printf "      %s %.2f a cycle\n", $NF, $4 / n }' "$T/s1"
		rm -f "$T/r.json"
	done
fi
