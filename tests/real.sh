#!/bin/sh
# real.sh BUILD: real programs under tests/aggressive.policy (populate,
# background, huge pages and recycle on everything they fit) must give the
# same output and exit status as without the shim: sqlite3, git, gcc
# compiling and running a program, node, python3 (and, with jemalloc2
# installed, python3 with jemalloc preloaded beside the shim).  Programs
# that are not installed are said to be skipped.  CPython's own regression
# tests under this policy run as well (CPYTHON_TESTS to choose).
set -u
B=$(cd "${1:-build}" && pwd)
ROOT=$(pwd)
POL="$ROOT/tests/aggressive.policy"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0 ran=0
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

# same NAME SCRIPT: run SCRIPT (sh) in a fresh directory without and with
# the shim; compare stdout, stderr and the exit status.
same() {
	name=$1 script=$2
	# Both sides run in the same directory (compilers record it).
	for side in plain shim; do
		rm -rf "$W/$side" "$W/run" && mkdir -p "$W/run"
		if [ $side = plain ]; then
			(cd "$W/run" && HOME="$W/run" sh -c "$script" >"$W/out" 2>"$W/err"; echo $? >"$W/status")
		else
			(cd "$W/run" && HOME="$W/run" LD_PRELOAD="$B/libprefault.so${EXTRA_PRELOAD:+:$EXTRA_PRELOAD}" \
				PREFAULT_POLICY="$POL" PREFAULT_REPORT="$W/report.%p.json" sh -c "$script" >"$W/out" 2>"$W/err"
			 echo $? >"$W/status")
		fi
		mkdir -p "$W/$side" && mv "$W/out" "$W/err" "$W/status" "$W/$side/"
		[ $side = plain ] || mv "$W"/report.*.json "$W/$side/" 2>/dev/null
	done
	ran=$((ran + 1))
	reports=$(ls "$W/shim"/report.*.json 2>/dev/null | wc -l)
	if cmp -s "$W/plain/out" "$W/shim/out" && cmp -s "$W/plain/err" "$W/shim/err" && cmp -s "$W/plain/status" "$W/shim/status" && [ "$reports" -gt 0 ]; then
		echo "real.sh: $name: same output and exit status ($(cat "$W/shim/status")), $reports processes under the shim"
	else
		echo "real.sh: $name: DIFFERS (or no report)" >&2
		diff "$W/plain/out" "$W/shim/out" | head -20 >&2
		diff "$W/plain/err" "$W/shim/err" | head -20 >&2
		echo "status $(cat "$W/plain/status") vs $(cat "$W/shim/status"); $reports reports" >&2
		fail=1
	fi
}

have() { command -v "$1" >/dev/null 2>&1 || { echo "real.sh: $1 not installed: skipped"; return 1; }; }

if have sqlite3; then
	same sqlite3 'sqlite3 db.sqlite "create table t(a integer primary key, b text, c real);
		with recursive n(i) as (select 1 union all select i+1 from n where i < 200000)
		insert into t(b, c) select printf(\"row%d\", i), i * 0.5 from n;
		create index tb on t(b);
		select count(*), sum(c), min(b), max(b) from t;
		select b from t where a % 49999 = 0 order by b;
		pragma integrity_check;"; sqlite3 db.sqlite "select count(*) from t where b like \"row1%\";"'
fi
if have git; then
	same git 'git init -q r && cd r && git config user.email t@t && git config user.name t &&
		for i in $(seq 1 300); do echo "line $i of file $((i % 17))" >> f$((i % 17)).txt; done &&
		git add . && GIT_COMMITTER_DATE=2026-01-01T00:00:00Z GIT_AUTHOR_DATE=2026-01-01T00:00:00Z git commit -q -m one &&
		sed -i "s/line 1 /LINE 1 /" f1.txt && git diff --stat && git gc -q && git count-objects -v | grep -v size && git log --format=%H%n%s'
fi
if have gcc; then
	cat >"$W/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
	size_t n = 1 << 22, i; unsigned long s = 0;
	unsigned char *p = malloc(n);
	for (i = 0; i < n; i++) p[i] = (unsigned char)(i * 7);
	for (i = 0; i < n; i++) s = s * 31 + p[i];
	printf("%lu\n", s);
	free(p);
	return 3;
}
C
	same gcc "gcc -O2 -o prog '$W/prog.c' && ./prog; echo \"exit \$?\"; gcc -O0 -g -c '$W/prog.c' -o prog.o && sha256sum prog.o | cut -c1-16"
fi
if have node; then
	same node 'node -e "
		const m = new Map(); let s = 0;
		for (let i = 0; i < 300000; i++) m.set(\"k\" + i, {i, s: String(i).repeat(3)});
		for (const [k, v] of m) s += v.i % 7;
		const a = Array.from({length: 200000}, (_, i) => (i * 2654435761) % 1000003).sort((x, y) => x - y);
		console.log(s, a[0], a[a.length - 1], JSON.stringify([...m.keys()].slice(0, 3)));
		process.exitCode = 4;"'
fi
if have python3; then
	same python3 "/usr/bin/python3 '$ROOT/bench/py/churn_json.py' 3; /usr/bin/python3 '$ROOT/bench/py/churn_graph.py' 3; /usr/bin/python3 -c 'import sys; print(\"bye\", file=sys.stderr); sys.exit(5)'"
	if [ -e "$JE" ]; then
		EXTRA_PRELOAD=$JE same "python3 + jemalloc" "/usr/bin/python3 '$ROOT/bench/py/churn_text.py' 3"
	else
		echo "real.sh: libjemalloc2 not installed: jemalloc beside the shim skipped"
	fi
	if /usr/bin/python3 -c 'import test.test_list' 2>/dev/null; then
		ran=$((ran + 1))
		(cd "$W" && LD_PRELOAD="$B/libprefault.so" PREFAULT_POLICY="$POL" PREFAULT_REPORT=none \
			/usr/bin/python3 -m test -j2 ${CPYTHON_TESTS:-test_list test_dict test_set test_gc test_mmap test_json test_threading test_bytes test_weakref test_subprocess} >"$W/regrtest.out" 2>&1)
		if [ $? -eq 0 ]; then
			echo "real.sh: python3 regression tests under the aggressive policy: $(grep -E 'tests? OK' "$W/regrtest.out" | tail -n 1)"
		else
			tail -n 30 "$W/regrtest.out" >&2
			echo "real.sh: python3 regression tests FAILED under the aggressive policy" >&2
			fail=1
		fi
	fi
fi
echo "real.sh: $ran checks, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
