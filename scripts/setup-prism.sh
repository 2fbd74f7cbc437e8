#!/usr/bin/env bash
# Builds Prism, Apache Beam's portable runner (a Go program, part of Beam's Go SDK), from the Go module
# proxy into .tools/prism/bin/prism, for the Beam suite's runs on a portable runner (tests/beam).
# Beam's Python PrismRunner would download a release binary from GitHub, which is not reachable here;
# the same program builds from its module at the version of requirements/beam.txt's apache-beam.
# Everything Go writes (module cache, build cache) stays under .tools/go. Idempotent: a second run with
# the same version does nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[setup-prism]\033[0m %s\n' "$*" >&2; }

version="$(sed -n 's/^apache-beam==\([0-9.]*\).*/\1/p' requirements/beam.txt)"
[[ -n $version ]] || { echo "setup-prism: no apache-beam==X pin in requirements/beam.txt" >&2; exit 1; }
bin=.tools/prism/bin/prism
stamp=.tools/prism/version.txt
if [[ -x $bin && "$(cat "$stamp" 2>/dev/null)" == "$version" ]]; then
  exit 0
fi
go_cmd="$(command -v go || true)"
[[ -n $go_cmd ]] || go_cmd=/usr/local/go/bin/go
[[ -x $go_cmd ]] || { echo "setup-prism: Go is not installed (needed to build Beam's Prism runner)" >&2; exit 1; }
mkdir -p .tools/prism/bin .tools/go
started=$(date +%s)
log "go install github.com/apache/beam/sdks/v2/go/cmd/prism@v$version"
GOPATH="$root/.tools/go" GOMODCACHE="$root/.tools/go/mod" GOCACHE="$root/.tools/go/cache" \
  GOBIN="$root/.tools/prism/bin" GOFLAGS=-mod=mod GOTOOLCHAIN=local \
  "$go_cmd" install "github.com/apache/beam/sdks/v2/go/cmd/prism@v$version"
echo "$version" > "$stamp"
log "built $bin in $(( $(date +%s) - started )) s"
