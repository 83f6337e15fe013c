// A tiny native worker that fails the ways glog prints failures: `worker SCENARIO LOG_DIR`.
// check: CHECK_EQ fails (the FATAL record "Check failed: ...", then "*** Check failure stack trace: ***"
// and its frames); fatal: LOG(FATAL); segv: a SIGSEGV under InstallFailureSignalHandler; file: records
// written to LOG_DIR, whose files start with glog's header.
#include <glog/logging.h>

#include <csignal>
#include <string>

static int shard_size(int shard) { return shard * 3; }

int main(int argc, char **argv) {
    std::string s = argc > 1 ? argv[1] : "check";
    if (argc > 2) FLAGS_log_dir = argv[2];
    FLAGS_logtostderr = s != "file";
    google::InitGoogleLogging("worker");
    google::InstallFailureSignalHandler();
    LOG(INFO) << "worker started, scenario " << s;
    if (s == "check") CHECK_EQ(shard_size(2), 7) << "shard sizes disagree";
    if (s == "fatal") LOG(FATAL) << "cannot open /ckpt/step_1200/optimizer.pt";
    if (s == "segv") { volatile int *p = nullptr; *p = 1; }
    if (s == "file") LOG(ERROR) << "shard 7 missing";
    return 0;
}
