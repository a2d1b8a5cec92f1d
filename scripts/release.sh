#!/usr/bin/env bash
# Builds the release archive for this machine's platform, and the krew
# manifest that installs it, into dist/ (or --out DIR):
#   kubectl-mesh_inject-<target triple>.tar.gz   the binary, kubectl's completion
#                                                shim, README.md, docs/, completions/, man/,
#                                                the Helm 4 plugin (and LICENSE, if any)
#   kubectl-mesh_inject-<target triple>.tar.gz.sha256
#   mesh-inject.yaml                             plugins/mesh-inject.yaml filled in: the
#                                                version, the URLs, each archive's sha256
#
# usage: scripts/release.sh [--repo URL] [--version vX.Y.Z] [--binary PATH]
#                           [--archive PATH]... [--out DIR]
#   --repo URL      the repository's web address (default: git remote get-url origin);
#                   the archives are to be uploaded to URL/releases/download/VERSION/
#   --version V     the version to release (default: v and Cargo.toml's version, which
#                   it must equal: the binary says it with --version)
#   --binary PATH   package this built binary instead of building one with
#                   cargo build --release --locked
#   --archive PATH  another platform's archive (kubectl-mesh_inject-<triple>.tar.gz,
#                   built by this script there) to list in the manifest too
#   --out DIR       where to write (default: dist in the repository)
# A platform without an archive is left out of the manifest. Needs GNU tar
# (TAR=gtar where tar is another) and sha256sum.
set -euo pipefail

# Paths given are taken from where the script is run, not from the repository.
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
repo= version= binary= out=
archives=()
while [ $# -gt 0 ]; do
  case $1 in
    --repo) repo=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --binary) binary=$(absolute "$2"); shift 2 ;;
    --archive) archives+=("$(absolute "$2")"); shift 2 ;;
    --out) out=$(absolute "$2"); shift 2 ;;
    *) echo "release.sh: unknown argument: $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
out=${out:-dist}

crate_version=v$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
version=${version:-$crate_version}
if [ "$version" != "$crate_version" ]; then
  echo "release.sh: version $version is not Cargo.toml's ($crate_version): set it there first" >&2
  exit 2
fi
if [ -z "$repo" ]; then
  repo=$(git remote get-url origin 2> /dev/null) || {
    echo "release.sh: no git remote named origin: give the repository's address with --repo URL" >&2
    exit 2
  }
fi
# git@host:owner/name.git and https://host/owner/name.git both give https://host/owner/name.
repo=$(echo "$repo" | sed -E 's#^git@([^:]+):#https://\1/#; s#\.git$##; s#/$##')
case $repo in
  https://*) ;;
  *) echo "release.sh: $repo is not an https:// address: give one with --repo URL" >&2; exit 2 ;;
esac

target=$(rustc -vV | sed -n 's/^host: //p')
# GNU tar, for an archive that is the same bytes for the same files (on macOS: TAR=gtar).
tar=${TAR:-tar}
if ! "$tar" --version 2> /dev/null | grep -q 'GNU tar'; then
  echo "release.sh: $tar is not GNU tar: install it and give it as TAR=gtar" >&2
  exit 2
fi
if [ -z "$binary" ]; then
  cargo build --release --locked --bin kubectl-mesh_inject
  binary=${CARGO_TARGET_DIR:-target}/release/kubectl-mesh_inject
fi
says=$("$binary" --version | head -1)
if [ "$says" != "kubectl-mesh_inject ${version#v}" ]; then
  echo "release.sh: $binary says $says, not ${version#v}" >&2
  exit 2
fi

mkdir -p "$out"
for archive in "${archives[@]}"; do
  cp "$archive" "$out/"
done

# The archive: its files at the top, as krew's manifest names the binary;
# sorted, owned by root and dated at the last commit, so that the same
# files give the same archive.
name=kubectl-mesh_inject-$target.tar.gz
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 755 "$binary" "$stage/kubectl-mesh_inject"
install -m 755 kubectl_complete-mesh_inject "$stage/"
cp -R README.md docs completions man "$stage/"
mkdir -p "$stage/plugins/helm"
cp -R plugins/helm/mesh-inject "$stage/plugins/helm/"
if [ -f LICENSE ]; then cp LICENSE "$stage/"; fi
date=$(git log -1 --format=%ct 2> /dev/null || echo 0)
(cd "$stage" && "$tar" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$date" \
  --mode=u+rwX,go+rX,go-w -cf - -- *) | gzip -n > "$out/$name"
(cd "$out" && sha256sum "$name" > "$name.sha256")

# The manifest: the template with its version and addresses, and each
# platform whose archive is in $out, with its sum; the others are left out.
download=$repo/releases/download/$version
{
  echo "# krew plugin manifest for mesh-inject $version, made by scripts/release.sh"
  echo "# from plugins/mesh-inject.yaml. Submit it to the krew index once the"
  echo "# archives are at $download/."
  awk -v version="$version" -v homepage="$repo" -v download="$download" -v out="$out" '
    function sha256(file,   cmd, line, part) {
      cmd = "sha256sum \"" file "\""
      cmd | getline line
      close(cmd)
      split(line, part, " ")
      return part[1]
    }
    # Ends the platform entry held in lines[1..n]: printed, filled in, when
    # its archive is in the output directory.
    function flush(   i, archive, file, junk) {
      archive = ""
      for (i = 1; i <= n; i++)
        if (lines[i] ~ /^ +uri: /) { archive = lines[i]; sub(/.*\//, "", archive) }
      file = out "/" archive
      if (n && archive != "" && (getline junk < file) >= 0) {
        close(file)
        for (i = 1; i <= n; i++) {
          if (lines[i] ~ /^ +uri: /) { sub(/uri: .*/, "", lines[i]); lines[i] = lines[i] "uri: " download "/" archive }
          if (lines[i] ~ /^ +sha256: /) { sub(/sha256: .*/, "", lines[i]); lines[i] = lines[i] "sha256: \"" sha256(file) "\"" }
          print lines[i]
        }
        filled++
      }
      n = 0
    }
    /^#/ && !started { next }
    { started = 1 }
    /^  version:/ { print "  version: " version; next }
    /^  homepage:/ { print "  homepage: " homepage; next }
    /^  platforms:/ { in_platforms = 1; print; next }
    in_platforms && /^  - / { flush() }
    in_platforms && /^  [ -]/ { lines[++n] = $0; next }
    in_platforms { flush(); in_platforms = 0 }
    { print }
    END { flush(); if (!filled) exit 3 }
  ' plugins/mesh-inject.yaml
} > "$out/mesh-inject.yaml" || {
  echo "release.sh: no platform of plugins/mesh-inject.yaml has its archive in $out ($name): add its entry there" >&2
  exit 2
}
if ! grep -q "/$name\$" "$out/mesh-inject.yaml"; then
  echo "release.sh: plugins/mesh-inject.yaml has no entry for $name: add one" >&2
  exit 2
fi

echo "$out/$name"
echo "$out/mesh-inject.yaml"
