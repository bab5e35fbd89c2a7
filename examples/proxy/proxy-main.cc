// SPDX-License-Identifier: MIT
// proxy: command line, the time-step loop and the checksum.
//   mpirun -n P proxy [-s N] [-i ITER] [-q] [-p]
// -s edge of each rank's sub-domain in elements (default 10), -i number of
// steps (default 10), -q print only the checksum line, -p one line per step.
// The checksum is reduced over the ranks; it depends on N, ITER and P only,
// so a profiled run must print the same one. Elapsed time goes to stderr.
#include "proxy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace
{

struct ProxyOptions {
	Index_t size;
	Int_t iterations;
	bool quiet, progress;
};

const Real_t kInitialEnergy = 1.0;

bool ParseInt(const char *s, long lo, long hi, long *out)
{
	char *end = NULL;
	const long v = s ? std::strtol(s, &end, 10) : 0;
	if (!s || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

// 0 on success, 1 on a usage error (message on rank 0), -1 for -h.
int ParseCommandLine(int argc, char **argv, Int_t rank, ProxyOptions &opts)
{
	opts.size = 10;
	opts.iterations = 10;
	opts.quiet = opts.progress = false;
	for (int i = 1; i < argc; ++i) {
		long v = 0;
		if (!std::strcmp(argv[i], "-s") &&
		    ParseInt(i + 1 < argc ? argv[i + 1] : NULL, 1, 1000, &v)) {
			opts.size = Index_t(v);
			++i;
		} else if (!std::strcmp(argv[i], "-i") &&
			   ParseInt(i + 1 < argc ? argv[i + 1] : NULL, 0, 1000000, &v)) {
			opts.iterations = Int_t(v);
			++i;
		} else if (!std::strcmp(argv[i], "-q")) {
			opts.quiet = true;
		} else if (!std::strcmp(argv[i], "-p")) {
			opts.progress = true;
		} else {
			const bool help = !std::strcmp(argv[i], "-h");
			if (rank == 0) {
				if (!help)
					std::fprintf(stderr,
						     "proxy: bad or incomplete argument '%s'\n",
						     argv[i]);
				std::fprintf(help ? stdout : stderr,
					     "usage: proxy [-s N] [-i ITER] [-q] [-p]\n"
					     "  -s N     edge of each rank's sub-domain in "
					     "elements (default 10)\n"
					     "  -i ITER  number of time steps (default 10)\n"
					     "  -q       print only the checksum\n"
					     "  -p       print one line per step\n");
			}
			return help ? -1 : 1;
		}
	}
	return 0;
}

void LagrangeLeapFrog(Domain &d)
{
	LagrangeNodal(d);
	LagrangeElements(d);
	CalcTimeConstraintsForElems(d);
}

// Position-weighted sum of one field over this rank's nodes or elements.
template <class F> Real_t FieldChecksum(Domain &d, Index_t count)
{
	Real_t s = 0;
	for (Index_t i = 0; i < count; ++i)
		s += F::get(d, i) * Real_t(1 + i % 7);
	return s;
}

// The fields' checksums summed over the ranks; rank 0 prints the report.
void ReportChecksum(Domain &d, const ProxyOptions &opts, double elapsed)
{
	const Index_t numNode = d.numNode(), numElem = d.numElem();
	Real_t local[64], global[64];
	int n = 0;
#define PROXY_SUM_NODE(name) local[n++] = FieldChecksum<F_##name>(d, numNode);
#define PROXY_SUM_ELEM(name) local[n++] = FieldChecksum<F_##name>(d, numElem);
	PROXY_NODE_FIELDS(PROXY_SUM_NODE)
	PROXY_ELEM_FIELDS(PROXY_SUM_ELEM)
#undef PROXY_SUM_NODE
#undef PROXY_SUM_ELEM
	const Real_t eOrigin = d.e(0);
	MPI_Reduce(local, global, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (d.rank() != 0)
		return;
	Real_t checksum = 0;
	for (int k = 0; k < n; ++k)
		checksum += global[k];
	if (!opts.quiet) {
		std::printf("proxy: s=%d iterations=%d ranks=%d elements=%ld regions=%d\n",
			    int(opts.size), int(opts.iterations), int(d.numRanks()),
			    long(numElem) * d.numRanks(), int(PROXY_NREG));
		std::printf("proxy: cycles=%d time=%.9e dt=%.9e origin energy=%.12e\n",
			    int(d.cycle()), d.time(), d.deltatime(), eOrigin);
	}
	std::printf("proxy: checksum=%.15e\n", checksum);
	std::fflush(stdout);
	std::fprintf(stderr, "proxy: elapsed %.6f s (rank 0)\n", elapsed);
}

} // namespace

void ProxyAbort(Domain &d, const char *what)
{
	std::fprintf(stderr, "proxy: rank %d, cycle %d: %s\n", int(d.rank()), int(d.cycle()), what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank = 0, size = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	ProxyOptions opts;
	const int rc = ParseCommandLine(argc, argv, rank, opts);
	if (rc != 0) {
		MPI_Finalize();
		return rc < 0 ? 0 : 1;
	}
	Domain d(rank, size, opts.size);
	BuildMesh(d);
	SetupInitialConditions(d, kInitialEnergy);
	const double t0 = MPI_Wtime();
	while (d.cycle() < opts.iterations) {
		TimeIncrement(d);
		LagrangeLeapFrog(d);
		++d.cycle();
		if (opts.progress && rank == 0)
			std::printf("cycle = %d, time = %.6e, dt = %.6e\n", int(d.cycle()),
				    d.time(), d.deltatime());
	}
	ReportChecksum(d, opts, MPI_Wtime() - t0);
	MPI_Finalize();
	return 0;
}
