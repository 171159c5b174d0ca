#!/bin/sh
# layers.sh BUILD: the shim's and the tool's modules call and include only
# downward.  The order, top to bottom, is the order of SHIM_SRC and CLI_SRC
# in the Makefile (shim/README draws it; the folders show it: shim/,
# shim/floor/, and lib/ which the tool shares).  An edge is a #include of
# another module's header, or a symbol one object file uses that another
# defines (nm).  Every edge must go from a module to one listed below it;
# any that goes up, and so any circle, is printed and fails the check.
# A header belongs to the source of its name (glue.h to glue.c); headers of
# constants and inline primitives belong to no module.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bad=0
# src VAR: the files listed in the Makefile variable, in order, as paths
src() {
	sed -n "/^$1 :=/,/[^\\\\]\$/p" "$ROOT/Makefile" | tr ' \\' '\n\n' | grep '\.c$'
}
owner() {
	case $1 in
	shim.h) echo init ;;
	profile_int.h) echo profile_tables ;;
	backoff.h | defs.h | entries.h | fork.h | lock.h | figs.h | actions.h | io.h | cli.h | profile_format.h) echo - ;;
	*) basename "$1" .h ;;
	esac
}
check() { # check NAME OBJDIR... -- VAR
	name=$1 var=$2
	paths=$(src "$var")
	list=$(echo "$paths" | xargs -n1 basename | sed 's/\.c$//')
	rank() { echo "$list" | grep -nx "$1" | cut -d: -f1; }
	{
		for f in $paths; do
			m=$(basename "$f" .c)
			for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$ROOT/$f" "$ROOT/${f%.c}.h" 2>/dev/null); do
				o=$(owner "$h")
				[ "$o" != - ] && [ "$o" != "$m" ] && echo "$m $o include"
			done
		done
		for f in $paths; do
			o="$B/obj/${f%.c}.o"
			[ "$var" = CLI_SRC ] || [ -f "$o" ] || continue
			[ -f "$o" ] || o="$B/obj/cli/${f%.c}.o"
			nm "$o" | awk -v m="$(basename "$f" .c)" '$2 ~ /^[TDBRVWC]$/ { print "D", $3, m } $1 == "U" { print "U", $2, m }'
		done | awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[n++] = $2 " " $3 }
			END { for (i = 0; i < n; i++) { split(use[i], a, " "); if ((a[1] in def) && def[a[1]] != a[2]) print a[2], def[a[1]], "calls" } }'
	} | sort -u >"$T/edges"
	while read -r from to how; do
		rf=$(rank "$from") rt=$(rank "$to")
		[ -n "$rf" ] && [ -n "$rt" ] || continue # (a module of the other tree: the tool uses lib/)
		if [ "$rf" -ge "$rt" ]; then
			echo "layers.sh: $name: $from.c $how $to, which is not below it" >&2
			bad=1
		fi
	done <"$T/edges"
	echo "layers.sh: $name: $(echo "$list" | wc -l) modules, $(wc -l <"$T/edges") edges, top to bottom: $(echo $list)"
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
check shim SHIM_SRC
check tools CLI_SRC
exit $bad
