#!/usr/bin/env bash
# Installs Apache Iceberg's REST catalog fixture (org.apache.iceberg.rest.RESTCatalogServer, from the
# iceberg-open-api 1.10.1 test-fixtures jar on Maven Central) with its dependencies into
# .tools/iceberg-rest-fixture/lib, for the opt-in test tests/rest/test_apache_rest_fixture.py
# (lakesync's REST client against an independent server). Needs Java 17 and Maven (Debian's
# openjdk-17-jre-headless, maven). Idempotent: a second run only checks the stamp.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dest=.tools/iceberg-rest-fixture
pom=requirements/rest-fixture/pom.xml
stamp="$dest/.stamp"
if [[ -f $stamp ]] && cmp -s "$stamp" "$pom"; then
  exit 0
fi
for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "setup-rest-fixture: $tool is missing (apt-get install openjdk-17-jre-headless maven)" >&2; exit 1; }
done
rm -rf "$dest/lib"
mkdir -p "$dest"
mvn -q -f "$pom" dependency:copy-dependencies -DoutputDirectory="$root/$dest/lib"
cp "$pom" "$stamp"
echo "setup-rest-fixture: $(ls "$dest/lib" | wc -l) jars in $dest/lib" >&2
