// A tiny native worker whose fatal signals a handler reports with boost::stacktrace (the way C++ services
// print their stack on a crash): `worker SCENARIO`. The handler writes one line and the stack, then raises
// the signal again, so that the shell or launcher reports the death. segv: a NULL write; free: free() of a
// stack address (glibc's "munmap_chunk(): invalid pointer", then SIGABRT); double_free (glibc's "free():
// double free detected in tcache 2"); assert: a failed assert() ("worker: worker.cc:N: ...: Assertion
// `...' failed.").
#include <boost/stacktrace.hpp>

#include <cassert>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace trainer {

__attribute__((noinline)) int load_shard(volatile int *rows) { *rows = 3; return 1; }

__attribute__((noinline)) int count_rows(int rows) {
    assert(rows > 0 && "a shard has rows");
    return rows;
}

}  // namespace trainer

static void on_signal(int sig) {
    ::signal(sig, SIG_DFL);
    std::cerr << "Received signal " << sig << " (" << strsignal(sig) << "), stack trace:\n"
              << boost::stacktrace::stacktrace();
    ::raise(sig);
}

int main(int argc, char **argv) {
    ::signal(SIGSEGV, on_signal);
    ::signal(SIGABRT, on_signal);
    std::string s = argc > 1 ? argv[1] : "segv";
    if (s == "segv") trainer::load_shard(nullptr);
    if (s == "free") {
        int rows[4] = {1, 2, 3, 4};
        std::free(rows + argc);
    }
    if (s == "double_free") {
        int *rows = static_cast<int *>(std::malloc(16));
        std::free(rows);
        std::free(rows);
    }
    if (s == "assert") return trainer::count_rows(argc - 2);
    return 0;
}
