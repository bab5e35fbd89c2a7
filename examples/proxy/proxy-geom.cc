// SPDX-License-Identifier: MIT
// proxy: element geometry on the 8 nodes of a hexahedron, gathered from the
// Domain through its accessors. Local node numbering: 0..3 the bottom face
// (counter-clockwise from the origin corner), 4..7 the top face above them.
// The volume is the sum of 6 tetrahedra around the diagonal 0-6.
#include "proxy.h"

#include <cmath>

namespace
{

// The tetrahedra (0, 6, a, b), for consecutive corners of the cycle
// 1-2-3-7-4-5 around the diagonal, all positively oriented.
const Index_t kTetCycle[6][2] = {{1, 2}, {2, 3}, {3, 7}, {7, 4}, {4, 5}, {5, 1}};
// The 6 faces, each as 4 corners in order.
const Index_t kFaces[6][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4},
			      {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
// Local coordinates (-1 or +1) of each corner along xi, eta, zeta.
const Real_t kCorner[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
			      {-1, -1, 1},  {1, -1, 1},	 {1, 1, 1},  {-1, 1, 1}};

void EdgeVector(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8], Index_t from,
		Index_t to, Real_t out[3])
{
	out[0] = xl[to] - xl[from];
	out[1] = yl[to] - yl[from];
	out[2] = zl[to] - zl[from];
}

Real_t TetVolume(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8], Index_t a, Index_t b,
		 Index_t c, Index_t d)
{
	Real_t u[3], v[3], w[3];
	EdgeVector(xl, yl, zl, a, b, u);
	EdgeVector(xl, yl, zl, a, c, v);
	EdgeVector(xl, yl, zl, a, d, w);
	return TripleProduct(u, v, w) / Real_t(6);
}

// Adds the gradient of one tetrahedron's volume with respect to its four
// corners: dV/db = (v x w)/6, dV/dc = (w x u)/6, dV/dd = (u x v)/6 and
// dV/da = -(their sum), where u, v, w are the edges from a.
void AccumulateTetGradient(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8], Index_t a,
			   Index_t b, Index_t c, Index_t d, Real_t gx[8], Real_t gy[8],
			   Real_t gz[8])
{
	Real_t u[3], v[3], w[3], gb[3], gc[3], gd[3];
	EdgeVector(xl, yl, zl, a, b, u);
	EdgeVector(xl, yl, zl, a, c, v);
	EdgeVector(xl, yl, zl, a, d, w);
	Cross3(v, w, gb);
	Cross3(w, u, gc);
	Cross3(u, v, gd);
	const Index_t corner[3] = {b, c, d};
	const Real_t *g[3] = {gb, gc, gd};
	for (int k = 0; k < 3; ++k) {
		gx[corner[k]] += g[k][0] / Real_t(6);
		gy[corner[k]] += g[k][1] / Real_t(6);
		gz[corner[k]] += g[k][2] / Real_t(6);
		gx[a] -= g[k][0] / Real_t(6);
		gy[a] -= g[k][1] / Real_t(6);
		gz[a] -= g[k][2] / Real_t(6);
	}
}

// |d1 x d2|^2 of a face's diagonals: 4 A^2 for a planar face of area A.
Real_t AreaFace(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8], const Index_t face[4])
{
	Real_t d1[3], d2[3], n[3];
	EdgeVector(xl, yl, zl, face[0], face[2], d1);
	EdgeVector(xl, yl, zl, face[1], face[3], d2);
	Cross3(d1, d2, n);
	return Dot3(n, n);
}

// Amplitude of one hourglass mode (corner pattern `mode`) in nodal values.
Real_t HourglassModeAmplitude(const Real_t gamma[8], const Real_t val[8])
{
	Real_t h = 0;
	for (int n = 0; n < 8; ++n)
		h += gamma[n] * val[n];
	return h;
}

void AddModeForce(const Real_t gamma[8], Real_t amplitude, Real_t coefficient, Real_t f[8])
{
	for (int n = 0; n < 8; ++n)
		f[n] += coefficient * gamma[n] * amplitude;
}

// The 4 hourglass patterns: products xi*eta, eta*zeta, zeta*xi and
// xi*eta*zeta of the corners' local coordinates (orthogonal to the linear
// velocity fields, so they only damp the non-physical modes).
void HourglassPatterns(Real_t gamma[4][8])
{
	for (int n = 0; n < 8; ++n) {
		const Real_t *c = kCorner[n];
		gamma[0][n] = c[0] * c[1];
		gamma[1][n] = c[1] * c[2];
		gamma[2][n] = c[2] * c[0];
		gamma[3][n] = c[0] * c[1] * c[2];
	}
}

} // namespace

