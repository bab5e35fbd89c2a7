// SPDX-License-Identifier: MIT
// proxy: an accessor-heavy C++ MPI proxy app with the structure of LULESH
// 2.0 (our own code, not LULESH's): a 3-D hexahedral mesh per rank whose
// fields are std::vector<double> members of a Domain class behind one-line
// inline accessors, element loops calling many small helpers, per-region
// EOS templates, one halo exchange and one MPI_Allreduce per step.
// This header: types, the field lists, Domain, small math helpers, field
// tags and the kernels' declarations. Call counts: README.md.
#ifndef PROXY_H
#define PROXY_H

#include <mpi.h>

#include <vector>

typedef int Index_t;
typedef int Int_t;
typedef double Real_t;

// The field lists and the accessors keep the LULESH layout: one line each.
// clang-format off
// Number of material regions (element i is in region i % PROXY_NREG) and
// the list of region numbers the per-region templates are instantiated for.
enum { PROXY_NREG = 16 };
#define PROXY_REGIONS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

// Nodal fields: positions, velocities, accelerations, forces, mass.
#define PROXY_NODE_FIELDS(X) \
  X(x) X(y) X(z) X(xd) X(yd) X(zd) X(xdd) X(ydd) X(zdd) X(fx) X(fy) X(fz) X(nodalMass)
// Element fields: energy, pressure, viscosity terms, volumes, rates, ...
#define PROXY_ELEM_FIELDS(X)                                                          \
  X(e) X(p) X(q) X(ql) X(qq) X(v) X(volo) X(vnew) X(delv) X(vdov) X(arealg) X(ss) \
  X(elemMass) X(dxx) X(dyy) X(dzz) X(delv_xi) X(delv_eta) X(delv_zeta)
// Element index fields: neighbours in xi, eta and zeta (the element itself
// on the sub-domain's boundary).
#define PROXY_ELEM_INDEX_FIELDS(X) X(lxim) X(lxip) X(letam) X(letap) X(lzetam) X(lzetap)
// Parameters: name and value.
#define PROXY_PARAMS(X)                                                            \
  X(u_cut, 1.0e-7) X(v_cut, 1.0e-10) X(e_cut, 1.0e-7) X(p_cut, 1.0e-7)             \
  X(q_cut, 1.0e-7) X(hgcoef, 3.0) X(qstop, 1.0e+12) X(qlc_monoq, 0.5)              \
  X(qqc_monoq, 2.0 / 3.0) X(qqc, 2.0) X(eosvmin, 1.0e-9) X(eosvmax, 1.0e+9)        \
  X(pmin, 0.0) X(emin, -1.0e+15) X(dvovmax, 0.1) X(dtmax, 1.0e-2) X(deltatimemultub, 1.2)

class Domain {
 public:
  Domain(Int_t rank, Int_t numRanks, Index_t edgeElems);

