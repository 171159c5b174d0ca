#!/bin/sh
# demo.sh BUILD: run the bundled streamer without and with the streaming
# policy, and show both sides.
set -e
B=${1:-build}
echo "== without prefault"
"$B/examples/stream"
echo "== with: prefault run -p streaming"
"$B/prefault" run -p streaming -- "$B/examples/stream"
