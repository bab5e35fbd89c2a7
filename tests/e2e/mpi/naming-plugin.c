/* SPDX-License-Identifier: MIT */
/* The plugin of mpi-naming.c: one instrumented function. */
__attribute__((visibility("default"))) double plugin_work(int k);

__attribute__((visibility("default"))) double plugin_work(int k) /* naming: plugin_work */
{
	double s = 0;
	for (int i = 0; i < 100; i++)
		s += (double)(i * k % 11);
	return s;
}
