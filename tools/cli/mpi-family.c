/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler run: which MPI family's preload library a program needs.
 * Reads the program's dynamic dependencies (DT_NEEDED, followed through the
 * loader's search path, bounded) with libelf and maps the MPI library it
 * finds to a family: libmpi.so.40 is Open MPI, libmpich.so.12 or
 * libmpi.so.12 MPICH's ABI (MPICH, Intel MPI, Cray MPICH, MVAPICH).
 * The binary is untrusted input: every read is bounded, and a file libelf
 * cannot read counts as linked against no MPI.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi-family.h"

enum family { FAM_NONE, FAM_OPENMPI, FAM_MPICH, FAM_COUNT };
static const char *const family_names[FAM_COUNT] = { "none", "openmpi", "mpich" };
static const char *const family_titles[FAM_COUNT] = { "no MPI", "Open MPI", "MPICH" };

/* The MPI libraries by SONAME (the name in DT_NEEDED). */
static const struct { const char *soname; enum family fam; } mpi_libs[] = {
	{ "libmpi.so.40", FAM_OPENMPI },
	{ "libmpich.so.12", FAM_MPICH },
	{ "libmpi.so.12", FAM_MPICH },     /* Intel MPI */
	{ "libmpi_cray.so.12", FAM_MPICH }, /* Cray MPICH */
};

/* Bounds of the walk: objects visited, DT_NEEDED entries per object. */
#define MAX_OBJECTS 64
#define MAX_DYN 4096
#define MAX_SYMS 65536 /* dynamic symbols read for MPI imports (the program's) */

struct walk {
	char paths[MAX_OBJECTS][PATH_MAX];
	int n;
	enum family fam;      /* first MPI library found */
	char soname[64];      /* its name */
	bool both;            /* another family's library too */
	bool imports_mpi;     /* the program itself imports MPI_* or PMPI_* */
};

static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

static void add_object(struct walk *w, const char *path)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->paths[i], path))
			return;
	if (w->n < MAX_OBJECTS && strlen(path) < PATH_MAX)
		strcpy(w->paths[w->n++], path);
}

/* Look name up in the ':'-separated dirs ($ORIGIN = origin); true if added. */
static bool search_dirs(struct walk *w, const char *name, const char *dirs, const char *origin)
{
	char buf[PATH_MAX];
	while (dirs && *dirs) {
		size_t len = strcspn(dirs, ":");
		char dir[PATH_MAX];
		if (len > 0 && len < sizeof dir) {
			memcpy(dir, dirs, len);
			dir[len] = '\0';
			const char *d = dir;
			char expanded[PATH_MAX];
			if (!strncmp(dir, "$ORIGIN", 7) || !strncmp(dir, "${ORIGIN}", 9)) {
				const char *rest = dir + (dir[1] == '{' ? 9 : 7);
				if (snprintf(expanded, sizeof expanded, "%s%s", origin, rest) <
				    (int)sizeof expanded)
					d = expanded;
			}
			if (snprintf(buf, sizeof buf, "%s/%s", d, name) < (int)sizeof buf &&
			    access(buf, R_OK) == 0) {
				add_object(w, buf);
				return true;
			}
		}
		dirs += len;
		if (*dirs == ':')
			dirs++;
	}
	return false;
}

static void note_mpi(struct walk *w, const char *name)
{
	for (size_t i = 0; i < sizeof mpi_libs / sizeof *mpi_libs; i++) {
		if (strcmp(name, mpi_libs[i].soname))
			continue;
		if (w->fam == FAM_NONE) {
			w->fam = mpi_libs[i].fam;
			snprintf(w->soname, sizeof w->soname, "%s", name);
		} else if (w->fam != mpi_libs[i].fam) {
			w->both = true;
		}
	}
}

/* Whether the program imports an MPI function: linked with -lscope-profiler
 * (which defines the MPI_* wrappers) and --as-needed, an MPI program may
 * lack its libmpi in DT_NEEDED; it still needs MPI from a preload. */
static bool imports_mpi(Elf *e)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; data && i < n && i < MAX_SYMS; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx != SHN_UNDEF)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && (!strncmp(name, "MPI_", 4) || !strncmp(name, "PMPI_", 5)))
				return true;
		}
	}
	return false;
}

/* path as ELF (a regular file only: a FIFO or device named by a hostile
 * DT_NEEDED would block or never end): its descriptor in *ret_fd, or NULL
 * with nothing left open. */
