"""lakesync installed like a tool (issue 18): `cmake --install` makes a tree that runs after it is
moved, with an empty environment, from another directory, with the checkout's build tree and .venv
out of reach; the release archive (scripts/package.sh) does the same once unpacked. The job they run is
the quickstart's, on a Delta table made here by deltalake, and the result is read back with pyiceberg.

Both package the build under test (O.BUILD_DIR): the Release build of a real release would recompile
everything, so it is run by hand (docs/install.md), not in the test command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
REPO = Path(__file__).resolve().parents[2]
BUILD = Path(O.BUILD_DIR).resolve()


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """Only what a login shell on a bare machine has: no venv, no build tree on any path."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", **extra}


def assert_outside_checkout(binary: Path, env: dict[str, str]) -> None:
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, env=env, check=True).stdout
    assert "not found" not in ldd, ldd
    for root in {str(REPO), str(REPO.resolve()), str(Path(sys.prefix).resolve()), str(BUILD)}:
        assert root not in ldd, f"{binary} loads a library from {root}:\n{ldd}"
    runpath = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"RUNPATH.*\[\$ORIGIN/\.\./lib\]", runpath), runpath


def run_quickstart_job(lakesync: Path, work: Path) -> None:
    """The quickstart's job with the given binary, run where nothing of the checkout is reachable."""
    pytest.importorskip("deltalake")
    py = sys.executable
    delta = work / "orders_delta"
    subprocess.run([py, str(REPO / "examples" / "demo_delta.py"), "create", str(delta)], check=True)
    subprocess.run([py, str(REPO / "examples" / "demo_delta.py"), "change", str(delta)], check=True)
    job = work / "job.yaml"
    job.write_text((REPO / "examples" / "delta-cdf-to-iceberg-v3-dv.yaml").read_text()
                   .replace("./example-data/orders_delta", str(delta)))
    warehouse = work / "warehouse"
    env = clean_env(work, LAKESYNC_WAREHOUSE=str(warehouse))
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    for args in (["run", str(job), "--once"], ["scan", "--table", "shop.orders_v3", "--format", "csv"]):
        done = subprocess.run([str(lakesync), *args], capture_output=True, text=True, env=env, cwd=elsewhere,
                              timeout=300)
        assert done.returncode == 0, f"lakesync {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    scanned = done.stdout
    check = subprocess.run([py, str(REPO / "examples" / "compare_demo.py"), str(delta), str(warehouse),
                            "shop.orders_v3"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    # The installed binary's scan shows the rows pyiceberg and deltalake agree on.
    from deltalake import DeltaTable
    ids = sorted(DeltaTable(str(delta)).to_pyarrow_table().column("order_id").to_pylist())
    body = [line for line in scanned.splitlines()[1:] if line]
    assert sorted(int(line.split(",")[scanned.splitlines()[0].split(",").index("order_id")]) for line in body) == ids


def runpath_entries(binary: Path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    found = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dynamic)
    assert found, f"{binary} has no RUNPATH:\n{dynamic}"
    return found.group(1).split(":")


def test_the_build_trees_binary_never_loads_libraries_from_the_working_directory(tmp_path):
    """An empty RUNPATH entry (CMake pads the build tree's RUNPATH with ':' when it rewrites it at
    install) is the working directory to the loader: started in a folder holding a libc.so.6,
    build/lakesync would have loaded that one."""
    binary = BUILD / "lakesync"
    entries = runpath_entries(binary)
    assert "" not in entries, f"{binary} searches the working directory for libraries: {entries}"
    strace = shutil.which("strace")
    if strace is None:
        return
    trace = tmp_path / "trace"
    subprocess.run([strace, "-f", "-e", "trace=openat", "-o", str(trace), str(binary), "--version"],
                   cwd=tmp_path, capture_output=True, check=True)
    relative = [line for line in trace.read_text().splitlines() if re.search(r'openat\(AT_FDCWD, "[^/]', line)]
    assert not relative, "libraries looked up relative to the working directory:\n" + "\n".join(relative[:5])


def test_installed_tree_runs_after_a_move_with_a_clean_environment(tmp_path):
    first, moved = tmp_path / "prefix", tmp_path / "moved" / "lakesync"
    done = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(first), "--strip"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    moved.parent.mkdir()
    shutil.move(str(first), str(moved))
    binary = moved / "bin" / "lakesync"
    libs = sorted(p.name for p in (moved / "lib").iterdir())
    assert any(n.startswith("libarrow.so.") for n in libs) and any(n.startswith("libparquet.so.") for n in libs), libs
    assert (moved / "share" / "man" / "man1" / "lakesync.1").read_text().startswith(".TH LAKESYNC 1")
    assert (moved / "share" / "bash-completion" / "completions" / "lakesync").stat().st_size > 0
    assert (moved / "share" / "licenses" / "lakesync" / "arrow" / "LICENSE.txt").stat().st_size > 0
    env = clean_env(tmp_path)
    assert_outside_checkout(binary, env)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path,
                             check=True).stdout
    import pyarrow
    assert re.fullmatch(rf"lakesync \d+\.\d+\.\d+ \(commit [0-9a-f]{{12}}(-modified)?; Arrow {pyarrow.__version__}; "
                        r"memory pool: jemalloc, freed pages kept 10000 ms\)\n", version), version
    run_quickstart_job(binary, tmp_path)


def test_release_archive_unpacks_and_runs_anywhere(tmp_path):
    out = tmp_path / "dist"
    done = subprocess.run([str(REPO / "scripts" / "package.sh"), "--build-dir", str(BUILD), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    archive = Path(done.stdout.strip().splitlines()[-1])
    assert re.fullmatch(r"lakesync-\d+\.\d+\.\d+-linux-x86_64\.tar\.gz", archive.name), archive.name
    digest, name = (out / (archive.name + ".sha256")).read_text().split()
    assert name == archive.name
    subprocess.run(["sha256sum", "--check", "--quiet", archive.name + ".sha256"], cwd=out, check=True)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(fresh, filter="tar")
    (top,) = list(fresh.iterdir())
    assert top.name == archive.name.removesuffix(".tar.gz")
    binary = top / "bin" / "lakesync"
    env = clean_env(tmp_path)
    assert_outside_checkout(binary, env)
    readme = (top / "share" / "doc" / "lakesync" / "README").read_text()
    assert "apt-get install" in readme and "libavro" in readme, readme
    run_quickstart_job(binary, tmp_path)
