// The in-process floor for the REST catalog benchmark (bench/rest_catalog_bench.py): LoadTable and
// CommitTable straight on a SQL catalog, with T threads for D seconds, and the same latency
// percentiles the HTTP load generator reports. Prints one JSON object.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "lakesync/catalog/catalog_config.h"

using namespace lakesync;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  CLI::App app("In-process LoadTable/CommitTable throughput and latency on a SQL catalog");
  std::string config_path, table, op = "load";
  int threads = 1;
  double seconds = 5;
  app.add_option("--catalog-config", config_path)->required();
  app.add_option("--table", table)->required();
  app.add_option("--op", op, "load or commit")->check(CLI::IsMember({"load", "commit"}));
  app.add_option("--threads", threads);
  app.add_option("--seconds", seconds);
  CLI11_PARSE(app, argc, argv);

  auto config = catalog::LoadCatalogConfigFile(config_path);
  if (!config.ok()) return fmt::print(stderr, "{}\n", config.status().message()), 1;
  auto cat = catalog::LoadCatalog(*config);
  if (!cat.ok()) return fmt::print(stderr, "{}\n", cat.status().message()), 1;
  auto id = catalog::TableIdentifier::Parse(table);
  if (!id.ok()) return fmt::print(stderr, "{}\n", id.status().message()), 1;

  std::atomic<bool> stop{false};
  std::atomic<int64_t> failures{0};
  std::vector<std::vector<double>> latencies(threads);
  std::vector<std::thread> workers;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      int64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto t0 = Clock::now();
        bool ok;
        if (op == "load") {
          ok = (*cat)->LoadTable(*id).ok();
        } else {
          ok = (*cat)
                   ->CommitTable(*id, {},
                                 {iceberg::SetProperties{{{fmt::format("bench.t{}", t), std::to_string(++n)}}}})
                   .ok();
        }
        if (!ok) failures++;
        latencies[t].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all.empty() ? 0.0 : all[std::min(all.size() - 1, size_t(p * all.size()))]; };
  fmt::print("{{\"op\": \"{}\", \"threads\": {}, \"requests\": {}, \"failures\": {}, \"per_second\": {:.1f}, "
             "\"p50_ms\": {:.3f}, \"p99_ms\": {:.3f}}}\n",
             op, threads, all.size(), failures.load(), (all.size() - failures.load()) / elapsed, pct(0.50),
             pct(0.99));
  return 0;
}
