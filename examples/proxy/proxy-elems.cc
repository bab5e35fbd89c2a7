// SPDX-License-Identifier: MIT
// proxy: the element half of the step. Kinematics (new volume, its rate,
// characteristic length), a monotonic-style artificial viscosity per
// region, the EOS (proxy-eos.cc), the volume update, and the Courant and
// hydro time constraints per region. As in proxy-nodal.cc, accessors are
// read before any branch, so call counts do not depend on the data.
#include "proxy.h"

#include <cmath>

namespace
{

// Positions moved back by dt/2: the gradient is taken at the half step.
void HalfStepPositions(Real_t xl[8], Real_t yl[8], Real_t zl[8], const Real_t xdl[8],
		       const Real_t ydl[8], const Real_t zdl[8], Real_t dt2)
{
	for (int n = 0; n < 8; ++n) {
		xl[n] -= dt2 * xdl[n];
		yl[n] -= dt2 * ydl[n];
		zl[n] -= dt2 * zdl[n];
	}
}

void CalcKinematicsForElems(Domain &d, Real_t dt, Index_t numElem)
{
	for (Index_t k = 0; k < numElem; ++k) {
		const Index_t *elemToNode = d.nodelist(k);
		Real_t xl[8], yl[8], zl[8], xdl[8], ydl[8], zdl[8], gx[8], gy[8], gz[8], D[3];
		CollectDomainNodesToElemNodes(d, elemToNode, xl, yl, zl);
		const Real_t volume = CalcElemVolume(xl, yl, zl);
		const Real_t relativeVolume = volume / d.volo(k);
		d.vnew(k) = relativeVolume;
		d.delv(k) = relativeVolume - d.v(k);
		d.arealg(k) = CalcElemCharacteristicLength(xl, yl, zl, volume);
		CollectDomainVelocitiesToElemNodes(d, elemToNode, xdl, ydl, zdl);
		HalfStepPositions(xl, yl, zl, xdl, ydl, zdl, Real_t(0.5) * dt);
		CalcElemVolumeGradient(xl, yl, zl, gx, gy, gz);
		CalcElemVelocityGradient(xdl, ydl, zdl, gx, gy, gz, CalcElemVolume(xl, yl, zl), D);
		d.dxx(k) = D[0];
		d.dyy(k) = D[1];
		d.dzz(k) = D[2];
	}
}

void CalcLagrangeElements(Domain &d)
{
	const Index_t numElem = d.numElem();
	CalcKinematicsForElems(d, d.deltatime(), numElem);
	for (Index_t k = 0; k < numElem; ++k) {
		const Real_t vdov = d.dxx(k) + d.dyy(k) + d.dzz(k);
		const Real_t vdovthird = vdov / Real_t(3);
		d.vdov(k) = vdov;
		d.dxx(k) -= vdovthird;
		d.dyy(k) -= vdovthird;
		d.dzz(k) -= vdovthird;
		if (d.vnew(k) <= 0)
			ProxyAbort(d, "negative relative volume");
	}
}

// Central differences of the volume rate between the neighbours.
void CalcMonotonicQGradientsForElems(Domain &d, Index_t numElem)
{
	for (Index_t k = 0; k < numElem; ++k) {
		const Index_t xm = d.lxim(k), xp = d.lxip(k), em = d.letam(k), ep = d.letap(k);
		const Index_t zm = d.lzetam(k), zp = d.lzetap(k);
		d.delv_xi(k) = Real_t(0.5) * (d.vdov(xp) - d.vdov(xm));
		d.delv_eta(k) = Real_t(0.5) * (d.vdov(ep) - d.vdov(em));
		d.delv_zeta(k) = Real_t(0.5) * (d.vdov(zp) - d.vdov(zm));
	}
}

// 1 where the volume rate is smooth, 0 at strong gradients.
Real_t MonotonicLimiter(Real_t dxi, Real_t deta, Real_t dzeta, Real_t vdov)
{
	const Real_t norm = Abs(vdov) + Real_t(1.0e-36);
	const Real_t grad = Abs(dxi) + Abs(deta) + Abs(dzeta);
	return Clamp(Real_t(1) - grad / (Real_t(3) * norm), Real_t(0), Real_t(1));
}

void CalcMonotonicQRegionForElems(Domain &d, Index_t regSize, const Index_t *regList)
{
	const Real_t qlc = d.qlc_monoq(), qqc = d.qqc_monoq();
	for (Index_t n = 0; n < regSize; ++n) {
		const Index_t i = regList[n];
		const Real_t vdov = d.vdov(i);
		const Real_t phi =
		    MonotonicLimiter(d.delv_xi(i), d.delv_eta(i), d.delv_zeta(i), vdov);
		const Real_t rho = d.elemMass(i) / (d.volo(i) * d.vnew(i));
		const Real_t dl = d.arealg(i) * vdov;
		const Real_t compress = vdov < 0 ? Real_t(1) : Real_t(0);
		d.ql(i) = compress * qlc * rho * d.ss(i) * Abs(dl) * (Real_t(1) - phi);
		d.qq(i) = compress * qqc * rho * Sq(dl) * (Real_t(1) - phi * phi);
	}
}

void CalcQForElems(Domain &d)
{
	const Index_t numElem = d.numElem();
	CalcMonotonicQGradientsForElems(d, numElem);
	for (Int_t r = 0; r < PROXY_NREG; ++r)
		CalcMonotonicQRegionForElems(d, d.regElemSize(r), d.regElemlist(r));
}

void UpdateVolumesForElems(Domain &d, Real_t v_cut, Index_t numElem)
{
	for (Index_t i = 0; i < numElem; ++i) {
		const Real_t vnew = d.vnew(i);
		d.v(i) = Abs(vnew - Real_t(1)) < v_cut ? Real_t(1) : vnew;
	}
}

void CalcCourantConstraintForElems(Domain &d, Index_t regSize, const Index_t *regList, Real_t qqc,
				   Real_t &dtcourant)
{
	const Real_t qqc2 = Real_t(64) * qqc * qqc;
	for (Index_t n = 0; n < regSize; ++n) {
		const Index_t i = regList[n];
		const Real_t ss = d.ss(i), vdov = d.vdov(i), arealg = d.arealg(i);
		const Real_t compress = vdov < 0 ? Real_t(1) : Real_t(0);
		Real_t dtf = Sq(ss) + compress * qqc2 * Sq(arealg * vdov);
		if (vdov != 0) {
			dtf = arealg / std::sqrt(dtf);
			dtcourant = dtf < dtcourant ? dtf : dtcourant;
		}
	}
}

void CalcHydroConstraintForElems(Domain &d, Index_t regSize, const Index_t *regList, Real_t dvovmax,
				 Real_t &dthydro)
{
	for (Index_t n = 0; n < regSize; ++n) {
		const Real_t vdov = d.vdov(regList[n]);
		if (vdov != 0) {
			const Real_t dtdvov =
			    dvovmax / ((vdov < 0 ? -vdov : vdov) + Real_t(1.0e-20));
			dthydro = dtdvov < dthydro ? dtdvov : dthydro;
		}
	}
}

} // namespace

void LagrangeElements(Domain &d)
{
	const Index_t numElem = d.numElem();
	CalcLagrangeElements(d);
	CalcQForElems(d);
	ApplyMaterialPropertiesForElems(d);
	UpdateVolumesForElems(d, d.v_cut(), numElem);
}

void CalcTimeConstraintsForElems(Domain &d)
{
	Real_t dtcourant = 1.0e+20, dthydro = 1.0e+20;
	const Real_t qqc = d.qqc(), dvovmax = d.dvovmax();
	for (Int_t r = 0; r < PROXY_NREG; ++r) {
		const Index_t size = d.regElemSize(r);
		const Index_t *list = d.regElemlist(r);
		CalcCourantConstraintForElems(d, size, list, qqc, dtcourant);
		CalcHydroConstraintForElems(d, size, list, dvovmax, dthydro);
	}
	d.dtcourant() = dtcourant;
	d.dthydro() = dthydro;
}