static Elf *elf_open(const char *path, int *ret_fd)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	Elf *e = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		e = NULL;
	}
	if (!e && fd >= 0)
		close(fd);
	*ret_fd = e ? fd : -1;
	return e;
}

/* The dynamic section of one object: note MPI libraries, queue the others
 * found in the search path (as ld.so: DT_RPATH without DT_RUNPATH, then
 * LD_LIBRARY_PATH, DT_RUNPATH, the system directories). */
static void scan_object(struct walk *w, const char *path)
{
	int fd;
	Elf *e = elf_open(path, &fd);
	if (!e)
		return;
	if (w->n > 0 && !strcmp(path, w->paths[0]) && imports_mpi(e))
		w->imports_mpi = true;
	char origin[PATH_MAX];
	snprintf(origin, sizeof origin, "%s", path);
	char *slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(origin, ".");
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		if (n > MAX_DYN)
			n = MAX_DYN;
		const char *rpath = NULL, *runpath = NULL;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn d;
			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag == DT_RPATH)
				rpath = elf_strptr(e, sh.sh_link, d.d_un.d_val);
			else if (d.d_tag == DT_RUNPATH)
				runpath = elf_strptr(e, sh.sh_link, d.d_un.d_val);
		}
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn d;
			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, d.d_un.d_val);
			if (!name || !*name)
				continue;
			note_mpi(w, name);
			/* Our own library (the manual API): its libmpi is the
			 * default family's, not the program's. */
			if (!strncmp(name, "libscope-profiler", 17))
				continue;
			if (strchr(name, '/')) {
				add_object(w, name);
				continue;
			}
			if (!runpath && search_dirs(w, name, rpath, origin))
				continue;
			if (search_dirs(w, name, getenv("LD_LIBRARY_PATH"), origin) ||
			    search_dirs(w, name, runpath, origin))
				continue;
			for (size_t k = 0; k < sizeof default_dirs / sizeof *default_dirs; k++)
				if (search_dirs(w, name, default_dirs[k], origin))
					break;
		}
		break;
	}
	elf_end(e);
	close(fd);
}

/* The program's path as execvp finds it, false if none. */
static bool program_path(const char *program, char *out, size_t size)
{
	if (strchr(program, '/'))
		return snprintf(out, size, "%s", program) < (int)size;
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t len = strcspn(path, ":");
		if (snprintf(out, size, "%.*s/%s", (int)len, len ? path : ".", program) < (int)size &&
		    access(out, X_OK) == 0)
			return true;
		path += len;
		if (*path == ':')
			path++;
	}
	return false;
}

static bool launcher_name(const char *path)
{
	static const char *const names[] = {
		"mpirun", "mpiexec", "orterun", "oshrun", "srun", "prun", "aprun", "jsrun",
	};
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(base, names[i]))
			return true;
	/* Debian's alternatives and MPICH's: mpirun.openmpi, mpiexec.hydra... */
	return !strncmp(base, "mpirun.", 7) || !strncmp(base, "mpiexec.", 8);
}

bool sp_is_mpi_launcher(const char *program)
{
	if (launcher_name(program))
		return true;
	char path[PATH_MAX], real[PATH_MAX];
	return program_path(program, path, sizeof path) && realpath(path, real) &&
	       launcher_name(real);
}

bool sp_program_is_static(const char *program)
{
	char path[PATH_MAX];
	if (elf_version(EV_CURRENT) == EV_NONE || !program_path(program, path, sizeof path))
		return false;
	int fd;
	Elf *e = elf_open(path, &fd);
	bool is_static = false;
	GElf_Ehdr eh;
	size_t n = 0;
	if (e && gelf_getehdr(e, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
	    elf_getphdrnum(e, &n) == 0) {
		/* An executable without a PT_INTERP is loaded by the kernel
		 * alone (static, static-pie); a shared library has none either,
		 * but is not run. */
		bool interp = false, dynamic = false;
		for (size_t i = 0; i < n && i < 4096; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph))
				continue;
			interp |= ph.p_type == PT_INTERP;
			dynamic |= ph.p_type == PT_DYNAMIC;
		}
		is_static = !interp && (eh.e_type == ET_EXEC || dynamic);
	}
	if (e) {
		elf_end(e);
		close(fd);
	}
	return is_static;
}

/* Under an MPI launcher (its rank variable set) a program linked with no
 * MPI may still load one (a script, Python's mpi4py by dlopen): it keeps a
 * library with the MPI wrappers there (launcher_family's, or the
 * default's). */
