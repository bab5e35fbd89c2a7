! SPDX-License-Identifier: MIT
! Upstream's Fortran module API, every procedure, over our library: status
! codes checked here, files by check_api_f.py. Measures its own durations
! with system_clock (int64: CLOCK_MONOTONIC ns in gfortran).
program api_f
  use scope_profiler
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  integer :: st, work, loc, i, fails, u
  integer(int64) :: t0, t1, rate
  character(len=80) :: msg
  type(sp_region_stats) :: stats

  fails = 0
  call sp_init('', stat=st)
  call expect(st == SP_ERR_INVALID_ARGUMENT, 'empty prefix')
  call sp_init('fort', -1, stat=st)
  call expect(st == SP_ERR_INVALID_ARGUMENT, 'negative rank')
  call expect(.not. sp_is_active(), 'inactive before init')
  work = sp_region('work', stat=st)
  call expect(work == 0 .and. st == SP_ERR_INACTIVE, 'region before init')
  call sp_finalize(stat=st)
  call expect(st == SP_OK, 'finalize before init')

  call sp_init('fort', 2, stat=st, errmsg=msg)
  call expect(st == SP_OK .and. msg == '', 'init')
  call expect(sp_is_active(), 'active')
  work = sp_region('work')
  call expect(work == 1, 'ids from 1')
  call expect(sp_region('work   ') == 1, 'trailing blanks do not matter')
  loc = sp_region('located', file='solver.f90', line=7)
  call expect(loc == 2, 'second id')
  call system_clock(count_rate=rate)
  open (newunit=u, file='measured-f.txt', status='replace')
  do i = 1, 3
     call system_clock(t0)
     call sp_begin(work, stat=st)
     call sleep_ms(20)
     call sp_end(work, stat=st)
     call system_clock(t1)
     write (u, '(i0)') (t1 - t0) * (1000000000_int64 / rate)
  end do
  close (u)
  call expect(st == SP_OK, 'end ok')
  call sp_begin(loc)
  call sp_end(loc)
  call sp_begin_name('named')
  call sp_end_name('named', stat=st)
  call expect(st == SP_OK, 'end_name')
  call sp_end_name('unknown', stat=st)
  call expect(st == SP_ERR_UNMATCHED_END, 'end_name unknown')
  call sp_end(work, stat=st, errmsg=msg)
  call expect(st == SP_ERR_UNMATCHED_END .and. msg == 'no open call to end', 'unmatched')
  call sp_begin(0, stat=st)
  call expect(st == SP_ERR_INVALID_ARGUMENT, 'bad id')
  call expect(sp_num_calls(work) == 3, 'num_calls')
  call sp_get_region_stats(work, stats, stat=st)
  call expect(st == SP_OK .and. stats%calls == 3 .and. stats%min_ns >= 20000000_int64 &
       .and. stats%max_ns >= stats%min_ns, 'stats')
  call sp_get_region_stats(99, stats, stat=st)
  call expect(st == SP_ERR_INVALID_ARGUMENT .and. stats%calls == 0, 'stats bad id')
  call expect(sp_now_ns() > 0, 'clock')

  i = sp_region('resettable')
  call sp_begin(i)
  call sp_reset(stat=st)
  call expect(st == SP_ERR_OPEN_SCOPES, 'reset while open')
  call sp_end(i)
  call sp_flush(stat=st)
  call expect(st == SP_OK, 'flush')
  call sp_reset(stat=st)
  call expect(st == SP_OK .and. sp_num_calls(work) == 0, 'reset')
  call sp_begin(work)
  call sp_end(work)
  call sp_begin(i)
  call sp_finalize(stat=st)
  call expect(st == SP_ERR_OPEN_SCOPES, 'finalize with an open call')
  call expect(.not. sp_is_active(), 'finalized')
  call expect(sp_num_calls(work) == 1, 'calls survive finalize')
  call sp_finalize(stat=st)
  call expect(st == SP_OK, 'finalize again')
  if (fails > 0) error stop 1
  print '(a)', 'api-f: OK'

contains

  subroutine expect(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
       print '(a)', 'api-f: failed: '//what
       fails = fails + 1
    end if
  end subroutine expect

  subroutine sleep_ms(ms)
    integer, intent(in) :: ms
    integer(int64) :: a, b, r
    call system_clock(a, r)
    do
       call system_clock(b)
       if ((b - a) * 1000_int64 >= int(ms, int64) * r) exit
    end do
  end subroutine sleep_ms

end program api_f
