#!/usr/bin/env bats
# The profile's naming of code (what perf names: .symtab, debug files by
# build ID and .gnu_debuglink, MiniDebugInfo, demangled C++), its file format,
# the figures it prints, and the cause named when the shim cannot load.
load helpers

# A C program whose static function takes 16384 faults: gcc -O2 -g, so the
# function is in .symtab only (no dladdr can name it).
build_fill() { # DIR
	cat >"$1/fill.c" <<-'EOF'
	#include <stdlib.h>
	#include <sys/mman.h>
	__attribute__((noinline, noclone)) static void fill_static(char *p, size_t n)
	{
		for (size_t i = 0; i < n; i += 4096)
			p[i] = (char)i;
	}
	int main(int argc, char **argv)
	{
		size_t n = (size_t)atoi(argc > 1 ? argv[1] : "64") << 20;
		char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise(p, n, MADV_NOHUGEPAGE); /* (small pages whatever the THP mode) */
		fill_static(p, n);
		return 0;
	}
	EOF
	gcc -O2 -g -o "$1/fill" "$1/fill.c"
}

# code_name FILE.json: the name of the code that took the most faults
code_name() {
	jget "$1" "sorted(d['code'], key=lambda c: -c['faults'])[0]['symbol']"
}

# Finding: the profile named code only through dladdr (.dynsym), so a static function showed as "s+0x1190" where perf prints fill_static.
@test "profile: a static function of a gcc -O2 -g program is named, from .symtab (issue 22 #27)" {
	needs_no_tsan
	build_fill "$BATS_TEST_TMPDIR"
	run --separate-stderr "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- "$BATS_TEST_TMPDIR/fill"
	echo "$stderr"
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	[ "$(jget "$f" "d['perf']")" = ok ] || skip "perf_event_open refused here: no code is sampled"
	[ "$(code_name "$f")" = fill_static ]
	[ "$(jget "$f" "[c['faults'] for c in d['code'] if c['symbol'] == 'fill_static'][0]")" -ge 16000 ]
	# the mapping site is main's, named too; and the table shows it
	[ "$(jget "$f" "[s['symbol'] for s in d['sites'] if s['size'] == 64 << 20][0]")" = main ]
	grep -q 'fill_static (fill)' <<<"$stderr"
}

# Finding: a stripped program whose symbols are in a separate debug file was shown as offsets (perf reads .gnu_debuglink).
@test "profile: a stripped copy with .gnu_debuglink to its debug file is named (issue 22 #27)" {
	needs_no_tsan
	command -v objcopy >/dev/null || skip "needs objcopy (binutils)"
	d="$BATS_TEST_TMPDIR"
	build_fill "$d"
	objcopy --only-keep-debug "$d/fill" "$d/fill.debug"
	objcopy --strip-all "$d/fill" "$d/bare"
	objcopy --strip-all --add-gnu-debuglink="$d/fill.debug" "$d/fill" "$d/linked"
	# stripped and nothing to find: an offset, as perf would show
	run --separate-stderr "$PF" profile -o "$d/bare.json" -- "$d/bare"
	[ "$(jget "$d/bare.json" "d['perf']")" = ok ] || skip "perf_event_open refused here: no code is sampled"
	[[ "$(code_name "$d/bare.json")" == bare+0x* ]]
	# with the link: named, from the debug file beside it, and from its .debug/
	run --separate-stderr "$PF" profile -o "$d/linked.json" -- "$d/linked"
	[ "$status" -eq 0 ]
	[ "$(code_name "$d/linked.json")" = fill_static ]
	mkdir "$d/.debug"
	mv "$d/fill.debug" "$d/.debug/"
	run --separate-stderr "$PF" profile -o "$d/linked2.json" -- "$d/linked"
	[ "$(code_name "$d/linked2.json")" = fill_static ]
	# a debug file of another build (its CRC differs) is not used
	echo 'int main(void) { return 0; }' >"$d/other.c"
	gcc -g -o "$d/other" "$d/other.c"
	objcopy --only-keep-debug "$d/other" "$d/.debug/fill.debug"
	run --separate-stderr "$PF" profile -o "$d/wrong.json" -- "$d/linked"
	[[ "$(code_name "$d/wrong.json")" == linked+0x* ]]
}

