#!/bin/sh
# large.sh BUILD [ROUNDS] [MIB]: issue 3's benchmark.
#
# Every variant runs once per round, in rotating order, and the medians are
# printed per 4 KiB page and as factors over first touch.  Two conditions,
# because on a virtual machine with free-page reporting (like the development
# machine) the cost of memory depends on whether the host still backs it:
#   cold: 4 s idle before each run, so the host has taken back freed memory
#         (what a fresh process sees on a quiet machine);
#   warm: the variant's second run straight after its first, so the memory
#         it gets (small or huge pages) is still backed by the host: the
#         guest kernel's own cost, closest to bare metal.
set -e
B=${1:-build}
ROUNDS=${2:-3}
MIB=${3:-512}
T=$(mktemp -d)
SHIM="$(cd "$B" && pwd)/libprefault.so"
mk() { printf '[global]\nreport = none\n[rule big]\nsize = >=64M\nmap = anon private\n%s\n' "$2" >"$T/$1.policy"; }
mk populate "action = populate"
mk huge "action = hugepage populate"
mk huge2 "action = hugepage populate
threads = 2"
mk bg "action = background"
run() { # variant [work_ms]
	case $1 in
	first | nowork) "$B/bench/large" "$MIB" "${2:-0}" ;;
	*) LD_PRELOAD="$SHIM" PREFAULT_POLICY="$T/$1.policy" "$B/bench/large" "$MIB" "${2:-0}" ;;
	esac
}
r=0
while [ $r -lt "$ROUNDS" ]; do
	set -- first populate huge huge2
	k=$((r % 4))
	while [ $k -gt 0 ]; do set -- "$@" "$1"; shift; k=$((k - 1)); done # rotate the order
	for v in "$@"; do
		sleep 4
		echo "cold-$v $(run "$v")" >>"$T/out"
		echo "warm-$v $(run "$v")" >>"$T/out"
	done
	# background: 400 ms of other work first, with and without
	echo "bg $(run bg 400)" >>"$T/out"
	echo "nowork $(run nowork 400)" >>"$T/out"
	r=$((r + 1))
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { grep "^$1 " "$T/out" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p" | med; }
for c in cold warm; do
	ft=$(field "$c-first" pass1_ns)
	echo "$MIB MiB buffer, $c, median of $ROUNDS, ns per 4 KiB page (ready = mmap call + first write pass):"
	printf '  %-32s %9s %9s %9s %8s %8s\n' variant mmap pass1 ready faults factor
	for v in first populate huge huge2; do
		case $v in
		first) name="first-touch" ;; populate) name="populate" ;;
		huge) name="populate+hugepage" ;; huge2) name="populate+hugepage+threads=2" ;;
		esac
		echo "$name $(field "$c-$v" map_ns) $(field "$c-$v" pass1_ns) $(field "$c-$v" faults) $ft" |
			awk '{ ready = $2 + $3; printf "  %-32s %9.1f %9.1f %9.1f %8d %7.2fx\n", $1, $2, $3, ready, $4, $5 / ready }'
	done
	p2=$(field "$c-first" pass2_ns)
	echo "  retouch (already mapped, the floor): $p2 ns per page, $(echo "$ft $p2" | awk '{printf "%.0f", $1/$2}')x faster than first touch"
done
bgf=$(field bg faults); bgm=$(field bg map_ns); nwf=$(field nowork faults)
echo "background, 400 ms of other work first: the program's thread took $bgf faults in its loop, $nwf without the shim ($(echo "$bgf $nwf" | awk '{printf "%.1f", 100 * (1 - $1 / $2)}')% taken off it); the mmap call cost $bgm ns per page"
rm -rf "$T"
