/* SPDX-License-Identifier: MIT */
/*
 * Deterministic, unique region colours shared by the charts and the
 * plot-data "colors" maps so a region keeps its colour everywhere: the
 * palette (tab20 by default) first, then golden-angle hues; MPI regions take
 * a family of reds of their own (the rule is in colors.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colors.h"
#include "sp-map.h"
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
 * The map keeps names in first-seen order with the colour chosen when the
 * name was added; lookups are linear, which is fine for the few thousand
 * regions a profile has and keeps the order obvious.
 */
struct sp_color_map {
	const struct sp_palette *palette;
	char **names;
	char (*colors)[8];
	size_t n, cap, ccap;
	size_t next_plain, next_mpi; /* position in each colour sequence */
	/* Lookups in O(1), so thousands of regions cost no quadratic time:
	 * name hash (+ probe) -> index, colour value + 1 -> index. */
	struct sp_map by_name, by_color;
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
	free(map->colors);
	sp_map_free(&map->by_name);
	sp_map_free(&map->by_color);
	free(map);
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
	return h;
}

/* The index of name, or -1; *ret_key: the key where it would go (names
 * whose hashes collide take the next free key). */
static long find_key(struct sp_color_map *map, const char *name, uint64_t *ret_key)
{
	uint64_t key = name_hash(name);
	uint32_t *v;

	for (; (v = sp_map_find(&map->by_name, key)); key++)
		if (strcmp(map->names[*v], name) == 0)
			return (long)*v;
	if (ret_key)
		*ret_key = key;
	return -1;
}

static long find(const struct sp_color_map *map, const char *name)
{
	return find_key((struct sp_color_map *)map, name, NULL);
}

/* HSL (h in degrees, s and l in 0..1) to "#rrggbb". */
static void hsl_hex(double h, double s, double l, char out[8])
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(fmod(h, 360) + 360, 360) / 60;
	double x = c * (1 - fabs(fmod(hp, 2) - 1)), m = l - c / 2, rgb[3];
	int k = (int)hp;

	switch (k) {
	case 0: rgb[0] = c; rgb[1] = x; rgb[2] = 0; break;
	case 1: rgb[0] = x; rgb[1] = c; rgb[2] = 0; break;
	case 2: rgb[0] = 0; rgb[1] = c; rgb[2] = x; break;
	case 3: rgb[0] = 0; rgb[1] = x; rgb[2] = c; break;
	case 4: rgb[0] = x; rgb[1] = 0; rgb[2] = c; break;
	default: rgb[0] = c; rgb[1] = 0; rgb[2] = x; break;
	}
	snprintf(out, 8, "#%02x%02x%02x", (int)lround((rgb[0] + m) * 255),
		 (int)lround((rgb[1] + m) * 255), (int)lround((rgb[2] + m) * 255));
}

/* Hue of "#rrggbb" in degrees, or -1 for greys (saturation under 0.25). */
static double hex_hue(const char *hex)
{
	unsigned r, g, b;
	double mx, mn, h;

	if (sscanf(hex, "#%02x%02x%02x", &r, &g, &b) != 3)
		return -1;
	mx = fmax(r, fmax(g, b));
	mn = fmin(r, fmin(g, b));
	if (mx == mn || (mx - mn) / (mx + mn <= 255 ? mx + mn : 510 - mx - mn) < 0.25)
		return -1;
	if (mx == r)
		h = fmod((g - (double)b) / (mx - mn), 6);
	else if (mx == g)
		h = (b - (double)r) / (mx - mn) + 2;
	else
		h = (r - (double)g) / (mx - mn) + 4;
	return fmod(h * 60 + 360, 360);
}

/* The reds (hue within MPI_BAND degrees of 0) belong to MPI regions. */
#define MPI_BAND 8.0
#define GOLDEN_ANGLE 137.50776405003785
#define PHI_FRAC 0.6180339887498949
#define PLASTIC_FRAC 0.7548776662466927
#define PLASTIC2_FRAC 0.5698402909980532

