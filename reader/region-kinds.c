/* SPDX-License-Identifier: MIT */
/*
 * Region kinds (enum sp_region_kind): read from region_table/kinds when
 * the file has it; else a region whose name is exactly a wrapped MPI
 * function gets that function's kind (the table generated from
 * mpi/mpi-functions.def) and every other region is a function.
 */
#include "region-kinds.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5-util.h"
#include "sp-format.h"
#include "mpi-kinds.h"

_Static_assert(SP_REGION_MANUAL == SP_KIND_MANUAL && SP_REGION_FUNCTION == SP_KIND_FUNCTION &&
	       SP_REGION_MPI_OTHER == SP_KIND_MPI_OTHER && SP_REGION_MPI_SEND == SP_KIND_MPI_SEND &&
	       SP_REGION_MPI_RECV == SP_KIND_MPI_RECV &&
	       SP_REGION_MPI_SENDRECV == SP_KIND_MPI_SENDRECV &&
	       SP_REGION_MPI_COLLECTIVE == SP_KIND_MPI_COLLECTIVE &&
	       SP_REGION_MPI_ONE_SIDED == SP_KIND_MPI_ONE_SIDED &&
	       SP_REGION_MPI_IO == SP_KIND_MPI_IO && SP_REGION_MPI_REQUEST == SP_KIND_MPI_REQUEST &&
	       SP_KIND_COUNT == 10,
	       "enum sp_region_kind is the file's SP_KIND_* codes");

/* Index 0..SP_KIND_COUNT-1: kind name, MPI class. */
static const char *const kind_names[SP_KIND_COUNT] = {
	"manual", "function", "mpi", "mpi", "mpi", "mpi", "mpi", "mpi", "mpi", "mpi",
};
static const char *const mpi_classes[SP_KIND_COUNT] = {
	NULL, NULL, "other", "send", "recv", "sendrecv", "collective", "one_sided", "io",
	"request",
};

int reader_load_kinds(struct sp_reader *r, hid_t region_table)
{
	int64_t *v = NULL;
	long n = h5_read_i64(r, region_table, SP_DSET_REGION_KINDS, &v);
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return (int)n;
	int rc = 0;
	if ((size_t)n != r->n_regions)
		rc = sp_error(SP_E_CORRUPT, "%s: corrupt file: '/%s/%s' has %ld values for %zu regions",
			      r->path, SP_GROUP_REGION_TABLE, SP_DSET_REGION_KINDS, n, r->n_regions);
	for (long i = 0; rc == 0 && i < n; i++)
		if (v[i] < 0 || v[i] >= SP_KIND_COUNT)
			rc = sp_error(SP_E_CORRUPT, "%s: corrupt file: '/%s/%s' value %lld at %ld is not a region kind",
				      r->path, SP_GROUP_REGION_TABLE, SP_DSET_REGION_KINDS,
				      (long long)v[i], i);
	if (rc == 0 && !(r->kinds = malloc((size_t)n + 1)))
		rc = -ENOMEM;
	for (long i = 0; rc == 0 && i < n; i++)
		r->kinds[i] = (uint8_t)v[i];
	free(v);
	return rc;
}

static int cmp_name(const void *key, const void *entry)
{
	return strcmp(key, ((const struct mpi_kind *)entry)->name);
}

int reader_finish_kinds(struct sp_reader *r)
{
	if (r->kinds)
		return 0;
	if (!(r->kinds = malloc(r->n_regions + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < r->n_regions; i++) {
		const struct mpi_kind *k = bsearch(r->names[i], mpi_kinds,
						   sizeof mpi_kinds / sizeof *mpi_kinds,
						   sizeof *mpi_kinds, cmp_name);
		r->kinds[i] = k ? k->kind : SP_KIND_FUNCTION;
	}
	return 0;
}

enum sp_region_kind sp_reader_region_kind(const struct sp_reader *r, uint32_t id)
{
	return id < r->n_regions && r->kinds ? (enum sp_region_kind)r->kinds[id] : SP_REGION_FUNCTION;
}

bool sp_region_kind_is_mpi(enum sp_region_kind kind)
{
	return kind >= SP_REGION_MPI_OTHER && kind < SP_KIND_COUNT;
}

const char *sp_region_kind_name(enum sp_region_kind kind)
{
	return (unsigned)kind < SP_KIND_COUNT ? kind_names[kind] : "function";
}

const char *sp_region_kind_mpi_class(enum sp_region_kind kind)
{
	return (unsigned)kind < SP_KIND_COUNT ? mpi_classes[kind] : NULL;
}
