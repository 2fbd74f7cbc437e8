#!/usr/bin/env bash
# The README's first command: installs and builds lakesync, then runs the main job on the embedded
# default catalog (SQLite under ./lakesync-warehouse, or $LAKESYNC_WAREHOUSE): create a table, append
# sample rows, delete some of them merge-on-read (deletion vectors), and scan the result.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
ls="$root/build/lakesync"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat > "$work/orders.yaml" <<'YAML'
fields:
  - {name: order_id, type: long, required: true}
  - {name: customer, type: string}
  - {name: amount, type: "decimal(10, 2)"}
  - {name: ordered_at, type: timestamptz}
identifier-fields: [order_id]
YAML
cat > "$work/orders.jsonl" <<'JSONL'
{"order_id": 1, "customer": "ana",   "amount": "19.90",  "ordered_at": "2026-11-01T09:15:00Z"}
{"order_id": 2, "customer": "bruno", "amount": "5.00",   "ordered_at": "2026-11-01T10:02:00Z"}
{"order_id": 3, "customer": "chen",  "amount": "120.00", "ordered_at": "2026-11-02T16:45:30Z"}
{"order_id": 4, "customer": "dara",  "amount": "42.10",  "ordered_at": "2026-11-03T08:00:00Z"}
JSONL

echo "+ lakesync namespace create shop --if-not-exists"
"$ls" namespace create shop --if-not-exists
# Start from a fresh table so that every run shows the same story.
"$ls" table drop shop.orders --purge --if-exists >/dev/null
echo "+ lakesync table create shop.orders (format v3, partitioned by day(ordered_at))"
"$ls" table create shop.orders --schema "$work/orders.yaml" --partition 'day(ordered_at)' \
  --format-version 3
echo "+ lakesync table append shop.orders orders.jsonl"
"$ls" table append shop.orders "$work/orders.jsonl"
echo "+ lakesync table delete shop.orders --where \"customer = 'bruno'\"   (a deletion vector, no rewrite)"
"$ls" table delete shop.orders --where "customer = 'bruno'"
echo "+ lakesync scan --table shop.orders"
"$ls" scan --table shop.orders
echo "+ lakesync table history shop.orders"
"$ls" table history shop.orders
