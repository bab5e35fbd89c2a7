! SPDX-License-Identifier: MIT
! The same kind of calls through the legacy `include 'mpif.h'` bindings.
program ring_mpifh
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, right, left, req(2)
  integer :: sendv(4), recvv(4), total

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  sendv = rank
  ! 4 integers = 16 bytes to the right, completed one by one.
  call MPI_IRECV(recvv, 4, MPI_INTEGER, left, 9, MPI_COMM_WORLD, req(1), ierr)
  call MPI_ISEND(sendv, 4, MPI_INTEGER, right, 9, MPI_COMM_WORLD, req(2), ierr)
  call MPI_WAIT(req(1), MPI_STATUS_IGNORE, ierr)
  call MPI_WAIT(req(2), MPI_STATUS_IGNORE, ierr)
  call MPI_REDUCE(recvv(1), total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a, i0)') 'ring-mpifh: total=', total
  call MPI_FINALIZE(ierr)
end program ring_mpifh
