#!/bin/sh
# peaks.sh LIB [LIB...] -- CMD [ARGS...]: a program's peak RSS (VmHWM, kB:
# /usr/bin/time's %M) with no shim and under the learner
# (PREFAULT_POLICY=auto) with each library given (builds of different
# commits, before and after), one run each, and the last library's budget:
# the extra (budget.limit, kB), whether its peak is within the line (the
# peak without the shim plus the extra), the guard's looks at RSS, and its
# holds for a front advised huge pages (README, "Bounded").  The shim is
# preloaded into the program alone (env), not into time.  One row:
#   none | LIB... | extra | within | looks N holds N
set -e
LIBS=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	LIBS="$LIBS $(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
	shift
done
[ "${1:-}" = -- ] && [ $# -gt 1 ] && [ -n "$LIBS" ] || { echo "usage: peaks.sh LIB [LIB...] -- CMD [ARGS...]" >&2; exit 2; }
shift
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
peak() { /usr/bin/time -f %M -o "$T/m" env "$@" >/dev/null 2>&1 || true; tail -n 1 "$T/m"; }
row=$(peak PREFAULT_X=1 "$@")
none=$row
for l in $LIBS; do
	rm -f "$T/r.json"
	row="$row | $(peak PREFAULT_POLICY=auto PREFAULT_REPORT="$T/r.json" LD_PRELOAD="$l" "$@")"
	last=${row##*| }
done
python3 - "$T/r.json" "$none" "$last" "$row" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))['auto']['budget']
extra = b['limit'] // 1024
within = 'yes' if int(sys.argv[3]) <= int(sys.argv[2]) + extra else 'no'
print('%s | %d | %s | looks %s holds %s' % (sys.argv[4], extra, within, b.get('guard_looks'), b.get('huge_holds')))
PY
