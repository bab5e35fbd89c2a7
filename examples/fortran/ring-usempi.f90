! SPDX-License-Identifier: MIT
! Fortran MPI through `use mpi`: a ring exchange with blocking and
! non-blocking calls, MPI_IN_PLACE, MPI_STATUS_IGNORE and MPI_BOTTOM.
! Every call goes through Open MPI's Fortran bindings (which call PMPI_*
! directly), so only the profiler's Fortran wrappers can see them.
program ring_usempi
  use mpi
  implicit none
  integer :: ierr, rank, nranks, right, left, i
  integer :: req(2), stat(MPI_STATUS_SIZE), newtype
  integer(kind=MPI_ADDRESS_KIND) :: addr
  double precision :: sendbuf(10), recvbuf(10), total
  integer :: token, blens(1), types(1)
  integer(kind=MPI_ADDRESS_KIND) :: displs(1)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  do i = 1, 10
    sendbuf(i) = rank * 100 + i
  end do
  ! Non-blocking ring: 10 doubles = 80 bytes to the right.
  call MPI_Irecv(recvbuf, 10, MPI_DOUBLE_PRECISION, left, 5, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(sendbuf, 10, MPI_DOUBLE_PRECISION, right, 5, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)

  ! Blocking ring with a status, then one with MPI_STATUS_IGNORE: 4 bytes.
  token = rank
  if (rank == 0) then
    call MPI_Send(token, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, ierr)
    call MPI_Recv(token, 1, MPI_INTEGER, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, stat, ierr)
  else
    call MPI_Recv(token, 1, MPI_INTEGER, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(token, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, ierr)
  end if

  ! MPI_IN_PLACE: 8 bytes.
  total = recvbuf(1)
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)

  ! MPI_BOTTOM with an absolute-address datatype: rank 0 broadcasts 80 bytes.
  call MPI_Get_address(sendbuf, addr, ierr)
  blens(1) = 10
  displs(1) = addr
  types(1) = MPI_DOUBLE_PRECISION
  call MPI_Type_create_struct(1, blens, displs, types, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  call MPI_Bcast(MPI_BOTTOM, 1, newtype, 0, MPI_COMM_WORLD, ierr)
  call MPI_Type_free(newtype, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a, f12.1, a, i0, a, f8.1)') 'ring: total=', total, ' token=', token, &
      ' bcast=', sendbuf(10)
  end if
  call MPI_Finalize(ierr)
end program ring_usempi
