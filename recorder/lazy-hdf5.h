/* SPDX-License-Identifier: MIT */
/*
 * The HDF5 functions and globals through lazy.h (it includes <hdf5.h>
 * first; so must any file that includes both). Each name the recorder uses
 * becomes a call through a pointer that dlsym fills on first use,
 * so the library is loaded only when the recorder first needs it, not
 * with the preload (docs/HOOKS.md, "Start-up"). A name missing here is
 * an undefined symbol of the preload again: the guard test `lazy-libs`
 * lists the preload's undefined symbols and fails on any of them.
 * Generated from `nm -D --undefined-only` of the preload; keep sorted.
 */
#ifndef SP_LAZY_HDF5_H
#define SP_LAZY_HDF5_H

#include <hdf5.h>

#include "lazy.h"

static void *sp_lazy_H5Aclose __attribute__((unused));
static void *sp_lazy_H5Acreate2 __attribute__((unused));
static void *sp_lazy_H5Adelete __attribute__((unused));
static void *sp_lazy_H5Aexists __attribute__((unused));
static void *sp_lazy_H5Aopen __attribute__((unused));
static void *sp_lazy_H5Aread __attribute__((unused));
static void *sp_lazy_H5Awrite __attribute__((unused));
static void *sp_lazy_H5Dclose __attribute__((unused));
static void *sp_lazy_H5Dcreate2 __attribute__((unused));
static void *sp_lazy_H5Dget_offset __attribute__((unused));
static void *sp_lazy_H5Dget_space __attribute__((unused));
static void *sp_lazy_H5Dget_type __attribute__((unused));
static void *sp_lazy_H5Dopen2 __attribute__((unused));
static void *sp_lazy_H5Dread __attribute__((unused));
static void *sp_lazy_H5Dwrite __attribute__((unused));
static void *sp_lazy_H5E_CANTLOCKFILE_g __attribute__((unused));
static void *sp_lazy_H5Eset_auto2 __attribute__((unused));
static void *sp_lazy_H5Ewalk2 __attribute__((unused));
static void *sp_lazy_H5FD_sec2_init __attribute__((unused));
static void *sp_lazy_H5Fclose __attribute__((unused));
static void *sp_lazy_H5Fcreate __attribute__((unused));
static void *sp_lazy_H5Fflush __attribute__((unused));
static void *sp_lazy_H5Fget_access_plist __attribute__((unused));
static void *sp_lazy_H5Fget_vfd_handle __attribute__((unused));
static void *sp_lazy_H5Fopen __attribute__((unused));
static void *sp_lazy_H5Gclose __attribute__((unused));
static void *sp_lazy_H5Gcreate2 __attribute__((unused));
static void *sp_lazy_H5Gopen2 __attribute__((unused));
static void *sp_lazy_H5Lexists __attribute__((unused));
static void *sp_lazy_H5P_CLS_DATASET_CREATE_ID_g __attribute__((unused));
static void *sp_lazy_H5Pclose __attribute__((unused));
static void *sp_lazy_H5Pcreate __attribute__((unused));
static void *sp_lazy_H5Pget_driver __attribute__((unused));
static void *sp_lazy_H5Pset_alloc_time __attribute__((unused));
static void *sp_lazy_H5Pset_chunk __attribute__((unused));
static void *sp_lazy_H5Pset_deflate __attribute__((unused));
static void *sp_lazy_H5Pset_fill_time __attribute__((unused));
static void *sp_lazy_H5Pset_shuffle __attribute__((unused));
static void *sp_lazy_H5Sclose __attribute__((unused));
static void *sp_lazy_H5Screate __attribute__((unused));
static void *sp_lazy_H5Screate_simple __attribute__((unused));
static void *sp_lazy_H5Sget_simple_extent_dims __attribute__((unused));
static void *sp_lazy_H5Sget_simple_extent_ndims __attribute__((unused));
static void *sp_lazy_H5Sselect_hyperslab __attribute__((unused));
static void *sp_lazy_H5T_C_S1_g __attribute__((unused));
static void *sp_lazy_H5T_IEEE_F64LE_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_DOUBLE_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_INT32_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_INT64_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_INT8_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_UINT32_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_UINT64_g __attribute__((unused));
static void *sp_lazy_H5T_NATIVE_UINT8_g __attribute__((unused));
static void *sp_lazy_H5T_STD_I32LE_g __attribute__((unused));
static void *sp_lazy_H5T_STD_I64LE_g __attribute__((unused));
static void *sp_lazy_H5T_STD_I8LE_g __attribute__((unused));
static void *sp_lazy_H5T_STD_U32LE_g __attribute__((unused));
static void *sp_lazy_H5T_STD_U64LE_g __attribute__((unused));
static void *sp_lazy_H5T_STD_U8LE_g __attribute__((unused));
static void *sp_lazy_H5Tclose __attribute__((unused));
static void *sp_lazy_H5Tcopy __attribute__((unused));
static void *sp_lazy_H5Tcreate __attribute__((unused));
static void *sp_lazy_H5Tequal __attribute__((unused));
static void *sp_lazy_H5Tinsert __attribute__((unused));
static void *sp_lazy_H5Tset_cset __attribute__((unused));
static void *sp_lazy_H5Tset_size __attribute__((unused));
static void *sp_lazy_H5check_version __attribute__((unused));
static void *sp_lazy_H5free_memory __attribute__((unused));
static void *sp_lazy_H5open __attribute__((unused));

