// SPDX-License-Identifier: MIT
// Automatic function regions in C++: namespaces, a member function,
// templates and a lambda. Names are demangled (a template's return type is
// dropped). Counts are fixed by this source: geo::Rect::area 4,
// geo::square<int> 5, geo::square<double> 5, geo::detail::scale 6,
// geo::apply_n 1, the lambda 6, main 1.
#include <cstdio>

namespace geo {

struct Rect {
	double w, h;
	double area() const { return w * h; }
};

template <typename T> T square(T x)
{
	return x * x;
}

namespace detail {
int scale(int v)
{
	return v * 3;
}
} // namespace detail

template <typename F> int apply_n(int n, F f)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += f(i);
	return s;
}

} // namespace geo

int main()
{
	geo::Rect r{2.0, 3.0};
	double a = 0;
	for (int i = 0; i < 4; i++)
		a += r.area();
	for (int i = 0; i < 5; i++)
		a += geo::square<int>(i) + geo::square<double>(i);
	int k = 2;
	auto lam = [k](int i) { return geo::detail::scale(i) + k; };
	a += geo::apply_n(6, lam);
	std::printf("functions-cxx: %g\n", a);
	return 0;
}
