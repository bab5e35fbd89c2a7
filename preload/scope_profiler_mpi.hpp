/* SPDX-License-Identifier: MIT */
/*
 * C++11 MPI helpers of the upstream-compatible API (upstream's
 * scope_profiler_mpi.hpp over our library). Each returns MPI's code
 * unchanged. When our PMPI layer records this process's MPI calls
 * (sp_mpi_intercepted()), a helper only passes the call through: the
 * wrapper records it as MPI_Send, MPI_Wait, ... and nothing is counted
 * twice. Otherwise it records upstream's region
 * "mpi:<op> kind=<kind> bytes=<b> peer=<p> root=<r> tag=<t> comm=<id>"
 * in the default context. docs/API.md.
 */
#ifndef SCOPE_PROFILER_MPI_HPP
#define SCOPE_PROFILER_MPI_HPP

#include "scope_profiler.hpp"

#include <mpi.h>

#include <cstring>
#include <sstream>
#include <string>
#include <utility>

namespace sp {
namespace mpi {
namespace detail {

inline long long datatype_bytes(int count, MPI_Datatype datatype)
{
#ifdef SP_DISABLE_PROFILING
	(void)count;
	(void)datatype;
	return -1;
#else
	int size = 0;
	if (count < 0 || MPI_Type_size(datatype, &size) != MPI_SUCCESS)
		return -1;
	return static_cast<long long>(count) * size;
#endif
}

inline long long communicator_id(MPI_Comm comm)
{
	return static_cast<long long>(MPI_Comm_c2f(comm));
}

inline const char *kind_for(const char *op)
{
	if (std::strcmp(op, "wait") == 0)
		return "wait";
	if (std::strcmp(op, "barrier") == 0 || std::strcmp(op, "bcast") == 0 ||
	    std::strcmp(op, "reduce") == 0 || std::strcmp(op, "allreduce") == 0)
		return "collective";
	return "point-to-point";
}

inline std::string region_name(const char *op, long long bytes, long long peer, long long root,
			       long long tag, long long comm, const char *request_op = 0)
{
	std::ostringstream s;
	s << "mpi:" << op << " kind=" << kind_for(op) << " bytes=" << bytes << " peer=" << peer
	  << " root=" << root << " tag=" << tag << " comm=" << comm;
	if (request_op)
		s << " request=" << request_op;
	return s.str();
}

inline int region(const std::string &name)
{
	return sp_region_at(name.c_str(), __FILE__, __LINE__);
}

/* Our PMPI layer records the call itself: no second region. */
inline bool pass_through() noexcept
{
	return sp_mpi_intercepted() != 0;
}

} // namespace detail

class Request;
int wait(Request &request, MPI_Status *status = MPI_STATUS_IGNORE);

class Request {
public:
	Request() noexcept
		: request_(MPI_REQUEST_NULL), bytes_(-1), peer_(-1), tag_(-1), comm_(MPI_COMM_WORLD),
		  operation_("unknown"), error_(MPI_SUCCESS)
	{
	}
	Request(MPI_Request request, long long bytes, int peer, int tag, MPI_Comm comm,
		const char *operation, int error = MPI_SUCCESS) noexcept
		: request_(request), bytes_(bytes), peer_(peer), tag_(tag), comm_(comm),
		  operation_(operation), error_(error)
	{
	}
	Request(const Request &) = delete;
	Request &operator=(const Request &) = delete;
	Request(Request &&other) noexcept
		: request_(other.request_), bytes_(other.bytes_), peer_(other.peer_), tag_(other.tag_),
		  comm_(other.comm_), operation_(other.operation_), error_(other.error_)
	{
		other.request_ = MPI_REQUEST_NULL;
	}
	Request &operator=(Request &&) = delete;
	MPI_Request &native() noexcept { return request_; }
	const MPI_Request &native() const noexcept { return request_; }
	bool active() const noexcept { return request_ != MPI_REQUEST_NULL; }
	int error() const noexcept { return error_; }
	friend int wait(Request &request, MPI_Status *status);

private:
	MPI_Request request_;
	long long bytes_;
	int peer_, tag_;
	MPI_Comm comm_;
	const char *operation_;
	int error_;
};

#ifdef SP_DISABLE_PROFILING
#define SP_MPI_PROFILE_SCOPE(...) ((void)0)
#else
/* One region around exactly the wrapped call, unless our PMPI layer is on. */
#define SP_MPI_PROFILE_SCOPE(...)                                                          \
	const bool sp_mpi_pass = ::sp::mpi::detail::pass_through();                        \
	const std::string sp_mpi_region_name =                                              \
		sp_mpi_pass ? std::string() : ::sp::mpi::detail::region_name(__VA_ARGS__); \
	::sp::Scope sp_mpi_scope(sp_mpi_pass ? static_cast<sp_profiler *>(0) : sp_default_profiler(), \
				 sp_mpi_pass ? -1 : ::sp::mpi::detail::region(sp_mpi_region_name))
#endif

inline int send(const void *buffer, int count, MPI_Datatype datatype, int destination, int tag,
		MPI_Comm communicator)
{
	SP_MPI_PROFILE_SCOPE("send", detail::datatype_bytes(count, datatype), destination, -1, tag,
			     detail::communicator_id(communicator));
	return MPI_Send(buffer, count, datatype, destination, tag, communicator);
}

inline int recv(void *buffer, int count, MPI_Datatype datatype, int source, int tag,
		MPI_Comm communicator, MPI_Status *status = MPI_STATUS_IGNORE)
{
	SP_MPI_PROFILE_SCOPE("recv", detail::datatype_bytes(count, datatype), source, -1, tag,
			     detail::communicator_id(communicator));
	return MPI_Recv(buffer, count, datatype, source, tag, communicator, status);
}

inline Request isend(const void *buffer, int count, MPI_Datatype datatype, int destination, int tag,
		     MPI_Comm communicator)
{
	MPI_Request request = MPI_REQUEST_NULL;
	long long bytes = detail::datatype_bytes(count, datatype);
	int error;
	{
		SP_MPI_PROFILE_SCOPE("isend", bytes, destination, -1, tag,
				     detail::communicator_id(communicator));
		error = MPI_Isend(buffer, count, datatype, destination, tag, communicator, &request);
	}
	return Request(request, bytes, destination, tag, communicator, "isend", error);
}

inline Request irecv(void *buffer, int count, MPI_Datatype datatype, int source, int tag,
		     MPI_Comm communicator)
{
	MPI_Request request = MPI_REQUEST_NULL;
	long long bytes = detail::datatype_bytes(count, datatype);
	int error;
	{
		SP_MPI_PROFILE_SCOPE("irecv", bytes, source, -1, tag,
				     detail::communicator_id(communicator));
		error = MPI_Irecv(buffer, count, datatype, source, tag, communicator, &request);
	}
	return Request(request, bytes, source, tag, communicator, "irecv", error);
}

inline int wait(Request &request, MPI_Status *status)
{
	SP_MPI_PROFILE_SCOPE("wait", request.bytes_, request.peer_, -1, request.tag_,
			     detail::communicator_id(request.comm_), request.operation_);
	request.error_ = MPI_Wait(&request.request_, status);
	return request.error_;
}

inline int barrier(MPI_Comm communicator)
{
	SP_MPI_PROFILE_SCOPE("barrier", 0, -1, -1, -1, detail::communicator_id(communicator));
	return MPI_Barrier(communicator);
}

inline int bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm communicator)
{
	SP_MPI_PROFILE_SCOPE("bcast", detail::datatype_bytes(count, datatype), -1, root, -1,
			     detail::communicator_id(communicator));
	return MPI_Bcast(buffer, count, datatype, root, communicator);
}

inline int reduce(const void *send_buffer, void *receive_buffer, int count, MPI_Datatype datatype,
		  MPI_Op operation, int root, MPI_Comm communicator)
{
	SP_MPI_PROFILE_SCOPE("reduce", detail::datatype_bytes(count, datatype), -1, root, -1,
			     detail::communicator_id(communicator));
	return MPI_Reduce(send_buffer, receive_buffer, count, datatype, operation, root, communicator);
}

inline int allreduce(const void *send_buffer, void *receive_buffer, int count, MPI_Datatype datatype,
		     MPI_Op operation, MPI_Comm communicator)
{
	SP_MPI_PROFILE_SCOPE("allreduce", detail::datatype_bytes(count, datatype), -1, -1, -1,
			     detail::communicator_id(communicator));
	return MPI_Allreduce(send_buffer, receive_buffer, count, datatype, operation, communicator);
}

#undef SP_MPI_PROFILE_SCOPE

} // namespace mpi
} // namespace sp

#endif /* SCOPE_PROFILER_MPI_HPP */
