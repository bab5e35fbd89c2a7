/* SPDX-License-Identifier: MIT */
/*
 * C++11 layer of the upstream-compatible API (upstream's scope_profiler.hpp
 * over our library): sp::Scope (RAII, move-only), sp::ProfileScope and the
 * SP_PROFILE_* macros. With SP_DISABLE_PROFILING the macros expand to
 * nothing and nothing here references the library. docs/API.md.
 */
#ifndef SCOPE_PROFILER_HPP
#define SCOPE_PROFILER_HPP

#if defined(SP_HEADER_ONLY) && __cplusplus < 201703L
#error "SP_HEADER_ONLY requires C++17"
#endif

#include "scope_profiler.h"

#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
#include <likwid-marker.h>
#define SP_DETAIL_LIKWID 1
#else
#define SP_DETAIL_LIKWID 0
#endif

namespace sp {

/** One timed call of a region, ended on every exit path. */
class Scope {
public:
	Scope(sp_profiler *profiler, int region) noexcept
		: token_(sp_profiler_scope_begin(profiler, region)), marker_(nullptr), started_(false)
	{
		start_marker();
	}
	explicit Scope(int region) noexcept : Scope(sp_default_profiler(), region) {}
	~Scope() { finish(); }
	Scope(const Scope &) = delete;
	Scope &operator=(const Scope &) = delete;
	Scope(Scope &&other) noexcept
		: token_(other.token_), marker_(other.marker_), started_(other.started_)
	{
		other.token_.slot = -1;
		other.started_ = false;
	}
	Scope &operator=(Scope &&other) noexcept
	{
		if (this != &other) {
			finish();
			token_ = other.token_;
			marker_ = other.marker_;
			started_ = other.started_;
			other.token_.slot = -1;
			other.started_ = false;
		}
		return *this;
	}

private:
	void start_marker() noexcept
	{
#if SP_DETAIL_LIKWID
		marker_ = sp_profiler_region_name(token_.profiler, token_.region);
		if (marker_) {
			LIKWID_MARKER_START(marker_);
			started_ = true;
		}
#endif
	}
	void finish() noexcept
	{
#if SP_DETAIL_LIKWID
		if (started_)
			LIKWID_MARKER_STOP(marker_);
#endif
		started_ = false;
		sp_scope_end(&token_);
	}
	sp_scope token_;
	const char *marker_;
	bool started_;
};

/** LIKWID marker session (empty without SP_USE_LIKWID). */
class LikwidSession {
public:
	LikwidSession() noexcept
	{
#if SP_DETAIL_LIKWID
		LIKWID_MARKER_INIT;
		LIKWID_MARKER_THREADINIT;
#endif
	}
	~LikwidSession()
	{
#if SP_DETAIL_LIKWID
		LIKWID_MARKER_CLOSE;
#endif
	}
	LikwidSession(const LikwidSession &) = delete;
	LikwidSession &operator=(const LikwidSession &) = delete;
};

inline void likwid_thread_init() noexcept
{
#if SP_DETAIL_LIKWID
	LIKWID_MARKER_THREADINIT;
#endif
}

/** A Scope of the region @name, looked up on every construction. */
class ProfileScope {
public:
	ProfileScope(const char *name, const char *file, int line) noexcept
		: scope_(sp_default_profiler(), sp_region_at(name, file, line))
	{
	}
	ProfileScope(sp_profiler *profiler, const char *name, const char *file, int line) noexcept
		: scope_(profiler, sp_profiler_region_at(profiler, name, file, line))
	{
	}
	ProfileScope(const ProfileScope &) = delete;
	ProfileScope &operator=(const ProfileScope &) = delete;
	ProfileScope(ProfileScope &&) = delete;
	ProfileScope &operator=(ProfileScope &&) = delete;

private:
	Scope scope_;
};

} // namespace sp

#define SP_DETAIL_JOIN_INNER(a, b) a##b
#define SP_DETAIL_JOIN(a, b) SP_DETAIL_JOIN_INNER(a, b)
#if defined(_MSC_VER)
#define SP_DETAIL_FUNCTION_NAME __FUNCSIG__
#elif defined(__GNUC__) || defined(__clang__)
#define SP_DETAIL_FUNCTION_NAME __PRETTY_FUNCTION__
#else
#define SP_DETAIL_FUNCTION_NAME __func__
#endif

#ifdef SP_DISABLE_PROFILING
#define SP_PROFILE_SCOPE(name) ((void)0)
#define SP_PROFILE_SCOPE_CTX(profiler, name) ((void)0)
#define SP_PROFILE_FUNCTION() ((void)0)
#define SP_PROFILE_FUNCTION_CTX(profiler) ((void)0)
#else
#define SP_PROFILE_SCOPE(name) \
	::sp::ProfileScope SP_DETAIL_JOIN(sp_profile_scope_, __LINE__)((name), __FILE__, __LINE__)
#define SP_PROFILE_SCOPE_CTX(profiler, name)                                      \
	::sp::ProfileScope SP_DETAIL_JOIN(sp_profile_scope_, __LINE__)((profiler), (name), \
									 __FILE__, __LINE__)
#define SP_PROFILE_FUNCTION() SP_PROFILE_SCOPE(SP_DETAIL_FUNCTION_NAME)
#define SP_PROFILE_FUNCTION_CTX(profiler) SP_PROFILE_SCOPE_CTX((profiler), SP_DETAIL_FUNCTION_NAME)
#endif

#endif /* SCOPE_PROFILER_HPP */
