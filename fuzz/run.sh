#!/usr/bin/env bash
# Fuzz the whole pipeline for a while, one worker, at low priority.
#
#   fuzz/run.sh [SECONDS] [TARGET] [extra libFuzzer flags...]
#
# TARGET is `pipeline` (the default: the whole pipeline on arbitrary bytes),
# `reader` (manifests assembled from the pieces of the differential test
# against kubectl's reader, chosen by the input's bytes) or `templates`
# (the cluster's template path: generated template programs over streams of
# alike workloads, each run with and without reuse, which must agree). For `pipeline`,
# seeds the corpus from testdata/, ../shared/corpus/ (when it is beside the
# checkout) and the generators of that test (examples/fuzz_seeds.rs), each
# file behind a settings byte (see fuzz_targets/pipeline.rs). Runs the
# target with the dictionary pipeline.dict (YAML 1.1's special scalars,
# Unicode's line breaks, the meshes' annotations...) on stable Rust (no sanitizer; the nightly-only
# flags cargo-fuzz passes are allowed with RUSTC_BOOTSTRAP), then
# prints how many inputs were executed, the corpus size and the crashes kept.
# A crash does not end the run: the input is kept and fuzzing goes on.
# The summary's executions are those of every job of the run.
# FUZZ_TARGET_DIR chooses the build directory (default: fuzz/target).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-600}
shift || true
name=pipeline
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    name=$1
    shift
fi
case $name in
pipeline | reader | templates) ;;
*)
    echo "fuzz/run.sh: no target $name (pipeline, reader or templates)" >&2
    exit 2
    ;;
esac
corpus=$here/corpus/$name
artifacts=$here/artifacts/$name
mkdir -p "$corpus" "$artifacts"

# The generators' seeds, written afresh each run.
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
if [ "$name" = pipeline ]; then
    CARGO_BUILD_JOBS=1 nice -n 10 cargo run --quiet --manifest-path "$here/../Cargo.toml" \
        --example fuzz_seeds -- "$generated"
fi

for dir in "$here/../testdata" "$here/../../shared/corpus" "$generated"; do
    [ "$name" = pipeline ] || break
    [ -d "$dir" ] || continue
    find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' -o -path '*/fuzz/*' \) -print0 |
        while IFS= read -r -d '' file; do
            # The target's first byte chooses the settings: each seed goes in
            # with the defaults (0) and with a choice of its own.
            sum=$(sha1sum <"$file" | cut -c1-16)
            choice=$((16#${sum:0:2} % 32))
            for byte in 0 "$choice"; do
                { printf "\\$(printf '%03o' "$byte")"; cat "$file"; } >"$corpus/seed-$sum-$byte"
            done
        done
done

target=${FUZZ_TARGET_DIR:-$here/target}
RUSTC_BOOTSTRAP=1 CARGO_BUILD_JOBS=1 nice -n 10 cargo fuzz build --sanitizer none -O \
    --fuzz-dir "$here" --target-dir "$target" "$name"
binary=$target/x86_64-unknown-linux-gnu/release/$name

# One worker (libFuzzer's fork mode with one job at a time): a crash,
# time-out or running out of memory is kept in $artifacts and fuzzing goes
# on in a new process, without loading the corpus again, until the time is
# used. (Should the fuzzer stop early all the same, it is started again.)
log=$generated/log
executions=0
started=$(date +%s)
while left=$((seconds - ($(date +%s) - started))); [ "$left" -gt 0 ]; do
    run_start=$(date +%s)
    nice -n 10 "$binary" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -artifact_prefix="$artifacts/" -max_total_time="$left" -timeout=10 \
        -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -dict="$here/pipeline.dict" "$@" "$corpus" 2>&1 | tee "$log" || true
    # The parent's last "#RUNS: cov: ..." line counts the jobs' executions.
    runs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$log" | tail -n 1)
    executions=$((executions + ${runs:-0}))
    if [ $(($(date +%s) - run_start)) -lt 5 ]; then
        echo "the fuzzer stopped at once; not restarting" >&2
        break
    fi
done

echo "---"
echo "seconds: $(($(date +%s) - started)) of $seconds"
echo "executions: $executions"
echo "corpus: $(find "$corpus" -type f | wc -l) inputs"
echo "crashes, time-outs, out-of-memory kept: $(find "$artifacts" -type f | wc -l) in $artifacts"