static bool in_mpi_band(double hue)
{
	return hue >= 0 && (hue <= MPI_BAND || hue >= 360 - MPI_BAND);
}

/*
 * Candidate j of the plain sequence: the palette's colours (its reds left
 * out), then hues a golden angle apart over 20..340 degrees, at three
 * lightness levels so that neighbours in the sequence differ twice over.
 */
static void plain_color(const struct sp_palette *p, size_t j, char out[8])
{
	static const double light[3] = { 0.45, 0.65, 0.32 };
	size_t k = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (in_mpi_band(hex_hue(p->colors[i])))
			continue;
		if (k++ == j) {
			snprintf(out, 8, "%s", p->colors[i]);
			return;
		}
	}
	j -= k;
	hsl_hex(20 + fmod((double)j * GOLDEN_ANGLE, 320),
		0.62 + 0.2 * (fmod((double)j * PLASTIC2_FRAC, 1) - 0.5),
		light[j % 3] + 0.08 * (fmod((double)j * PLASTIC_FRAC, 1) - 0.5), out);
}

/* Candidate j of the MPI family: reds within MPI_BAND of hue 0, lightness
 * and saturation spread by two more low-discrepancy sequences. */
static void mpi_color(size_t j, char out[8])
{
	double h = (fmod((double)j * PHI_FRAC, 1) * 2 - 1) * MPI_BAND;
	double l = 0.30 + 0.42 * fmod(0.5 + (double)j * PLASTIC_FRAC, 1);

	hsl_hex(h, 0.6 + 0.35 * fmod((double)j * PLASTIC2_FRAC, 1), l, out);
}

static uint64_t color_key(const char *hex)
{
	return strtoull(hex + 1, NULL, 16) + 1;
}

static bool color_used(struct sp_color_map *map, const char *hex)
{
	return sp_map_find(&map->by_color, color_key(hex)) != NULL;
}

long sp_color_map_add_kind(struct sp_color_map *map, const char *name, bool mpi)
{
	uint64_t key;
	long k = find_key(map, name, &key);
	char hex[8];

	if (k >= 0)
		return k;
	if (SP_ARRAY_RESERVE(map->names, map->cap, map->n + 1, 32) < 0 ||
	    SP_ARRAY_RESERVE(map->colors, map->ccap, map->n + 1, 32) < 0)
		return -ENOMEM;
	/* Skip candidates already taken: every name gets its own colour. */
	for (unsigned tries = 0;; tries++) {
		if (mpi)
			mpi_color(map->next_mpi++, hex);
		else
			plain_color(map->palette, map->next_plain++, hex);
		if (!color_used(map, hex))
			break;
		if (tries == 4096) {
			/* The sequence is crowded (thousands of names): take the
			 * next free 24-bit value; there are more than names. */
			unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);

			do
				snprintf(hex, sizeof(hex), "#%06x", (v = (v + 1) & 0xffffff));
			while (color_used(map, hex));
			break;
		}
	}
	map->names[map->n] = strdup(name);
	/* The colour first: a failure leaves at most a colour marked taken. */
	if (!map->names[map->n] || sp_map_put(&map->by_color, color_key(hex), (uint32_t)map->n) < 0 ||
	    sp_map_put(&map->by_name, key, (uint32_t)map->n) < 0) {
		free(map->names[map->n]);
		return -ENOMEM;
	}
	memcpy(map->colors[map->n], hex, 8);
	return (long)map->n++;
}

long sp_color_map_add(struct sp_color_map *map, const char *name)
{
	return sp_color_map_add_kind(map, name, false);
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
		bool mpi = sp_region_kind_is_mpi(sp_reader_region_kind(reader, ids[i]));
		long rc = sp_color_map_add_kind(map, sp_reader_region_name(reader, ids[i]), mpi);

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

	return k < 0 ? NULL : map->colors[k];
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
	return i < map->n ? map->colors[i] : NULL;
}