void CollectDomainNodesToElemNodes(Domain &d, const Index_t *elemToNode, Real_t xl[8], Real_t yl[8],
				   Real_t zl[8])
{
	for (int n = 0; n < 8; ++n) {
		const Index_t g = elemToNode[n];
		xl[n] = d.x(g);
		yl[n] = d.y(g);
		zl[n] = d.z(g);
	}
}

void CollectDomainVelocitiesToElemNodes(Domain &d, const Index_t *elemToNode, Real_t xdl[8],
					Real_t ydl[8], Real_t zdl[8])
{
	for (int n = 0; n < 8; ++n) {
		const Index_t g = elemToNode[n];
		xdl[n] = d.xd(g);
		ydl[n] = d.yd(g);
		zdl[n] = d.zd(g);
	}
}

void ScatterElemForcesToNodes(Domain &d, const Index_t *elemToNode, const Real_t fxl[8],
			      const Real_t fyl[8], const Real_t fzl[8])
{
	for (int n = 0; n < 8; ++n) {
		const Index_t g = elemToNode[n];
		d.fx(g) += fxl[n];
		d.fy(g) += fyl[n];
		d.fz(g) += fzl[n];
	}
}

Real_t CalcElemVolume(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8])
{
	Real_t vol = 0;
	for (int t = 0; t < 6; ++t)
		vol += TetVolume(xl, yl, zl, 0, 6, kTetCycle[t][0], kTetCycle[t][1]);
	return vol;
}

void CalcElemVolumeGradient(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8],
			    Real_t gx[8], Real_t gy[8], Real_t gz[8])
{
	for (int n = 0; n < 8; ++n)
		gx[n] = gy[n] = gz[n] = 0;
	for (int t = 0; t < 6; ++t)
		AccumulateTetGradient(xl, yl, zl, 0, 6, kTetCycle[t][0], kTetCycle[t][1], gx, gy,
				      gz);
}

Real_t CalcElemCharacteristicLength(const Real_t xl[8], const Real_t yl[8], const Real_t zl[8],
				    Real_t volume)
{
	Real_t maxArea = 0;
	for (int f = 0; f < 6; ++f)
		maxArea = Max(maxArea, AreaFace(xl, yl, zl, kFaces[f]));
	// sqrt(4 A^2) = 2 A, so 2 V / (2 A) is the element's thickness.
	return Real_t(2) * volume / std::sqrt(maxArea);
}

// Rate of deformation's diagonal, D_ii = (1/V) sum_n v_n,i dV/dx_n,i.
void CalcElemVelocityGradient(const Real_t xdl[8], const Real_t ydl[8], const Real_t zdl[8],
			      const Real_t gx[8], const Real_t gy[8], const Real_t gz[8],
			      Real_t volume, Real_t D[3])
{
	Real_t s[3] = {0, 0, 0};
	for (int n = 0; n < 8; ++n) {
		s[0] += xdl[n] * gx[n];
		s[1] += ydl[n] * gy[n];
		s[2] += zdl[n] * gz[n];
	}
	const Real_t inv = Real_t(1) / volume;
	for (int k = 0; k < 3; ++k)
		D[k] = s[k] * inv;
}

// Damping force of the hourglass modes of the nodal velocities, per
// direction: f_n += coefficient * gamma_m,n * (gamma_m . v).
void CalcElemFBHourglassForce(const Real_t xdl[8], const Real_t ydl[8], const Real_t zdl[8],
			      Real_t coefficient, Real_t hgfx[8], Real_t hgfy[8], Real_t hgfz[8])
{
	Real_t gamma[4][8];
	HourglassPatterns(gamma);
	const Real_t *vel[3] = {xdl, ydl, zdl};
	Real_t *force[3] = {hgfx, hgfy, hgfz};
	for (int k = 0; k < 3; ++k) {
		for (int n = 0; n < 8; ++n)
			force[k][n] = 0;
		for (int m = 0; m < 4; ++m)
			AddModeForce(gamma[m], HourglassModeAmplitude(gamma[m], vel[k]),
				     coefficient, force[k]);
	}
}
