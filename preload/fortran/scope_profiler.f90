! SPDX-License-Identifier: MIT
! Fortran module scope_profiler: upstream's procedures, argument kinds and
! intents (upstream-native-api.md §4.2), implemented with bind(C) over our
! library, so a Fortran code's regions land on the process timeline (hooks,
! MPI merge, CLI). One context of its own (separate from C's default, as
! upstream's Fortran and C profilers are), writing <prefix>_rank<NNNNN>.spt.
! Differences from upstream's pure-Fortran module: docs/API.md.
module scope_profiler
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_char, c_ptr, c_null_ptr, &
       c_null_char, c_associated, c_f_pointer
  use, intrinsic :: iso_fortran_env, only: int64, error_unit
  implicit none
  private

  integer, parameter, public :: SP_OK = 0, SP_ERR_INACTIVE = 1, SP_ERR_NO_CLOCK = 2, &
       SP_ERR_NO_MEMORY = 3, SP_ERR_IO = 4, SP_ERR_UNMATCHED_END = 5, SP_ERR_OPEN_SCOPES = 6, &
       SP_ERR_INVALID_ARGUMENT = 7, SP_ERR_DEPTH = 8, SP_MAX_NAME = 128

  type, public :: sp_region_stats
     integer(int64) :: calls = 0, total_ns = 0, min_ns = 0, max_ns = 0
  end type sp_region_stats

  public :: sp_init, sp_region, sp_begin, sp_end, sp_begin_name, sp_end_name, sp_num_calls, &
       sp_get_region_stats, sp_reset, sp_flush, sp_finalize, sp_now_ns, sp_is_active

  type(c_ptr), save :: ctx = c_null_ptr

  type, bind(c) :: c_stats
     integer(c_int64_t) :: calls, total_ns, min_ns, max_ns
  end type c_stats

  interface
     function c_create(prefix, rank) bind(c, name='sp_create') result(p)
       import :: c_ptr, c_char, c_int
       character(kind=c_char), intent(in) :: prefix(*)
       integer(c_int), value :: rank
       type(c_ptr) :: p
     end function c_create
     subroutine c_destroy(p) bind(c, name='sp_destroy')
       import :: c_ptr
       type(c_ptr), value :: p
     end subroutine c_destroy
     function c_region_at(p, name, file, line) bind(c, name='sp_profiler_region_at') result(h)
       import :: c_ptr, c_char, c_int
       type(c_ptr), value :: p, file
       character(kind=c_char), intent(in) :: name(*)
       integer(c_int), value :: line
       integer(c_int) :: h
     end function c_region_at
     function c_region_file(p, name, file, line) bind(c, name='sp_profiler_region_at') result(h)
       import :: c_ptr, c_char, c_int
       type(c_ptr), value :: p
       character(kind=c_char), intent(in) :: name(*), file(*)
       integer(c_int), value :: line
       integer(c_int) :: h
     end function c_region_file
     subroutine c_begin(p, h) bind(c, name='sp_profiler_begin')
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int), value :: h
     end subroutine c_begin
     subroutine c_end(p, h) bind(c, name='sp_profiler_end')
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int), value :: h
     end subroutine c_end
     function c_num_regions(p) bind(c, name='sp_profiler_num_regions') result(n)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: n
     end function c_num_regions
     function c_region_name(p, h) bind(c, name='sp_profiler_region_name') result(s)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int), value :: h
       type(c_ptr) :: s
     end function c_region_name
     function c_get_stats(p, h, st) bind(c, name='sp_profiler_get_region_stats') result(r)
       import :: c_ptr, c_int, c_stats
       type(c_ptr), value :: p
       integer(c_int), value :: h
       type(c_stats), intent(out) :: st
       integer(c_int) :: r
     end function c_get_stats
     function c_completed(p, h) bind(c, name='sp_profiler_completed_calls') result(n)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: p
       integer(c_int), value :: h
       integer(c_int64_t) :: n
     end function c_completed
     function c_reset(p) bind(c, name='sp_profiler_reset') result(r)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: r
     end function c_reset
     function c_flush(p) bind(c, name='sp_profiler_flush') result(r)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: r
     end function c_flush
     function c_finalize(p) bind(c, name='sp_profiler_finalize') result(r)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: r
     end function c_finalize
     function c_is_active(p) bind(c, name='sp_profiler_is_active') result(r)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: r
     end function c_is_active
     function c_last_error(p) bind(c, name='sp_profiler_last_error') result(r)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: r
     end function c_last_error
     function c_set_format(p, f) bind(c, name='sp_profiler_set_output_format') result(r)
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int), value :: f
       integer(c_int) :: r
     end function c_set_format
     function c_now_ns() bind(c, name='sp_now_ns') result(t)
       import :: c_int64_t
       integer(c_int64_t) :: t
     end function c_now_ns
     function c_strlen(s) bind(c, name='strlen') result(n)
       import :: c_ptr, c_int64_t
       type(c_ptr), value :: s
       integer(c_int64_t) :: n
     end function c_strlen
  end interface

