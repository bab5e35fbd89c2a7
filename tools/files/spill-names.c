/* SPDX-License-Identifier: MIT */
/*
 * Function names of spill files, with the symbolizer finalize uses
 * (recorder/symbols.c), from each module's path and the function's offset
 * in it. A module is checked once (its file must exist and carry the
 * recorded build-id); one that fails names its functions module+0xoffset
 * and its reason goes to stderr and to the metadata (unresolved_modules).
 */
#define _GNU_SOURCE
#include "spill-names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions.h"

/* The state lives for one command: file names stay alive until the inputs
 * are written (spill_names_free). */
struct sym_module {
	char *path;
	int index;     /* in the symbolizer's table */
	int status;    /* sp_sym_module_check() */
};

static struct symbolizer {
	struct sym_module *m;
	size_t n;
	char **files;  /* definition file names handed to snapshots */
	size_t nfiles;
	char **reasons; /* "path: reason" per module that resolves nothing */
	size_t nreasons;
} syms;

static const char *module_reason(int status)
{
	switch (status) {
	case -ENOENT:
		return "not found";
	case -ESTALE:
		return "rebuilt since the run (its build-id differs from the recorded one)";
	case -ENOEXEC:
		return "not an ELF file that can be read";
	default:
		return strerror(-status);
	}
}

static struct sym_module *sym_module(const struct cli_common *c, const struct sp_spill_mdata *md)
{
	for (size_t i = 0; i < syms.n; i++)
		if (strcmp(syms.m[i].path, md->path) == 0)
			return &syms.m[i];
	struct sym_module *v = realloc(syms.m, (syms.n + 1) * sizeof *v);
	char *path = strdup(md->path);
	if (!v || !path) {
		free(path);
		if (v)
			syms.m = v;
		return NULL;
	}
	syms.m = v;
	struct sym_module *m = &v[syms.n];
	*m = (struct sym_module){ .path = path, .index = sp_sym_module_add(path, 0) };
	m->status = m->index < 0 ? m->index
				 : sp_sym_module_check(m->index, md->build_id, md->build_id_bytes);
	syms.n++;
	if (m->status) {
		const char *base = strrchr(path, '/');
		cli_error(c, "%s: %s; its functions are named %s+0xoffset", path,
			  module_reason(m->status), base ? base + 1 : path);
		char **r = realloc(syms.reasons, (syms.nreasons + 1) * sizeof *r);
		if (r) {
			syms.reasons = r;
			const char *why = module_reason(m->status);
			if (asprintf(&r[syms.nreasons], "%s: %s", path, why) >= 0)
				syms.nreasons++;
		}
	}
	return m;
}

char *spill_names_namer(const struct sp_spill_mdata *md, uint64_t addr, void *ctx,
			const char **ret_file, int64_t *ret_line)
{
	struct sym_module *m = md ? sym_module(ctx, md) : NULL;
	struct sp_symbol sym;
	if (!m || m->status || sp_sym_resolve(m->index, addr - md->bias, true, &sym) < 0)
		return NULL;
	char **f = sym.file ? realloc(syms.files, (syms.nfiles + 1) * sizeof *f) : NULL;
	if (f) {
		syms.files = f;
		f[syms.nfiles++] = sym.file;
		*ret_file = sym.file;
		*ret_line = sym.line;
	} else {
		free(sym.file);
	}
	return sym.name;
}

size_t spill_names_reasons(const char *const **ret_reasons)
{
	*ret_reasons = (const char *const *)syms.reasons;
	return syms.nreasons;
}

void spill_names_free(void)
{
	for (size_t i = 0; i < syms.n; i++)
		free(syms.m[i].path);
	for (size_t i = 0; i < syms.nfiles; i++)
		free(syms.files[i]);
	for (size_t i = 0; i < syms.nreasons; i++)
		free(syms.reasons[i]);
	free(syms.m);
	free(syms.files);
	free(syms.reasons);
	sp_sym_close_all();
	memset(&syms, 0, sizeof syms);
}
