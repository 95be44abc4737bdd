#!/bin/sh
# run.sh checks Chrome trace-event JSON files with Chrome DevTools' trace
# parser (see check.mjs), installing it into this folder on first use.
#
#	scripts/check-trace/run.sh trace.json...
#
# It exits non-zero if any file fails. Needs node and npm (the first run
# downloads @paulirish/trace_engine from the npm registry).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
if [ "$#" -eq 0 ]; then
	echo "usage: $0 trace.json..." >&2
	exit 2
fi
if [ ! -d "$dir/node_modules/@paulirish/trace_engine" ]; then
	(cd "$dir" && npm install --no-audit --no-fund) >&2
fi
exec node "$dir/check.mjs" "$@"
