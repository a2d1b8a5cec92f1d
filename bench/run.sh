#!/usr/bin/env bash
# Benchmark: prints wall time (median of runs), throughput and peak memory of
# `kubectl-mesh_inject` on generated streams of 500, 5,000 and 50,000
# workloads, given as a file (-f) and on a pipe (standard input, as Helm's
# post-renderer and every `|` give it), side by side with their ratio, beside
# a parse-only baseline over the same bytes and, on 500, the kustomize patch
# peer. Then the same workloads as the items of one ResourceList (500 and
# 5,000), as a file and as a KRM function's standard input. Also checks that
# inject is idempotent, that uninject restores each generated input and that
# the pipe gives the output the file gives. Last, JSON: the 5,000 workloads
# as one JSON List (pretty and on one line) beside them as a stream of JSON
# documents, and a ConfigMap of 12 MB on one line, with its peak memory as a
# multiple of its size.
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
target=${CARGO_TARGET_DIR:-target}
tool=$target/release/kubectl-mesh_inject
baseline=$target/release/examples/parse_only
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Linkerd's proxy needs its cluster's trust anchors: the sample ones, as a user
# gives theirs (every inject below takes them; uninject needs none).
anchors=(--context testdata/cluster/)

# once CMD...: one run of CMD (standard input passed on, output dropped);
# prints its wall seconds (to the millisecond, from the shell's clock:
# /usr/bin/time rounds to 10 ms) and its peak RSS in KB.
once() {
  local start end kb
  start=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$work/time" "$@" > /dev/null 2>&1
  end=$EPOCHREALTIME
  read -r kb < "$work/time"
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}') $kb"
}

# summary: from lines "wall kb", the median wall and the peak RSS in MB.
summary() {
  sort -n | awk '{w[NR] = $1; if ($2 > r) r = $2} END {printf "%s %d\n", w[int((NR + 1) / 2)], r / 1024}'
}

# measure CMD...: median wall seconds and peak RSS (MB) of CMD over $runs runs.
measure() {
  for _ in $(seq "$runs"); do once "$@"; done | summary
}