contains

  ! Upstream's reporting rule: stat/errmsg when present; otherwise a
  ! message on error_unit unless the code is OK or INACTIVE.
  subroutine report(code, msg, stat, errmsg)
    integer, intent(in) :: code
    character(len=*), intent(in) :: msg
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    if (present(stat)) stat = code
    if (present(errmsg)) then
       errmsg = ''
       if (code /= SP_OK) errmsg = msg
    end if
    if (.not. present(stat) .and. .not. present(errmsg) .and. code /= SP_OK &
         .and. code /= SP_ERR_INACTIVE) write (error_unit, '(a)') 'scope_profiler: '//msg
  end subroutine report

  function message(code) result(msg)
    integer, intent(in) :: code
    character(len=64) :: msg
    select case (code)
    case (SP_OK); msg = 'ok'
    case (SP_ERR_INACTIVE); msg = 'profiler is not active'
    case (SP_ERR_NO_CLOCK); msg = 'no monotonic clock available'
    case (SP_ERR_NO_MEMORY); msg = 'out of memory'
    case (SP_ERR_IO); msg = 'trace file could not be written'
    case (SP_ERR_UNMATCHED_END); msg = 'no open call to end'
    case (SP_ERR_OPEN_SCOPES); msg = 'a region is still open'
    case (SP_ERR_INVALID_ARGUMENT); msg = 'invalid region handle'
    case (SP_ERR_DEPTH); msg = 'region nested too deeply'
    case default; msg = 'unknown status'
    end select
  end function message

  subroutine done(code, stat, errmsg)
    integer, intent(in) :: code
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    call report(code, trim(message(code)), stat, errmsg)
  end subroutine done

  logical function active()
    active = c_associated(ctx)
    if (active) active = c_is_active(ctx) /= 0
  end function active

  function key(name) result(k)
    character(len=*), intent(in) :: name
    character(len=:), allocatable :: k
    k = trim(name(1:min(len(name), SP_MAX_NAME)))//c_null_char
  end function key

  subroutine sp_init(prefix, rank, stat, errmsg)
    character(len=*), intent(in) :: prefix
    integer, intent(in), optional :: rank
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    integer :: r, code
    r = 0
    if (present(rank)) r = rank
    if (len_trim(prefix) == 0 .or. len_trim(prefix) > 512 .or. r < 0) then
       call done(SP_ERR_INVALID_ARGUMENT, stat, errmsg)
       return
    end if
    if (c_associated(ctx)) call c_destroy(ctx)
    ctx = c_create(trim(prefix)//c_null_char, int(r, c_int))
    if (.not. c_associated(ctx)) then
       call done(SP_ERR_NO_MEMORY, stat, errmsg)
       return
    end if
    code = c_set_format(ctx, 1_c_int) ! Fortran writes .spt, as upstream's
    code = int(c_last_error(ctx))
    if (.not. active()) then
       call done(code, stat, errmsg)
    else
       call done(SP_OK, stat, errmsg)
    end if
  end subroutine sp_init

  function sp_region(name, file, line, stat, errmsg) result(id)
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: file
    integer, intent(in), optional :: line
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    integer :: id, h, ln
    id = 0
    if (.not. active()) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
       return
    end if
    h = -1
    if (present(file)) then
       if (len_trim(file) > 0) then
          ln = -1
          if (present(line)) then
             if (line >= 0) ln = line
          end if
          h = c_region_file(ctx, key(name), trim(file)//c_null_char, int(ln, c_int))
       end if
    end if
    if (h < 0) h = c_region_at(ctx, key(name), c_null_ptr, 0_c_int)
    if (h < 0) then
       call done(int(c_last_error(ctx)), stat, errmsg)
       return
    end if
    id = h + 1
    call done(SP_OK, stat, errmsg)
  end function sp_region

  subroutine sp_begin(id, stat, errmsg)
    integer, intent(in) :: id
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    if (.not. active()) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
    else if (id < 1 .or. id > c_num_regions(ctx)) then
       call done(SP_ERR_INVALID_ARGUMENT, stat, errmsg)
    else
       call c_begin(ctx, int(id - 1, c_int))
       call done(int(c_last_error(ctx)), stat, errmsg)
    end if
  end subroutine sp_begin

  subroutine sp_end(id, stat, errmsg)
    integer, intent(in) :: id
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    if (.not. active()) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
    else if (id < 1 .or. id > c_num_regions(ctx)) then
       call done(SP_ERR_INVALID_ARGUMENT, stat, errmsg)
    else
       call c_end(ctx, int(id - 1, c_int))
       call done(int(c_last_error(ctx)), stat, errmsg)
    end if
  end subroutine sp_end

  subroutine sp_begin_name(name, stat, errmsg)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    integer :: id, code
    id = sp_region(name, stat=code)
    if (code /= SP_OK) then
       call done(code, stat, errmsg)
    else
       call sp_begin(id, stat, errmsg)
    end if
  end subroutine sp_begin_name

  subroutine sp_end_name(name, stat, errmsg)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    integer :: i
    character(len=:), allocatable :: k
    type(c_ptr) :: s
    character(kind=c_char), pointer :: chars(:)
    if (.not. active()) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
       return
    end if
    k = key(name)
    do i = 0, c_num_regions(ctx) - 1 ! looked up, never registered
       s = c_region_name(ctx, int(i, c_int))
       call c_f_pointer(s, chars, [c_strlen(s) + 1])
       if (same(chars, k)) then
          call sp_end(i + 1, stat, errmsg)
          return
       end if
    end do
    call done(SP_ERR_UNMATCHED_END, stat, errmsg)
  end subroutine sp_end_name

  logical function same(chars, k)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=*), intent(in) :: k
    integer :: j
    same = size(chars) == len(k)
    if (.not. same) return
    do j = 1, len(k)
       if (chars(j) /= k(j:j)) then
          same = .false.
          return
       end if
    end do
  end function same

  function sp_num_calls(id) result(calls)
    integer, intent(in) :: id
    integer(int64) :: calls
    type(c_stats) :: st
    calls = 0
    if (.not. c_associated(ctx)) return
    if (c_get_stats(ctx, int(id - 1, c_int), st) == SP_OK) calls = st%calls
  end function sp_num_calls

  subroutine sp_get_region_stats(id, stats, stat, errmsg)
    integer, intent(in) :: id
    type(sp_region_stats), intent(out) :: stats
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    type(c_stats) :: st
    stats = sp_region_stats()
    if (.not. c_associated(ctx)) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
    else if (id < 1 .or. id > c_num_regions(ctx)) then
       call done(SP_ERR_INVALID_ARGUMENT, stat, errmsg)
    else if (c_get_stats(ctx, int(id - 1, c_int), st) == SP_OK) then
       ! Fortran counts completed calls (C: entries).
       stats = sp_region_stats(c_completed(ctx, int(id - 1, c_int)), st%total_ns, st%min_ns, &
            st%max_ns)
       call done(SP_OK, stat, errmsg)
    end if
  end subroutine sp_get_region_stats

  subroutine sp_reset(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    if (.not. active()) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
    else
       call done(int(c_reset(ctx)), stat, errmsg)
    end if
  end subroutine sp_reset

  subroutine sp_flush(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    if (.not. active()) then
       call done(SP_ERR_INACTIVE, stat, errmsg)
    else if (c_flush(ctx) /= 0) then
       call done(int(c_last_error(ctx)), stat, errmsg)
    else
       call done(SP_OK, stat, errmsg)
    end if
  end subroutine sp_flush

  subroutine sp_finalize(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(out), optional :: errmsg
    integer :: code
    if (.not. active()) then
       call done(SP_OK, stat, errmsg)
       return
    end if
    code = int(c_finalize(ctx))
    if (code /= 0) then
       call done(int(c_last_error(ctx)), stat, errmsg)
    else if (c_last_error(ctx) == SP_ERR_OPEN_SCOPES) then
       call done(SP_ERR_OPEN_SCOPES, stat, errmsg)
    else
       call done(SP_OK, stat, errmsg)
    end if
  end subroutine sp_finalize

  function sp_now_ns() result(now)
    integer(int64) :: now
    now = c_now_ns()
  end function sp_now_ns

  function sp_is_active() result(is_active)
    logical :: is_active
    is_active = active()
  end function sp_is_active

end module scope_profiler
