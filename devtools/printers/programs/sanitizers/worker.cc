// A tiny native worker with one memory or threading bug per scenario, built with clang's sanitizers
// (compiler-rt, frames symbolized by llvm-symbolizer): `worker SCENARIO`.
// ASan: heap_overflow, thread_overflow (in a std::thread: "Thread T1 created by T0 here:"),
// use_after_free, double_free, stack_overflow (a stack buffer), segv (a wild write: "SEGV on unknown
// address"), leak (LeakSanitizer at exit); MSan: uninit; UBSan: overflow, shift; TSan: race.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace trainer {

struct Shard {
    int rows[4];
};

__attribute__((noinline)) int sum_rows(const int *rows, int n) {
    int total = 0;
    for (int i = 0; i <= n; i++) total += rows[i];  // one past the end
    return total;
}

__attribute__((noinline)) Shard *load_shard(int id) {
    Shard *s = new Shard;
    for (int i = 0; i < 4; i++) s->rows[i] = id * i;
    return s;
}

__attribute__((noinline)) int scale(int rows, int factor) { return rows * factor; }

// the only pointer to the shard dies with this frame: LeakSanitizer finds it unreachable at exit
__attribute__((noinline)) int peek_shard(int id) { return load_shard(id)->rows[1]; }

int counter = 0;

__attribute__((noinline)) void bump() { counter++; }

}  // namespace trainer

int main(int argc, char **argv) {
    std::string s = argc > 1 ? argv[1] : "heap_overflow";
    if (s == "heap_overflow") {
        int *rows = new int[4]();
        std::printf("%d\n", trainer::sum_rows(rows, 4));
    } else if (s == "thread_overflow") {
        int *rows = new int[4]();
        std::thread t([rows] { std::printf("%d\n", trainer::sum_rows(rows, 4)); });
        t.join();
    } else if (s == "use_after_free") {
        trainer::Shard *sh = trainer::load_shard(3);
        delete sh;
        std::printf("%d\n", sh->rows[1]);
    } else if (s == "double_free") {
        trainer::Shard *sh = trainer::load_shard(3);
        delete sh;
        delete sh;
    } else if (s == "stack_overflow") {
        int rows[4] = {1, 2, 3, 4};
        std::printf("%d\n", trainer::sum_rows(rows, 4));
    } else if (s == "segv") {
        volatile int *p = reinterpret_cast<int *>(argc * 16);
        *p = 1;
    } else if (s == "leak") {
        std::printf("%d\n", trainer::peek_shard(3));
    } else if (s == "uninit") {
        int *rows = new int[4];
        if (rows[2] > 0) std::printf("positive\n");
    } else if (s == "overflow") {
        std::printf("%d\n", trainer::scale(2147483647, argc + 1));
    } else if (s == "shift") {
        std::printf("%d\n", 1 << (argc + 31));
    } else if (s == "race") {
        std::thread t(trainer::bump);
        trainer::bump();
        t.join();
    }
    return 0;
}
