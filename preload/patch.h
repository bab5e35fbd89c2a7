/* SPDX-License-Identifier: MIT */
/*
 * Self-patching of throttled functions (SCOPE_PROFILER_PATCH=1, `run
 * --patch`): once a function is throttled, the calls to the
 * -finstrument-functions hooks in its code are rewritten to NOPs as they
 * run, so the function costs what it costs without the profiler. Found from
 * the hook's return address, so inlined copies are found as they run.
 * docs/HOOKS.md says how it stays safe (threads, signals, fork, dlclose,
 * W^X) and when it refuses.
 */
#ifndef SP_PATCH_H
#define SP_PATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/* True when patching was asked for and is possible here (set by
 * sp_patch_setup; read on the hooks' rare paths only). */
SP_HIDDEN extern bool sp_patch_enabled;

/* Decide whether patching can be used (configuration, CPU, W^X); when it
 * was asked for and cannot be, print one line saying why. Called once, on
 * the first hook call, with the configuration loaded. */
SP_HIDDEN void sp_patch_setup(void);

/*
 * Rewrite the call to a hook that returns to `ret` (the address after the
 * call instruction in instrumented code) into a NOP of the same length;
 * `region` is the function of an enter hook's site (SP_NO_REGION for an
 * exit's). `fn` (the exit hook's function, NULL for an enter) finds an
 * exit the compiler made a tail call (`jmp` to the hook as the function's
 * last instruction, so the hook returns to fn's caller): that `jmp` becomes
 * a `ret`. Sites are written in batches: a site met for the first time is
 * queued, and the queue is written when a queued site is met again (or
 * the queue is full). Each enter site written marks its function patched
 * (sp_fn_region_set_patched) and is logged for the threads
 * (sp_patch_log). Idempotent per site; a site that cannot be patched
 * (unknown instruction, mprotect refused) is remembered and refused at
 * once later. Not async-signal-safe; the caller holds its thread's busy
 * guard. Returns 0 when the site is (now) a NOP, -EINPROGRESS when it is
 * queued, or -errno.
 */
SP_HIDDEN int sp_patch_site(void *ret, uint32_t region, void *fn);

/* The functions whose enter sites were patched so far, in order, *n of
 * them (repeats possible): a thread brings its state of log[seen..*n) in
 * step and remembers *n. */
SP_HIDDEN const uint32_t *sp_patch_log(uint32_t *n);

/* Empty the queue of sites not yet written (before a dlclose). */
SP_HIDDEN void sp_patch_forget_queue(void);

#endif /* SP_PATCH_H */
