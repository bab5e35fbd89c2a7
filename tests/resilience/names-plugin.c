/* SPDX-License-Identifier: MIT */
/* A library names-prog dlopens after recording started (names tests). */
int plugin_step(int x);
static int plugin_leaf(int x)
{
	return x + 5;
}

int plugin_step(int x)
{
	return plugin_leaf(x) * 2;
}
