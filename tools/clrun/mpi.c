/* mpi.c — clrun under an MPI launcher (mpirun -np N clrun op canny|gemm ...), when libclrun_mpi is
 * built: MPI is started only when the launcher's environment says the process is one of its ranks,
 * so a plain `clrun` never touches MPI. */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CLRUN_HAVE_MPI
#include <clrun_mpi.h>

static int mpi_on, mpi_rank, mpi_size = 1;

void cli_mpi_init(void)
{
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) return;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return;
    mpi_on = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
}

void cli_mpi_finalize(void)
{
    if (mpi_on) MPI_Finalize();
    mpi_on = 0;
}

int cli_mpi_size(void) { return mpi_on ? mpi_size : 1; }
int cli_mpi_rank(void) { return mpi_on ? mpi_rank : 0; }

int cli_mpi_bcast_int(int v)
{
    if (mpi_on) MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

int cli_mpi_max(int v)
{
    int all = v;
    if (mpi_on) MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int cli_mpi_sum(int v)
{
    int all = v;
    if (mpi_on) MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* FNV-1a over the arguments, each with its terminating NUL, leaving out the device a rank picks
 * (-d X, -dX, --device X, --device=X): ranks may take different devices, never different work. */
static uint64_t command_hash(int argc, char **argv)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--device")) {
            i++;
            continue;
        }
        if (!strncmp(argv[i], "--device=", 9) || (!strncmp(argv[i], "-d", 2) && argv[i][2])) continue;
        for (const char *p = argv[i];; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
            if (!*p) break;
        }
    }
    return h;
}

int cli_mpi_agree(int argc, char **argv)
{
    if (!mpi_on || mpi_size < 2) return 0;
    const uint64_t mine = command_hash(argc, argv);
    uint64_t lo = mine, hi = mine;
    MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (lo == hi) return 0;
    char cmd[1024] = "";
    size_t at = 0;
    for (int i = 1; i < argc && i < 8 && at < sizeof cmd; i++)
        at += (size_t)snprintf(cmd + at, sizeof cmd - at, "%s%s", i > 1 ? " " : "", argv[i]);
    /* one write, so the ranks' lines do not interleave */
    fprintf(stderr,
            "clrun: rank %d of %d was started with a command that differs from another rank's (%s%s); every rank of mpirun runs one "
            "command on one list of files (only -d may differ)\n",
            mpi_rank, mpi_size, cmd, argc > 8 ? " ..." : "");
    return EXIT_USAGE;
}

#else

void cli_mpi_init(void) {}
void cli_mpi_finalize(void) {}
int cli_mpi_size(void) { return 1; }
int cli_mpi_rank(void) { return 0; }
int cli_mpi_bcast_int(int v) { return v; }
int cli_mpi_max(int v) { return v; }
int cli_mpi_sum(int v) { return v; }
int cli_mpi_agree(int argc, char **argv) { return (void)argc, (void)argv, 0; }

#endif
