#!/usr/bin/env bash
# The README's first command: installs and builds lakesync, then runs the main job on the embedded
# default catalog (SQLite under ./lakesync-warehouse, or $LAKESYNC_WAREHOUSE):
#   1. creates a Delta table with the Change Data Feed enabled (with deltalake) and changes it in
#      several versions (inserts, updates, deletes);
#   2. runs examples/delta-cdf-to-iceberg-v3-dv.yaml: imports the Delta table as of version 0 into an
#      Iceberg v3 table, then applies every later version as deletion vectors and new rows;
#   3. changes the Delta table again and runs the job again: only the new versions are applied;
#   4. shows the target with `lakesync scan` and reads it back with pyiceberg, an independent reader,
#      comparing it row for row with the Delta table as deltalake reads it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Only the command-line tool: the unit tests and benchmarks are built by scripts/test.sh.
"$root/scripts/setup.sh" --target lakesync
"$root/.venv/bin/pip" install -q --disable-pip-version-check -r "$root/requirements/quickstart.txt"
ls="$root/build/lakesync"
py="$root/.venv/bin/python"
warehouse="${LAKESYNC_WAREHOUSE:-$PWD/lakesync-warehouse}"
export LAKESYNC_WAREHOUSE="$warehouse"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

delta="$work/orders_delta"
# The example job names ./example-data/orders_delta; point it at this run's Delta table.
sed "s#./example-data/orders_delta#$delta#" "$root/examples/delta-cdf-to-iceberg-v3-dv.yaml" > "$work/job.yaml"

echo "+ a Delta table with the Change Data Feed: version 0 (6 orders), then versions 1..4 (two rounds of a MERGE and a DELETE)"
"$py" "$root/examples/demo_delta.py" create "$delta"
"$py" "$root/examples/demo_delta.py" change "$delta"
"$py" "$root/examples/demo_delta.py" change "$delta"
# Start from a fresh target so that every run of this script shows the same story.
"$ls" table drop shop.orders_v3 --purge --if-exists >/dev/null
echo "+ lakesync run job.yaml --once   (import of version 0, then versions 1..4 in one commit)"
"$ls" run "$work/job.yaml" --once
echo "+ versions 5..8 on the Delta side, then the same job again: only versions 5..8 are applied"
"$py" "$root/examples/demo_delta.py" change "$delta"
"$py" "$root/examples/demo_delta.py" change "$delta"
"$ls" run "$work/job.yaml" --once
echo "+ lakesync status job.yaml"
"$ls" status "$work/job.yaml"
echo "+ lakesync scan --table shop.orders_v3"
"$ls" scan --table shop.orders_v3
echo "+ pyiceberg reads the Iceberg table; deltalake reads the Delta table"
"$py" "$root/examples/compare_demo.py" "$delta" "$warehouse" shop.orders_v3
