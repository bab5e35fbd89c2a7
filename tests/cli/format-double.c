/* SPDX-License-Identifier: MIT */
/* Prints cli_format_shortest() of each argument (parsed with strtod), one
 * per line, for check-format-double.py to compare with Python's repr(). */
#include <stdio.h>
#include <stdlib.h>

size_t cli_format_shortest(char *buf, size_t size, double v);

int main(int argc, char **argv)
{
	char buf[64];
	for (int i = 1; i < argc; i++) {
		cli_format_shortest(buf, sizeof buf, strtod(argv[i], NULL));
		puts(buf);
	}
	return 0;
}
