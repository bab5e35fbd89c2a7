// SPDX-License-Identifier: MIT
// proxy: the Domain's storage and the set-up of one rank's sub-domain: an
// N x N x N block of hexahedra, the ranks stacked along z (1-D
// decomposition, node planes shared between neighbours), symmetry planes at
// x = 0, y = 0 and (rank 0) z = 0, regions, and a Sedov-like energy deposit
// in the element at the global origin.
#include "proxy.h"

#include <cmath>

namespace
{

// Local node number of lattice point (i, j, k).
Index_t NodeIndex(Index_t n1, Index_t i, Index_t j, Index_t k)
{
	return (k * n1 + j) * n1 + i;
}

void SetupConnectivity(Domain &d)
{
	const Index_t n = d.sizeX(), n1 = n + 1;
	for (Index_t k = 0; k < n; ++k)
		for (Index_t j = 0; j < n; ++j)
			for (Index_t i = 0; i < n; ++i) {
				const Index_t el = (k * n + j) * n + i;
				Index_t *nl = d.nodelist(el);
				nl[0] = NodeIndex(n1, i, j, k);
				nl[1] = NodeIndex(n1, i + 1, j, k);
				nl[2] = NodeIndex(n1, i + 1, j + 1, k);
				nl[3] = NodeIndex(n1, i, j + 1, k);
				nl[4] = NodeIndex(n1, i, j, k + 1);
				nl[5] = NodeIndex(n1, i + 1, j, k + 1);
				nl[6] = NodeIndex(n1, i + 1, j + 1, k + 1);
				nl[7] = NodeIndex(n1, i, j + 1, k + 1);
				d.lxim(el) = i > 0 ? el - 1 : el;
				d.lxip(el) = i < n - 1 ? el + 1 : el;
				d.letam(el) = j > 0 ? el - n : el;
				d.letap(el) = j < n - 1 ? el + n : el;
				d.lzetam(el) = k > 0 ? el - n * n : el;
				d.lzetap(el) = k < n - 1 ? el + n * n : el;
			}
}

void SetupSymmetryPlanes(Domain &d)
{
	const Index_t n1 = d.sizeX() + 1;
	Index_t s = 0;
	for (Index_t a = 0; a < n1; ++a)
		for (Index_t b = 0; b < n1; ++b, ++s) {
			d.symmX(s) = NodeIndex(n1, 0, b, a);
			d.symmY(s) = NodeIndex(n1, b, 0, a);
			if (d.rank() == 0)
				d.symmZ(s) = NodeIndex(n1, b, a, 0);
		}
}

void SetupRegions(Domain &d)
{
	const Index_t numElem = d.numElem();
	for (Index_t i = 0; i < numElem; ++i)
		d.addToRegion(i % PROXY_NREG, i);
}

} // namespace

Domain::Domain(Int_t rank, Int_t numRanks, Index_t edgeElems)
    :
#define PROXY_PARAM_INIT(name, value) m_##name(value),
      PROXY_PARAMS(PROXY_PARAM_INIT)
#undef PROXY_PARAM_INIT
	  m_commNumReq(0),
      m_rank(rank), m_numRanks(numRanks), m_sizeX(edgeElems),
      m_numElem(edgeElems * edgeElems * edgeElems),
      m_numNode((edgeElems + 1) * (edgeElems + 1) * (edgeElems + 1)),
      m_planeNodes((edgeElems + 1) * (edgeElems + 1)), m_time(0), m_deltatime(0),
      m_dtcourant(1.0e+20), m_dthydro(1.0e+20), m_cycle(0)
{
#define PROXY_RESIZE_NODE(name) m_##name.resize(m_numNode);
	PROXY_NODE_FIELDS(PROXY_RESIZE_NODE)
#undef PROXY_RESIZE_NODE
#define PROXY_RESIZE_ELEM(name) m_##name.resize(m_numElem);
	PROXY_ELEM_FIELDS(PROXY_RESIZE_ELEM)
	PROXY_ELEM_INDEX_FIELDS(PROXY_RESIZE_ELEM)
#undef PROXY_RESIZE_ELEM
	m_nodelist.resize(8 * m_numElem);
	m_symmX.resize(m_planeNodes);
	m_symmY.resize(m_planeNodes);
	m_symmZ.resize(rank == 0 ? m_planeNodes : 0);
	for (Int_t r = 0; r < PROXY_NREG; ++r)
		m_regElemSize[r] = 0;
	// Two node planes (one per neighbour) of 3 fields each.
	m_commBufSend.resize(2 * 3 * m_planeNodes);
	m_commBufRecv.resize(2 * 3 * m_planeNodes);
}

void Domain::addToRegion(Int_t r, Index_t elem)
{
	m_regElemlist[r].push_back(elem);
	m_regElemSize[r] = Index_t(m_regElemlist[r].size());
}

void BuildMesh(Domain &d)
{
	const Index_t n = d.sizeX(), n1 = n + 1;
	const Index_t k0 = d.rank() * n; // global z plane of local plane 0
	const Real_t h = Real_t(1.125) / Real_t(n);
	for (Index_t k = 0; k < n1; ++k)
		for (Index_t j = 0; j < n1; ++j)
			for (Index_t i = 0; i < n1; ++i) {
				const Index_t nd = NodeIndex(n1, i, j, k);
				d.x(nd) = h * Real_t(i);
				d.y(nd) = h * Real_t(j);
				d.z(nd) = h * Real_t(k0 + k);
			}
	SetupConnectivity(d);
	SetupSymmetryPlanes(d);
	SetupRegions(d);
}

// Reference volumes, masses (density 1), nodal masses (summed over the
// shared planes by one halo exchange), and the energy e0 in element 0 of
// rank 0. The first time step is a quarter of the hot element's sound
// crossing time.
void SetupInitialConditions(Domain &d, Real_t e0)
{
	const Index_t numElem = d.numElem();
	for (Index_t k = 0; k < numElem; ++k) {
		const Index_t *elemToNode = d.nodelist(k);
		Real_t xl[8], yl[8], zl[8];
		CollectDomainNodesToElemNodes(d, elemToNode, xl, yl, zl);
		const Real_t volume = CalcElemVolume(xl, yl, zl);
		d.volo(k) = volume;
		d.elemMass(k) = volume;
		d.v(k) = 1;
		for (int n = 0; n < 8; ++n)
			d.nodalMass(elemToNode[n]) += volume / Real_t(8);
	}
	CommExchangeNodalMass(d);
	if (d.rank() == 0)
		d.e(0) = e0;
	const Real_t h = Real_t(1.125) / Real_t(d.sizeX());
	d.deltatime() = Real_t(0.25) * h / std::sqrt(Real_t(10.0 / 9.0) * e0);
}
