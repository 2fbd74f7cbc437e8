// The lakesync dashboard: one client of the JSON API under /api/v1/ (docs/ui.md). Plain JavaScript, no
// build step; charts with the vendored uPlot. Pages are chosen by the URL's hash:
//   #/                 catalog overview        GET /api/v1/overview
//   #/table/NS.TABLE   a table's health        GET /api/v1/table?name=NS.TABLE
//   #/jobs             sync jobs by sink id    GET /api/v1/jobs
//   #/job/SINK_ID      one job's runs and lag  GET /api/v1/job?sink_id=SINK_ID
// When a page has rendered, document.body.dataset.page names it (tests and scripts wait for that).
"use strict";

const main = document.getElementById("main");

// ---- helpers ---------------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const fmtInt = (v) => (v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"));
function fmtBytes(v) {
  if (v === null || v === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let n = Number(v), i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}
const fmtTime = (ms) => (ms === null || ms === undefined ? "–" : new Date(ms).toISOString().replace(".000Z", "Z"));
const fmtPct = (r) => (r === null || r === undefined ? "–" : (100 * r).toFixed(1) + " %");
function fmtSeconds(s) {
  if (s === null || s === undefined) return "unknown";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}

function card(label, value, field) {
  return el("div", { class: "card", "data-field": field },
    el("div", { class: "label" }, label), el("div", { class: "value" }, value));
}

// A table from column definitions: [header, value(row), {num, field}].
function grid(id, columns, rows, rowAttrs) {
  const head = el("tr", {}, columns.map(([h, , o]) => el("th", { class: o && o.num ? "num" : null }, h)));
  const body = rows.map((r) => el("tr", rowAttrs ? rowAttrs(r) : {},
    columns.map(([, f, o]) => el("td", { class: o && o.num ? "num" : null, "data-field": o && o.field }, f(r)))));
  return el("table", { id }, el("thead", {}, head), el("tbody", {}, body));
}

const tableLink = (name) => el("a", { href: "#/table/" + encodeURIComponent(name) }, name);
const jobLink = (id) => el("a", { href: "#/job/" + encodeURIComponent(id) }, id);

// A line chart of time series: xs in ms, series [{label, values}]. Marks the container with the number
// of data points drawn (data-points), so a check can see the chart has data.
function lineChart(id, title, xsMs, series, opts) {
  const box = el("div", { class: "chart", id });
  const points = xsMs.length;
  box.setAttribute("data-points", String(points));
  if (!points || typeof uPlot === "undefined") {
    box.append(el("p", { class: "muted" }, title + ": no data"));
    return box;
  }
  const width = Math.min(1100, Math.max(400, main.clientWidth - 40));
  const colors = ["#2563eb", "#dc2626", "#16a34a", "#9333ea"];
  const u = new uPlot({
    title, width, height: 240,
    scales: { x: { time: true } },
    series: [{}].concat(series.map((s, i) => ({
      label: s.label, stroke: colors[i % colors.length], width: 2,
      scale: s.scale || "y", points: { show: points < 200 },
      paths: s.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined,
    }))),
    axes: [{}].concat((opts && opts.axes) || [{ scale: "y" }]),
  }, [xsMs.map((x) => x / 1000)].concat(series.map((s) => s.values)), box);
  box.uplot = u;
  return box;
}

// The file-size histogram as bars, one per power-of-two bucket.
function histogramChart(id, buckets) {
  const box = el("div", { class: "chart", id });
  box.setAttribute("data-points", String(buckets.length));
  if (!buckets.length || typeof uPlot === "undefined") {
    box.append(el("p", { class: "muted" }, "no data files"));
    return box;
  }
  const width = Math.min(1100, Math.max(400, main.clientWidth - 40));
  const labels = buckets.map((b) => "< " + fmtBytes(b.max_bytes));
  new uPlot({
    title: "Data files by size", width, height: 220,
    scales: { x: { time: false, range: (u, min, max) => [min - 0.5, max + 0.5] } },
    series: [{}, { label: "files", fill: "#93c5fd", stroke: "#2563eb",
      paths: uPlot.paths.bars({ size: [0.8, 60] }), points: { show: false } }],
    axes: [{ values: (u, splits) => splits.map((i) => labels[i] || ""), space: 60 }, {}],
  }, [buckets.map((_, i) => i), buckets.map((b) => b.files)], box);
  return box;
}

// ---- API -------------------------------------------------------------------------------------------

async function api(path) {
  const headers = {};
  const token = sessionStorage.getItem("lakesync-token");
  if (token) headers["Authorization"] = "Bearer " + token;
  const res = await fetch(path, { headers });
  const body = await res.json().catch(() => ({}));
  if (res.status === 401) {
    document.getElementById("token-form").hidden = false;
    throw new Error("a valid token is needed");
  }
  if (!res.ok) throw new Error((body.error && body.error.message) || res.status + " " + res.statusText);
  return body;
}

document.getElementById("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("lakesync-token", document.getElementById("token-input").value);
  document.getElementById("token-form").hidden = true;
  route();
});

