/* SPDX-License-Identifier: MIT */
/*
 * The libdw/libdwfl/libelf functions through lazy.h (it includes their
 * headers first; so must any file that includes both). Each name the
 * recorder uses becomes a call through a pointer that dlsym fills on first use,
 * so the library is loaded only when the recorder first needs it, not
 * with the preload (docs/HOOKS.md, "Start-up"). A name missing here is
 * an undefined symbol of the preload again: the guard test `lazy-libs`
 * lists the preload's undefined symbols and fails on any of them.
 * Generated from `nm -D --undefined-only` of the preload; keep sorted.
 */
#ifndef SP_LAZY_DW_H
#define SP_LAZY_DW_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "lazy-names.h"
#include "lazy.h"

SP_LAZY_DW_NAMES(SP_LAZY_SLOT)

#define dwarf_attr SP_LAZY(SP_LAZY_DW, dwarf_attr)
#define dwarf_attr_integrate SP_LAZY(SP_LAZY_DW, dwarf_attr_integrate)
#define dwarf_child SP_LAZY(SP_LAZY_DW, dwarf_child)
#define dwarf_decl_file SP_LAZY(SP_LAZY_DW, dwarf_decl_file)
#define dwarf_decl_line SP_LAZY(SP_LAZY_DW, dwarf_decl_line)
#define dwarf_diecu SP_LAZY(SP_LAZY_DW, dwarf_diecu)
#define dwarf_diename SP_LAZY(SP_LAZY_DW, dwarf_diename)
#define dwarf_dieoffset SP_LAZY(SP_LAZY_DW, dwarf_dieoffset)
#define dwarf_filesrc SP_LAZY(SP_LAZY_DW, dwarf_filesrc)
#define dwarf_formstring SP_LAZY(SP_LAZY_DW, dwarf_formstring)
#define dwarf_formudata SP_LAZY(SP_LAZY_DW, dwarf_formudata)
#define dwarf_getscopes SP_LAZY(SP_LAZY_DW, dwarf_getscopes)
#define dwarf_getsrc_die SP_LAZY(SP_LAZY_DW, dwarf_getsrc_die)
#define dwarf_getsrcfiles SP_LAZY(SP_LAZY_DW, dwarf_getsrcfiles)
#define dwarf_hasattr SP_LAZY(SP_LAZY_DW, dwarf_hasattr)
#define dwarf_haschildren SP_LAZY(SP_LAZY_DW, dwarf_haschildren)
#define dwarf_haspc SP_LAZY(SP_LAZY_DW, dwarf_haspc)
#define dwarf_lineno SP_LAZY(SP_LAZY_DW, dwarf_lineno)
#define dwarf_linesrc SP_LAZY(SP_LAZY_DW, dwarf_linesrc)
#define dwarf_lowpc SP_LAZY(SP_LAZY_DW, dwarf_lowpc)
#define dwarf_offdie SP_LAZY(SP_LAZY_DW, dwarf_offdie)
#define dwarf_ranges SP_LAZY(SP_LAZY_DW, dwarf_ranges)
#define dwarf_siblingof SP_LAZY(SP_LAZY_DW, dwarf_siblingof)
#define dwarf_tag SP_LAZY(SP_LAZY_DW, dwarf_tag)
#define dwfl_begin SP_LAZY(SP_LAZY_DW, dwfl_begin)
#define dwfl_build_id_find_elf SP_LAZY(SP_LAZY_DW, dwfl_build_id_find_elf)
#define dwfl_end SP_LAZY(SP_LAZY_DW, dwfl_end)
#define dwfl_module_addrdie SP_LAZY(SP_LAZY_DW, dwfl_module_addrdie)
#define dwfl_module_addrinfo SP_LAZY(SP_LAZY_DW, dwfl_module_addrinfo)
#define dwfl_module_build_id SP_LAZY(SP_LAZY_DW, dwfl_module_build_id)
#define dwfl_module_getdwarf SP_LAZY(SP_LAZY_DW, dwfl_module_getdwarf)
#define dwfl_module_getsym_info SP_LAZY(SP_LAZY_DW, dwfl_module_getsym_info)
#define dwfl_module_getsymtab SP_LAZY(SP_LAZY_DW, dwfl_module_getsymtab)
#define dwfl_module_nextcu SP_LAZY(SP_LAZY_DW, dwfl_module_nextcu)
#define dwfl_offline_section_address SP_LAZY(SP_LAZY_DW, dwfl_offline_section_address)
#define dwfl_report_begin SP_LAZY(SP_LAZY_DW, dwfl_report_begin)
#define dwfl_report_elf SP_LAZY(SP_LAZY_DW, dwfl_report_elf)
#define dwfl_report_end SP_LAZY(SP_LAZY_DW, dwfl_report_end)
#define dwfl_standard_find_debuginfo SP_LAZY(SP_LAZY_DW, dwfl_standard_find_debuginfo)
#define elf_getscn SP_LAZY(SP_LAZY_DW, elf_getscn)
#define gelf_getshdr SP_LAZY(SP_LAZY_DW, gelf_getshdr)

#endif /* SP_LAZY_DW_H */
