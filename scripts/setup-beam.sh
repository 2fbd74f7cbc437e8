#!/usr/bin/env bash
# Installs the Apache Beam test environment, .tools/beam-venv: apache-beam 2.77.0 with pyarrow 25
# (requirements/beam.txt; Beam 2.77 needs pyarrow < 26, the CLI's .venv pins 26.0.1), then lakesync
# itself with `pip install` from this repository, compiled against that venv's pyarrow. Idempotent:
# the requirements are installed once per change of requirements/beam.txt, and the package build
# reuses build/beam-pip (with ccache), so a second run recompiles only what changed.
#
# --no-build-isolation: the build must see the venv's pyarrow 25 (an isolated build environment
# would fetch the newest pyarrow), and a stable pyarrow path keeps ccache hits across runs. A plain
# `pip install .` works too (docs/python.md); it builds in a fresh temporary environment every time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[setup-beam]\033[0m %s\n' "$*" >&2; }

venv=.tools/beam-venv
py="${LAKESYNC_PYTHON:-python3}"
if [[ ! -x $venv/bin/python ]]; then
  log "creating $venv"
  mkdir -p .tools
  "$py" -m venv "$venv"
fi
stamp="$venv/.installed-beam.txt"
if ! cmp -s requirements/beam.txt "$stamp" 2>/dev/null; then
  log "pip install -r requirements/beam.txt"
  "$venv/bin/pip" install -q --disable-pip-version-check -r requirements/beam.txt
  cp requirements/beam.txt "$stamp"
fi

export CCACHE_BASEDIR="$root"
started=$(date +%s)
log "pip install . (lakesync against pyarrow $("$venv/bin/python" -c 'import pyarrow; print(pyarrow.__version__)'))"
# Without -g: this package only runs the Beam tests, nobody debugs it, and debug information is ~30%
# of each file's compile time (cdc_writer.cc: 25.6 CPU-s with -g, 18.1 without) and slows the links;
# the package's own build type (pyproject.toml) and build/ keep their debug information.
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall \
  -C build-dir=build/beam-pip -C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -C "cmake.define.CMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" \
  -C "build.tool-args=-j$(nproc)" .
log "lakesync installed into $venv in $(( $(date +%s) - started )) s"
"$venv/bin/python" -c "import lakesync, pyarrow; print('lakesync', lakesync.__version__, 'with pyarrow', pyarrow.__version__)"
