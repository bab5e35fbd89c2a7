/* SPDX-License-Identifier: MIT */
/*
 * `scope-profiler export region-statistics`: the region_statistics.json
 * document of the Python collect_region_statistics (§3.4).
 */
#ifndef SP_EXPORT_REGION_STATS_H
#define SP_EXPORT_REGION_STATS_H

/**
 * Run `export region-statistics FILE... -o PATH [filters]` (argv[0] is the
 * format name).
 * @return the exit code, or -1 when argv[0] is not "region-statistics".
 */
int export_region_stats_run(int argc, char **argv);

#endif /* SP_EXPORT_REGION_STATS_H */
