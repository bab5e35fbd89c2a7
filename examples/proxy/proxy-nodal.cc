// SPDX-License-Identifier: MIT
// proxy: the nodal half of the step. Forces from the element stresses
// (pressure + viscosity times the gradient of the element volume) and the
// hourglass damping, summed over the shared planes by the halo exchange,
// then accelerations, symmetry-plane conditions, velocities and positions.
// Accessors are read into locals before any branch, so that every call
// count depends on N, the step count and the rank layout only (README.md).
#include "proxy.h"

#include <cmath>

namespace
{

template <class F> void ZeroNodalField(Domain &d, Index_t numNode)
{
	for (Index_t i = 0; i < numNode; ++i)
		F::get(d, i) = 0;
}

// sig = -(p + q), the same in all three directions.
void InitStressTermsForElems(Domain &d, Real_t *sig, Index_t numElem)
{
	for (Index_t i = 0; i < numElem; ++i)
		sig[i] = -d.p(i) - d.q(i);
}

// f_n = -sig dV/dx_n: a positive pressure pushes the corners outwards.
void SumElemStressesToNodeForces(const Real_t gx[8], const Real_t gy[8], const Real_t gz[8],
				 Real_t sig, Real_t fxl[8], Real_t fyl[8], Real_t fzl[8])
{
	for (int n = 0; n < 8; ++n) {
		fxl[n] = -sig * gx[n];
		fyl[n] = -sig * gy[n];
		fzl[n] = -sig * gz[n];
	}
}

void IntegrateStressForElems(Domain &d, const Real_t *sig, Real_t *determ, Index_t numElem)
{
	for (Index_t k = 0; k < numElem; ++k) {
		const Index_t *elemToNode = d.nodelist(k);
		Real_t xl[8], yl[8], zl[8], gx[8], gy[8], gz[8], fxl[8], fyl[8], fzl[8];
		CollectDomainNodesToElemNodes(d, elemToNode, xl, yl, zl);
		CalcElemVolumeGradient(xl, yl, zl, gx, gy, gz);
		determ[k] = CalcElemVolume(xl, yl, zl);
		SumElemStressesToNodeForces(gx, gy, gz, sig[k], fxl, fyl, fzl);
		ScatterElemForcesToNodes(d, elemToNode, fxl, fyl, fzl);
	}
}

void CheckElemVolumes(Domain &d, const Real_t *determ, Index_t numElem)
{
	for (Index_t k = 0; k < numElem; ++k)
		if (determ[k] <= 0)
			ProxyAbort(d, "negative element volume");
}

Real_t CubeRoot(Real_t a)
{
	return std::cbrt(a);
}

void CalcHourglassControlForElems(Domain &d, const Real_t *determ, Index_t numElem)
{
	const Real_t hgcoef = d.hgcoef();
	for (Index_t k = 0; k < numElem; ++k) {
		const Index_t *elemToNode = d.nodelist(k);
		Real_t xdl[8], ydl[8], zdl[8], hgfx[8], hgfy[8], hgfz[8];
		CollectDomainVelocitiesToElemNodes(d, elemToNode, xdl, ydl, zdl);
		const Real_t ss1 = d.ss(k), mass1 = d.elemMass(k);
		const Real_t coefficient =
		    -hgcoef * Real_t(0.01) * ss1 * mass1 / CubeRoot(determ[k]);
		CalcElemFBHourglassForce(xdl, ydl, zdl, coefficient, hgfx, hgfy, hgfz);
		ScatterElemForcesToNodes(d, elemToNode, hgfx, hgfy, hgfz);
	}
}

void CalcVolumeForceForElems(Domain &d)
{
	const Index_t numElem = d.numElem();
	std::vector<Real_t> sig(numElem), determ(numElem);
	Real_t *sigp = sig.data();
	Real_t *determp = determ.data();
	InitStressTermsForElems(d, sigp, numElem);
	IntegrateStressForElems(d, sigp, determp, numElem);
	CheckElemVolumes(d, determp, numElem);
	CalcHourglassControlForElems(d, determp, numElem);
}

void CalcForceForNodes(Domain &d)
{
	const Index_t numNode = d.numNode();
	CommRecvForces(d);
	ZeroNodalField<F_fx>(d, numNode);
	ZeroNodalField<F_fy>(d, numNode);
	ZeroNodalField<F_fz>(d, numNode);
	CalcVolumeForceForElems(d);
	CommSendForces(d);
	CommSBNForces(d);
}

void CalcAccelerationForNodes(Domain &d, Index_t numNode)
{
	for (Index_t i = 0; i < numNode; ++i) {
		d.xdd(i) = d.fx(i) / d.nodalMass(i);
		d.ydd(i) = d.fy(i) / d.nodalMass(i);
		d.zdd(i) = d.fz(i) / d.nodalMass(i);
	}
}

// Symmetry planes x = 0 and y = 0 on every rank, z = 0 on rank 0 only.
void ApplyAccelerationBoundaryConditionsForNodes(Domain &d)
{
	const Index_t nx = d.numSymmX(), ny = d.numSymmY(), nz = d.numSymmZ();
	for (Index_t i = 0; i < nx; ++i)
		d.xdd(d.symmX(i)) = 0;
	for (Index_t i = 0; i < ny; ++i)
		d.ydd(d.symmY(i)) = 0;
	for (Index_t i = 0; i < nz; ++i)
		d.zdd(d.symmZ(i)) = 0;
}

void CalcVelocityForNodes(Domain &d, Real_t dt, Real_t u_cut, Index_t numNode)
{
	for (Index_t i = 0; i < numNode; ++i) {
		d.xd(i) = CutSmall(d.xd(i) + d.xdd(i) * dt, u_cut);
		d.yd(i) = CutSmall(d.yd(i) + d.ydd(i) * dt, u_cut);
		d.zd(i) = CutSmall(d.zd(i) + d.zdd(i) * dt, u_cut);
	}
}

void CalcPositionForNodes(Domain &d, Real_t dt, Index_t numNode)
{
	for (Index_t i = 0; i < numNode; ++i) {
		d.x(i) += d.xd(i) * dt;
		d.y(i) += d.yd(i) * dt;
		d.z(i) += d.zd(i) * dt;
	}
}

} // namespace

void LagrangeNodal(Domain &d)
{
	const Index_t numNode = d.numNode();
	CalcForceForNodes(d);
	const Real_t delt = d.deltatime(), u_cut = d.u_cut();
	CalcAccelerationForNodes(d, numNode);
	ApplyAccelerationBoundaryConditionsForNodes(d);
	CalcVelocityForNodes(d, delt, u_cut, numNode);
	CalcPositionForNodes(d, delt, numNode);
}