@test "profile: a stripped program is named from its debug file found by build ID under the debug directory (issue 22 #27)" {
	needs_no_tsan
	command -v objcopy >/dev/null || skip "needs objcopy (binutils)"
	d="$BATS_TEST_TMPDIR"
	build_fill "$d"
	id=$(readelf -n "$d/fill" | sed -n 's/.*Build ID: *//p')
	[ -n "$id" ] || skip "gcc here writes no build ID"
	mkdir -p "$d/dbg/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$d/fill" "$d/dbg/.build-id/${id:0:2}/${id:2}.debug"
	objcopy --strip-all "$d/fill" "$d/stripped"
	run --separate-stderr "$PF" profile -o "$d/none.json" -- "$d/stripped"
	[ "$(jget "$d/none.json" "d['perf']")" = ok ] || skip "perf_event_open refused here: no code is sampled"
	[[ "$(code_name "$d/none.json")" == stripped+0x* ]]
	PREFAULT_DEBUG_DIR="$d/nothing:$d/dbg" run --separate-stderr "$PF" profile -o "$d/bid.json" -- "$d/stripped"
	[ "$status" -eq 0 ]
	[ "$(code_name "$d/bid.json")" = fill_static ]
}

# MiniDebugInfo as Fedora's find-debuginfo makes it: the function symbols
# that are not in .dynsym, in an xz-compressed ELF file in .gnu_debugdata.
@test "profile: a program with MiniDebugInfo (.gnu_debugdata, xz) is named (issue 22 #27)" {
	needs_no_tsan
	for t in objcopy nm xz; do command -v $t >/dev/null || skip "needs $t"; done
	d="$BATS_TEST_TMPDIR"
	build_fill "$d"
	objcopy --only-keep-debug "$d/fill" "$d/fill.debug"
	nm -D "$d/fill" --format=posix --defined-only | awk '{ print $1 }' | sort >"$d/dynsyms"
	nm "$d/fill.debug" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$d/funcsyms"
	comm -13 "$d/dynsyms" "$d/funcsyms" >"$d/keep"
	grep -qx fill_static "$d/keep"
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$d/keep" "$d/fill.debug" "$d/mini"
	xz "$d/mini"
	objcopy --strip-all "$d/fill" "$d/minidebug"
	objcopy --add-section .gnu_debugdata="$d/mini.xz" "$d/minidebug"
	readelf -S "$d/minidebug" | grep -q gnu_debugdata
	! readelf -S "$d/minidebug" | grep -q '\.symtab' || false
	run --separate-stderr "$PF" profile -o "$d/p.json" -- "$d/minidebug"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(jget "$d/p.json" "d['perf']")" = ok ] || skip "perf_event_open refused here: no code is sampled"
	[ "$(code_name "$d/p.json")" = fill_static ]
}

