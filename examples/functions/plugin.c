/* SPDX-License-Identifier: MIT */
/*
 * The dlopen'ed plugin of functions-c: plugin_run(n) calls the static
 * plugin_step() n times. functions-c unloads it before exit, so its names
 * come from the file, not from a mapped module.
 */
int plugin_run(int n);

static volatile int acc;

static int plugin_step(int i)
{
	acc += i;
	return acc;
}

int plugin_run(int n)
{
	int r = 0;
	for (int i = 0; i < n; i++)
		r = plugin_step(i);
	return r;
}
