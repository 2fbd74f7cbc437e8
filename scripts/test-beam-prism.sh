#!/usr/bin/env bash
# The Beam suite's runs on Prism, Apache Beam's portable runner: builds the Beam venv and Prism if
# needed (scripts/setup-beam.sh, scripts/setup-prism.sh), then runs tests/beam/test_beam_prism.py.
# Not part of scripts/test.sh: building Prism costs minutes of CI time. Needs the build (scripts/setup.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup-beam.sh"
"$root/scripts/setup-prism.sh"
export LAKESYNC_BEAM_TESTS=1 LAKESYNC_PRISM_TESTS=1
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests/beam/test_beam_prism.py "$@"
