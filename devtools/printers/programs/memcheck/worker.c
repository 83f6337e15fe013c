/* A tiny native worker whose memory and threading bugs valgrind and the sanitizers report:
 * `worker SCENARIO`. Each scenario has one bug, so each run prints one report.
 * "invalid_read": a read past a heap block (valgrind memcheck: "Invalid read of size 4");
 * "uninit": a branch on an uninitialised value ("Conditional jump or move depends on ...");
 * "double_free": "Invalid free() / delete / delete[] / realloc()"; "leak": a block never freed
 * (valgrind --leak-check=full's loss record, LeakSanitizer's "Direct leak");
 * "overflow": signed integer overflow and a shift past the width (UBSan "runtime error:");
 * "race": two threads writing one counter (ThreadSanitizer's "data race"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int sum_shard(const int *rows, int n) { int s = 0; for (int i = 0; i <= n; i++) s += rows[i]; return s; }
__attribute__((noinline)) int *alloc_shard(int n) { return malloc(n * sizeof(int)); }

static int counter;
static void *bump(void *arg) { (void)arg; for (int i = 0; i < 1000; i++) counter++; return NULL; }

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "invalid_read";
    if (strcmp(s, "invalid_read") == 0) {
        int *rows = alloc_shard(4);
        for (int i = 0; i < 4; i++) rows[i] = i;
        printf("sum %d\n", sum_shard(rows, 4));
        free(rows);
    } else if (strcmp(s, "uninit") == 0) {
        int *rows = alloc_shard(4);
        if (rows[2] > 0) printf("positive\n");
        free(rows);
    } else if (strcmp(s, "double_free") == 0) {
        int *rows = alloc_shard(4);
        free(rows);
        free(rows);
    } else if (strcmp(s, "leak") == 0) {
        int *rows = alloc_shard(16);
        rows[0] = argc;
        rows = NULL;
    } else if (strcmp(s, "overflow") == 0) {
        int step = argc > 2 ? atoi(argv[2]) : 2147483647;
        printf("next step %d\n", step + 1);
    } else if (strcmp(s, "race") == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, bump, NULL);
        pthread_create(&b, NULL, bump, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        printf("counter %d\n", counter);
    }
    return 0;
}
