// SPDX-License-Identifier: MIT
// proxy: the equation of state, one set of templates per material region
// (EvalEOSForRegion<R> and the kernels it calls), as LULESH evaluates its
// regions separately. A gamma-law gas (gamma = 5/3, reference density 1),
// energy by a predictor-corrector of de = -(p + q) dv. Regions with
// R % 4 == 3 cost twice as much: their gather + energy pass runs twice
// (Domain::regRep), so the counts differ per region.
#include "proxy.h"

#include <cmath>

namespace
{

// One region's work arrays, 12 of its size, carved out of one buffer.
struct EosWork {
	Real_t *e_old, *delvc, *p_old, *q_old, *ql_old, *qq_old;
	Real_t *compression, *vnewc, *p_half, *p_new, *e_new, *q_new;
};

struct EosParams {
	Real_t emin, pmin, p_cut, e_cut, eosvmax;
};

EosWork MakeEosWork(Real_t *buf, Index_t n)
{
	EosWork w;
	Real_t **cols[12] = {&w.e_old,	     &w.delvc, &w.p_old,  &w.q_old, &w.ql_old, &w.qq_old,
			     &w.compression, &w.vnewc, &w.p_half, &w.p_new, &w.e_new,  &w.q_new};
	for (int k = 0; k < 12; ++k)
		*cols[k] = buf + k * n;
	return w;
}

// p = (gamma - 1) rho e with rho = 1 / v = compression + 1.
Real_t GammaLawPressure(Real_t e, Real_t compression)
{
	return Real_t(2.0 / 3.0) * (compression + Real_t(1)) * e;
}

// c^2 = gamma p / rho = gamma p v.
Real_t SoundSpeedSquared(Real_t p, Real_t vnewc)
{
	return Real_t(5.0 / 3.0) * p * vnewc;
}

template <int R>
void GatherEOSInputs(Domain &d, Index_t n, const Index_t *list, const Real_t *vnewc,
		     const EosWork &w)
{
	for (Index_t i = 0; i < n; ++i) {
		const Index_t idx = list[i];
		w.e_old[i] = d.e(idx);
		w.delvc[i] = d.delv(idx);
		w.p_old[i] = d.p(idx);
		w.q_old[i] = d.q(idx);
		w.ql_old[i] = d.ql(idx);
		w.qq_old[i] = d.qq(idx);
		w.vnewc[i] = vnewc[idx];
		w.compression[i] = Real_t(1) / vnewc[idx] - Real_t(1);
	}
}

template <int R>
void CalcPressureForElems(Real_t *p_new, const Real_t *e, const EosWork &w, Index_t n,
			  const EosParams &prm)
{
	for (Index_t i = 0; i < n; ++i) {
		Real_t p = CutSmall(GammaLawPressure(e[i], w.compression[i]), prm.p_cut);
		if (w.vnewc[i] >= prm.eosvmax)
			p = 0;
		p_new[i] = Max(p, prm.pmin);
	}
}

// Predictor (half-step energy and pressure), then the corrector with the
// new viscosity; the new pressure from the new energy.
template <int R> void CalcEnergyForElems(const EosWork &w, Index_t n, const EosParams &prm)
{
	for (Index_t i = 0; i < n; ++i)
		w.e_new[i] = Max(w.e_old[i] - Real_t(0.5) * w.delvc[i] * (w.p_old[i] + w.q_old[i]),
				 prm.emin);
	CalcPressureForElems<R>(w.p_half, w.e_new, w, n, prm);
	for (Index_t i = 0; i < n; ++i) {
		w.q_new[i] = w.delvc[i] > 0 ? Real_t(0) : w.ql_old[i] + w.qq_old[i];
		const Real_t e =
		    w.e_old[i] -
		    Real_t(0.5) * w.delvc[i] * (w.p_old[i] + w.q_old[i] + w.p_half[i] + w.q_new[i]);
		w.e_new[i] = CutSmall(Max(e, prm.emin), prm.e_cut);
	}
	CalcPressureForElems<R>(w.p_new, w.e_new, w, n, prm);
}

template <int R> void StoreEOSOutputs(Domain &d, const EosWork &w, Index_t n, const Index_t *list)
{
	for (Index_t i = 0; i < n; ++i) {
		const Index_t idx = list[i];
		d.p(idx) = w.p_new[i];
		d.e(idx) = w.e_new[i];
		d.q(idx) = w.q_new[i];
	}
}

template <int R>
void CalcSoundSpeedForElems(Domain &d, const EosWork &w, Index_t n, const Index_t *list)
{
	for (Index_t i = 0; i < n; ++i)
		d.ss(list[i]) =
		    std::sqrt(Max(SoundSpeedSquared(w.p_new[i], w.vnewc[i]), Real_t(1.0e-36)));
}

template <int R> void EvalEOSForRegion(Domain &d, const Real_t *vnewc)
{
	const Index_t n = d.regElemSize(R);
	const Index_t *list = d.regElemlist(R);
	const Int_t rep = d.regRep(R);
	const EosParams prm = {d.emin(), d.pmin(), d.p_cut(), d.e_cut(), d.eosvmax()};
	std::vector<Real_t> buf(12 * n);
	const EosWork w = MakeEosWork(buf.data(), n);
	for (Int_t j = 0; j < rep; ++j) {
		GatherEOSInputs<R>(d, n, list, vnewc, w);
		CalcEnergyForElems<R>(w, n, prm);
	}
	StoreEOSOutputs<R>(d, w, n, list);
	CalcSoundSpeedForElems<R>(d, w, n, list);
}

typedef void (*EosRegionFn)(Domain &, const Real_t *);
#define PROXY_EOS_ENTRY(r) &EvalEOSForRegion<r>,
const EosRegionFn kEosRegion[PROXY_NREG] = {PROXY_REGIONS(PROXY_EOS_ENTRY)};
#undef PROXY_EOS_ENTRY

} // namespace

void ApplyMaterialPropertiesForElems(Domain &d)
{
	const Index_t numElem = d.numElem();
	const Real_t eosvmin = d.eosvmin(), eosvmax = d.eosvmax();
	std::vector<Real_t> vnewc(numElem);
	Real_t *vc = vnewc.data();
	for (Index_t i = 0; i < numElem; ++i)
		vc[i] = Clamp(d.vnew(i), eosvmin, eosvmax);
	for (Index_t i = 0; i < numElem; ++i)
		if (Clamp(d.v(i), eosvmin, eosvmax) <= 0)
			ProxyAbort(d, "negative volume in the EOS");
	for (Int_t r = 0; r < PROXY_NREG; ++r)
		kEosRegion[r](d, vc);
}