# measure_paths [--baseline] INPUT ARGS...: the tool with ARGS on INPUT given
# as a file (-f INPUT) and on a pipe (`cat INPUT |`), run in turn $runs times
# each so that both see the same machine; prints "file_wall file_rss
# pipe_wall pipe_rss". With --baseline, the parse-only baseline on INPUT
# takes its turn too, first in each round, and its figures come first: this
# machine's speed drifts by a fifth within a minute, and a ratio is only
# worth something between runs made side by side.
measure_paths() {
  local with_base=
  if [ "$1" = --baseline ]; then
    with_base=1
    shift
  fi
  local input=$1
  shift
  : > "$work/base" && : > "$work/file" && : > "$work/pipe"
  for _ in $(seq "$runs"); do
    if [ -n "$with_base" ]; then once "$baseline" "$input" >> "$work/base"; fi
    once "$tool" "$@" -f "$input" >> "$work/file"
    cat "$input" | once "$tool" "$@" >> "$work/pipe"
  done
  if [ -n "$with_base" ]; then printf '%s ' "$(summary < "$work/base")"; fi
  echo "$(summary < "$work/file") $(summary < "$work/pipe")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%d GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-10s %8s %-22s %9s %9s %8s %10s\n' workloads MB tool "wall s" "MB/s" "RSS MB" "x parse"
declare -A inject_wall base_walls
for n in 500 5000 50000; do
  input=$work/in-$n.yaml
  python3 "$shared/gen.py" "$n" "$input"
  mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN {printf "%.1f", b/1048576}')
  read -r base_wall base_rss wall rss pipe_wall pipe_rss \
    < <(measure_paths --baseline "$input" -q "${anchors[@]}")
  inject_wall[$n]=$wall
  base_walls[$n]=$base_wall
  row() { printf '%-10s %8s %-22s %9s %9s %8s %10s\n' "$n" "$mb" "$1" "$2" \
    "$(awk -v m="$mb" -v w="$2" 'BEGIN {printf "%.1f", (w > 0 ? m / w : 0)}')" "$3" \
    "$(ratio "$2" "$base_wall")"; }
  row parse-only "$base_wall" "$base_rss"
  row "mesh-inject -f file" "$wall" "$rss"
  row "mesh-inject < pipe" "$pipe_wall" "$pipe_rss"
  echo "  pipe / file: time $(ratio "$pipe_wall" "$wall")x, peak RSS $(ratio "$pipe_rss" "$rss")x"
  if [ "$n" = 5000 ]; then
    echo "  peak RSS ${rss} MB from the file, ${pipe_rss} MB from the pipe; the limit, 3x the input + 32 MiB: $(awk -v m="$mb" 'BEGIN {printf "%.0f", 3 * m + 32}') MB"
  fi
  if [ "$n" = 500 ] && command -v kubectl > /dev/null && [ -f "$shared/kustomize-peer.sh" ]; then
    read -r peer_wall peer_rss < <(runs=${PEER_RUNS:-3} measure bash "$shared/kustomize-peer.sh" "$input")
    row kustomize-peer "$peer_wall" "$peer_rss"
    echo "  mesh-inject is $(awk -v p="$peer_wall" -v w="$wall" 'BEGIN {printf "%.0f", (w > 0 ? p / w : 0)}')x faster than the kustomize peer on 500 workloads"
  fi
  # Properties on the generated input.
  "$tool" -q "${anchors[@]}" -f "$input" > "$work/out.yaml"
  # The injected 50,000 are about 550 MB, over the default limit of one input.
  "$tool" -q "${anchors[@]}" --max-input-bytes 2Gi -f "$work/out.yaml" | cmp -s - "$work/out.yaml" || { echo "  FAILED: inject is not idempotent on $n"; exit 1; }
  "$tool" uninject -q --max-input-bytes 2Gi -f "$work/out.yaml" | cmp -s - "$input" || { echo "  FAILED: uninject does not restore $n"; exit 1; }
  cat "$input" | "$tool" -q "${anchors[@]}" | cmp -s - "$work/out.yaml" || { echo "  FAILED: the pipe's output is not the file's on $n"; exit 1; }
done
echo "50,000 / 5,000 time ratio: $(ratio "${inject_wall[50000]}" "${inject_wall[5000]}") (parse-only: $(ratio "${base_walls[50000]}" "${base_walls[5000]}"))"

# Istio on the same 5,000 workloads: its embedded profile, then the
# cluster's own configuration (the istio-sidecar-injector and istio
# ConfigMaps of Istio's chart, from ../shared/fidelity/istio/make-configmaps.py)
# in context, its templates rendered for each workload.
configmaps=../shared/fidelity/istio/make-configmaps.py
if [ -f "$configmaps" ] && python3 -c "import yaml" > /dev/null 2>&1; then
  python3 "$configmaps" "$work/istio-configmaps.yaml"
  input=$work/in-5000.yaml
  mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN {printf "%.1f", b/1048576}')
  echo "Istio, 5,000 workloads:"
  : > "$work/base" && : > "$work/embedded" && : > "$work/cluster"
  for _ in $(seq "$runs"); do
    once "$baseline" "$input" >> "$work/base"
    once "$tool" -q --profile istio -f "$input" >> "$work/embedded"
    once "$tool" -q --profile istio --context "$work/istio-configmaps.yaml" -f "$input" >> "$work/cluster"
  done
  read -r base_wall base_rss < <(summary < "$work/base")
  for what in embedded cluster; do
    read -r wall rss < <(summary < "$work/$what")
    label=$([ "$what" = embedded ] && echo "istio embedded" || echo "istio cluster templates")
    printf '%-10s %8s %-22s %9s %9s %8s %10s\n' 5000 "$mb" "$label" "$wall" \
      "$(awk -v m="$mb" -v w="$wall" 'BEGIN {printf "%.1f", (w > 0 ? m / w : 0)}')" "$rss" \
      "$(ratio "$wall" "$base_wall")"
  done
  "$tool" -q --profile istio --context "$work/istio-configmaps.yaml" -f "$input" > "$work/istio-out.yaml"
  "$tool" -q --profile istio --context "$work/istio-configmaps.yaml" -f "$work/istio-out.yaml" | cmp -s - "$work/istio-out.yaml" \
    || { echo "  FAILED: inject with the cluster's templates is not idempotent"; exit 1; }
  "$tool" uninject -q --profile istio -f "$work/istio-out.yaml" | cmp -s - "$input" \
    || { echo "  FAILED: uninject does not restore what the cluster's templates injected"; exit 1; }
else
  echo "Istio with the cluster's ConfigMaps: SKIPPED ($configmaps or PyYAML missing)"
fi

# The same workloads as the items of one ResourceList: from a file it is one
# document holding a list, from standard input a KRM function's call (its
# items injected the same way, and `results` added). One document is held
# whole, so 50,000 workloads (gigabytes) are left out.
echo "ResourceList of the same workloads (one document):"
for n in 500 5000; do
  list=$work/list-$n.yaml
  python3 - "$work/in-$n.yaml" "$list" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
with open(sys.argv[2], "w") as out:
    out.write("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
    for doc in docs:
        lines = doc.strip("\n").split("\n")
        out.write("- " + lines[0] + "\n" + "".join("  " + line + "\n" if line else "\n" for line in lines[1:]))
PY
  mb=$(awk -v b="$(stat -c %s "$list")" 'BEGIN {printf "%.1f", b/1048576}')
  read -r wall rss pipe_wall pipe_rss < <(measure_paths "$list" -q "${anchors[@]}")
  printf '%-10s %8s %-22s %9s %9s %8s\n' "$n" "$mb" "list -f file" "$wall" \
    "$(awk -v m="$mb" -v w="$wall" 'BEGIN {printf "%.1f", (w > 0 ? m / w : 0)}')" "$rss"
  printf '%-10s %8s %-22s %9s %9s %8s\n' "$n" "$mb" "KRM function < pipe" "$pipe_wall" \
    "$(awk -v m="$mb" -v w="$pipe_wall" 'BEGIN {printf "%.1f", (w > 0 ? m / w : 0)}')" "$pipe_rss"
  echo "  pipe / file: time $(ratio "$pipe_wall" "$wall")x, peak RSS $(ratio "$pipe_rss" "$rss")x"
  "$tool" -q "${anchors[@]}" -f "$list" > "$work/list-out.yaml"
  cat "$list" | "$tool" -q "${anchors[@]}" > "$work/krm-out.yaml"
  # The function's answer is the file's output, then its results.
  cmp -s -n "$(stat -c %s "$work/list-out.yaml")" "$work/krm-out.yaml" "$work/list-out.yaml" \
    || { echo "  FAILED: the KRM function's items are not the file's on $n"; exit 1; }
done

# A JSON List of the same 5,000 workloads, as `kubectl get -o json` writes
# it (four spaces an indentation level) and on one line (`jq -c .`), read
# item by item: beside the same workloads as a stream of JSON documents, and
# checked for idempotent inject and exact uninject. Then one ConfigMap of
# 100,000 keys on one line (12 MB, a document that is no workload), with its
# peak RSS as a multiple of its size.
if python3 -c "import yaml" > /dev/null 2>&1; then
echo "JSON, 5,000 workloads:"
python3 - "$work/in-5000.yaml" "$work" <<'PY'
import json, sys
import yaml
docs = [doc for doc in yaml.safe_load_all(open(sys.argv[1])) if doc]
work = sys.argv[2]
listed = {"apiVersion": "v1", "items": docs, "kind": "List", "metadata": {"resourceVersion": ""}}
with open(work + "/json-list.json", "w") as out:
    out.write(json.dumps(listed, indent=4) + "\n")
with open(work + "/one-line-list.json", "w") as out:
    json.dump(listed, out, separators=(",", ":"))
with open(work + "/json-stream.json", "w") as out:
    out.write("".join(json.dumps(doc, indent=4) + "\n" for doc in docs))
data = {"example.com/key-%06d" % i: "value-%06d-" % i + "x" * 80 for i in range(100000)}
with open(work + "/one-line-configmap.json", "w") as out:
    json.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": data}, out, separators=(",", ":"))
PY
read -r stream_wall stream_rss stream_pipe_wall stream_pipe_rss < <(measure_paths "$work/json-stream.json" -q "${anchors[@]}")
for what in json-stream json-list one-line-list; do
  input=$work/$what.json
  mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN {printf "%.1f", b/1048576}')
  if [ "$what" = json-stream ]; then
    wall=$stream_wall rss=$stream_rss pipe_wall=$stream_pipe_wall pipe_rss=$stream_pipe_rss
  else
    read -r wall rss pipe_wall pipe_rss < <(measure_paths "$input" -q "${anchors[@]}")
  fi
  for how in file pipe; do
    if [ "$how" = file ]; then w=$wall r=$rss; else w=$pipe_wall r=$pipe_rss; fi
    printf '%-14s %6s MB %-6s %7s s %6s MB peak RSS; the stream of documents: time %sx, RSS %sx\n' \
      "$what" "$mb" "$how" "$w" "$r" \
      "$(ratio "$w" "$([ "$how" = file ] && echo "$stream_wall" || echo "$stream_pipe_wall")")" \
      "$(ratio "$r" "$([ "$how" = file ] && echo "$stream_rss" || echo "$stream_pipe_rss")")"
  done
  "$tool" -q "${anchors[@]}" -f "$input" > "$work/json-out.json"
  "$tool" -q "${anchors[@]}" -f "$work/json-out.json" | cmp -s - "$work/json-out.json" \
    || { echo "  FAILED: inject is not idempotent on $what"; exit 1; }
  "$tool" uninject -q -f "$work/json-out.json" | cmp -s - "$input" \
    || { echo "  FAILED: uninject does not restore $what"; exit 1; }
done
input=$work/one-line-configmap.json
mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN {printf "%.1f", b/1048576}')
read -r wall rss < <(measure "$tool" -q "${anchors[@]}" -f "$input")
printf '%-22s %8s MB %9s s %8s MB peak RSS, %sx the input\n' one-line-configmap "$mb" "$wall" "$rss" "$(ratio "$rss" "$mb")"
else
  echo "JSON: SKIPPED (PyYAML missing)"
fi

small=testdata/example/deploy.yaml
read -r small_wall _ < <(measure "$tool" -q "${anchors[@]}" -f "$small")
echo "README example end to end: ${small_wall}s wall (median of $runs)"
echo "properties (idempotent inject, exact uninject, the pipe's output the file's) hold on every generated input"
