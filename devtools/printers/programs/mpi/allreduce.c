/* A tiny MPI job whose failures mpirun itself reports: `mpirun -np 2 allreduce SCENARIO`.
 * "abort": rank 1 calls MPI_Abort (ompi's help-mpi-api.txt "mpi-abort" box);
 * "segv": rank 1 writes through NULL (mpirun's "exited on signal 11" box from orte/errmgr);
 * "exit": rank 1 returns 3 ("Primary job terminated normally, but 1 process returned a non-zero exit
 * code" and "mpirun detected that one or more processes exited with non-zero status"). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void store(float *p) { *p = 1.0f; }

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "abort";
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        if (strcmp(s, "abort") == 0) {
            fprintf(stderr, "rank 1: gradient is NaN at step 1200, aborting\n");
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 42);
        } else if (strcmp(s, "segv") == 0) {
            store(NULL);
        }
    } else {
        sleep(1);
    }
    if (strcmp(s, "exit") == 0) {
        MPI_Finalize();
        return rank == 1 ? 3 : 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
