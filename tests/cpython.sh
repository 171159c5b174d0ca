#!/bin/sh
# cpython.sh BUILD: CPython's own regression tests under the shim with the
# shipped cpython policy (Debian's python3 and libpython3.X-testsuite), then
# proof from the reports that arenas really were recycled.
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
cd "$R"
PREFAULT_REPORT="$R/%p.json" LD_PRELOAD="$B/libprefault.so" PREFAULT_POLICY="$(cd "$OLDPWD" && pwd)/policies/cpython.policy" \
	"$PY" -m test -j2 $TESTS
"$PY" - "$R" <<'PY'
import glob, json, sys
reused = kept = reports = 0
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    reports += 1
    for r in d["rules"]:
        reused += r["recycle"]["recycled"]
        kept += r["recycle"]["kept"]
print("cpython.sh: %d reports, %d arenas kept, %d recycled" % (reports, kept, reused))
sys.exit(0 if reused > 0 else 1)
PY
