/* SPDX-License-Identifier: MIT */
/*
 * Self-patching of throttled functions' hook calls (patch.h). This build
 * has no patcher: SCOPE_PROFILER_PATCH=1 is refused with one line and the
 * functions stay sampled.
 */
#include "patch.h"

#include <stdio.h>

#include "config.h"

bool sp_patch_enabled;

void sp_patch_setup(void)
{
	if (sp_config.patch)
		fprintf(stderr, "scope-profiler: SCOPE_PROFILER_PATCH=1: call-site patching is not "
				"available in this build; throttled functions stay sampled\n");
}

int sp_patch_site(void *ret)
{
	(void)ret;
	return -1;
}
