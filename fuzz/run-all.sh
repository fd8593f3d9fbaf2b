#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600) one after the other on stable (no
# sanitizer), seeded by fuzz/seed.py; logs go to fuzz/logs/<target>.log, and the last
# libFuzzer status line of each (execs, exec/s, corpus size, coverage) is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
targets=${TARGETS:-"lark json_schema regex gbnf ir matcher"}
mkdir -p fuzz/logs
for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    cargo fuzz run -s none --fuzz-dir fuzz "$t" -- -max_total_time="$secs" -max_len=4200 \
        -rss_limit_mb=4096 -timeout=10 >"fuzz/logs/$t.log" 2>&1 || echo "$t: FAILED (see fuzz/logs/$t.log)"
    echo "$t: $(grep -E '^#[0-9]+' "fuzz/logs/$t.log" | tail -1)"
    echo "$t: $(grep -E 'Done [0-9]+ runs' "fuzz/logs/$t.log" | tail -1)"
done
