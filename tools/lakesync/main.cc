// lakesync: keep Apache Iceberg tables in sync with Delta Lake and Iceberg sources.
#include <arrow/config.h>
#include <arrow/memory_pool.h>
#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <iostream>

#include "cli.h"
#include "lakesync/common/config_keys.h"
#include "lakesync/common/executor.h"
#include "lakesync/common/logging.h"
#include "lakesync/common/version.h"
#include "lakesync/git_commit.h"

namespace {

using namespace lakesync::cli;

// Arrow's memory pool: jemalloc unless the user names one (ARROW_DEFAULT_MEMORY_POOL, read by Arrow
// when the pool is first used, so this must run before anything allocates). The pyarrow wheel's
// default, mimalloc, hands freed memory back to the kernel within milliseconds. The apply and the
// readers allocate and free batch-sized buffers all the time, and the kernel's zeroing of the pages
// they fault in again was 47% of an apply's CPU in perf. At load average 2.6-3.2, applying 200k
// changes into 2M rows on one thread took 0.86-0.89 CPU-s with mimalloc and 0.48-0.54 with
// jemalloc; on a quiet machine the two are within noise (docs/benchmarks.md, "Memory pool").
void ChooseMemoryPool() { ::setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc", /*overwrite=*/0); }

// Whether Arrow's pool is jemalloc: the pool Arrow made, not the variable asking for it (an unknown
// or unavailable name falls back to another pool).
bool UsesJemalloc() { return arrow::default_memory_pool()->backend_name() == "jemalloc"; }

// How long jemalloc keeps freed pages before giving them back to the kernel. Arrow builds its
// jemalloc to purge them after 1 s (jemalloc's own default is 10 s), so a read that frees and
// allocates batch-sized buffers for longer than that faults the same memory in again and again: the
// Iceberg changelog over 10 snapshots of 1M changes faulted ~410k pages with 1 s and ~275k with 10 s
// (about 8% less wall time at two threads), the Delta CDF read 210-230k against 63-72k, at 0-12%
// more peak RSS (docs/benchmarks.md, "Stop 33"). Memory is still returned, 10 s after it was last
// used. Set before the pool threads start: it reaches the arenas made from now on, which are the
// ones the parallel work allocates in (the main thread's arena was made at start and keeps 1 s).
// Not when the user configures jemalloc (JE_ARROW_MALLOC_CONF) or chose another pool.
void KeepFreedPagesLonger() {
  if (!UsesJemalloc() || ::getenv("JE_ARROW_MALLOC_CONF") != nullptr) return;
  (void)arrow::jemalloc_set_decay_ms(10'000);  // NotImplemented where Arrow was built without jemalloc
}

// Arrow's pool, and for jemalloc how long freed pages are kept (as the arenas made from now on have it).
std::string MemoryPoolText() {
  std::string text = arrow::default_memory_pool()->backend_name();
  if (UsesJemalloc()) {
    auto decay = arrow::jemalloc_get_stat("arenas.dirty_decay_ms");
    if (decay.ok()) text += fmt::format(", freed pages kept {} ms", *decay);
  }
  return text;
}

// The version, the commit it was built from, and the Arrow library it runs with: an installed tree
// or wheel loads the Arrow beside it, which may differ from the one it was compiled against (then
// both are named).
std::string VersionText() {
  const std::string running = arrow::GetBuildInfo().version_string;
  std::string arrow = "Arrow " + running;
  if (running != LAKESYNC_ARROW_VERSION) arrow += fmt::format(", built against Arrow {}", LAKESYNC_ARROW_VERSION);
  return fmt::format("lakesync {} (commit {}; {}; memory pool: {})", LAKESYNC_VERSION, LAKESYNC_GIT_COMMIT, arrow,
                     MemoryPoolText());
}

// The word the user probably meant when a command or sub-command is mistyped: walks argv down the
// command tree and compares the first word that names no sub-command with the sub-commands there.
std::optional<std::string> DidYouMean(const CLI::App& root, int argc, char** argv) {
  const CLI::App* app = &root;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return std::nullopt;
    if (!word.empty() && word[0] == '-') {
      // Skip the value of an option that takes one ("--log-level info"), unless given as --x=y.
      if (word.find('=') != std::string::npos) continue;
      for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
        const CLI::Option* opt = nullptr;
        try {
          opt = a->get_option_no_throw(word);
        } catch (...) {
        }
        if (opt) {
          if (opt->get_expected_min() > 0 && opt->get_type_size() > 0) ++i;
          break;
        }
      }
      continue;
    }
    auto subs = app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
    if (subs.empty()) return std::nullopt;  // a positional argument of a command
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const auto* s : subs) {
      if (s->check_name(word)) next = s;
      names.push_back(s->get_name());
    }
    if (next) {
      app = next;
      continue;
    }
    if (auto close = lakesync::ClosestKey(word, names)) {
      std::string path;
      for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) path = a->get_name() + (path.empty() ? "" : " " + path);
      return "'" + word + "' is not a command of " + path + "; did you mean '" + *close + "'?";
    }
    return "'" + word + "' is not a command; the commands are: " + [&] {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return all;
    }();
  }
  return std::nullopt;
}