// ---- pages -----------------------------------------------------------------------------------------

async function overviewPage() {
  const o = await api("/api/v1/overview");
  document.getElementById("catalog-name").textContent = "catalog " + o.catalog;
  const t = o.totals;
  return [
    el("h1", {}, "Tables"),
    el("div", { class: "cards" },
      card("tables", fmtInt(t.tables), "tables"), card("rows", fmtInt(t.rows), "rows"),
      card("size", fmtBytes(t.size_bytes), "size"), card("last commit", fmtTime(t.last_commit_ms), "last-commit"),
      card("namespaces", fmtInt(o.namespaces.length), "namespaces")),
    el("h2", {}, "All tables"),
    o.tables.length ? grid("tables", [
      ["table", (r) => tableLink(r.name)],
      ["v", (r) => r.format_version, { num: true }],
      ["rows", (r) => fmtInt(r.rows), { num: true, field: "rows" }],
      ["data files", (r) => fmtInt(r.data_files), { num: true, field: "data-files" }],
      ["delete files", (r) => fmtInt(r.delete_files), { num: true, field: "delete-files" }],
      ["size", (r) => fmtBytes(r.size_bytes), { num: true, field: "size" }],
      ["snapshots", (r) => fmtInt(r.snapshots), { num: true, field: "snapshots" }],
      ["last commit", (r) => fmtTime(r.last_commit_ms), { field: "last-commit" }],
      ["operation", (r) => r.last_operation || "–"],
      ["sinks", (r) => Object.keys(r.sinks).map((id) => jobLink(id))],
    ], o.tables, (r) => ({ "data-table": r.name })) : el("p", { class: "muted" }, "The catalog has no tables."),
    o.unreadable_tables.length ? [el("h2", {}, "Tables that could not be read"),
      grid("unreadable-tables", [["table", (r) => r.name], ["error", (r) => r.error.message]], o.unreadable_tables)] : [],
  ];
}

