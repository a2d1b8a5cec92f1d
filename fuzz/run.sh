#!/usr/bin/env bash
# Fuzz the whole pipeline for a while, one worker, at low priority.
#
#   fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
#
# Seeds the corpus from testdata/ and ../shared/corpus/ (when it is beside the
# checkout), runs the `pipeline` target on stable Rust (no sanitizer; the
# nightly-only flags cargo-fuzz passes are allowed with RUSTC_BOOTSTRAP), then
# prints how many inputs were executed, the corpus size and the crashes kept.
# FUZZ_TARGET_DIR chooses the build directory (default: fuzz/target).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-600}
shift || true
corpus=$here/corpus/pipeline
artifacts=$here/artifacts/pipeline
mkdir -p "$corpus" "$artifacts"

for dir in "$here/../testdata" "$here/../../shared/corpus"; do
    [ -d "$dir" ] || continue
    find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' -o -path '*/fuzz/*' \) -print0 |
        while IFS= read -r -d '' file; do
            cp "$file" "$corpus/seed-$(sha1sum <"$file" | cut -c1-16)"
        done
done

log=$(mktemp)
status=0
RUSTC_BOOTSTRAP=1 CARGO_BUILD_JOBS=1 nice -n 10 cargo fuzz run --sanitizer none -O \
    --fuzz-dir "$here" --target-dir "${FUZZ_TARGET_DIR:-$here/target}" pipeline "$corpus" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 "$@" 2>&1 | tee "$log" || status=$?

echo "---"
echo "seconds asked: $seconds"
grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb' "$log" || true
echo "corpus: $(find "$corpus" -type f | wc -l) inputs"
echo "crashes, time-outs, out-of-memory kept: $(find "$artifacts" -type f | wc -l) in $artifacts"
rm -f "$log"
exit "$status"
