#!/usr/bin/env bash
# Builds the release archive: dist/lakesync-<version>-linux-x86_64.tar.gz and its .sha256.
# The archive is `cmake --install` of a Release build (stripped): bin/lakesync, lib/ with the Arrow
# and Parquet libraries it runs with (from the pyarrow wheel it is built against; RUNPATH
# $ORIGIN/../lib), the man page, shell completions, the bundled libraries' licenses, and
# share/doc/lakesync/README with the Debian packages the binary needs besides (derived here from the
# binary itself with ldd and dpkg). Before it writes the archive it unpacks it into a fresh directory
# and runs `lakesync --version` there with an empty environment.
#
#   scripts/package.sh                       Release build in build-release/, archive in dist/
#   scripts/package.sh --build-dir DIR       package an existing build instead (e.g. build/, as the
#                                            tests do; its build type is kept)
#   scripts/package.sh --out DIR             write the archive and checksum to DIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[package]\033[0m %s\n' "$*" >&2; }

build_dir="" out="$root/dist"
while (($#)); do
  case "$1" in
    --build-dir) shift; build_dir="$1" ;;
    --out) shift; out="$1" ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ -z $build_dir ]]; then
  # Everything the build needs (Debian packages, .venv with pyarrow) comes from setup.sh.
  "$root/scripts/setup.sh" --target lakesync >/dev/null
  build_dir="$root/build-release"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR=1
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  log "configuring a Release build in $build_dir"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAKESYNC_PYTHON="$root/.venv/bin/python" \
    -DBUILD_TESTING=OFF -DLAKESYNC_BUILD_BENCH=OFF -DLAKESYNC_BUILD_PYTHON=OFF "${launcher[@]}" >/dev/null
  log "building lakesync"
  cmake --build "$build_dir" --target lakesync -j"$(nproc)"
fi
[[ -x $build_dir/lakesync ]] || { echo "package.sh: $build_dir/lakesync is not built" >&2; exit 1; }

version="$(sed -n 's/^project(lakesync VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
name="lakesync-$version-linux-$(uname -m)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
log "installing into $name/"
cmake --install "$build_dir" --prefix "$stage/$name" --strip >/dev/null

# The Debian packages of the shared libraries the binary names (NEEDED) and loads from the system, not
# from lib/ (apt brings what those need in turn).
bin="$stage/$name/bin/lakesync"
packages="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r soname; do
    lib="$(ldd "$bin" | awk -v l="$soname" '$1 == l && $3 ~ /^\// {print $3}')"
    if [[ -n $lib && $lib != "$stage"/* ]]; then
      dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1 || true
    fi
  done | sort -u | tr '\n' ' ')"
mkdir -p "$stage/$name/share/doc/lakesync"
cat > "$stage/$name/share/doc/lakesync/README" <<DOC
$("$stage/$name/bin/lakesync" --version)

Run bin/lakesync from anywhere; the tree can be moved as a whole. lib/ holds the Arrow and Parquet
libraries it was built with (licenses in share/licenses/lakesync/). The other shared libraries are
Debian 12 packages:

  apt-get install $packages

Man page: share/man/man1/lakesync.1. Completions: share/bash-completion/completions/lakesync and
share/zsh/site-functions/_lakesync.
DOC

# The archive must work where nothing of this checkout is reachable: unpack it elsewhere and run it
# with an empty environment from another directory.
check="$(mktemp -d)"
tar -C "$stage" -cf - "$name" | tar -C "$check" -xf -
(cd "$check" && env -i PATH=/usr/bin:/bin "$check/$name/bin/lakesync" --version >/dev/null) || {
  echo "package.sh: the unpacked archive does not run" >&2; rm -rf "$check"; exit 1; }
if ldd "$check/$name/bin/lakesync" | grep -E "not found|$root" >&2; then
  echo "package.sh: the unpacked binary loads libraries from the checkout or misses some" >&2; rm -rf "$check"; exit 1
fi
rm -rf "$check"

mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
log "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)), checksum in $name.tar.gz.sha256"
echo "$out/$name.tar.gz"