async function tablePage(name) {
  const h = await api("/api/v1/table?name=" + encodeURIComponent(name));
  const t = h.table, f = h.files, d = h.delete_files, c = h.compaction;
  const snaps = h.snapshots;
  const rowsChart = lineChart("rows-chart", "Rows over time", snaps.map((s) => s.timestamp_ms), [
    { label: "live rows", values: snaps.map((s) => s.live_records) },
    { label: "records in data files", values: snaps.map((s) => s.total_records) },
  ]);
  return [
    el("h1", { id: "table-name" }, t.name),
    el("div", { class: "cards" },
      card("rows", fmtInt(t.rows), "rows"), card("records in data files", fmtInt(t.total_records), "records"),
      card("size", fmtBytes(t.size_bytes), "size"), card("snapshots", fmtInt(t.snapshots), "snapshots"),
      card("format version", t.format_version, "format-version"),
      card("last commit", fmtTime(t.last_commit_ms), "last-commit")),
    el("div", { id: "compaction", class: "hint " + (c.needed ? "warn" : "ok"), "data-needed": String(c.needed) },
      el("strong", {}, c.needed ? "Needs compaction" : "No compaction needed"),
      c.needed ? el("ul", {}, c.reasons.map((r) => el("li", {}, r))) :
        el("span", {}, ` (${fmtInt(f.small_files)} small files, ${fmtPct(f.deleted_ratio)} of rows deleted)`)),
    rowsChart,
    el("h2", {}, "Files"),
    el("div", { class: "cards", id: "files" },
      card("data files", fmtInt(f.data.files), "data-files"), card("data bytes", fmtBytes(f.data.bytes), "data-bytes"),
      card("average file", fmtBytes(f.average_file_bytes), "average-file"),
      card("small files", fmtInt(f.small_files), "small-files"),
      card("with a deletion vector", `${fmtInt(f.with_deletion_vector)} (${fmtPct(f.deletion_vector_ratio)})`, "dv-ratio"),
      card("rows deleted", `${fmtInt(f.rows_deleted_by_position)} (${fmtPct(f.deleted_ratio)})`, "deleted")),
    histogramChart("size-histogram", f.size_histogram),
    el("h2", {}, "Delete files"),
    grid("delete-files", [
      ["kind", (r) => r[0]], ["files", (r) => fmtInt(r[1].files), { num: true, field: "files" }],
      ["rows deleted", (r) => fmtInt(r[1].records), { num: true, field: "records" }],
      ["bytes", (r) => fmtBytes(r[1].bytes), { num: true }],
    ], [["deletion vectors", d.deletion_vectors], ["position delete files", d.position_delete_files],
        ["equality delete files", d.equality_delete_files]], (r) => ({ "data-kind": r[0] })),
    el("h2", {}, `Snapshots (${snaps.length}${h.snapshots_omitted ? ", " + h.snapshots_omitted + " older not shown" : ""})`),
    grid("snapshots", [
      ["snapshot", (r) => String(r.snapshot_id) + (r.current ? " (current)" : "")],
      ["seq", (r) => r.sequence_number, { num: true }],
      ["committed at", (r) => fmtTime(r.timestamp_ms)],
      ["operation", (r) => r.operation, { field: "operation" }],
      ["added", (r) => fmtInt(r.added_records), { num: true, field: "added" }],
      ["removed", (r) => fmtInt(r.removed_records), { num: true, field: "removed" }],
      ["live rows", (r) => fmtInt(r.live_records), { num: true, field: "live" }],
      ["sink", (r) => (r.sink_id ? jobLink(r.sink_id) : "–")],
      ["position", (r) => r.source_position || "–", { field: "position" }],
    ], snaps.slice().reverse(), (r) => ({ "data-snapshot-id": String(r.snapshot_id) })),
    el("h2", {}, `Partitions (${fmtInt(h.partition_count)})`),
    grid("partitions", [
      ["partition", (r) => r.partition || "(unpartitioned)"],
      ["data files", (r) => fmtInt(r.data_files), { num: true }],
      ["records", (r) => fmtInt(r.records), { num: true }],
      ["bytes", (r) => fmtBytes(r.bytes), { num: true }],
      ["small files", (r) => fmtInt(r.small_files), { num: true }],
      ["files with deletes", (r) => fmtInt(r.files_with_deletes), { num: true }],
    ], h.partitions),
    el("h2", {}, "Schema history"),
    grid("schemas", [
      ["schema", (r) => r.schema_id + (r.current ? " (current)" : "")],
      ["first used", (r) => fmtTime(r.first_timestamp_ms)],
      ["columns", (r) => r.fields.map((x) => x.name + " " + x.type).join(", ")],
      ["changes", (r) => r.changes.join("; ") || "–"],
    ], h.schemas),
  ];
}

async function jobsPage() {
  const j = await api("/api/v1/jobs");
  const out = [el("h1", {}, "Sync jobs")];
  if (!j.jobs_dir) {
    out.push(el("p", { class: "muted" }, "Jobs are found by the sink ids their commits record. Start " +
      "lakesync ui with --jobs DIR to see each job's lag against its source and its last error."));
  }
  out.push(j.jobs.length ? grid("jobs", [
    ["sink id", (r) => jobLink(r.sink_id)],
    ["job", (r) => r.job || "–"],
    ["tables", (r) => Object.keys(r.tables).map((t) => tableLink(t))],
    ["runs", (r) => fmtInt(r.runs), { num: true, field: "runs" }],
    ["position", (r) => r.position || "–", { field: "position" }],
    ["last commit", (r) => fmtTime(r.last_commit_ms)],
    ["lag (commits)", (r) => (r.lag === undefined ? "–" : fmtInt(r.lag)), { num: true, field: "lag" }],
    ["lag (time)", (r) => (r.lag_seconds === undefined ? "–" : fmtSeconds(r.lag_seconds)), { field: "lag-seconds" }],
    ["last error", (r) => (r.last_error ? r.last_error.message : "–"), { field: "last-error" }],
  ], j.jobs, (r) => ({ "data-sink-id": r.sink_id })) : el("p", { class: "muted" }, "No sink has committed yet."));
  const broken = j.job_files.filter((f) => f.error);
  if (broken.length) {
    out.push(el("h2", {}, "Job files that could not be opened"),
      grid("job-file-errors", [["file", (r) => r.file], ["error", (r) => r.error.message]], broken));
  }
  return out;
}

