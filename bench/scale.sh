#!/bin/sh
# scale.sh BUILD [OLD_BUILD]: one mmap+munmap pair with 1k, 16k, 64k and 256k
# mappings live, each tracked by the shim (a populate rule on 16 KiB
# mappings), without the shim and with it (and with an older build, to
# compare).  Needs vm.max_map_count above 256k: raised for the run if we
# may (root), and put back after.  Medians of 5 runs, alternating sides.
set -e
B=$(cd "${1:-build}" && pwd)
# (the probe is not part of `make all`: build it here, in BUILD)
[ -x "$B/bench/scale" ] || make -s -C "$(dirname "$0")/.." BUILD="$B" "$B/bench/scale"
[ -x "$B/bench/scale" ] || { echo "scale.sh: no $B/bench/scale" >&2; exit 1; }
OLD=${2:+$(cd "$2" && pwd)}
T=$(mktemp -d)
was=$(cat /proc/sys/vm/max_map_count)
trap 'rm -rf "$T"; [ "$(cat /proc/sys/vm/max_map_count)" = "$was" ] || echo "$was" >/proc/sys/vm/max_map_count' EXIT INT TERM
if [ "$was" -lt 300000 ]; then
	echo 300000 >/proc/sys/vm/max_map_count 2>/dev/null || { echo "scale.sh: vm.max_map_count is $was: run as root to raise it" >&2; exit 1; }
fi
printf '[global]\nreport = none\n[rule small]\nsize = 16K\naction = populate\n' >"$T/p.policy"
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
one() { sed -n 's/.*ns_per_call_pair=\([0-9]*\).*/\1/p'; }
for kind in tracked looked-up; do
	[ $kind = tracked ] && k=16 || k=8
	echo "scale.sh: ns per mmap+munmap of one more $k KiB region ($kind by the shim), with LIVE 16 KiB regions live, all tracked (median of 5)"
	printf '%8s %10s %10s %10s\n' live none shim "${OLD:+old shim}"
	for live in 1000 16000 64000 256000; do
		iter=20000
		: >"$T/none" && : >"$T/shim" && : >"$T/old"
		for r in 1 2 3 4 5; do
			"$B/bench/scale" $live $iter $k | one >>"$T/none"
			LD_PRELOAD="$B/libprefault.so" PREFAULT_POLICY="$T/p.policy" "$B/bench/scale" $live $iter $k | one >>"$T/shim"
			[ -z "$OLD" ] || LD_PRELOAD="$OLD/libprefault.so" PREFAULT_POLICY="$T/p.policy" "$B/bench/scale" $live $iter $k | one >>"$T/old"
		done
		printf '%8s %10s %10s %10s\n' $live "$(med <"$T/none")" "$(med <"$T/shim")" "$([ -z "$OLD" ] || med <"$T/old")"
	done
done
[ -z "$OLD" ] || echo "(the old shim's tables held 16,384 regions: past that it tracked nothing, so its figures there are of a shim doing nothing)"
