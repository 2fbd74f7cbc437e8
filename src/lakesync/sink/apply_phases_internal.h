// Phase timing of an apply, for `--log-level debug`: each phase's wall time and the CPU time the
// whole process spent meanwhile (all threads), so the log says how many cores a phase kept busy and
// which phases are serial. Figures go to the log only; nothing depends on them.
#pragma once

#include <time.h>

#include <chrono>
#include <string_view>

#include "lakesync/common/logging.h"

namespace lakesync::sink::internal {

struct PhaseTime {
  double wall = 0.0;  // seconds
  double cpu = 0.0;   // seconds of the whole process, all threads
  PhaseTime& operator+=(const PhaseTime& o) {
    wall += o.wall;
    cpu += o.cpu;
    return *this;
  }
};

// Logs "<what>: <phase> took W s wall, C s CPU (N cores)" at debug level.
inline void LogPhase(std::string_view what, std::string_view phase, const PhaseTime& t) {
  LS_LOG_DEBUG("{}: {} took {:.3f} s wall, {:.3f} s CPU ({:.2f} cores)", what, phase, t.wall, t.cpu,
                t.wall > 0 ? t.cpu / t.wall : 0.0);
}

class PhaseClock {
 public:
  PhaseClock() { Restart(); }

  void Restart() {
    wall_ = std::chrono::steady_clock::now();
    cpu_ = ProcessCpuSeconds();
  }

  // The time since the last restart; restarts the clock.
  PhaseTime Lap() {
    PhaseTime t;
    const auto now = std::chrono::steady_clock::now();
    const double cpu = ProcessCpuSeconds();
    t.wall = std::chrono::duration<double>(now - wall_).count();
    t.cpu = cpu - cpu_;
    wall_ = now;
    cpu_ = cpu;
    return t;
  }

  // Logs the time since the last restart as `phase` and restarts the clock.
  void Log(std::string_view what, std::string_view phase) { LogPhase(what, phase, Lap()); }

 private:
  static double ProcessCpuSeconds() {
    timespec ts{};
    if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }

  std::chrono::steady_clock::time_point wall_;
  double cpu_ = 0.0;
};

}  // namespace lakesync::sink::internal
