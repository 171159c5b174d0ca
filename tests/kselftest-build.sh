#!/bin/sh
# kselftest-build.sh BUILD: build Linux's memory selftests
# (tools/testing/selftests/mm) from Debian's linux-source package into
# BUILD/kselftest/bin, for tests/kselftest.sh to run.
#
# Nothing of the kernel's is kept in the repository: the package's tarball is
# unpacked into BUILD/kselftest/src here (once per tarball), the source's own
# uapi headers are made there (`make headers`, as kselftest expects: this
# system's linux-libc-dev may be older than the selftests, and Debian 12's
# 6.1 headers lack what vm_util.c itself needs, struct pm_scan_arg), and the
# selftests are built with this system's compiler and libc by their own
# Makefile, `make -k`: what does not build is listed in
# BUILD/kselftest/not-built, with the compiler's first error, and the rest
# goes on.
#
# Needs Debian's linux-source-6.12, libcap-dev, libnuma-dev, liburing-dev and
# xz-utils (.ci/run installs them); when one is missing the command to
# install it is printed and the exit status is 2.
# KSELFTEST_PKG names another linux-source-X.Y package.
set -u
B=$(cd "${1:-build}" && pwd)
PKG=${KSELFTEST_PKG:-linux-source-6.12}
TARBALL=/usr/src/$PKG.tar.xz
K=$B/kselftest
SRC=$K/src
LOG=$K/build.log

missing=
[ -r "$TARBALL" ] || missing="$missing $PKG"
[ -e /usr/include/sys/capability.h ] || missing="$missing libcap-dev"
[ -e /usr/include/numa.h ] || missing="$missing libnuma-dev"
[ -e /usr/include/liburing.h ] || missing="$missing liburing-dev"
command -v xz >/dev/null 2>&1 || missing="$missing xz-utils"
if [ -n "$missing" ]; then
	echo "kselftest: needs Debian's packages:$missing.  Install them with:" >&2
	echo "    apt-get install -y --no-install-recommends$missing" >&2
	exit 2
fi

mkdir -p "$K"
# Unpack once per tarball: its size and time name it.  Only what building
# the headers and the mm selftests needs (the drivers, documentation,
# file systems, networking and other architectures are two thirds of it).
stamp="$TARBALL $(stat -c '%s %Y' "$TARBALL")"
if [ "$(cat "$SRC/.prefault-stamp" 2>/dev/null)" != "$stamp" ]; then
	echo "kselftest: unpacking $TARBALL into $SRC"
	rm -rf "$SRC" && mkdir -p "$SRC"
	top=$PKG
	tar -xJf "$TARBALL" -C "$SRC" --strip-components=1 \
		--exclude="$top/drivers" --exclude="$top/Documentation" --exclude="$top/sound" \
		--exclude="$top/net" --exclude="$top/fs" --exclude="$top/firmware" \
		--exclude="$top/samples" --exclude="$top/rust" --exclude="$top/tools/perf" \
		--exclude="$top/arch/[a-w]*" --exclude="$top/arch/xtensa" || exit 1
	echo "$stamp" >"$SRC/.prefault-stamp"
fi

MM=$SRC/tools/testing/selftests/mm
echo "kselftest: building the uapi headers and the mm selftests (log: $LOG)"
: >"$LOG"
make -s -C "$SRC" headers >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; echo "kselftest: make headers failed" >&2; exit 1; }
mkdir -p "$K/bin"
# -k: build what builds.  The selftests' own Makefile picks each program's
# libraries and flags (-lcap, -lnuma, -luring, -mxsave for the pkey tests).
make -k -j"${JOBS:-2}" -C "$MM" OUTPUT="$K/bin" >>"$LOG" 2>&1

# What the Makefile meant to build and did not: its TEST_GEN_FILES, read
# from make itself so the list follows the source.
wanted=$(printf 'prefault-list:\n\t@echo $(TEST_GEN_FILES)\n' |
	make -s -C "$MM" OUTPUT="$K/bin" -f Makefile -f - prefault-list 2>/dev/null)
: >"$K/not-built"
for f in $wanted; do
	[ -x "$f" ] && continue
	n=${f##*/}
	why=$(grep -m 1 "^$n\.c:[0-9]*:[0-9]*: error:" "$LOG" | cut -d: -f4- | sed 's/^ *//')
	echo "$n: ${why:-see $LOG}" >>"$K/not-built"
done
# The 32-bit pkey tests are only in the list when a 32-bit toolchain is.
if grep -q "broken 32-bit build" "$LOG"; then
	echo "protection_keys_32 pkey_sighandler_tests_32: no 32-bit toolchain (gcc-multilib)" >>"$K/not-built"
fi
built=$(ls "$K/bin" | wc -l)
echo "kselftest: $built programs built in $K/bin; not built: $(wc -l <"$K/not-built")"
sed 's/^/kselftest:   not built: /' "$K/not-built"
exit 0
