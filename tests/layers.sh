#!/bin/sh
# layers.sh BUILD: the shim's and the tool's modules call and include only
# downward.  The order, top to bottom, is the order of SHIM_SRC and CLI_SRC
# in the Makefile (shim/README draws it).  An edge is a #include of another
# module's header, or a symbol one object file uses that another defines
# (nm).  Every edge must go from a module to one listed below it; any that
# goes up, and so any circle, is printed and fails the check.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bad=0
# src VAR: the files listed in the Makefile variable, in order
src() {
	sed -n "/^$1 :=/,/[^\\\\]\$/p" "$ROOT/Makefile" | tr ' \\' '\n\n' | grep '\.c$'
}
# module of a header: the .c beside it with the same name, or one that
# claims it with a "/* header: NAME.h */"-free rule: the table below.
owner() {
	case $1 in
	glue.h) echo libc ;;
	shim.h) echo init ;;
	profile_int.h) echo profile_tables ;;
	defs.h | entries.h | fork.h | lock.h) echo - ;; # constants and inline primitives: the floor of everything
	cli.h) echo - ;;
	*) basename "$1" .h ;;
	esac
}
check() { # check DIR OBJDIR VAR
	dir=$1 objs=$2 list=$(src "$3" | xargs -n1 basename | sed 's/\.c$//')
	rank() { echo "$list" | grep -nx "$1" | cut -d: -f1; }
	{
		for m in $list; do
			f="$ROOT/$dir/$m.c"
			[ -f "$f" ] || f="$ROOT/shim/$m.c"
			for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" "$ROOT/$dir/$m.h" 2>/dev/null); do
				o=$(owner "$h")
				[ "$o" != - ] && [ "$o" != "$m" ] && echo "$m $o include"
			done
		done
		for o in "$objs"/*.o; do
			nm "$o" | awk -v m="$(basename "$o" .o)" '$2 ~ /^[TDBRVWC]$/ { print "D", $3, m } $1 == "U" { print "U", $2, m }'
		done | awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[n++] = $2 " " $3 }
			END { for (i = 0; i < n; i++) { split(use[i], a, " "); if ((a[1] in def) && def[a[1]] != a[2]) print a[2], def[a[1]], "calls" } }'
	} | sort -u >"$T/edges"
	while read -r from to how; do
		rf=$(rank "$from") rt=$(rank "$to")
		[ -n "$rf" ] && [ -n "$rt" ] || continue # (a module of the other tree: the CLI uses the shim's pure files)
		if [ "$rf" -ge "$rt" ]; then
			echo "layers.sh: $dir/$from.c $how $to, which is not below it" >&2
			bad=1
		fi
	done <"$T/edges"
	echo "layers.sh: $dir: $(echo "$list" | wc -l) modules, $(wc -l <"$T/edges") edges, top to bottom: $(echo $list)"
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
check shim "$B/obj/shim" SHIM_SRC
check tools "$B/obj/tools" CLI_SRC
exit $bad
