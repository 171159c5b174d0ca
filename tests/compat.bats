#!/usr/bin/env bats
# The program sees what it would see without the shim; other preloads and
# real programs keep working.
load helpers

@test "errno and return values are the same with and without the shim" {
	needs_own_malloc
	run --separate-stderr "$PROBE" errno
	plain="$output"
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$plain")" -ge 15 ]
	grep -q 'mmap-ok keeps errno=4242' <<<"$plain"
	for pol in "" "$(populate_all)" "$POLICIES/realtime.policy"; do
		run --separate-stderr shimmed "$pol" "$PROBE" errno
		[ "$output" = "$plain" ]
	done
}

@test "a second preloaded library stacks with the shim, in either order" {
	needs_own_malloc
	pol=$(populate_all)
	for order in "$SHIM_LD:$STACKLIB" "${SAN_RT:+$SAN_RT:}$STACKLIB:$SHIM"; do
		LD_PRELOAD="$order" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none run --separate-stderr "$PROBE" alloc mmap 4M
		echo "$order: $output / $stderr"
		[ "$status" -eq 0 ]
		[ "$(kv resident "$output")" -eq 1024 ]
		n=$(sed -n 's/.*libstack: mmap=\([0-9]*\).*/\1/p' <<<"$stderr")
		[ "$n" -ge 1 ]
		LD_PRELOAD="$order" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none run --separate-stderr "$PROBE" alloc malloc 4M
		[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ]
		m=$(sed -n 's/.*libstack: mmap=[0-9]* malloc=\([0-9]*\).*/\1/p' <<<"$stderr")
		[ "$m" -ge 1 ]
	done
}

PYPROG='
import json, collections
d = collections.defaultdict(list)
for i in range(200000):
    d[str(i % 977)].append({"n": i, "s": "x" * (i % 13)})
blob = json.dumps(d)
back = json.loads(blob)
n = sum(len(v) for v in back.values())
del d, back
again = json.loads(blob)   # arenas freed above come back here
print(len(blob), n, len(again))
'

@test "Debian's python3 runs unchanged under the cpython policy, and its arenas are matched (mmap64)" {
	needs_no_tsan
	[ -x "$PY" ] || skip "no /usr/bin/python3"
	run --separate-stderr "$PY" -c "$PYPROG"
	plain="$output"
	[ "$status" -eq 0 ]
	REPORT="$BATS_TEST_TMPDIR/py.json" run --separate-stderr shimmed "$POLICIES/cpython.policy" "$PY" -c "$PYPROG"
	[ "$status" -eq 0 ]
	[ "$output" = "$plain" ]
	f="$BATS_TEST_TMPDIR/py.json"
	[ "$(jget "$f" "d['calls']['mmap64']")" -gt 10 ]
	[ "$(rule_stat "$f" pymalloc-arenas matched)" -gt 10 ]
	[ "$(rule_stat "$f" pymalloc-arenas recycle recycled)" -gt 0 ]
}

@test "python3's exit status and stderr pass through the shim" {
	[ -x "$PY" ] || skip "no /usr/bin/python3"
	run --separate-stderr shimmed "$POLICIES/cpython.policy" "$PY" -c 'import sys; print("to err", file=sys.stderr); sys.exit(3)'
	[ "$status" -eq 3 ]
	[ "$stderr" = "to err" ]
}

@test "calls that arrive before the shim's constructor are handled (lazy start from any entry point)" {
	needs_own_malloc
	pol=$(populate_all)
	# Preloaded after the shim, libstack's constructor runs first (ld.so
	# initialises the later object first) and maps and allocates 4 MiB.
	order=$(LD_DEBUG=files LD_PRELOAD="$SHIM_LD:$STACKLIB" PREFAULT_REPORT=none /bin/true 2>&1 | sed -n 's/.*calling init: //p' | grep -E 'libstack|libprefault' | tr '\n' ' ')
	[[ "$order" == *libstack.so*libprefault.so* ]]
	LD_PRELOAD="$SHIM_LD:$STACKLIB" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none run --separate-stderr "$PROBE" keep 0 1M
	[ "$status" -eq 0 ]
	[ "$(kv early_map_resident "$stderr")" -eq 1024 ]
	[ "$(kv early_malloc_resident "$stderr")" -ge 1023 ]
	# and without the shim they are not resident: the test can fail
	LD_PRELOAD="$STACKLIB" run --separate-stderr "$PROBE" keep 0 1M
	[ "$(kv early_map_resident "$stderr")" -eq 0 ]
}

@test "an ASan-built program with libasan preloaded first: the shim starts after libc does, with the policy and the program's name (issue 22 #25)" {
	[ -z "${PREFAULT_SANITIZER:-}" ] || skip "the plain build is checked"
	asan=$(gcc -print-file-name=libasan.so)
	[ -e "$asan" ] || skip "no libasan here"
	printf '#include <stdio.h>\n#include <sys/mman.h>\nint main(void) { char *p = mmap(0, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); p[0] = 1; puts("ok"); return 0; }\n' >"$BATS_TEST_TMPDIR/a.c"
	gcc -fsanitize=address -o "$BATS_TEST_TMPDIR/asanprog" "$BATS_TEST_TMPDIR/a.c" 2>/dev/null || skip "cannot build with -fsanitize=address"
	pol=$(populate_all)
	run --separate-stderr env LD_PRELOAD="$asan:$SHIM" PREFAULT_POLICY="$pol" PREFAULT_REPORT=stderr "$BATS_TEST_TMPDIR/asanprog"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
	[[ "$stderr" == "prefault: asanprog["* ]]
	grep -q "^prefault:   policy $pol;" <<<"$stderr"
	grep -q '^prefault:   rule big: 1 matched, 4.0 MiB; prefaulted 4.0 MiB' <<<"$stderr"
}

# Finding (helper-37's E): gperftools' tcmalloc defines mmap, munmap and
# mremap and makes each with syscall(); preloaded behind the shim (or linked
# into the program), the shim's syscall() handled the call it had just
# passed on as a new one of the program's, until the stack ran out: SIGSEGV
# at the first mmap, with no policy at all.
@test "an interposer behind the shim that makes the memory calls with syscall(): no recursion, and the shim still acts" {
	needs_plain_runtime
	fwd="$B/probes/libsysfwd.so"
	for pol in "" auto "$(arena_policy recycle)"; do
		LD_PRELOAD="$SHIM_LD:$fwd" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none run --separate-stderr "$PROBE" memcalls 20
		echo "policy '$pol': status $status, $output / $stderr"
		[ "$status" -eq 0 ]
		[ "$output" = memcalls=ok ]
		[ "$(sed -n 's/^sysfwd: calls=//p' <<<"$stderr")" -ge 160 ] # the interposer made them
	done
	# recycling through it: kept regions come back, the program's faults fall
	LD_PRELOAD="$SHIM_LD:$fwd" PREFAULT_POLICY="$(arena_policy recycle)" PREFAULT_REPORT="$BATS_TEST_TMPDIR/r.json" \
		run --separate-stderr "$PROBE" cycle 40 1M
	[ "$status" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "[r for r in d['rules'] if r['name']=='arenas'][0]['recycle']['recycled']")" -ge 30 ]
	[ "$(kv loop_faults "$output")" -lt $((40 * 256 / 4)) ]
	# the shim's own exit report, through it
	LD_PRELOAD="$SHIM_LD:$fwd" PREFAULT_POLICY= PREFAULT_REPORT="$BATS_TEST_TMPDIR/o.json" run --separate-stderr "$PROBE" memcalls 2
	[ "$status" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/o.json" "d['calls']['mmap'] >= 2")" = True ]
}
