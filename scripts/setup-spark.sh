#!/usr/bin/env bash
# Installs the Spark oracle used by tests/spark (see docs/status.md, "Spark oracle"):
#   .tools/spark-venv   a venv of its own with pyspark from requirements/spark.txt
#   .tools/spark-jars   the Iceberg and Delta Spark runtimes (and SQLite's JDBC driver, so that Spark's
#                       Iceberg JdbcCatalog can open lakesync's embedded catalog), from Maven Central,
#                       each checked against a sha1 pinned here and the .sha1 Maven publishes next to it
# Idempotent: a second run only checks stamps and files already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[setup-spark]\033[0m %s\n' "$*" >&2; }

# One coherent set: Spark 4.0 / Scala 2.13. delta-spark 4.0.1 is built against Spark 4.0.1 and
# iceberg-spark-runtime-4.0 targets the Spark 4.0 line; pyspark is pinned to the same 4.0.1.
maven="${LAKESYNC_MAVEN_URL:-https://repo1.maven.org/maven2}"
# group:artifact:version:sha1 -- the sha1 is pinned here and must also match the .sha1 Maven serves.
jars=(
  "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.1:aa296e2a410cac2270e4d4130de0e7bfde714e11"
  "io.delta:delta-spark_2.13:4.0.1:3e469898dc4ed083c735ae360beb063adcd12e9d"
  "io.delta:delta-storage:4.0.1:ebc5384d953c1d70d0ce4ceee42892da74051a81"
  "org.xerial:sqlite-jdbc:3.51.2.0:35bc8faa2deb1b3fe535a5a75d6d61d54133e357"
)

# --- Java ------------------------------------------------------------------------------------------
java_home="${LAKESYNC_SPARK_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
if [[ ! -x "$java_home/bin/java" ]]; then
  log "Java 17 not found at $java_home; installing openjdk-17-jre-headless"
  sudo_cmd=(); [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    openjdk-17-jre-headless >/dev/null
fi

# --- pyspark venv ------------------------------------------------------------------------------------
venv=.tools/spark-venv
req=requirements/spark.txt
if [[ ! -x $venv/bin/python ]]; then
  log "creating $venv"
  mkdir -p .tools
  "${LAKESYNC_PYTHON:-python3}" -m venv "$venv"
fi
if ! cmp -s "$req" "$venv/.installed-spark.txt" 2>/dev/null; then
  log "pip install -r $req (into $venv)"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  cp "$req" "$venv/.installed-spark.txt"
fi

# --- jars ----------------------------------------------------------------------------------------------
jar_dir=.tools/spark-jars
mkdir -p "$jar_dir"
wanted=()
for coord in "${jars[@]}"; do
  IFS=: read -r group artifact version pinned_sha1 <<<"$coord"
  name="$artifact-$version.jar"
  wanted+=("$name")
  if [[ -f "$jar_dir/$name" ]]; then  # re-checked on every run (a fraction of a second)
    [[ "$(sha1sum "$jar_dir/$name" | awk '{print $1}')" == "$pinned_sha1" ]] && continue
    log "$name does not match its pinned sha1: downloading it again"
  fi
  url="$maven/${group//.//}/$artifact/$version/$name"
  log "downloading $url"
  tmp="$(mktemp "$jar_dir/.download.XXXXXX")"
  trap 'rm -f "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp" "$url"
  want_sha1="$(curl -fsSL --retry 3 "$url.sha1" | awk '{print $1}')"
  got_sha1="$(sha1sum "$tmp" | awk '{print $1}')"
  if [[ "$want_sha1" != "$got_sha1" || "$pinned_sha1" != "$got_sha1" ]]; then
    echo "setup-spark: checksum mismatch for $url: pinned $pinned_sha1, Maven's .sha1 says $want_sha1," \
      "downloaded $got_sha1" >&2
    exit 1
  fi
  chmod 644 "$tmp"
  mv "$tmp" "$jar_dir/$name"
  trap - EXIT
done
# Jars of other versions (a pin that moved) would end up on the same class path: remove them.
for f in "$jar_dir"/*.jar; do
  keep=0
  for w in "${wanted[@]}"; do [[ "$(basename "$f")" == "$w" ]] && keep=1; done
  ((keep)) || { log "removing stale $f"; rm -f "$f"; }
done
log "ready: $venv, $jar_dir (JAVA_HOME=$java_home)"
