/* SPDX-License-Identifier: MIT */
/*
 * Pieces of `scope-profiler inspect`: the grouped metadata listing and the
 * metadata JSON (inspect-metadata.c), used by cmd-inspect.c.
 */
#ifndef SP_INSPECT_H
#define SP_INSPECT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli-common.h"

/*
 * Print the "Metadata" block: Run, System, Parallelism, Slurm, Environment,
 * Other and "Modules (n)", values clipped to 96 characters with " […]"
 * unless full.
 */
void inspect_print_metadata(FILE *f, struct sp_reader *r, bool full);

/* Write the metadata as a JSON object (key order of the file). */
void inspect_metadata_json(struct json_writer *w, struct sp_reader *r);

/* Number of Unicode code points of a UTF-8 string (Python len()). */
size_t inspect_strlen(const char *s);

#endif /* SP_INSPECT_H */
