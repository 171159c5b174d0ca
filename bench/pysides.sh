# pysides.sh: the sides of the CPython benchmarks (python.sh, pyperf.sh),
# sourced by both so that they measure the same things the same way.  The
# caller sets T (a scratch directory), ROOT (the tree), SHIM (the shim),
# SIDES, and optionally PIN (a command to prefix, such as "taskset -c 1")
# and BASE (more VAR=value words for every side); then calls py_sides_init.
#
# Sides:
#   none     no preload
#   observe  the shim, no policy
#   cpython  the shim, policies/cpython.policy (as shipped)
#   recycle  the shim, policies/cpython.policy with carve turned into recycle
#            (and its hugepage_check and carve_min_rss lines left out)
#   carve    the shim, policies/cpython.policy without its carve_min_rss
#            lines: judged carving from a process's first arena (what
#            cpython was before carve_min_rss; the name stays for the
#            figures in BENCHMARKS.md)
#   carveu   the shim, policies/cpython-huge.policy (carving unjudged)
#   thp      no preload, THP `enabled` set to always for the run (root only:
#            left out otherwise; put back after every run, and on exit)
#   hugetlb  no preload, GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35+:
#            malloc's heaps advised MADV_HUGEPAGE)
#
# Every side sets the same variables, with one letter changed where one must
# not act (LX_PRELOAD, PREFAULX_POLICY, PREFAULX_REPORT, GLIBC_TUNABLEX) and
# values of one length, so the environment block is the same size on every
# side, byte for byte (py_sides_init checks it): its size alone moved run
# times here by several percent (README, trial).  PREFAULT_REPORT=none.
# PRE: a command run before every run of every side, outside what is
# measured (e.g. PRE="build/bench/hpcold -w 64": huge pages warm on this
# guest for the run just after; bench/hpcold.c).

THP=/sys/kernel/mm/transparent_hugepage/enabled
SIDE_PATH=PATH=/usr/local/bin:/usr/bin:/bin # every side's, and nothing else of ours
THP_WAS=
restore_thp() {
	[ -z "$THP_WAS" ] || echo "$THP_WAS" >"$THP"
	THP_WAS=
}

side_env() { # side_env SIDE: its variables, one word each
	p=LX_PRELOAD po=PREFAULX_POLICY r=PREFAULX_REPORT g=GLIBC_TUNABLEX f=shipd
	case $1 in
	observe) p=LD_PRELOAD r=PREFAULT_REPORT ;;
	cpython) p=LD_PRELOAD po=PREFAULT_POLICY r=PREFAULT_REPORT ;;
	carve) p=LD_PRELOAD po=PREFAULT_POLICY r=PREFAULT_REPORT f=carve ;;
	carveu) p=LD_PRELOAD po=PREFAULT_POLICY r=PREFAULT_REPORT f=carvu ;;
	recycle) p=LD_PRELOAD po=PREFAULT_POLICY r=PREFAULT_REPORT f=recyc ;;
	hugetlb) g=GLIBC_TUNABLES ;;
	esac
	echo "$p=$SHIM $po=$T/$f.policy $r=none $g=glibc.malloc.hugetlb=1"
}

run_side() { # run_side SIDE CMD...: CMD with the side's environment and nothing else
	s=$1 rc=
	shift
	if [ "$s" = thp ]; then
		THP_WAS=$(sed 's/.*\[\(.*\)\].*/\1/' "$THP")
		echo always >"$THP"
	fi
	# shellcheck disable=SC2086 # a command line
	[ -z "${PRE:-}" ] || $PRE >/dev/null
	# shellcheck disable=SC2046,SC2086 # one word each
	env -i $SIDE_PATH $BASE $(side_env "$s") $PIN "$@" || rc=$?
	restore_thp
	return ${rc:-0}
}

# py_sides_init WHO: the policies (under names of one length), the thp side
# left out where THP cannot be set, the reversed order RSIDES (for ABBA),
# and the check that every side's environment is the same size (in ENV_SIZE).
py_sides_init() {
	cp "$ROOT/policies/cpython.policy" "$T/shipd.policy"
	grep -v '^carve_min_rss' "$ROOT/policies/cpython.policy" >"$T/carve.policy"
	cp "$ROOT/policies/cpython-huge.policy" "$T/carvu.policy"
	grep -v '^hugepage_check\|^carve_min_rss' "$ROOT/policies/cpython.policy" | sed 's/^action = carve$/action = recycle/' >"$T/recyc.policy"
	for f in carve recyc; do # (what is derived must still say what it did)
		"$(dirname "$SHIM")/prefault" check "$T/$f.policy" >/dev/null || exit 1
	done
	case " $SIDES " in *" thp "*)
		if ! [ -w "$THP" ] || [ "$(id -u)" != 0 ]; then
			echo "$1: side thp needs root (it writes $THP): left out" >&2
			SIDES=$(echo "$SIDES" | sed 's/\bthp\b//')
		fi ;;
	esac
	RSIDES=$(for s in $SIDES; do echo "$s"; done | awk '{ a[NR] = $0 } END { for (i = NR; i > 0; i--) printf "%s ", a[i] }')
	ENV_SIZE=
	for s in $SIDES; do
		n=$(run_side "$s" /usr/bin/env | wc -c)
		if [ -n "$ENV_SIZE" ] && [ "$n" != "$ENV_SIZE" ]; then
			echo "$1: environment of side $s is $n bytes, not $ENV_SIZE" >&2
			exit 1
		fi
		ENV_SIZE=$n
	done
}
