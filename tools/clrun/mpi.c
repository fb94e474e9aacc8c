/* mpi.c — clrun under an MPI launcher (mpirun -np N clrun op canny|gemm ...), when libclrun_mpi is
 * built: MPI is started only when the launcher's environment says the process is one of its ranks,
 * so a plain `clrun` never touches MPI. */
#include "cli.h"

#include <stdlib.h>

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

#else

void cli_mpi_init(void) {}
void cli_mpi_finalize(void) {}
int cli_mpi_size(void) { return 1; }
int cli_mpi_rank(void) { return 0; }
int cli_mpi_bcast_int(int v) { return v; }
int cli_mpi_max(int v) { return v; }
int cli_mpi_sum(int v) { return v; }

#endif