  // One-line accessors, one per field (LULESH style).
#define PROXY_ACCESSOR(name) \
  Real_t& name(Index_t i) { return m_##name[i]; }
  PROXY_NODE_FIELDS(PROXY_ACCESSOR)
  PROXY_ELEM_FIELDS(PROXY_ACCESSOR)
#undef PROXY_ACCESSOR
#define PROXY_INDEX_ACCESSOR(name) \
  Index_t& name(Index_t i) { return m_##name[i]; }
  PROXY_ELEM_INDEX_FIELDS(PROXY_INDEX_ACCESSOR)
  Index_t& symmX(Index_t i) { return m_symmX[i]; }
  Index_t& symmY(Index_t i) { return m_symmY[i]; }
  Index_t& symmZ(Index_t i) { return m_symmZ[i]; }
#undef PROXY_INDEX_ACCESSOR
#define PROXY_PARAM_ACCESSOR(name, value) \
  Real_t name() const { return m_##name; }
  PROXY_PARAMS(PROXY_PARAM_ACCESSOR)
#undef PROXY_PARAM_ACCESSOR

  Index_t* nodelist(Index_t i) { return &m_nodelist[Index_t(8) * i]; }
  Index_t regElemSize(Int_t r) const { return m_regElemSize[r]; }
  Index_t* regElemlist(Int_t r) { return m_regElemlist[r].data(); }
  Int_t regRep(Int_t r) const { return 1 + (r % 4 == 3); }

  Real_t& time() { return m_time; }
  Real_t& deltatime() { return m_deltatime; }
  Real_t& dtcourant() { return m_dtcourant; }
  Real_t& dthydro() { return m_dthydro; }
  Int_t& cycle() { return m_cycle; }

  Index_t sizeX() const { return m_sizeX; }
  Index_t numElem() const { return m_numElem; }
  Index_t numNode() const { return m_numNode; }
  Index_t planeNodes() const { return m_planeNodes; }
  Index_t numSymmX() const { return Index_t(m_symmX.size()); }
  Index_t numSymmY() const { return Index_t(m_symmY.size()); }
  Index_t numSymmZ() const { return Index_t(m_symmZ.size()); }
  Int_t rank() const { return m_rank; }
  Int_t numRanks() const { return m_numRanks; }
  // Neighbour rank below / above in the 1-D (z) decomposition, or -1.
  Int_t nbrLo() const { return m_rank > 0 ? m_rank - 1 : -1; }
  Int_t nbrHi() const { return m_rank < m_numRanks - 1 ? m_rank + 1 : -1; }

  Real_t* commBufSend() { return m_commBufSend.data(); }
  Real_t* commBufRecv() { return m_commBufRecv.data(); }
  MPI_Request* commReq() { return m_commReq; }
  Int_t& commNumReq() { return m_commNumReq; }

  void addToRegion(Int_t r, Index_t elem);

 private:
#define PROXY_MEMBER(name) std::vector<Real_t> m_##name;
  PROXY_NODE_FIELDS(PROXY_MEMBER)
  PROXY_ELEM_FIELDS(PROXY_MEMBER)
#undef PROXY_MEMBER
#define PROXY_INDEX_MEMBER(name) std::vector<Index_t> m_##name;
  PROXY_ELEM_INDEX_FIELDS(PROXY_INDEX_MEMBER)
#undef PROXY_INDEX_MEMBER
#define PROXY_PARAM_MEMBER(name, value) Real_t m_##name;
  PROXY_PARAMS(PROXY_PARAM_MEMBER)
#undef PROXY_PARAM_MEMBER
  std::vector<Index_t> m_nodelist, m_symmX, m_symmY, m_symmZ;
  std::vector<Index_t> m_regElemlist[PROXY_NREG];
  Index_t m_regElemSize[PROXY_NREG];
  std::vector<Real_t> m_commBufSend, m_commBufRecv;
  MPI_Request m_commReq[4];
  Int_t m_commNumReq;
  Int_t m_rank, m_numRanks;
  Index_t m_sizeX, m_numElem, m_numNode, m_planeNodes;
  Real_t m_time, m_deltatime, m_dtcourant, m_dthydro;
  Int_t m_cycle;
};

// Field tags: one type per field, so that per-field kernels are templates
// (PackPlane<F_fx>, FieldChecksum<F_e>, ...).
#define PROXY_TAG(name)                                                      \
  struct F_##name {                                                          \
    static Real_t& get(Domain& d, Index_t i) { return d.name(i); }           \
  };
PROXY_NODE_FIELDS(PROXY_TAG)
PROXY_ELEM_FIELDS(PROXY_TAG)
#undef PROXY_TAG
// clang-format on

// Small math helpers (each call is one hook pair when instrumented).
template <typename T> inline T Sq(T a)
{
	return a * a;
}
template <typename T> inline T Abs(T a)
{
	return a < T(0) ? -a : a;
}
template <typename T> inline T Min(T a, T b)
{
	return b < a ? b : a;
}
template <typename T> inline T Max(T a, T b)
{
	return a < b ? b : a;
}
template <typename T> inline T Clamp(T a, T lo, T hi)
{
	return Max(lo, Min(a, hi));
}
// a, or 0 when |a| < cut.
inline Real_t CutSmall(Real_t a, Real_t cut)
{
	return Abs(a) < cut ? Real_t(0) : a;
}
inline Real_t Dot3(const Real_t a[3], const Real_t b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
inline void Cross3(const Real_t a[3], const Real_t b[3], Real_t c[3])
{
	c[0] = a[1] * b[2] - a[2] * b[1];
	c[1] = a[2] * b[0] - a[0] * b[2];
	c[2] = a[0] * b[1] - a[1] * b[0];
}
inline Real_t TripleProduct(const Real_t a[3], const Real_t b[3], const Real_t c[3])
{
	Real_t t[3];
	Cross3(b, c, t);
	return Dot3(a, t);
}

// proxy-geom.cc: element geometry on 8 gathered nodes.
void CollectDomainNodesToElemNodes(Domain &d, const Index_t *elemToNode, Real_t xl[8], Real_t yl[8],
				   Real_t zl[8]);
void CollectDomainVelocitiesToElemNodes(Domain &d, const Index_t *elemToNode, Real_t xdl[8],
					Real_t ydl[8], Real_t zdl[8]);
void ScatterElemForcesToNodes(Domain &d, const Index_t *elemToNode, const Real_t fxl[8],
			      const Real_t fyl[8], const Real_t fzl[8]);
Real_t CalcElemVolume(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8]);
void CalcElemVolumeGradient(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8],
			    Real_t gx[8], Real_t gy[8], Real_t gz[8]);
Real_t CalcElemCharacteristicLength(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8],
				    Real_t volume);
void CalcElemVelocityGradient(const Real_t xdl[8], const Real_t ydl[8], const Real_t zdl[8],
			      const Real_t gx[8], const Real_t gy[8], const Real_t gz[8],
			      Real_t volume, Real_t D[3]);
void CalcElemFBHourglassForce(const Real_t xdl[8], const Real_t ydl[8], const Real_t zdl[8],
			      Real_t coefficient, Real_t hgfx[8], Real_t hgfy[8], Real_t hgfz[8]);

// proxy-mesh.cc: set-up.
void BuildMesh(Domain &d);
void SetupInitialConditions(Domain &d, Real_t e0);

// proxy-comm.cc: halo exchange of shared node planes, dt reduction.
void CommExchangeNodalMass(Domain &d);
void CommRecvForces(Domain &d);
void CommSendForces(Domain &d);
void CommSBNForces(Domain &d);
void TimeIncrement(Domain &d);

// proxy-nodal.cc / proxy-elems.cc / proxy-eos.cc: the step.
void LagrangeNodal(Domain &d);
void LagrangeElements(Domain &d);
void CalcTimeConstraintsForElems(Domain &d);
void ApplyMaterialPropertiesForElems(Domain &d);
void ProxyAbort(Domain &d, const char *what);

#endif
