# The MPI family of a shell test (source it; SP_MPI_FAMILY=openmpi|mpich,
# default openmpi, set by meson per family: mpi_families). It puts a
# `mpirun` first in PATH that runs the family's own launcher, so the tests
# say `mpirun --oversubscribe -n N -x VAR ... PROGRAM` for both:
#   openmpi  mpirun.openmpi, options as given
#   mpich    mpiexec.mpich (Hydra): -x VAR[=V] -> -genv VAR V;
#            --bind-to X -> -bind-to X; --oversubscribe, --mca K V
#            dropped (Hydra oversubscribes)
# and sets sp_mpi_lib (the family's preload library) and sp_sfx (the
# suffix of the test programs built for the family: '' or '-mpich').
# A missing launcher is a FAIL. Root runs: Open MPI needs its two flags,
# Hydra none. No network provider setting is needed on one host (MPICH
# 4.0 from Debian: ch4 over UCX shared memory).
sp_mpi_family=${SP_MPI_FAMILY:-openmpi}
sp_sfx=${SP_MPI_SUFFIX:-}
case $sp_mpi_family in
  openmpi) sp_mpiexec=mpirun.openmpi ;;
  mpich) sp_mpiexec=mpiexec.mpich ;;
  *) echo "FAIL: unknown SP_MPI_FAMILY '$sp_mpi_family'"; exit 1 ;;
esac
command -v "$sp_mpiexec" > /dev/null ||
  { echo "FAIL: $sp_mpiexec not found ($sp_mpi_family launcher)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mpi-bin/$sp_mpi_family:$PATH"
sp_mpi_lib="${SP_BUILD_DIR:?}/preload/libscope-profiler-$sp_mpi_family.so"
[ -e "$sp_mpi_lib" ] || { echo "FAIL: $sp_mpi_lib not built"; exit 1; }
