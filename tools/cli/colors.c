/* SPDX-License-Identifier: MIT */
/*
 * Deterministic region colours: matplotlib's qualitative palettes (tab20 by
 * default) indexed by a region's first-seen position, shared by the charts
 * and the plot-data "colors" maps so a region keeps its colour everywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "colors.h"
#include "sp-array.h"

struct sp_palette {
	const char *name;
	size_t n;
	const char *const *colors;
};

#define PALETTE(name, ...) \
	static const char *const name##_colors[] = { __VA_ARGS__ }

PALETTE(tab20, "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c",
	"#98df8a", "#d62728", "#ff9896", "#9467bd", "#c5b0d5", "#8c564b",
	"#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7", "#bcbd22",
	"#dbdb8d", "#17becf", "#9edae5");
PALETTE(tab10, "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf");
PALETTE(tab20b, "#393b79", "#5254a3", "#6b6ecf", "#9c9ede", "#637939",
	"#8ca252", "#b5cf6b", "#cedb9c", "#8c6d31", "#bd9e39", "#e7ba52",
	"#e7cb94", "#843c39", "#ad494a", "#d6616b", "#e7969c", "#7b4173",
	"#a55194", "#ce6dbd", "#de9ed6");
PALETTE(tab20c, "#3182bd", "#6baed6", "#9ecae1", "#c6dbef", "#e6550d",
	"#fd8d3c", "#fdae6b", "#fdd0a2", "#31a354", "#74c476", "#a1d99b",
	"#c7e9c0", "#756bb1", "#9e9ac8", "#bcbddc", "#dadaeb", "#636363",
	"#969696", "#bdbdbd", "#d9d9d9");
PALETTE(Set1, "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00",
	"#ffff33", "#a65628", "#f781bf", "#999999");
PALETTE(Set2, "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854",
	"#ffd92f", "#e5c494", "#b3b3b3");
PALETTE(Set3, "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
	"#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5",
	"#ffed6f");
PALETTE(Pastel1, "#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4", "#fed9a6",
	"#ffffcc", "#e5d8bd", "#fddaec", "#f2f2f2");
PALETTE(Pastel2, "#b3e2cd", "#fdcdac", "#cbd5e8", "#f4cae4", "#e6f5c9",
	"#fff2ae", "#f1e2cc", "#cccccc");
PALETTE(Dark2, "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e",
	"#e6ab02", "#a6761d", "#666666");
PALETTE(Accent, "#7fc97f", "#beaed4", "#fdc086", "#ffff99", "#386cb0",
	"#f0027f", "#bf5b17", "#666666");
PALETTE(Paired, "#a6cee3", "#1f78b4", "#b2df8a", "#33a02c", "#fb9a99",
	"#e31a1c", "#fdbf6f", "#ff7f00", "#cab2d6", "#6a3d9a", "#ffff99",
	"#b15928");

#define ENTRY(name) { #name, sizeof(name##_colors) / sizeof(char *), name##_colors }

static const struct sp_palette palettes[] = {
	ENTRY(tab20), ENTRY(tab10), ENTRY(tab20b), ENTRY(tab20c),
	ENTRY(Set1), ENTRY(Set2), ENTRY(Set3), ENTRY(Pastel1),
	ENTRY(Pastel2), ENTRY(Dark2), ENTRY(Accent), ENTRY(Paired),
};

#define NUM_PALETTES (sizeof(palettes) / sizeof(palettes[0]))

const char *sp_color_for_index(size_t i)
{
	return sp_palette_color(&palettes[0], i);
}

int sp_palette_find(const char *name, const struct sp_palette **ret_palette)
{
	if (!name || !name[0]) {
		*ret_palette = &palettes[0];
		return 0;
	}
	for (size_t i = 0; i < NUM_PALETTES; i++)
		if (strcmp(palettes[i].name, name) == 0) {
			*ret_palette = &palettes[i];
			return 0;
		}
	return -ENOENT;
}

const char *sp_palette_color(const struct sp_palette *palette, size_t i)
{
	return palette->colors[i % palette->n];
}

const char *sp_palette_names(void)
{
	return "tab20, tab10, tab20b, tab20c, Set1, Set2, Set3, Pastel1, "
	       "Pastel2, Dark2, Accent, Paired";
}

/*
 * The map keeps names in first-seen order; lookups are linear, which is
 * fine for the few hundred regions a profile has and keeps order obvious.
 */
struct sp_color_map {
	const struct sp_palette *palette;
	char **names;
	size_t n, cap;
};

int sp_color_map_create(const struct sp_palette *palette,
			struct sp_color_map **ret_map)
{
	struct sp_color_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->palette = palette ? palette : &palettes[0];
	*ret_map = m;
	return 0;
}

void sp_color_map_destroy(struct sp_color_map *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->n; i++)
		free(map->names[i]);
	free(map->names);
	free(map);
}

static long find(const struct sp_color_map *map, const char *name)
{
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->names[i], name) == 0)
			return (long)i;
	return -1;
}

long sp_color_map_add(struct sp_color_map *map, const char *name)
{
	long k = find(map, name);

	if (k >= 0)
		return k;
	if (SP_ARRAY_RESERVE(map->names, map->cap, map->n + 1, 32) < 0)
		return -ENOMEM;
	map->names[map->n] = strdup(name);
	if (!map->names[map->n])
		return -ENOMEM;
	return (long)map->n++;
}

int sp_color_map_add_reader(struct sp_color_map *map,
			    const struct sp_reader *reader,
			    const struct sp_selection *selection)
{
	uint32_t *ids = NULL;
	int n = sp_reader_regions(reader, selection, &ids);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		long rc = sp_color_map_add(map, sp_reader_region_name(reader, ids[i]));

		if (rc < 0) {
			free(ids);
			return (int)rc;
		}
	}
	free(ids);
	return 0;
}

const char *sp_color_map_get(const struct sp_color_map *map, const char *name)
{
	long k = find(map, name);

	return k < 0 ? NULL : sp_palette_color(map->palette, (size_t)k);
}

size_t sp_color_map_count(const struct sp_color_map *map)
{
	return map->n;
}

const char *sp_color_map_name(const struct sp_color_map *map, size_t i)
{
	return i < map->n ? map->names[i] : NULL;
}

const char *sp_color_map_color(const struct sp_color_map *map, size_t i)
{
	return i < map->n ? sp_palette_color(map->palette, i) : NULL;
}
