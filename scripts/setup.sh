#!/usr/bin/env bash
# Installs everything lakesync needs to build (and, with --test, to run its tests), then builds it.
# Idempotent: a second run only checks what is already there and rebuilds what changed.
#
#   scripts/setup.sh                  system packages, .venv with pyarrow, CMake build of everything in build/
#   scripts/setup.sh --test           the same plus the test oracles from requirements/test.txt
#   scripts/setup.sh --target NAME    build only that target (the quickstart builds just `lakesync`,
#                                     not the unit tests and benchmarks)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
want_test=0
targets=()
while (($#)); do
  case "$1" in
    --test) want_test=1 ;;
    --target) shift; targets+=(--target "$1") ;;
    *) echo "setup.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# --- Debian packages -----------------------------------------------------------------------------
debian_packages=(
  cmake ninja-build g++ pkg-config ccache python3-venv
  libavro-dev libroaring-dev libsqlite3-dev libpq-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libcpp-httplib-dev libssl-dev zlib1g-dev libgtest-dev
)
# The tests also run a throwaway PostgreSQL server (the SQL catalog's shared database; tests/pgserver.py),
# and drive the dashboard's pages (`lakesync ui`) in headless Chromium (tests/ui); the benchmarks' smoke
# tests (tests/bench) load the REST catalog and sharing servers with wrk.
((want_test)) && debian_packages+=(postgresql chromium wrk)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Python virtual environment (Arrow C++ comes from the pyarrow wheel) ---------------------------
py="${LAKESYNC_PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]]; then
  log "creating .venv"
  "$py" -m venv .venv
fi
pip_install() {  # only call pip when a requirement file changed since the last successful install
  local req="$1" stamp=".venv/.installed-$(basename "$1")"
  if ! cmp -s "$req" "$stamp" 2>/dev/null; then
    log "pip install -r $req"
    .venv/bin/pip install -q --disable-pip-version-check -r "$req"
    cp "$req" "$stamp"
  fi
}
pip_install requirements/build.txt
[[ -f requirements/test.txt && $want_test -eq 1 ]] && pip_install requirements/test.txt
.venv/bin/python -c "import pyarrow; pyarrow.create_library_symlinks()"

# --- Build -----------------------------------------------------------------------------------------
export CCACHE_BASEDIR="$root"  # cache hits across clones of the repository
export CCACHE_NOHASHDIR=1        # ...whatever folder they are in (debug info keeps the first folder)
build_type="${LAKESYNC_BUILD_TYPE:-RelWithDebInfo}"
if [[ ! -f build/build.ninja ]]; then
  log "configuring build/ ($build_type)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
    -DLAKESYNC_PYTHON="$root/.venv/bin/python" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
log "building ${targets[*]:-everything}"
cmake --build build -j"$(nproc)" "${targets[@]}"
