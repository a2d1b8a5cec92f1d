#!/usr/bin/env bash
# Benchmark: prints wall time (median of runs), throughput and peak memory of
# `kubectl-mesh_inject` on generated streams of 500, 5,000 and 50,000
# workloads, beside a parse-only baseline over the same bytes and, on 500,
# the kustomize patch peer. Also checks that inject is idempotent and that
# uninject restores each generated input.
#
# usage: bench/run.sh [RUNS]   (default 5 runs per measurement; PEER_RUNS, default 3, for the
# kustomize peer, which takes seconds a run)
# Needs python3 and ../shared/bench/ (gen.py, kustomize-peer.sh); kubectl for the peer.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shared=../shared/bench
if [ ! -f "$shared/gen.py" ]; then
  echo "SKIPPED: $shared/gen.py not found (the generator lives beside the repository)"
  exit 0
fi
cargo build --release --quiet --bin kubectl-mesh_inject --example parse_only
tool=target/release/kubectl-mesh_inject
baseline=target/release/examples/parse_only
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# measure CMD...: median wall seconds (to the millisecond, from the shell's
# clock: /usr/bin/time rounds to 10 ms) and peak RSS (MB) over $runs runs.
measure() {
  local walls=() rss=0 kb start end
  for _ in $(seq "$runs"); do
    start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$work/time" "$@" > /dev/null 2>&1
    end=$EPOCHREALTIME
    walls+=("$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}')")
    read -r kb < "$work/time"
    if [ "$kb" -gt "$rss" ]; then rss=$kb; fi
  done
  local median
  median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$median $((rss / 1024))"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%d GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-10s %8s %-14s %9s %9s %8s %10s\n' workloads MB tool "wall s" "MB/s" "RSS MB" "x parse"
declare -A inject_wall base_walls
for n in 500 5000 50000; do
  input=$work/in-$n.yaml
  python3 "$shared/gen.py" "$n" "$input"
  mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN {printf "%.1f", b/1048576}')
  read -r base_wall base_rss < <(measure "$baseline" "$input")
  read -r wall rss < <(measure "$tool" -q -f "$input")
  inject_wall[$n]=$wall
  base_walls[$n]=$base_wall
  row() { printf '%-10s %8s %-14s %9s %9s %8s %10s\n' "$n" "$mb" "$1" "$2" \
    "$(awk -v m="$mb" -v w="$2" 'BEGIN {printf "%.1f", (w > 0 ? m / w : 0)}')" "$3" \
    "$(awk -v w="$2" -v b="$base_wall" 'BEGIN {printf "%.2f", (b > 0 ? w / b : 0)}')"; }
  row parse-only "$base_wall" "$base_rss"
  row mesh-inject "$wall" "$rss"
  if [ "$n" = 5000 ]; then
    echo "  peak RSS ${rss} MB; the limit, 3x the input + 32 MiB: $(awk -v m="$mb" 'BEGIN {printf "%.0f", 3 * m + 32}') MB"
  fi
  if [ "$n" = 500 ] && command -v kubectl > /dev/null && [ -f "$shared/kustomize-peer.sh" ]; then
    read -r peer_wall peer_rss < <(runs=${PEER_RUNS:-3} measure bash "$shared/kustomize-peer.sh" "$input")
    row kustomize-peer "$peer_wall" "$peer_rss"
    echo "  mesh-inject is $(awk -v p="$peer_wall" -v w="$wall" 'BEGIN {printf "%.0f", (w > 0 ? p / w : 0)}')x faster than the kustomize peer on 500 workloads"
  fi
  # Properties on the generated input.
  "$tool" -q -f "$input" > "$work/out.yaml"
  "$tool" -q -f "$work/out.yaml" | cmp -s - "$work/out.yaml" || { echo "  FAILED: inject is not idempotent on $n"; exit 1; }
  "$tool" uninject -q -f "$work/out.yaml" | cmp -s - "$input" || { echo "  FAILED: uninject does not restore $n"; exit 1; }
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}'; }
echo "50,000 / 5,000 time ratio: $(ratio "${inject_wall[50000]}" "${inject_wall[5000]}") (parse-only: $(ratio "${base_walls[50000]}" "${base_walls[5000]}"))"
small=testdata/example/deploy.yaml
read -r small_wall _ < <(measure "$tool" -q -f "$small")
echo "README example end to end: ${small_wall}s wall (median of $runs)"
echo "properties (idempotent inject, exact uninject) hold on every generated input"