static bool under_mpi_launcher(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return true;
	}
	return false;
}

/* The family of the launcher that started us, from the variables only it
 * sets (Open MPI's OMPI_COMM_WORLD_RANK; Hydra's HYDI_CONTROL_FD or
 * PMI_FD, MPICH's launcher); FAM_NONE when neither (Slurm, PMIx alone). A
 * program that names no MPI itself but starts one (a wrapper script, bash
 * -c, timeout) gets the library of the MPI its launcher implies. */
static int launcher_family(void)
{
	const char *v = getenv("OMPI_COMM_WORLD_RANK");
	if (v && *v)
		return FAM_OPENMPI;
	v = getenv("HYDI_CONTROL_FD");
	const char *fd = getenv("PMI_FD"), *rank = getenv("PMI_RANK");
	if ((v && *v) || (fd && *fd && rank && *rank))
		return FAM_MPICH;
	return FAM_NONE;
}

/* lib's directory + "/libscope-profiler-" + name + ".so" into cand; false
 * when lib is a bare name (then cand is the bare library name). */
static bool beside(const char *lib, const char *name, char *cand, size_t size)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", lib);
	char *slash = strrchr(dir, '/');
	if (!slash) {
		snprintf(cand, size, "libscope-profiler-%s.so", name);
		return false;
	}
	*slash = '\0';
	snprintf(cand, size, "%s/libscope-profiler-%s.so", dir, name);
	return true;
}

static int family_of_name(const char *name)
{
	for (int f = FAM_OPENMPI; f < FAM_COUNT; f++)
		if (!strcmp(name, family_names[f]))
			return f;
	return -1;
}

int sp_mpi_family_library(const char *program, const char *forced, bool keep, char *lib,
			  size_t size, bool verbose)
{
	int want = FAM_NONE;
	if (forced && (want = family_of_name(forced)) < 0) {
		fprintf(stderr, "scope-profiler run: unknown MPI family '%s' (known: openmpi, mpich)\n",
			forced);
		return -1;
	}
	struct walk *w = calloc(1, sizeof *w);
	if (!w)
		return 0; /* no memory to look: the default library */
	char path[PATH_MAX];
	if (elf_version(EV_CURRENT) != EV_NONE && program_path(program, path, sizeof path)) {
		add_object(w, path);
		for (int i = 0; i < w->n && w->fam == FAM_NONE; i++)
			scan_object(w, w->paths[i]);
	}
	int ret = 0;
	if (w->both) {
		fprintf(stderr, "scope-profiler run: %s loads more than one MPI (%s and another family's)\n",
			program, w->soname);
		ret = -1;
	} else if (want != FAM_NONE && w->fam != FAM_NONE && want != (int)w->fam) {
		fprintf(stderr, "scope-profiler run: --mpi %s, but %s is linked with %s (%s)\n",
			forced, program, w->soname, family_titles[w->fam]);
		ret = -1;
	}
	int fam = want != FAM_NONE ? want : (int)w->fam;
	bool from_launcher = false;
	if (fam == FAM_NONE && !w->imports_mpi && (fam = launcher_family()) != FAM_NONE)
		from_launcher = true;
	char cand[PATH_MAX + 64];
	/* No MPI at all: the library without MPI, when it was built (an older
	 * install has only the default one, which works, loading its libmpi). */
	if (ret == 0 && fam == FAM_NONE && !keep && !w->imports_mpi && !under_mpi_launcher() &&
	    beside(lib, "serial", cand, sizeof cand) && access(cand, R_OK) == 0)
		snprintf(lib, size, "%s", cand);
	if (ret == 0 && fam != FAM_NONE && !keep) {
		bool slash = beside(lib, family_names[fam], cand, sizeof cand);
		if (slash && access(cand, R_OK) != 0) {
			fprintf(stderr,
				"scope-profiler run: %s needs the %s library, %s, which was not built "
				"(meson -Dmpi=...)\n",
				program, family_titles[fam], cand);
			ret = -1;
		} else {
			snprintf(lib, size, "%s", cand);
		}
	}
	if (ret == 0 && verbose)
		fprintf(stderr, "scope-profiler run: %s: %s%s%s, preloading %s\n", program,
			family_titles[fam], w->fam != FAM_NONE ? " via " : "",
			from_launcher ? " (its launcher's)" : w->soname, lib);
	free(w);
	return ret;
}