// The deepest command named on the command line (for `lakesync help table create`).
const CLI::App* FindCommand(const CLI::App& root, const std::vector<std::string>& words, std::string* unknown) {
  const CLI::App* app = &root;
  for (const auto& w : words) {
    const CLI::App* next = nullptr;
    for (const auto* s : app->get_subcommands([](const CLI::App*) { return true; })) {
      if (s->check_name(w)) next = s;
    }
    if (!next) {
      *unknown = w;
      return app;
    }
    app = next;
  }
  return app;
}

// The help of one command, named by its full path ("lakesync table create"). App::help() would print
// the help of a sub-command that was parsed instead (that of `help` itself for `lakesync help`).
std::string HelpOf(const CLI::App& app) {
  std::string path;
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) path = a->get_name() + (path.empty() ? "" : " " + path);
  return app.get_formatter()->make_help(&app, path, CLI::AppFormatMode::Normal);
}

}  // namespace

int main(int argc, char** argv) {
  ChooseMemoryPool();
  KeepFreedPagesLonger();
  Cli cli(
      "lakesync keeps Apache Iceberg tables in sync with Delta Lake and Iceberg sources by change data capture.\n"
      "Without --catalog-config or --catalog, commands use the embedded catalog: SQLite under ./lakesync-warehouse\n"
      "(or $LAKESYNC_WAREHOUSE; a job's is next to the job file). Options may come before or after the command.");
  cli.app.name("lakesync");
  // Made only when asked for: it reads the allocator's settings.
  cli.app.set_version_flag("--version", std::function<std::string()>(VersionText));
  cli.app.add_option("--log-level", cli.global.log_level, "debug, info, warn (default), error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  cli.app.add_option("--log-format", cli.global.log_format,
                     "text (default) or json (one object per line on standard error: time, level, logger, message "
                     "and the event's fields; fatal errors too)")
      ->check(CLI::IsMember({"text", "json"}));
  cli.app.add_option("--threads", cli.global.threads,
                     "threads that read, resolve keys and write in parallel (default: $LAKESYNC_THREADS, a job's "
                     "threads:, or the machine's cores); output is the same for every count")
      ->check(CLI::Range(1, lakesync::kMaxThreads));
  AddCatalogOption(cli.app, cli.global);
  cli.app.require_subcommand(0, 1);
  cli.app.fallthrough();
  cli.app.footer("Run 'lakesync help COMMAND' or 'lakesync COMMAND --help' for a command's options; docs/cli.md has "
                 "the exit codes and output contracts.");
  RegisterNamespaceCommands(cli);
  RegisterTableCommands(cli);
  RegisterScanCommand(cli);
  RegisterApplyCommand(cli);
  RegisterChangesCommand(cli);
  RegisterRunCommands(cli);
  RegisterCatalogCommands(cli);
  RegisterShareCommands(cli);
  RegisterUiCommand(cli);
  RegisterDocCommands(cli);

  std::vector<std::string> help_words;
  auto* help = cli.app.add_subcommand("help", "Show the help of lakesync or of a command (lakesync help table create)");
  help->add_option("command", help_words, "the command, and its sub-command");
  help->callback([&cli, &help_words] {
    cli.action = [&cli, &help_words]() -> lakesync::Status {
      std::string unknown;
      const CLI::App* app = FindCommand(cli.app, help_words, &unknown);
      if (!unknown.empty()) return lakesync::InvalidArgument("help: '{}' is not a command", unknown);
      Print(HelpOf(*app));
      return lakesync::Status::OK();
    };
  });

  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.app.exit(e);
  } catch (const CLI::ParseError& e) {
    lakesync::ConfigureLogging(cli.global.log_level, cli.global.log_format);
    std::string message = e.what();
    if (auto hint = DidYouMean(cli.app, argc, argv)) message = *hint;
    ReportError(cli, message + "\nRun 'lakesync --help' (or '<command> --help') for usage.", kExitUsage,
                "invalid argument");
    return kExitUsage;
  }
  lakesync::ConfigureLogging(cli.global.log_level, cli.global.log_format);
  if (!cli.action) {
    // Bare `lakesync` (or a command group without its sub-command handled by CLI11 above).
    Print(HelpOf(cli.app));
    return kExitOk;
  }
  // The engine's one executor (common/executor.h); a job run may size it again from its threads:.
  lakesync::Status st = lakesync::ConfigureThreads(cli.global.threads > 0 ? std::optional<int>(cli.global.threads)
                                                                          : std::nullopt);
  if (st.ok()) st = cli.action();
  if (!st.ok()) {
    const int code = ExitCodeFor(st);
    ReportError(cli, st.message(), code, lakesync::ErrorKindName(lakesync::KindOf(st)));
    return code;
  }
  return cli.exit_code;
}
