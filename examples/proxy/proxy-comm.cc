// SPDX-License-Identifier: MIT
// proxy: MPI. Neighbouring ranks share a node plane (z); each adds the
// other's partial sums of nodal mass (once) and nodal forces (every step):
// MPI_Irecv and MPI_Isend per neighbour, one MPI_Waitall, then unpack-add.
// Both sides add the same two numbers, so the shared nodes stay identical.
// TimeIncrement: one MPI_Allreduce (MPI_MIN) of the dt constraint per step.
#include "proxy.h"

namespace
{

enum { TAG_MASS = 1, TAG_FORCE = 2 };

Int_t SideRank(Domain &d, int side)
{
	return side == 0 ? d.nbrLo() : d.nbrHi();
}

template <class F> void PackPlane(Domain &d, Index_t base, Index_t count, Real_t *buf)
{
	for (Index_t n = 0; n < count; ++n)
		buf[n] = F::get(d, base + n);
}

template <class F> void UnpackAddPlane(Domain &d, Index_t base, Index_t count, const Real_t *buf)
{
	for (Index_t n = 0; n < count; ++n)
		F::get(d, base + n) += buf[n];
}

// The fields exchanged by one message: how many per node, how to pack and
// add them.
struct MassFields {
	enum { count = 1 };
	static void pack(Domain &d, Index_t base, Index_t np, Real_t *b)
	{
		PackPlane<F_nodalMass>(d, base, np, b);
	}
	static void unpack(Domain &d, Index_t base, Index_t np, const Real_t *b)
	{
		UnpackAddPlane<F_nodalMass>(d, base, np, b);
	}
};

struct ForceFields {
	enum { count = 3 };
	static void pack(Domain &d, Index_t base, Index_t np, Real_t *b)
	{
		PackPlane<F_fx>(d, base, np, b);
		PackPlane<F_fy>(d, base, np, b + np);
		PackPlane<F_fz>(d, base, np, b + 2 * np);
	}
	static void unpack(Domain &d, Index_t base, Index_t np, const Real_t *b)
	{
		UnpackAddPlane<F_fx>(d, base, np, b);
		UnpackAddPlane<F_fy>(d, base, np, b + np);
		UnpackAddPlane<F_fz>(d, base, np, b + 2 * np);
	}
};

// Posts one MPI_Irecv per neighbour (side 0 below, side 1 above).
template <class Set> void CommRecv(Domain &d, Int_t tag)
{
	const Index_t np = d.planeNodes();
	Real_t *buf = d.commBufRecv();
	MPI_Request *req = d.commReq();
	Int_t &nreq = d.commNumReq();
	nreq = 0;
	for (int side = 0; side < 2; ++side) {
		const Int_t nbr = SideRank(d, side);
		if (nbr < 0)
			continue;
		MPI_Irecv(buf + side * 3 * np, Set::count * np, MPI_DOUBLE, nbr, tag,
			  MPI_COMM_WORLD, &req[nreq++]);
	}
}

// Packs the shared plane (local plane 0 below, plane N above) and posts
// one MPI_Isend per neighbour.
template <class Set> void CommSend(Domain &d, Int_t tag)
{
	const Index_t np = d.planeNodes(), top = d.sizeX() * np;
	Real_t *buf = d.commBufSend();
	MPI_Request *req = d.commReq();
	Int_t &nreq = d.commNumReq();
	for (int side = 0; side < 2; ++side) {
		const Int_t nbr = SideRank(d, side);
		if (nbr < 0)
			continue;
		Real_t *b = buf + side * 3 * np;
		Set::pack(d, side == 0 ? 0 : top, np, b);
		MPI_Isend(b, Set::count * np, MPI_DOUBLE, nbr, tag, MPI_COMM_WORLD, &req[nreq++]);
	}
}

// Waits for every request of the exchange (one MPI_Waitall, also with no
// neighbour) and adds the neighbours' partial sums.
template <class Set> void CommSBN(Domain &d)
{
	const Index_t np = d.planeNodes(), top = d.sizeX() * np;
	Real_t *buf = d.commBufRecv();
	Int_t &nreq = d.commNumReq();
	MPI_Waitall(nreq, d.commReq(), MPI_STATUSES_IGNORE);
	for (int side = 0; side < 2; ++side) {
		const Int_t nbr = SideRank(d, side);
		if (nbr < 0)
			continue;
		Set::unpack(d, side == 0 ? 0 : top, np, buf + side * 3 * np);
	}
	nreq = 0;
}

} // namespace

void CommExchangeNodalMass(Domain &d)
{
	CommRecv<MassFields>(d, TAG_MASS);
	CommSend<MassFields>(d, TAG_MASS);
	CommSBN<MassFields>(d);
}

void CommRecvForces(Domain &d)
{
	CommRecv<ForceFields>(d, TAG_FORCE);
}
void CommSendForces(Domain &d)
{
	CommSend<ForceFields>(d, TAG_FORCE);
}
void CommSBNForces(Domain &d)
{
	CommSBN<ForceFields>(d);
}

// The new dt: the smallest constraint over all ranks, at most 1.2x the last
// dt and at most dtmax.
void TimeIncrement(Domain &d)
{
	const Real_t olddt = d.deltatime();
	const Real_t local = Min(Real_t(0.5) * d.dtcourant(), Real_t(2.0 / 3.0) * d.dthydro());
	Real_t global = 0;
	MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	const Real_t newdt = Min(Min(global, olddt * d.deltatimemultub()), d.dtmax());
	d.deltatime() = newdt;
	d.time() += newdt;
}
