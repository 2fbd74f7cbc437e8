// Failpoints: named places in the engine where a test can make the process fail on purpose, so that
// the handling of rare failures (a kill -9 mid-commit, a commit conflict, a catalog that loses its
// answer after the commit landed, a retry budget that runs out) is tested deterministically.
//
// Two ways to arm them, both read from the environment once, at start-up:
//   LAKESYNC_FAILPOINT=NAME     kill the process with SIGKILL (as `kill -9` would) when NAME is
//                               reached (the crash tests' original form; kept as it is).
//   LAKESYNC_FAILPOINTS=SPEC    SPEC is a comma-separated list of NAME=ACTION, where ACTION is
//                                 N        fire the first N times the point is reached (N >= 1);
//                                 always   fire every time;
//                                 kill     kill the process with SIGKILL when it is reached;
//                                 wait:PATH  the first time it is reached, create PATH.reached.<pid>
//                                          and wait (up to 120 s) until PATH exists: a test holds
//                                          several processes at the same point, then releases them
//                                          together (a deterministic race).
//                               e.g. LAKESYNC_FAILPOINTS="commit.conflict=2,commit.after-swap=1"
// What "fire" means is the call site's: FailpointFires() returns true and the caller returns the
// error it would see in that situation (see the k*Failpoint names below).
//
// Hand-written rather than libfiu (Debian's fault-injection library): libfiu arms points through a
// wrapper program (fiu-run) or its own API, has no "fire the first N times" action, and would be a new
// dependency of every binary for about sixty lines. Compiled in always; an unarmed point costs one
// load and one predictable branch (FailpointFires is inline and checks a flag first).
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync {

// The kill points of LAKESYNC_FAILPOINT (docs/reliability.md, "Crash tests").
inline constexpr char kFailpointAfterDataFiles[] = "after-data-files";
inline constexpr char kFailpointBeforeCommit[] = "before-commit";
inline constexpr char kFailpointAfterCommit[] = "after-commit";
// Right after each manifest a commit writes: the first file that only the pending-files record's token
// names, with no record write since the attempt began (table/pending_files.h).
inline constexpr char kFailpointAfterManifest[] = "after-manifest";

// Error points of LAKESYNC_FAILPOINTS, at the catalog commit of table::SnapshotUpdate:
// the commit attempt fails with a commit conflict before the catalog is asked (as if another writer
// had committed first); with `always` every attempt conflicts and the retry budget runs out.
inline constexpr char kFailpointCommitConflict[] = "commit.conflict";
// The catalog applied the commit but the answer was lost (kCommitStateUnknown after the swap).
inline constexpr char kFailpointCommitAfterSwap[] = "commit.after-swap";
// The catalog was asked and its answer was lost before it applied anything (kCommitStateUnknown,
// the commit did not land).
inline constexpr char kFailpointCommitBeforeSwap[] = "commit.before-swap";
// Just before the catalog is asked, the table state of the attempt already read: with `wait:PATH`,
// writers held here all commit on the same base, so all but one conflict.
inline constexpr char kFailpointCommitPause[] = "commit.pause";

// Error point of FileIO: the fsync of a local file streamed through FileIO::OpenOutput (a data, delete
// or deletion-vector file) fails with EIO: in Close, or for a table's files, whose syncs run on the IO
// executor, when the commit waits for them (io/file_syncs.h).
inline constexpr char kFailpointLocalSync[] = "io.local-sync";

namespace detail {
extern std::atomic<bool> g_failpoints_armed;
bool FailpointFiresSlow(std::string_view name);
}  // namespace detail

// True when the point is armed (and, for a counted action, not yet spent); a `kill` action does not
// return. Thread-safe.
inline bool FailpointFires(std::string_view name) {
  if (!detail::g_failpoints_armed.load(std::memory_order_relaxed)) [[likely]] return false;
  return detail::FailpointFiresSlow(name);
}

// A kill point: kills the process when it is armed (either variable), else does nothing.
inline void Failpoint(std::string_view name) { (void)FailpointFires(name); }

// Replaces the armed points (the LAKESYNC_FAILPOINTS syntax; empty disarms every point). For unit
// tests; the environment is read once at start-up.
Status SetFailpoints(std::string_view spec);

}  // namespace lakesync
