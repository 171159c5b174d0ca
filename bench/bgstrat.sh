#!/bin/sh
# bgstrat.sh BUILD MODE [ROUNDS] [ARGS...]: issue 11's measurements of
# background-worker strategies with the standalone prototype bench/bgstrat.c
# (no shim).  Every configuration runs once per round, in an order changed
# each round, so drift on this shared machine spreads over all of them; the
# summary gives per configuration the median and [min-max] of each figure.
#
#   matrix [ROUNDS] [MIB]      1 GiB by default; small and huge pages; 0, 100
#                              and 400 ms of other work; no worker, and each
#                              strategy with 1 and 2 workers
#   slow [ROUNDS] [K] [MIB]    small pages (512 MiB), the worker emulated K
#                              times slower (default 8): the program outruns
#                              it, as on machines where populate costs more
#                              than a write to a populated page
#   custom ROUNDS 'LABEL|ARGS'...  any configurations, ordered the same way
#   summary                    summarise an existing $OUT again
#   chunk [ROUNDS] [STRAT]     chunk sizes 256 KiB to 8 MiB for one strategy
#   fill [ROUNDS] [STRAT]      time for 1 and 2 workers to fill 1 GiB alone;
#                              each measured run follows an unrecorded one
#                              of the same kind, so both find memory the
#                              host still backs (else the order decides)
#   pairs [PAIRS] [STRAT]      writes straight after mmap: no worker against
#                              STRAT with 1 and 2 workers, alternating (ABBA);
#                              median of the per-pair wall ratios (without/with)
#
# Raw lines are kept in $OUT (default bgstrat-MODE.out in the current directory).
# Figures: loop = the program's faults in its write pass; tot/u = the process's
# faults over the pages (4 KiB, or 2 MiB with huge) from mmap to the end;
# extra = tot - pages (faulted twice); brief and gated = the workers' own
# estimates of extra (see bgstrat.c); wall = mmap to end of the pass, ms;
# pop/skip/leapt/left = chunks populated, skipped, leapt over, left at a
# farend meeting; first = pages the worker found the program had touched.
set -e
B=${1:-build}
MODE=${2:-matrix}
if [ $# -ge 2 ]; then shift 2; else set --; fi
X="$B/bench/bgstrat"
# shellcheck source=bench/sides.sh
. "$(dirname "$0")/sides.sh" # (slot)
[ -x "$X" ] || make -s "$X"
OUT=${OUT:-bgstrat-$MODE.out}
[ "$MODE" = summary ] || : >"$OUT"

run() { # label args...
	l=$1
	shift
	if [ -n "$WARM" ]; then "$X" "$@" >/dev/null; fi
	echo "cfg=$l $("$X" "$@") load=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT"
}

# rounds N "label|args" ...: every configuration once per round, in the
# order bench/sides.sh's slot gives (every one after every other alike).
rounds() {
	n=$1
	shift
	r=0
	while [ "$r" -lt "$n" ]; do
		i=0
		while [ "$i" -lt $# ]; do
			k=$(($(slot "$r" "$i" $#) + 1))
			eval "run_cfg \"\${$k}\""
			i=$((i + 1))
		done
		r=$((r + 1))
	done
}
hflag() { if [ "$1" = huge ]; then echo -H; fi; }
run_cfg() {
	l=${1%%|*}
	# shellcheck disable=SC2086
	run "$l" ${1#*|}
}

summary() {
	awk '
	function kv(s, k,   i, n, a) { n = split(s, a, " "); for (i = 1; i <= n; i++) if (index(a[i], k "=") == 1) return substr(a[i], length(k) + 2); return "" }
	function add(key, f, v) { vals[key, f] = vals[key, f] " " v }
	function stat(key, f, fmt,   n, a, i, j, t, lo, hi, med) {
		n = split(vals[key, f], a, " ")
		for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		return sprintf(fmt " [" fmt "-" fmt "]", med, a[1], a[n])
	}
	{
		key = kv($0, "cfg"); if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		cnt[key]++
		u = kv($0, "units")
		add(key, "loop", kv($0, "loop_faults")); add(key, "totu", kv($0, "total_faults") / u)
		add(key, "extra", kv($0, "extra")); add(key, "brief", kv($0, "est_brief")); add(key, "gated", kv($0, "est_gated"))
		add(key, "wall", kv($0, "wall_ms")); add(key, "pop", kv($0, "pop_chunks")); add(key, "skip", kv($0, "skip_chunks"))
		add(key, "leapt", kv($0, "leapt_chunks")); add(key, "left", kv($0, "left_chunks")); add(key, "first", kv($0, "first_pages"))
		add(key, "fill", kv($0, "fill_ms")); add(key, "loopp", 100 * kv($0, "loop_faults") / u)
	}
	END {
		for (i = 1; i <= nk; i++) {
			k = order[i]
			printf "%s (n=%d)\n", k, cnt[k]
			printf "    loop %s = %s%%  tot/u %s  extra %s\n", stat(k, "loop", "%.0f"), stat(k, "loopp", "%.1f"), stat(k, "totu", "%.4f"), stat(k, "extra", "%.0f")
			printf "    est brief %s  gated %s  wall %s ms  fill %s ms\n", stat(k, "brief", "%.0f"), stat(k, "gated", "%.0f"), stat(k, "wall", "%.0f"), stat(k, "fill", "%.0f")
			printf "    chunks pop %s skip %s leapt %s left %s  first pages %s\n", stat(k, "pop", "%.0f"), stat(k, "skip", "%.0f"), stat(k, "leapt", "%.0f"), stat(k, "left", "%.0f"), stat(k, "first", "%.0f")
		}
	}' "$OUT"
}

STRATS=${STRATS:-trail skip stride farend leap leapfar farsig}
case $MODE in
matrix)
	N=${1:-5}
	MIB=${2:-1024}
	set --
	for p in small huge; do
		for w in 0 100 400; do
			set -- "$@" "$p/W$w/none|-s none -m $MIB -W $w $(hflag $p)"
			for s in $STRATS; do
				for n in 1 2; do set -- "$@" "$p/W$w/$s/w$n|-s $s -w $n -m $MIB -W $w $(hflag $p)"; done
			done
		done
	done
	rounds "$N" "$@"
	summary
	;;
slow)
	N=${1:-3}
	K=${2:-8}
	MIB=${3:-512}
	set --
	for w in 0 100 400; do
		set -- "$@" "slow$K/W$w/none|-s none -m $MIB -W $w"
		for s in $STRATS; do
			for n in 1 2; do set -- "$@" "slow$K/W$w/$s/w$n|-s $s -w $n -S $K -m $MIB -W $w"; done
		done
	done
	rounds "$N" "$@"
	summary
	;;
chunk)
	N=${1:-3}
	S=${2:-farend}
	set --
	for p in small huge; do
		for w in 0 400; do
			for c in 256 512 1024 2048 4096 8192; do
				set -- "$@" "$p/W$w/$S/w1/c${c}K|-s $S -c $c -W $w $(hflag $p)"
			done
		done
	done
	rounds "$N" "$@"
	summary
	;;
fill)
	N=${1:-5}
	S=${2:-farend}
	set --
	for p in small huge; do
		for n in 1 2; do set -- "$@" "$p/fill/$S/w$n|-s $S -w $n -W -1 $(hflag $p)"; done
	done
	WARM=1
	rounds "$N" "$@"
	summary
	;;
pairs)
	N=${1:-7}
	S=${2:-farend}
	for p in small huge; do
		for n in 1 2; do
			i=0
			while [ "$i" -lt "$N" ]; do
				# shellcheck disable=SC2046
				if [ $((i % 2)) -eq 0 ]; then
					run "$p/W0/none/vs-w$n" -s none $(hflag $p)
					run "$p/W0/$S/w$n" -s "$S" -w $n $(hflag $p)
				else
					run "$p/W0/$S/w$n" -s "$S" -w $n $(hflag $p)
					run "$p/W0/none/vs-w$n" -s none $(hflag $p)
				fi
				i=$((i + 1))
			done
		done
	done
	summary
	for p in small huge; do
		for n in 1 2; do
			a=$(grep "^cfg=$p/W0/none/vs-w$n " "$OUT" | sed 's/.*wall_ms=\([0-9.]*\).*/\1/')
			b=$(grep "^cfg=$p/W0/$S/w$n " "$OUT" | sed 's/.*wall_ms=\([0-9.]*\).*/\1/')
			echo "$a" >"$OUT.a"
			echo "$b" >"$OUT.b"
			paste "$OUT.a" "$OUT.b" | awk '{ printf "%.3f\n", $1 / $2 }' | sort -n >"$OUT.q"
			echo "$p W=0 $S w=$n: wall ratio without/with per pair: median $(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' "$OUT.q"), min $(head -n 1 "$OUT.q"), max $(tail -n 1 "$OUT.q") over $(wc -l <"$OUT.q") pairs"
			rm -f "$OUT.a" "$OUT.b" "$OUT.q"
		done
	done
	;;
custom)
	N=${1:-3}
	shift
	rounds "$N" "$@"
	summary
	;;
summary)
	summary
	;;
*)
	echo "usage: bgstrat.sh BUILD matrix|slow|chunk|fill|pairs|custom|summary [ROUNDS] [ARG...]" >&2
	exit 2
	;;
esac
