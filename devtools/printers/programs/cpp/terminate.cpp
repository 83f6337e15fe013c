// A tiny native worker whose uncaught C++ exception libstdc++'s verbose terminate handler prints
// ("terminate called after throwing an instance of '...'" + "  what():  ..."): `terminate SCENARIO`.
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static void load(const std::string &path) { throw std::runtime_error("cannot open " + path + ": No such file or directory"); }

int main(int argc, char **argv) {
    std::string s = argc > 1 ? argv[1] : "runtime";
    if (s == "runtime") load("/ckpt/step_1200/optimizer.pt");
    if (s == "out_of_range") { std::vector<int> v(3); return v.at(argc + 7); }
    if (s == "multiline") throw std::invalid_argument("bad config:\n  tp_size=4\n  world_size=6");
    if (s == "thread") { std::thread t([] { load("/data/shard-7"); }); t.join(); }
    if (s == "int") throw 42;
    return 0;
}
