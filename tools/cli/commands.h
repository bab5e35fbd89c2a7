/* SPDX-License-Identifier: MIT */
/*
 * Entry points of the subcommands, one per tools/cmd-<name>.c. Each takes
 * the arguments after "scope-profiler" (argv[0] = command name) and returns
 * the process exit code.
 */
#ifndef SP_COMMANDS_H
#define SP_COMMANDS_H

int cmd_summary(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_scaling(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_tui(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_comm(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_line_profile(int argc, char **argv);

#endif /* SP_COMMANDS_H */