async function jobPage(id) {
  const j = await api("/api/v1/job?sink_id=" + encodeURIComponent(id));
  const s = j.status;
  const runs = j.runs;
  const out = [el("h1", { id: "sink-id" }, "Job " + (j.job || id)), el("p", { class: "muted" }, "sink id " + id)];
  if (s) {
    out.push(el("div", { class: "cards", id: "job-status" },
      card("source", j.source, "source"),
      card("committed position", fmtInt(s.committed_position), "committed-position"),
      card("source latest", fmtInt(s.source_latest), "source-latest"),
      card("lag (commits)", fmtInt(s.lag), "lag"),
      card("lag (time)", fmtSeconds(s.lag_seconds), "lag-seconds"),
      card("running now", s.running === null ? "unknown" : s.running ? "yes" : "no", "running"),
      card("last run", s.last_run ? fmtTime(Date.parse(s.last_run.finished_at)) + " " + s.last_run.status : "–", "last-run")));
    out.push(el("div", { id: "last-error", class: s.last_error ? "error" : "muted" },
      s.last_error ? `Last error (${s.last_error.at}): ${s.last_error.message}` : "No error recorded on this machine."));
  } else {
    out.push(el("p", { class: "muted", id: "no-status" }, j.lag_history_note || (j.status_error && j.status_error.message) || ""));
  }
  const lag = j.lag_history || [];
  out.push(lineChart("lag-chart", "Lag behind the source", lag.map((p) => p.timestamp_ms), [
    { label: "commits behind", values: lag.map((p) => p.commits), scale: "commits" },
    { label: "seconds behind", values: lag.map((p) => p.seconds), scale: "s" },
  ], { axes: [{ scale: "commits", label: "commits" }, { scale: "s", side: 1, label: "seconds", grid: { show: false } }] }));
  out.push(lineChart("runs-chart", "Rows per run", runs.map((r) => r.timestamp_ms), [
    { label: "rows written", values: runs.map((r) => r.added_records) },
    { label: "rows removed", values: runs.map((r) => r.removed_records) },
  ]));
  out.push(el("h2", {}, `Runs (${runs.length}${j.runs_total > runs.length ? " of " + j.runs_total : ""})`),
    grid("job-runs", [
      ["committed at", (r) => fmtTime(r.timestamp_ms)],
      ["table", (r) => tableLink(r.table)],
      ["snapshot", (r) => String(r.snapshot_id)],
      ["operation", (r) => r.operation],
      ["position", (r) => r.position, { field: "position" }],
      ["rows written", (r) => fmtInt(r.added_records), { num: true, field: "added" }],
      ["rows removed", (r) => fmtInt(r.removed_records), { num: true, field: "removed" }],
      ["live rows", (r) => fmtInt(r.live_records), { num: true, field: "live" }],
      ["duration", (r) => (r.duration_seconds === null ? "–" : r.duration_seconds.toFixed(2) + " s"), { num: true }],
    ], runs.slice().reverse(), (r) => ({ "data-snapshot-id": String(r.snapshot_id) })));
  return out;
}

// ---- routing ---------------------------------------------------------------------------------------

async function route() {
  const hash = decodeURIComponent(location.hash.replace(/^#\/?/, ""));
  let page, render;
  if (hash.startsWith("table/")) { page = "table"; render = () => tablePage(hash.slice(6)); }
  else if (hash === "jobs") { page = "jobs"; render = jobsPage; }
  else if (hash.startsWith("job/")) { page = "job"; render = () => jobPage(hash.slice(4)); }
  else { page = "overview"; render = overviewPage; }
  delete document.body.dataset.page;
  try {
    const nodes = await render();
    main.replaceChildren(...nodes);
  } catch (e) {
    main.replaceChildren(el("div", { class: "error", id: "page-error" }, String(e.message || e)));
    page = "error";
  }
  document.body.dataset.page = page;
}

window.addEventListener("hashchange", route);
route();
