# sides.sh: sourced by benchmarks that compare sides (no shim, this build's
# shim, older builds) in rounds.  The caller sets T (a scratch directory),
# ROUNDS and LIBS (shim libraries, absolute paths, side 1 onwards; side 0 is
# no shim) and defines side K, which prints one figure.
#
# run_rounds: every side once a round, in an order that rotates from round
# to round (so drift and order fall on every side alike), into $T/rR.K.
# print_sides UNIT RATIO: each side's median and range, and for sides 1 on
# the per-round ratio against side 0 (RATIO "none/this" or "this/none"),
# median and range.

nsides() { echo $(($(echo $LIBS | wc -w) + 1)); }
lib_of() { echo $LIBS | cut -d' ' -f"$1"; }

run_rounds() {
	n=$(nsides)
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		i=0
		while [ $i -lt $n ]; do
			k=$(((i + r) % n))
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
