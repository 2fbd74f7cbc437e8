"""The command line behaves the same everywhere (issue 13): global options before or after the
command, the table as `scan`'s argument, did-you-mean for mistyped commands, help with exit 0, named
catalogs (~/.lakesync.yaml, LAKESYNC_CATALOG__* overrides), catalog_properties checked per catalog
type, table list/history/describe telling live rows, hints for missing namespaces, completion
scripts and the man page generated from the same definitions. Results are checked with pyiceberg
where a catalog is involved."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
pa = pytest.importorskip("pyarrow")

COLUMNS = [{"name": "id", "type": "long", "required": True}, {"name": "name", "type": "string"}]


def make_table(cli: O.Cli, name="db.t", version=3, rows=((1, "a"), (2, "b"), (3, "c"), (4, "d"))):
    cli.ok("namespace", "create", name.split(".")[0], "--if-not-exists")
    cli.ok("table", "create", name, "--schema", O.schema_file(cli.workdir / "s.yaml", COLUMNS),
           "--format-version", version)
    cli.ok("table", "append", name, O.write_jsonl(cli.workdir / "rows.jsonl", list(rows), COLUMNS))


def test_global_options_before_or_after_the_command(tmp_path):
    cli = O.Cli(tmp_path)
    config = O.write_yaml(tmp_path / "cat.yaml", {"catalog_name": "lakesync", "catalog_properties": {
        "type": "sql", "uri": f"sqlite:///{tmp_path / 'other.db'}", "warehouse": str(tmp_path / "other")}})
    cli.ok("--catalog-config", config, "namespace", "create", "before")
    cli.ok("namespace", "create", "after", "--catalog-config", config)
    assert json.loads(cli.ok("namespace", "list", "--json", "--catalog-config", config)) == ["after", "before"]
    assert json.loads(cli.ok("namespace", "list", "--json")) == []  # the embedded catalog is another
    for args in (["--log-level", "info", "--log-format", "json", "table", "list"],
                 ["table", "list", "--log-level", "info", "--log-format", "json"]):
        done = cli.run(*args, "--catalog-config", config, config=False)
        assert done.returncode == 0, done.stderr


def test_scan_takes_the_table_as_its_argument(tmp_path):
    cli = O.Cli(tmp_path)
    make_table(cli)
    positional = cli.ok("scan", "db.t", "--format", "jsonl")
    assert positional == cli.ok("scan", "--table", "db.t", "--format", "jsonl")
    assert len(positional.splitlines()) == 4
    code, err = cli.fail("scan", "db.t", "--table", "db.t")
    assert code == O.EXIT_INVALID


def test_mistyped_commands_suggest_the_right_one_and_help_exits_zero(tmp_path):
    cli = O.Cli(tmp_path)
    code, err = cli.fail("tabel", "list")
    assert code == O.EXIT_INVALID and "did you mean 'table'?" in err, err
    code, err = cli.fail("table", "lsit")
    assert code == O.EXIT_INVALID and "did you mean 'list'?" in err, err
    code, err = cli.fail("--log-level", "info", "namspace", "list")
    assert "did you mean 'namespace'?" in err, err
    for args in ([], ["help"], ["--help"]):
        done = cli.run(*args)
        assert done.returncode == 0 and "run" in done.stdout and "scan" in done.stdout, (args, done.stderr)
    create_help = cli.ok("help", "table", "create")
    assert "--schema-from" in create_help and "--partition" in create_help
    assert cli.run("help", "nope").returncode == O.EXIT_INVALID


def test_table_list_describe_and_history_tell_live_rows(tmp_path):
    cli = O.Cli(tmp_path)
    make_table(cli, "db.t")
    make_table(cli, "db.u")
    make_table(cli, "other.v")
    assert cli.ok("table", "list").split() == ["db.t", "db.u", "other.v"]
    assert json.loads(cli.ok("table", "list", "db", "--json")) == ["db.t", "db.u"]
    code, err = cli.fail("table", "list", "nope")
    assert code == O.EXIT_NOT_FOUND and "lakesync namespace create nope" in err, err

    cli.ok("table", "delete", "db.t", "--where", "id <= 2")  # a deletion vector on v3
    described = cli.ok("table", "describe", "db.t")
    assert "Records          4" in described and "Live rows        2" in described, described
    # pyiceberg agrees on the live rows.
    assert len(O.sql_catalog(cli).load_table("db.t").scan().to_arrow()) == 2
    lines = cli.ok("table", "history", "db.t").splitlines()
    header = lines[0].split()
    assert header[-4:] == ["added", "removed", "live", "records"], header
    delete_line = lines[-1].split()
    assert delete_line[header.index("operation")] == "delete"
    # The deletion vector removed two rows; two are live out of four records.
    assert delete_line[-5:-1] == ["-", "2", "2", "4"] or delete_line[-4:-1] == ["2", "2", "4"], lines


def test_a_missing_namespace_says_how_to_create_it(tmp_path):
    cli = O.Cli(tmp_path)
    code, err = cli.fail("table", "create", "shop.orders", "--schema",
                         O.schema_file(tmp_path / "s.yaml", COLUMNS))
    assert code == O.EXIT_NOT_FOUND and "lakesync namespace create shop" in err, err


def test_named_catalogs_and_environment_overrides(tmp_path):
    db = tmp_path / "named.db"
    config = O.write_yaml(tmp_path / "lakesync.yaml", {"catalog": {"dev": {
        "type": "sql", "uri": f"sqlite:///{db}", "warehouse": str(tmp_path / "wrong")}}})
    # The environment fixes the warehouse, pyiceberg's convention.
    cli = O.Cli(tmp_path, env={"LAKESYNC_CONFIG": str(config),
                               "LAKESYNC_CATALOG__DEV__WAREHOUSE": str(tmp_path / "named-wh")})
    cli.ok("--catalog", "dev", "namespace", "create", "shop")
    make_table_in = ["table", "create", "shop.t", "--schema", O.schema_file(tmp_path / "s.yaml", COLUMNS),
                     "--catalog", "dev"]
    cli.ok(*make_table_in)
    from pyiceberg.catalog.sql import SqlCatalog
    catalog = SqlCatalog("dev", uri=f"sqlite:///{db}", warehouse=f"file://{tmp_path / 'named-wh'}")
    assert catalog.load_table("shop.t").location().startswith(f"file://{tmp_path / 'named-wh'}")
    code, err = cli.fail("--catalog", "dve", "namespace", "list")
    assert code == O.EXIT_NOT_FOUND and "did you mean 'dev'?" in err, err


def test_unknown_catalog_properties_are_refused_with_did_you_mean(tmp_path):
    cli = O.Cli(tmp_path)
    for props, needle in (({"foo": "1"}, "catalog_properties.foo"),
                          ({"s3.endpont": "http://x"}, "did you mean 's3.endpoint'?")):
        config = O.write_yaml(tmp_path / "c.yaml", {"catalog_properties": {
            "type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}", "warehouse": str(tmp_path / "w"), **props}})
        code, err = cli.fail("namespace", "list", "--catalog-config", config)
        assert code == O.EXIT_INVALID and needle in err, err


def test_fatal_errors_are_json_with_log_format_json(tmp_path):
    cli = O.Cli(tmp_path)
    done = cli.run("--log-format", "json", "table", "describe", "nope.t")
    assert done.returncode == O.EXIT_NOT_FOUND
    record = json.loads(done.stderr.strip().splitlines()[-1])
    assert record["level"] == "error" and record["exit_code"] == 3 and record["error_kind"] == "not found"
    assert "nope.t" in record["message"] and record["time"].endswith("Z")


def test_log_level_debug_prints_debug_lines_and_info_does_not(tmp_path):
    """`--log-level debug` once printed no debug line at all: the macro was compiled out."""
    cli = O.Cli(tmp_path)
    make_table(cli)
    changes = O.write_jsonl(tmp_path / "changes.jsonl", [(5, "e", "insert", 1), (2, "B", "update_postimage", 2)],
                            COLUMNS + [{"name": "_change_type", "type": "string"},
                                       {"name": "_seq", "type": "long"}])
    args = ("apply", "--table", "db.t", "--changes", changes, "--change-type-column", "_change_type",
            "--sequence-number-column", "_seq", "--equality-columns", "id")
    debug = cli.run("--log-level", "debug", *args)
    assert debug.returncode == 0, debug.stderr
    assert " debug " in debug.stderr and "reading the changes took" in debug.stderr, debug.stderr
    info = cli.run("--log-level", "info", *args)
    assert info.returncode == 0, info.stderr
    assert " debug " not in info.stderr and " took " not in info.stderr, info.stderr


def test_bash_completion_is_generated_from_the_commands(tmp_path):
    cli = O.Cli(tmp_path)
    script = tmp_path / "lakesync.bash"
    script.write_text(cli.ok("completion", "bash"))

    def complete(*words):
        line = " ".join(["lakesync", *words])
        cmd = (f"source {script}; COMP_WORDS=(lakesync {' '.join(words)}); COMP_CWORD={len(words)}; "
               f"_lakesync; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (line, done.stderr)
        return done.stdout.split()

    assert complete("ta") == ["table"]
    assert {"create", "list", "describe", "history"} <= set(complete("table", ""))
    assert "--schema-from" in complete("table", "create", "--sch")
    assert "--dry-run" in complete("run", "--d")
    zsh = cli.ok("completion", "zsh")
    assert zsh.startswith("#compdef lakesync") and "bashcompinit" in zsh
    if shutil.which("zsh"):
        (tmp_path / "_lakesync").write_text(zsh)
        assert subprocess.run(["zsh", "-n", str(tmp_path / "_lakesync")]).returncode == 0


def test_the_man_page_is_generated_from_the_commands(tmp_path):
    cli = O.Cli(tmp_path)
    page = cli.ok("man")
    assert page.startswith(".TH LAKESYNC 1")
    for command in ("lakesync run", "lakesync status", "lakesync table create", "lakesync scan",
                    "lakesync changes", "lakesync apply"):
        assert f'.SS "{command}"' in page, command
    assert "\\-\\-dry\\-run" in page and "\\-\\-fail\\-if\\-lag" in page
    # The hidden helpers do not clutter --help.
    assert "completion" not in cli.ok("--help") and "man " not in cli.ok("--help")
    if shutil.which("groff"):
        done = subprocess.run(["groff", "-man", "-Tutf8", "-ww"], input=page, capture_output=True, text=True)
        assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


def test_changes_limit_and_follow_default_to_json_lines(tmp_path):
    cli = O.Cli(tmp_path)
    make_table(cli, "db.t", rows=[(i, f"n{i}") for i in range(4)])
    cli.ok("table", "append", "db.t", O.write_jsonl(tmp_path / "more.jsonl", [(10, "x"), (11, "y")], COLUMNS))
    limited = cli.ok("changes", "--source", "iceberg", "--table", "db.t", "--limit", "3", "--format", "jsonl")
    assert len(limited.splitlines()) == 3
    # --follow writes JSON Lines without being told, and --limit ends it once enough rows came.
    followed = cli.ok("changes", "--source", "iceberg", "--table", "db.t", "--follow", "--poll-interval", "1",
                      "--limit", "5", timeout=120)
    rows = [json.loads(line) for line in followed.splitlines()]
    assert len(rows) == 5 and all(r["_change_type"] == "INSERT" for r in rows)
    code, err = cli.fail("changes", "--source", "iceberg", "--table", "db.t", "--limit", "1", "--position-file",
                         tmp_path / "pos")
    assert code == O.EXIT_INVALID and "--position-file" in err


def test_changes_without_follow_record_and_resume_from_the_position_file(tmp_path):
    cli = O.Cli(tmp_path)
    make_table(cli, "db.t", rows=[(i, f"n{i}") for i in range(4)])
    position = tmp_path / "pos"
    read = ["changes", "--source", "iceberg", "--table", "db.t", "--format", "jsonl", "--position-file", position]
    first = [json.loads(line) for line in cli.ok(*read).splitlines()]
    assert sorted(r["id"] for r in first) == [0, 1, 2, 3]
    assert position.read_text() == f"{first[0]['_commit_snapshot_sequence_number']}:{first[0]['_commit_snapshot_id']}\n"
    cli.ok("table", "append", "db.t", O.write_jsonl(tmp_path / "more.jsonl", [(10, "x")], COLUMNS))
    second = [json.loads(line) for line in cli.ok(*read).splitlines()]
    assert [r["id"] for r in second] == [10], "only what was committed after the recorded snapshot"
    assert position.read_text() == f"{second[0]['_commit_snapshot_sequence_number']}:{second[0]['_commit_snapshot_id']}\n"
    assert cli.ok(*read) == "", "nothing new"
    position.write_text("garbage\n")
    code, err = cli.fail(*read)
    assert code == O.EXIT_INVALID and "--position-file" in err
