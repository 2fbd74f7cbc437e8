#!/usr/bin/env bash
# Builds the libFuzzer harnesses in fuzz/ (clang from Debian, ASan + UBSan) in build-fuzz/, seeds
# their corpora from files the tests' tools generate, and runs each harness.
#
#   scripts/fuzz.sh                 a short run: FUZZ_SECONDS (default 20) per harness
#                                   (scripts/test.sh runs it, 10 s each, with LAKESYNC_FUZZ_SHORT=1)
#   scripts/fuzz.sh --long 3600     the long run: 3600 s per harness, one after another (-j1)
#   scripts/fuzz.sh --only NAME     one harness (table_metadata, manifest, manifest_list, puffin,
#                                   deletion_vector, delta_log, delta_checkpoint, z85, filter, job_yaml)
#
# Corpora grow in build-fuzz/corpus/<name>/ (kept between runs); crashes are written to
# build-fuzz/crashes/<name>/ and fail the script. Per-harness figures (runs, coverage, corpus size)
# go to build-fuzz/logs/<name>.log; a summary line per harness is printed at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

seconds="${FUZZ_SECONDS:-20}"
only=""
while (($#)); do
  case "$1" in
    --long) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    *) echo "usage: $0 [--long SECONDS] [--only NAME]" >&2; exit 2 ;;
  esac
done

log() { printf '\033[1m[fuzz]\033[0m %s\n' "$*" >&2; }

# --- clang and libFuzzer (Debian 12: clang 14) ------------------------------------------------------
if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  log "installing clang and its runtime libraries (libFuzzer, sanitizers)"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends clang \
    "libclang-rt-$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)-dev" \
    >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi

# --- build (the normal build must exist for the Python venv and the seed tables) -------------------
[[ -x build/lakesync ]] || "$root/scripts/setup.sh"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
if [[ ! -f build-fuzz/build.ninja ]]; then
  log "configuring build-fuzz/ (clang, ASan + UBSan, libFuzzer)"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DLAKESYNC_FUZZ=ON -DLAKESYNC_BUILD_PYTHON=OFF -DLAKESYNC_BUILD_BENCH=OFF \
    -DLAKESYNC_PYTHON="$root/.venv/bin/python" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
log "building the harnesses"
cmake --build build-fuzz -j"${FUZZ_JOBS:-$(nproc)}" --target fuzz_all

# --- seeds ------------------------------------------------------------------------------------------
if [[ ! -f build-fuzz/seeds/.done ]]; then
  log "generating seed files (lakesync, deltalake)"
  rm -rf build-fuzz/seeds
  .venv/bin/python fuzz/make_seeds.py --lakesync build/lakesync --out build-fuzz/seeds
  touch build-fuzz/seeds/.done
fi

# --- run ------------------------------------------------------------------------------------------
harnesses=(table_metadata manifest manifest_list puffin deletion_vector delta_log delta_checkpoint z85 filter job_yaml)
[[ -n "$only" ]] && harnesses=("$only")
mkdir -p build-fuzz/logs
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=0
summary=()
for h in "${harnesses[@]}"; do
  corpus="build-fuzz/corpus/$h"
  crashes="build-fuzz/crashes/$h"
  mkdir -p "$corpus" "$crashes"
  seeds=()
  [[ -d "build-fuzz/seeds/$h" ]] && seeds=("build-fuzz/seeds/$h")
  dict=()
  [[ -f "fuzz/dict/$h.dict" ]] && dict=("-dict=fuzz/dict/$h.dict")
  log "fuzzing $h for ${seconds}s"
  started=$(date +%s)
  set +e
  "build-fuzz/fuzz/fuzz_$h" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=3072 -max_len=1048576 -artifact_prefix="$crashes/" -print_final_stats=1 \
    >"build-fuzz/logs/$h.log" 2>&1
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - started ))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/logs/$h.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "build-fuzz/logs/$h.log" | tail -1 | sed 's/cov: //')
  found=$(find "$crashes" -type f | wc -l)
  summary+=("$h: ${runs:-0} runs in ${elapsed}s, coverage ${cov:-?} edges, corpus $(ls "$corpus" | wc -l) files, crashes $found, exit $rc")
  if ((rc != 0 || found > 0)); then
    failed=1
    log "$h FAILED (exit $rc); see build-fuzz/logs/$h.log and $crashes/"
    tail -40 "build-fuzz/logs/$h.log" >&2
  fi
done
printf '%s\n' "${summary[@]}"
exit $failed