@test "profile: a C++ program's functions are shown demangled, as perf shows them (issue 22 #27)" {
	needs_no_tsan
	command -v g++ >/dev/null || skip "needs g++"
	d="$BATS_TEST_TMPDIR"
	cat >"$d/fill.cc" <<-'EOF'
	#include <cstddef>
	#include <vector>
	#include <sys/prctl.h>
	namespace ns {
	struct Filler {
		template <class T> static void fill(std::vector<T> &v, std::size_t n);
	};
	template <class T> __attribute__((noinline)) void Filler::fill(std::vector<T> &v, std::size_t n)
	{
		v.reserve(n);
		T *p = v.data();
		for (std::size_t i = 0; i < n; i += 4096 / sizeof(T))
			p[i] = T(1);
	}
	}
	int main()
	{
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); /* (small pages whatever the THP mode: fill takes 16384 faults) */
		std::vector<long> v;
		ns::Filler::fill(v, std::size_t(8) << 20);
		return 0;
	}
	EOF
	g++ -O2 -g -o "$d/fillxx" "$d/fill.cc"
	nm "$d/fillxx" | grep -q _ZN2ns6Filler4fillIlEEvRSt6vectorIT_SaIS3_EEm
	run --separate-stderr "$PF" profile -o "$d/p.json" --folded "$d/p.folded" -- "$d/fillxx"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(jget "$d/p.json" "d['perf']")" = ok ] || skip "perf_event_open refused here: no code is sampled"
	[ "$(code_name "$d/p.json")" = 'ns::Filler::fill<long>' ]
	grep -q 'ns::Filler::fill<long> (fillxx)' <<<"$stderr"
	grep -q ';ns::Filler::fill<long> [0-9]*$' "$d/p.folded"
	! grep -q '_ZN2ns' "$d/p.json" || false
}

@test "demangler: the names real programs produce, as c++filt prints them, with and without parameters (issue 22 #27)" {
	run --separate-stderr "$B/unit/demangle_test"
	echo "$output" | grep -v '^ok' || true
	[ "$status" -eq 0 ]
	grep -q 'ok   _Z18ggc_internal_allocmPFvPvEmm -> ggc_internal_alloc$' <<<"$output"
	grep -q 'ok   _Z9rtx_alloc8rtx_code -> rtx_alloc$' <<<"$output"
}

