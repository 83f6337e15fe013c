/* A tiny native worker whose crash glibc prints: `crash SCENARIO`.
 * "handler": a SIGSEGV handler writes a line and backtrace_symbols_fd's frames (the usual
 * crash handler of native training extensions); "abort": backtrace_symbols_fd from a fatal check;
 * "segv": a plain NULL write, for gdb to stop on and `bt`. */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig) {
    void *frames[64];
    int n = backtrace(frames, 64);
    char head[128];
    int len = snprintf(head, sizeof head, "*** Caught signal %d (%s), backtrace:\n", sig, strsignal(sig));
    write(STDERR_FILENO, head, len);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    _exit(128 + sig);
}

__attribute__((noinline)) int store_grad(float *grad, int i) { grad[i] = 1.0f; return i; }
__attribute__((noinline)) int apply_update(float *grad, int n) { int s = 0; for (int i = 0; i < n; i++) s += store_grad(grad, i); return s; }
__attribute__((noinline)) int train_step(int n) { return apply_update(NULL, n); }

__attribute__((noinline)) void check_failed(const char *what) {
    void *frames[64];
    int n = backtrace(frames, 64);
    fprintf(stderr, "Check failed: %s\n", what);
    fflush(stderr);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    abort();
}

static void *thread_main(void *arg) { (void)arg; train_step(4); return NULL; }

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "segv";
    if (strcmp(s, "handler") == 0) {
        signal(SIGSEGV, on_segv);
        return train_step(4);
    }
    if (strcmp(s, "abort") == 0) {
        check_failed("world_size % tp_size == 0 (6 vs. 4)");
    }
    if (strcmp(s, "heap_overflow") == 0) {  /* built with -fsanitize=address: ASan's report */
        float *grad = malloc(4 * sizeof(float));
        float r = grad[argc + 4];
        free(grad);
        return (int)r;
    }
    if (strcmp(s, "abort_plain") == 0) {
        abort();
    }
    if (strcmp(s, "thread") == 0) {
        pthread_t t, idle;
        pthread_create(&idle, NULL, (void *(*)(void *))sleep, (void *)10);
        pthread_create(&t, NULL, thread_main, NULL);
        pthread_join(t, NULL);
    }
    return train_step(4);
}
