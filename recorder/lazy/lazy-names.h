/* SPDX-License-Identifier: MIT */
/*
 * The names lazy-hdf5.h and lazy-dw.h route through lazy.h, one X(name)
 * each: every file that includes those headers gets one slot per name
 * (SP_LAZY_SLOT), and lazy.c looks every name up when it loads the
 * library, so that a library of that SONAME which lacks one (another
 * build) is refused there, with one message, instead of aborting the
 * program at its first call. Each header's #define of a name needs its
 * slot here (a compile error otherwise). Keep sorted.
 */
#ifndef SP_LAZY_NAMES_H
#define SP_LAZY_NAMES_H

#define SP_LAZY_HDF5_NAMES(X) \
	X(H5Aclose) \
	X(H5Acreate2) \
	X(H5Adelete) \
	X(H5Aexists) \
	X(H5Aget_space) \
	X(H5Aget_type) \
	X(H5Aiterate2) \
	X(H5Aopen) \
	X(H5Aread) \
	X(H5Awrite) \
	X(H5Dclose) \
	X(H5Dcreate2) \
	X(H5Dget_create_plist) \
	X(H5Dget_offset) \
	X(H5Dget_space) \
	X(H5Dget_storage_size) \
	X(H5Dget_type) \
	X(H5Dopen2) \
	X(H5Dread) \
	X(H5Dvlen_reclaim) \
	X(H5Dwrite) \
	X(H5E_CANTLOCKFILE_g) \
	X(H5Eauto_is_v2) \
	X(H5Eclear2) \
	X(H5Eget_auto1) \
	X(H5Eget_auto2) \
	X(H5Eset_auto1) \
	X(H5Eset_auto2) \
	X(H5Ewalk2) \
	X(H5FD_sec2_init) \
	X(H5Fclose) \
	X(H5Fcreate) \
	X(H5Fflush) \
	X(H5Fget_access_plist) \
	X(H5Fget_vfd_handle) \
	X(H5Fis_hdf5) \
	X(H5Fopen) \
	X(H5Gclose) \
	X(H5Gcreate2) \
	X(H5Gopen2) \
	X(H5Lexists) \
	X(H5Literate) \
	X(H5Lvisit) \
	X(H5Oget_info_by_name) \
	X(H5P_CLS_DATASET_CREATE_ID_g) \
	X(H5P_CLS_DATASET_XFER_ID_g) \
	X(H5P_CLS_FILE_ACCESS_ID_g) \
	X(H5Pclose) \
	X(H5Pcreate) \
	X(H5Pget_driver) \
	X(H5Pget_external_count) \
	X(H5Pget_layout) \
	X(H5Pget_nfilters) \
	X(H5Pset_alloc_time) \
	X(H5Pset_buffer) \
	X(H5Pset_chunk) \
	X(H5Pset_deflate) \
	X(H5Pset_elink_cb) \
	X(H5Pset_fclose_degree) \
	X(H5Pset_fill_time) \
	X(H5Pset_shuffle) \
	X(H5Sclose) \
	X(H5Screate) \
	X(H5Screate_simple) \
	X(H5Sget_simple_extent_dims) \
	X(H5Sget_simple_extent_ndims) \
	X(H5Sget_simple_extent_npoints) \
	X(H5Sselect_hyperslab) \
	X(H5T_C_S1_g) \
	X(H5T_IEEE_F64LE_g) \
	X(H5T_NATIVE_DOUBLE_g) \
	X(H5T_NATIVE_INT32_g) \
	X(H5T_NATIVE_INT64_g) \
	X(H5T_NATIVE_INT8_g) \
	X(H5T_NATIVE_UINT32_g) \
	X(H5T_NATIVE_UINT64_g) \
	X(H5T_NATIVE_UINT8_g) \
	X(H5T_STD_I32LE_g) \
	X(H5T_STD_I64LE_g) \
	X(H5T_STD_I8LE_g) \
	X(H5T_STD_U32LE_g) \
	X(H5T_STD_U64LE_g) \
	X(H5T_STD_U8LE_g) \
	X(H5Tclose) \
	X(H5Tcopy) \
	X(H5Tcreate) \
	X(H5Tequal) \
	X(H5Tget_class) \
	X(H5Tget_cset) \
	X(H5Tget_size) \
	X(H5Tinsert) \
	X(H5Tis_variable_str) \
	X(H5Tset_cset) \
	X(H5Tset_size) \
	X(H5check_version) \
	X(H5free_memory) \
	X(H5open)

#define SP_LAZY_DW_NAMES(X) \
	X(dwarf_attr) \
	X(dwarf_attr_integrate) \
	X(dwarf_child) \
	X(dwarf_decl_file) \
	X(dwarf_decl_line) \
	X(dwarf_diecu) \
	X(dwarf_diename) \
	X(dwarf_dieoffset) \
	X(dwarf_filesrc) \
	X(dwarf_formstring) \
	X(dwarf_formudata) \
	X(dwarf_getscopes) \
	X(dwarf_getsrc_die) \
	X(dwarf_getsrcfiles) \
	X(dwarf_hasattr) \
	X(dwarf_haschildren) \
	X(dwarf_haspc) \
	X(dwarf_lineno) \
	X(dwarf_linesrc) \
	X(dwarf_lowpc) \
	X(dwarf_offdie) \
	X(dwarf_ranges) \
	X(dwarf_siblingof) \
	X(dwarf_tag) \
	X(dwfl_begin) \
	X(dwfl_build_id_find_elf) \
	X(dwfl_end) \
	X(dwfl_module_addrdie) \
	X(dwfl_module_addrinfo) \
	X(dwfl_module_build_id) \
	X(dwfl_module_getdwarf) \
	X(dwfl_module_getsym_info) \
	X(dwfl_module_getsymtab) \
	X(dwfl_module_nextcu) \
	X(dwfl_offline_section_address) \
	X(dwfl_report_begin) \
	X(dwfl_report_elf) \
	X(dwfl_report_end) \
	X(dwfl_standard_find_debuginfo) \
	X(elf_getscn) \
	X(gelf_getshdr)

#endif /* SP_LAZY_NAMES_H */