#define H5Aclose SP_LAZY(SP_LAZY_HDF5, H5Aclose)
#define H5Acreate2 SP_LAZY(SP_LAZY_HDF5, H5Acreate2)
#define H5Adelete SP_LAZY(SP_LAZY_HDF5, H5Adelete)
#define H5Aexists SP_LAZY(SP_LAZY_HDF5, H5Aexists)
#define H5Aopen SP_LAZY(SP_LAZY_HDF5, H5Aopen)
#define H5Aread SP_LAZY(SP_LAZY_HDF5, H5Aread)
#define H5Awrite SP_LAZY(SP_LAZY_HDF5, H5Awrite)
#define H5Dclose SP_LAZY(SP_LAZY_HDF5, H5Dclose)
#define H5Dcreate2 SP_LAZY(SP_LAZY_HDF5, H5Dcreate2)
#define H5Dget_offset SP_LAZY(SP_LAZY_HDF5, H5Dget_offset)
#define H5Dget_space SP_LAZY(SP_LAZY_HDF5, H5Dget_space)
#define H5Dget_type SP_LAZY(SP_LAZY_HDF5, H5Dget_type)
#define H5Dopen2 SP_LAZY(SP_LAZY_HDF5, H5Dopen2)
#define H5Dread SP_LAZY(SP_LAZY_HDF5, H5Dread)
#define H5Dwrite SP_LAZY(SP_LAZY_HDF5, H5Dwrite)
#define H5E_CANTLOCKFILE_g SP_LAZY(SP_LAZY_HDF5, H5E_CANTLOCKFILE_g)
#define H5Eset_auto2 SP_LAZY(SP_LAZY_HDF5, H5Eset_auto2)
#define H5Ewalk2 SP_LAZY(SP_LAZY_HDF5, H5Ewalk2)
#define H5FD_sec2_init SP_LAZY(SP_LAZY_HDF5, H5FD_sec2_init)
#define H5Fclose SP_LAZY(SP_LAZY_HDF5, H5Fclose)
#define H5Fcreate SP_LAZY(SP_LAZY_HDF5, H5Fcreate)
#define H5Fflush SP_LAZY(SP_LAZY_HDF5, H5Fflush)
#define H5Fget_access_plist SP_LAZY(SP_LAZY_HDF5, H5Fget_access_plist)
#define H5Fget_vfd_handle SP_LAZY(SP_LAZY_HDF5, H5Fget_vfd_handle)
#define H5Fopen SP_LAZY(SP_LAZY_HDF5, H5Fopen)
#define H5Gclose SP_LAZY(SP_LAZY_HDF5, H5Gclose)
#define H5Gcreate2 SP_LAZY(SP_LAZY_HDF5, H5Gcreate2)
#define H5Gopen2 SP_LAZY(SP_LAZY_HDF5, H5Gopen2)
#define H5Lexists SP_LAZY(SP_LAZY_HDF5, H5Lexists)
#define H5P_CLS_DATASET_CREATE_ID_g SP_LAZY(SP_LAZY_HDF5, H5P_CLS_DATASET_CREATE_ID_g)
#define H5Pclose SP_LAZY(SP_LAZY_HDF5, H5Pclose)
#define H5Pcreate SP_LAZY(SP_LAZY_HDF5, H5Pcreate)
#define H5Pget_driver SP_LAZY(SP_LAZY_HDF5, H5Pget_driver)
#define H5Pset_alloc_time SP_LAZY(SP_LAZY_HDF5, H5Pset_alloc_time)
#define H5Pset_chunk SP_LAZY(SP_LAZY_HDF5, H5Pset_chunk)
#define H5Pset_deflate SP_LAZY(SP_LAZY_HDF5, H5Pset_deflate)
#define H5Pset_fill_time SP_LAZY(SP_LAZY_HDF5, H5Pset_fill_time)
#define H5Pset_shuffle SP_LAZY(SP_LAZY_HDF5, H5Pset_shuffle)
#define H5Sclose SP_LAZY(SP_LAZY_HDF5, H5Sclose)
#define H5Screate SP_LAZY(SP_LAZY_HDF5, H5Screate)
#define H5Screate_simple SP_LAZY(SP_LAZY_HDF5, H5Screate_simple)
#define H5Sget_simple_extent_dims SP_LAZY(SP_LAZY_HDF5, H5Sget_simple_extent_dims)
#define H5Sget_simple_extent_ndims SP_LAZY(SP_LAZY_HDF5, H5Sget_simple_extent_ndims)
#define H5Sselect_hyperslab SP_LAZY(SP_LAZY_HDF5, H5Sselect_hyperslab)
#define H5T_C_S1_g SP_LAZY(SP_LAZY_HDF5, H5T_C_S1_g)
#define H5T_IEEE_F64LE_g SP_LAZY(SP_LAZY_HDF5, H5T_IEEE_F64LE_g)
#define H5T_NATIVE_DOUBLE_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_DOUBLE_g)
#define H5T_NATIVE_INT32_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_INT32_g)
#define H5T_NATIVE_INT64_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_INT64_g)
#define H5T_NATIVE_INT8_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_INT8_g)
#define H5T_NATIVE_UINT32_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_UINT32_g)
#define H5T_NATIVE_UINT64_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_UINT64_g)
#define H5T_NATIVE_UINT8_g SP_LAZY(SP_LAZY_HDF5, H5T_NATIVE_UINT8_g)
#define H5T_STD_I32LE_g SP_LAZY(SP_LAZY_HDF5, H5T_STD_I32LE_g)
#define H5T_STD_I64LE_g SP_LAZY(SP_LAZY_HDF5, H5T_STD_I64LE_g)
#define H5T_STD_I8LE_g SP_LAZY(SP_LAZY_HDF5, H5T_STD_I8LE_g)
#define H5T_STD_U32LE_g SP_LAZY(SP_LAZY_HDF5, H5T_STD_U32LE_g)
#define H5T_STD_U64LE_g SP_LAZY(SP_LAZY_HDF5, H5T_STD_U64LE_g)
#define H5T_STD_U8LE_g SP_LAZY(SP_LAZY_HDF5, H5T_STD_U8LE_g)
#define H5Tclose SP_LAZY(SP_LAZY_HDF5, H5Tclose)
#define H5Tcopy SP_LAZY(SP_LAZY_HDF5, H5Tcopy)
#define H5Tcreate SP_LAZY(SP_LAZY_HDF5, H5Tcreate)
#define H5Tequal SP_LAZY(SP_LAZY_HDF5, H5Tequal)
#define H5Tinsert SP_LAZY(SP_LAZY_HDF5, H5Tinsert)
#define H5Tset_cset SP_LAZY(SP_LAZY_HDF5, H5Tset_cset)
#define H5Tset_size SP_LAZY(SP_LAZY_HDF5, H5Tset_size)
#define H5check_version SP_LAZY(SP_LAZY_HDF5, H5check_version)
#define H5free_memory SP_LAZY(SP_LAZY_HDF5, H5free_memory)
#define H5open SP_LAZY(SP_LAZY_HDF5, H5open)

#endif /* SP_LAZY_HDF5_H */
