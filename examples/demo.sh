#!/bin/sh
# demo.sh BUILD: the main job.  A trial of the bundled streamer without and
# with the streaming policy (alternating runs, medians, a verdict), then one
# run of each side so you can see the program's own frame times.
set -e
B=${1:-build}
echo "== prefault trial -n 5 -p streaming -- $B/examples/stream"
"$B/prefault" trial -n 5 -p streaming -- "$B/examples/stream"
echo
echo "== one run of each, the program's own figures:"
printf 'without: '
"$B/examples/stream"
printf 'with:    '
PREFAULT_REPORT=none "$B/prefault" run -p streaming -- "$B/examples/stream"