@test "demangler: libstdc++'s own symbols demangle as c++filt -p shows them" {
	command -v c++filt >/dev/null || skip "needs c++filt (binutils)"
	lib=$(g++ -print-file-name=libstdc++.so 2>/dev/null)
	[ -e "$lib" ] || lib=$(ls /usr/lib/*/libstdc++.so.6 2>/dev/null | head -n 1)
	[ -e "$lib" ] || skip "no libstdc++ here"
	nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' | grep '^_Z' | sort -u >"$BATS_TEST_TMPDIR/names"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/names")" -gt 1000 ]
	"$B/unit/demangle_test" - <"$BATS_TEST_TMPDIR/names" >"$BATS_TEST_TMPDIR/mine"
	c++filt -p <"$BATS_TEST_TMPDIR/names" >"$BATS_TEST_TMPDIR/theirs"
	# (c++filt writes "A<B<int>>" for some nested templates and "A<B<int> >" for others: compared alike)
	paste "$BATS_TEST_TMPDIR/names" "$BATS_TEST_TMPDIR/theirs" "$BATS_TEST_TMPDIR/mine" |
		awk -F'\t' '{ a = $2; b = $3; gsub(/> >/, ">>", a); gsub(/> >/, ">>", b); if (a != b) print }' >"$BATS_TEST_TMPDIR/diff"
	echo "$(wc -l <"$BATS_TEST_TMPDIR/diff") of $(wc -l <"$BATS_TEST_TMPDIR/names") differ:"
	head -n 20 "$BATS_TEST_TMPDIR/diff"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/diff")" -le 2 ]
}

@test "xz decoder: what xz writes decodes to what xz -d gives; corrupt data is refused" {
	command -v xz >/dev/null || skip "needs xz"
	d="$BATS_TEST_TMPDIR"
	XZT="$B/unit/xz_test"
	head -c 300000 "$PF" >"$d/bin"
	head -c 100000 /dev/urandom >"$d/rnd"
	cat "$BATS_TEST_DIRNAME"/*.bats >"$d/txt"
	: >"$d/empty"
	for f in bin rnd txt empty; do
		for opt in -0 -6 -9e --check=crc32 --check=crc64 --check=sha256 --check=none \
			--lzma2=lc=0,lp=4,pb=0 --lzma2=lc=4,lp=0,pb=4 --lzma2=preset=6,dict=4KiB --block-size=10000; do
			xz -c $opt "$d/$f" >"$d/t.xz"
			"$XZT" "$d/t.xz" >"$d/out" || { echo "$f $opt: refused"; false; }
			cmp "$d/out" "$d/$f" || { echo "$f $opt: differs"; false; }
		done
	done
	# concatenated streams, with stream padding between them
	{ xz -c "$d/txt"; printf '\0\0\0\0'; xz -c "$d/bin"; } >"$d/two.xz"
	"$XZT" "$d/two.xz" | cmp - <(cat "$d/txt" "$d/bin")
	# a flipped byte anywhere in a small file is refused or decodes to the
	# original (never a crash: every check the format has)
	xz -c "$d/txt" | head -c 4000 >"$d/cut.xz"
	run "$XZT" "$d/cut.xz"
	[ "$status" -eq 1 ]
	xz -c -6 "$BATS_TEST_DIRNAME/helpers.bash" >"$d/h.xz"
	n=$(stat -c %s "$d/h.xz")
	for i in $(seq 0 7 $((n - 1))); do
		cp "$d/h.xz" "$d/bad.xz"
		printf "\\x$(printf %02x $(( ($(od -An -tu1 -j$i -N1 "$d/h.xz") + 1) % 256 )))" |
			dd of="$d/bad.xz" bs=1 seek=$i conv=notrunc 2>/dev/null
		run "$XZT" "$d/bad.xz"
		[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
		[ "$status" -eq 1 ] || cmp -s <("$XZT" "$d/bad.xz") "$BATS_TEST_DIRNAME/helpers.bash"
	done
}

# Finding: /bin/true showed "10 faults in all", then 34 to 41 "sampled (every 1 fault)", most in the shim's own tables, and the reader thread's start as the program's code "pthread_create (libc.so.6)".
@test "profile: the figures add up: the program's and the shim's faults, and the sampled ones among them (issue 22 #26)" {
	needs_no_tsan
	for cmd in /bin/true "$PROBE mixed"; do
		run --separate-stderr "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- $cmd
		echo "$cmd: $stderr" | head -n 3
		[ "$status" -eq 0 ]
		f="$BATS_TEST_TMPDIR/p.json"
		[ "$(jget "$f" "d['perf']")" = ok ] || skip "perf_event_open refused here: nothing is sampled"
		jget "$f" "{k: d[k] for k in ('faults', 'sampled', 'in_shim', 'lost', 'program_faults', 'program_sampled', 'outside_sites')}"
		# the process's faults are the program's and the shim's
		[ "$(jget "$f" "d['faults']['minor'] + d['faults']['major']")" -eq \
			"$(jget "$f" "d['program_faults'] + d['faults']['shim']")" ]
		# the program's sampled faults: no more than it took, and each charged once to code and once to a site or outside
		[ "$(jget "$f" "d['program_sampled']")" -eq "$(jget "$f" "d['sampled'] - d['in_shim']")" ]
		[ "$(jget "$f" "d['program_sampled'] + d['lost']")" -le "$(jget "$f" "d['program_faults']")" ]
		[ "$(jget "$f" "sum(c['faults'] for c in d['code'])")" -eq "$(jget "$f" "d['program_sampled']")" ]
		[ "$(jget "$f" "sum(s['faults'] for s in d['sites']) + d['outside_sites']")" -eq "$(jget "$f" "d['program_sampled']")" ]
		# the shim's thread start is not the program's code
		! jget "$f" "[c['symbol'] for c in d['code']]" | grep -q pthread_create || false
		# and the table says it the same way
		grep -Eq "^prefault profile: .* [0-9]+ faults \\(minor [0-9]+, major [0-9]+\\): [0-9]+ the program's, [0-9]+ the shim's own$" <<<"$stderr"
	done
	# /bin/true itself takes a handful of faults, nearly all sampled.  Not
	# under ASan's runtime: its work in the shim's own threads (their start
	# and exit touch its shadow memory) falls outside the shim's meter now
	# and then and is counted as the program's, unsampled (seen once in CI,
	# not reproduced in 47 runs since); the plain and UBSan runs hold it.
	run --separate-stderr "$PF" profile -o "$BATS_TEST_TMPDIR/t.json" -- /bin/true
	jget "$BATS_TEST_TMPDIR/t.json" "{k: d[k] for k in ('faults', 'program_faults', 'program_sampled', 'lost')}"
	[ -n "$SAN_RT" ] || [ "$(jget "$BATS_TEST_TMPDIR/t.json" "d['program_faults'] - d['program_sampled']")" -le 4 ]
	# The shim's own: its tables and its reader thread.  Under ASan's runtime a
	# reader thread that gets to run before the exit also fills the runtime's
	# per-thread allocator cache, 16 pages of it and their shadow: 44 in 1
	# run of 30 here (perf record: 31 faults of the reader thread, all in the
	# runtime's memory), 13 in the others; CI saw 43.
	[ "$(jget "$BATS_TEST_TMPDIR/t.json" "d['faults']['shim']")" -le $((${SAN_RT:+40} + 40)) ]
}

# Finding (under ASan, whose runtime maps through the shim before its constructor runs): a mapping made
# before the shim's constructor started the reader thread before the window opened (the main thread's
# event), so the reader's faults counted as the shim's own were outside the process's count ("2 faults:
# 0 the program's, 43 the shim's own"), and it slept its first second as if perf were refused.
@test "profile: a library that maps before the shim's constructor: the counts still add up (issue 22 #26)" {
	needs_no_tsan
	for cmd in /bin/true "$PROBE keep 1 4M"; do
		# (a sanitizer's runtime stays first: the tool is built with it too)
		LD_PRELOAD="${SAN_RT:+$SAN_RT:}$STACKLIB" run --separate-stderr "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- $cmd
		echo "$cmd: $stderr" | head -n 3
		[ "$status" -eq 0 ]
		f="$BATS_TEST_TMPDIR/p.json"
		[ "$(jget "$f" "d['perf']")" = ok ] || skip "perf_event_open refused here: nothing is sampled"
		# (libstack's constructor mapped 4 MiB through the shim before the shim's constructor ran)
		[ "$(jget "$f" "len([s for s in d['sites'] if s['size'] == 4 << 20 and s['caller'] == 'libstack.so'])")" -ge 1 ]
		jget "$f" "{k: d[k] for k in ('faults', 'sampled', 'in_shim', 'lost', 'program_faults', 'program_sampled')}"
		[ "$(jget "$f" "d['faults']['shim']")" -le "$(jget "$f" "d['faults']['minor'] + d['faults']['major']")" ]
		[ "$(jget "$f" "d['faults']['minor'] + d['faults']['major']")" -eq \
			"$(jget "$f" "d['program_faults'] + d['faults']['shim']")" ]
		[ "$(jget "$f" "d['program_sampled'] + d['lost']")" -le "$(jget "$f" "d['program_faults']")" ]
	done
}

@test "profile: the counts add up in each process of a tree that forks (issue 22 #26)" {
	needs_no_tsan
	run --separate-stderr "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- sh -c "$PROBE keep 2 4M; /bin/true"
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	[ "$(jget "$f" "d['perf']")" = ok ] || skip "perf_event_open refused here: nothing is sampled"
	jget "$f" "[(p['program'], p['faults'], p['program_sampled']) for p in d['processes']]"
	[ "$(jget "$f" "all(p['program_sampled'] + p['lost'] <= p['program_faults'] for p in d['processes'])")" = True ]
	[ "$(jget "$f" "all(sum(c['faults'] for c in p['code']) == p['program_sampled'] for p in d['processes'])")" = True ]
}

# Issue 19, item 2: the shim writes the profile file from profile_format.h and the tool reads it from there, version checked.
@test "profile: a profile file of another format version is refused with a message naming both versions" {
	d="$BATS_TEST_TMPDIR"
	# a stand-in for a shim of another build: it writes a version 2 profile
	cat >"$d/oldshim.c" <<-'EOF'
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	__attribute__((destructor)) static void out(void)
	{
		const char *t = getenv("PREFAULT_PROFILE"), *p;
		char path[4096];
		FILE *f;
		size_t n = 0;
		if (!t)
			return;
		for (p = t; *p && n + 20 < sizeof path; p++) {
			if (p[0] == '%' && p[1] == 'p')
				n += (size_t)sprintf(path + n, "%d", (int)getpid()), p++;
			else
				path[n++] = *p;
		}
		path[n] = 0;
		if ((f = fopen(path, "w"))) {
			fputs(getenv("FAKE_PROFILE"), f);
			fclose(f);
		}
	}
	EOF
	gcc -shared -fPIC -o "$d/oldshim.so" "$d/oldshim.c"
	FAKE_PROFILE=$'prefault-profile\t2\nprocess\t1\t0\tx\t/x\nfaults\t1\t0\nend\n' PREFAULT_SHIM="$d/oldshim.so" \
		run --separate-stderr "$PF" profile -- /bin/true
	echo "$stderr"
	[ "$status" -ne 0 ]
	v=$(sed -n 's/^#define PROFILE_VERSION \([0-9]*\)$/\1/p' "$BATS_TEST_DIRNAME/../lib/profile_format.h")
	grep -q "a profile of format version 2; this prefault reads version $v" <<<"$stderr"
	# a record with the wrong number of fields is named with its line
	FAKE_PROFILE="prefault-profile"$'\t'"$v"$'\nprocess\t1\t0\tx\n\nend\n' PREFAULT_SHIM="$d/oldshim.so" \
		run --separate-stderr "$PF" profile -- /bin/true
	echo "$stderr"
	grep -q ':2: a "process" record with 3 fields, not 4' <<<"$stderr"
	# and one that is right is read
	FAKE_PROFILE="prefault-profile"$'\t'"$v"$'\nprocess\t1\t0\tx\t/x\nperf\tok\t-\ncount\tminor\t7\ncount\tshim_faults\t2\nend\n' \
		PREFAULT_SHIM="$d/oldshim.so" run --separate-stderr "$PF" profile -o "$d/p.json" -- /bin/true
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(jget "$d/p.json" "d['program_faults']")" -eq 5 ]
}

# Finding (#24, its ELF part): the cause was read with the tool's own ELF class only, so a 32-bit static program on a 64-bit system was "dynamically linked (checked)".
@test "a statically linked program of the other ELF class is said static by run and profile (issue 22 #24)" {
	d="$BATS_TEST_TMPDIR"
	# an i386 program with no interpreter: _start: exit(0) through int 0x80
	"$PY" - "$d/st32" <<-'EOF'
	import struct, sys
	code = bytes([0xb8, 1, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80])
	base, eh, ph = 0x08048000, 52, 32
	hdr = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)
	hdr += struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, base + eh + ph, eh, 0, 0, eh, ph, 1, 40, 0, 0)
	size = eh + ph + len(code)
	hdr += struct.pack("<IIIIIIII", 1, 0, base, base, size, size, 5, 0x1000)
	open(sys.argv[1], "wb").write(hdr + code)
	EOF
	chmod +x "$d/st32"
	"$d/st32" 2>/dev/null || skip "this kernel runs no i386 programs"
	run --separate-stderr "$PF" run -- "$d/st32"
	echo "$stderr"
	[ "$status" -eq 0 ]
	grep -q 'st32\[[0-9]*\] wrote no report: it is statically linked (checked' <<<"$stderr"
	! grep -q 'dynamically linked' <<<"$stderr" || false
	run --separate-stderr "$PF" profile -- "$d/st32"
	echo "$stderr"
	grep -q 'no profile was written: it is statically linked (checked' <<<"$stderr"
}
