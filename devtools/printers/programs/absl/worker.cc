// A tiny native worker that fails the ways abseil prints failures (what TensorFlow, JAX and XLA install
// at start-up): `worker SCENARIO`. segv: a SIGSEGV under absl::InstallFailureSignalHandler ("*** SIGSEGV
// received at time=... on cpu N ***", "PC: @ ...", "@ ..." frames); abort: std::abort() under it
// (SIGABRT); fpe: an integer division by zero (SIGFPE); thread: a SIGSEGV in a thread; raw_check:
// ABSL_RAW_CHECK failing (raw_logging's one record, then the handler's report of the abort).
#include <absl/base/internal/raw_logging.h>
#include <absl/debugging/failure_signal_handler.h>
#include <absl/debugging/symbolize.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

static int shard_size(int shard) { return shard * 3; }

__attribute__((noinline)) static void load_shard(volatile int *p) { *p = shard_size(7); }

__attribute__((noinline)) static int rows_per_rank(int rows, volatile int ranks) { return rows / ranks; }

int main(int argc, char **argv) {
    absl::InitializeSymbolizer(argv[0]);
    absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
    std::string s = argc > 1 ? argv[1] : "segv";
    std::fprintf(stderr, "worker started, scenario %s\n", s.c_str());
    if (s == "segv") load_shard(nullptr);
    if (s == "abort") std::abort();
    if (s == "fpe") std::printf("%d\n", rows_per_rank(1024, 0));
    if (s == "thread") std::thread([] { load_shard(nullptr); }).join();
    if (s == "raw_check") ABSL_RAW_CHECK(shard_size(2) == 7, "shard sizes disagree");
    return 0;
}
