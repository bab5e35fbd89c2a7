// SPDX-License-Identifier: MIT
// Not instrumented: the frames an exception passes through in exc-prog.
extern "C" void c_mid(long i, void (*cb)(long));
extern "C" void thrower(long i);

extern "C" void cb_throw(long i)
{
	thrower(i);
}

extern "C" void tramp(long i)
{
	c_mid(i, cb_throw);
}
