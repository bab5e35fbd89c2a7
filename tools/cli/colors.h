/* SPDX-License-Identifier: MIT */
/*
 * Region colours shared by every chart and export (Gantt, flame chart,
 * flame graph, durations, plot-data "colors" maps, HTML reports), so that a
 * region keeps its colour between views, as upstream's shared colormap does.
 *
 * Rule: regions are coloured in first-seen order: for one file that is
 * sp_reader_regions() order (the Python get_regions() order, after
 * --include/--exclude); for several files the regions of the first file,
 * then new names of the second file, and so on. There are two sequences:
 *  - MPI regions (sp_region_kind_is_mpi) take a family of reds (hue within
 *    8 degrees of 0, lightness spread by a low-discrepancy sequence);
 *  - every other region takes the palette's colours in order, leaving out
 *    the palette's reds (tab20: 18 colours, the same as upstream for the
 *    first six), then hues a golden angle (137.5 degrees) apart over
 *    20..340 degrees at three lightness levels.
 * A candidate already given to another name is skipped, so no two names of
 * a map share a colour, however many there are. Colours are lower-case
 * "#rrggbb" strings owned by the map.
 *
 * Typical use:
 *     struct sp_color_map *m;
 *     sp_color_map_create(NULL, &m);              // tab20
 *     for each file: sp_color_map_add_reader(m, reader, sel);
 *     const char *hex = sp_color_map_get(m, "solve");
 *     sp_color_map_destroy(m);
 */
#ifndef SP_COLORS_H
#define SP_COLORS_H

#include <stdbool.h>
#include <stddef.h>

#include "scope-profiler-reader.h"

/** Name of the default palette. */
#define SP_COLOR_DEFAULT_PALETTE "tab20"

struct sp_palette;   /* a named, cyclic list of colours (static) */
struct sp_color_map; /* region name -> colour, first-seen order */

/** Colour of the i-th region with the default palette (tab20, cyclic). */
const char *sp_color_for_index(size_t i);

/**
 * Find a palette by name: "tab20" (default), "tab10", "tab20b", "tab20c",
 * "Set1", "Set2", "Set3", "Pastel1", "Pastel2", "Dark2", "Accent",
 * "Paired" (matplotlib's qualitative colormaps). NULL or "" is tab20.
 * @return 0 or -ENOENT.
 */
int sp_palette_find(const char *name, const struct sp_palette **ret_palette);
/** Colour i (cyclic) of a palette. */
const char *sp_palette_color(const struct sp_palette *palette, size_t i);
/** Comma-separated list of palette names (for error messages). */
const char *sp_palette_names(void);

/**
 * New empty colour map using palette (NULL = default).
 * @return 0 or -ENOMEM. Free with sp_color_map_destroy (accepts NULL).
 */
int sp_color_map_create(const struct sp_palette *palette,
			struct sp_color_map **ret_map);
void sp_color_map_destroy(struct sp_color_map *map);
/**
 * Add a region name (no-op if present) as an MPI region (mpi) or not.
 * @return its index, or -ENOMEM.
 */
long sp_color_map_add_kind(struct sp_color_map *map, const char *name, bool mpi);
/** sp_color_map_add_kind(map, name, false). */
long sp_color_map_add(struct sp_color_map *map, const char *name);
/**
 * Add the regions of a profile that match the selection's names, in
 * sp_reader_regions() order, with their kind (MPI or not) from the file. @return 0 or a negative errno.
 */
int sp_color_map_add_reader(struct sp_color_map *map,
			    const struct sp_reader *reader,
			    const struct sp_selection *selection);
/** Colour of a name (owned by the map), NULL if it was never added. */
const char *sp_color_map_get(const struct sp_color_map *map, const char *name);
/** Number of names; name/colour of entry i (first-seen order), NULL if out of range. */
size_t sp_color_map_count(const struct sp_color_map *map);
const char *sp_color_map_name(const struct sp_color_map *map, size_t i);
const char *sp_color_map_color(const struct sp_color_map *map, size_t i);

#endif /* SP_COLORS_H */
