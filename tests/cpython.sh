#!/bin/sh
# cpython.sh BUILD: CPython's own regression tests under the shim with each
# shipped CPython policy, cpython (carve, judged by hugepage_check) and
# cpython-huge (carve, unjudged), on Debian's python3 and
# libpython3.X-testsuite; then proof from the reports that arenas really
# were recycled, and carved with cpython-huge.  cpython's check is told that
# small pages won, so the suite runs its other path, recycling only (its
# carving is cpython-huge's).
set -e
B=$(cd "${1:-build}" && pwd)
PY=${PY:-/usr/bin/python3}
TESTS=${CPYTHON_TESTS:-"test_list test_dict test_set test_gc test_mmap test_json test_unicode test_threading
  test_bytes test_weakref test_array test_collections test_re test_pickle test_struct test_subprocess test_os"}
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
if ! "$PY" -c 'import test.test_list' 2>/dev/null; then
	echo "cpython.sh: no regression tests for $PY (install libpython3.X-testsuite)" >&2
	exit 1
fi
ROOT=$(pwd)
cd "$R"
for pol in ${CPYTHON_POLICIES:-cpython cpython-huge}; do
	mkdir "$R/$pol"
	th=
	[ "${pol%-huge}" != "$pol" ] || th=small
	PREFAULT_TEST_HUGE=$th PREFAULT_REPORT="$R/$pol/%p.json" LD_PRELOAD="$B/libprefault.so" PREFAULT_POLICY="$ROOT/policies/$pol.policy" \
		"$PY" -m test -j2 $TESTS
	"$PY" - "$R/$pol" "$pol" <<'PY'
import glob, json, sys
reused = kept = carved = reports = 0
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    reports += 1
    for r in d["rules"]:
        reused += r["recycle"]["recycled"]
        kept += r["recycle"]["kept"]
        carved += r.get("carve", {}).get("fresh", 0)
print("cpython.sh: %s: %d reports, %d arenas kept, %d recycled, %d carved" % (sys.argv[2], reports, kept, reused, carved))
sys.exit(0 if reused > 0 and (carved > 0) == sys.argv[2].endswith("-huge") else 1)
PY
done
