# sides.sh: sourced by benchmarks that compare sides (no shim, this build's
# shim, older builds) in rounds.  The caller sets T (a scratch directory),
# ROUNDS and LIBS (shim libraries, absolute paths, side 1 onwards; side 0 is
# no shim) and defines side K, which prints one figure.
#
# run_rounds: every side once a round, in the order slot gives, into $T/rR.K.
#
# slot R I N: the side (0 to N-1) that runs I-th in round R of N sides.  A
# run leaves the machine in a state the next one finds: on this guest, a
# run that used huge pages leaves warm 2 MiB blocks, one that did not
# leaves the next to wait for the host (BENCHMARKS.md, "Which side ran
# before").  An order that only rotates (0 1 2 3, 1 2 3 0, ...) puts every
# side after the same one each time: bench/auto.sh ran the learner after
# no shim, and the best policy after the learner, in every round.  slot is
# a Williams design instead: over N rounds (2N where N is odd) every side
# runs right after every other side equally often (round boundaries
# aside), and each side runs at each place in the round alike.
# print_sides UNIT RATIO: each side's median and range, and for sides 1 on
# the per-round ratio against side 0 (RATIO "none/this" or "this/none"),
# median and range.

nsides() { echo $(($(echo $LIBS | wc -w) + 1)); }
lib_of() { echo $LIBS | cut -d' ' -f"$1"; }

slot() {
	_i=$2
	[ $(($1 / $3 % 2)) -eq 0 ] || _i=$(($3 - 1 - _i)) # (the mirror, for odd N)
	echo $((((_i == 0 ? 0 : (_i % 2 ? (_i + 1) / 2 : $3 - _i / 2)) + $1) % $3))
}

run_rounds() {
	n=$(nsides)
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		i=0
		while [ $i -lt $n ]; do
			k=$(slot $r $i $n)
			side $k >"$T/r$r.$k"
			i=$((i + 1))
		done
		r=$((r + 1))
	done
}

stat3() { sort -n | awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

print_sides() {
	unit=$1 how=$2 n=$(nsides) k=0
	while [ $k -lt $n ]; do
		if [ $k -eq 0 ]; then
			printf '  %-60s %s %s\n' none "$(cat "$T"/r*.0 | stat3)" "$unit"
		else
			r=0
			: >"$T/q"
			while [ $r -lt "$ROUNDS" ]; do
				awk -v a="$(cat "$T/r$r.0")" -v b="$(cat "$T/r$r.$k")" -v how="$how" \
					'BEGIN { printf "%.3f\n", how == "none/this" ? a / b : b / a }' >>"$T/q"
				r=$((r + 1))
			done
			printf '  %-60s %s %s; %s %s\n' "$(lib_of $k)" "$(cat "$T"/r*."$k" | stat3)" "$unit" "$how" "$(stat3 <"$T/q")"
		fi
		k=$((k + 1))
	done
}
