/* SPDX-License-Identifier: MIT */
/*
 * Address -> name, definition file and line, with elfutils libdwfl/libdw.
 * Modules are captured (path, load bias) on a function's first call while
 * they are mapped, so a library dlclose'd before finalize still resolves
 * from its file. C++ names are demangled with __cxa_demangle, found at run
 * time so that C programs need no libstdc++. Callers serialize all calls.
 * `recover` and `merge` use the same code on the modules a spill file names
 * (sp_sym_module_add), checking each file's build-id against the recorded one.
 */
#define _GNU_SOURCE
#include "functions.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include "lazy-dw.h"
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sp-map.h"

/* A function definition's DIE by entry address (module addresses). */
struct subprogram {
	Dwarf_Addr pc;
	Dwarf_Off off;
};

/* A symbol of the module's table, for the by-address index. */
struct fsym {
	GElf_Addr value;      /* as dwfl_module_getsym_info gives it (bias applied) */
	GElf_Addr end_before; /* the highest value + size of the entries before */
	GElf_Xword size;
	uint32_t index;       /* in the table: the order libdwfl searches */
	uint8_t bind;         /* libdwfl's preference: global 3, weak 2, local 1 */
	bool code;            /* a function (STT_FUNC, STT_GNU_IFUNC) */
};

struct module {
	char *path;
	uintptr_t bias;       /* link_map l_addr */
	Dwfl *dwfl;           /* opened on first resolve, one per module */
	Dwfl_Module *mod;     /* NULL if the file could not be read */
	bool opened, indexed;
	bool stale;           /* not the file that ran (sp_sym_module_check): never opened */
	struct subprogram *subs; /* sorted by pc, built on the first lookup */
	size_t nsubs, capsubs;
	struct fsym *syms;    /* sorted by value, built on the first name lookup */
	size_t nsyms;
	bool syms_indexed;
};

static struct module *modules;
static int nmodules, capmodules;
static void (*module_hook)(void);

/* libdw's own, filled when libdw is loaded (lazy.h) */
static Dwfl_Callbacks callbacks;

void sp_sym_set_module_hook(void (*fn)(void))
{
	module_hook = fn;
}

/* Index of (path, bias) in the table, added if new (*ret_new). */
static int module_find_or_add(const char *path, uintptr_t bias, bool *ret_new)
{
	*ret_new = false;
	for (int i = 0; i < nmodules; i++)
		if (modules[i].bias == bias && strcmp(modules[i].path, path) == 0)
			return i;
	if (nmodules == capmodules) {
		int cap = capmodules ? capmodules * 2 : 16;
		struct module *m = realloc(modules, (size_t)cap * sizeof *m);
		if (!m)
			return -ENOMEM;
		modules = m;
		capmodules = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	modules[nmodules] = (struct module){ .path = copy, .bias = bias };
	*ret_new = true;
	return nmodules++;
}

/* The main program's path, read once: it is the same file until exec,
 * which replaces this library too ("" when /proc could not say). */
static char exe_path[4096];
static pthread_once_t exe_once = PTHREAD_ONCE_INIT;

static void read_exe_path(void)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	exe_path[n > 0 ? n : 0] = '\0';
}

int sp_sym_module_of(uintptr_t addr)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return -ENOENT;
	const char *path = lm->l_name;
	if (!path || !*path) { /* the main program */
		pthread_once(&exe_once, read_exe_path);
		if (!exe_path[0])
			return -ENOENT;
		path = exe_path;
	}
	bool added;
	int i = module_find_or_add(path, lm->l_addr, &added);
	if (added && module_hook)
		module_hook(); /* the spill file describes the new module */
	return i;
}

int sp_sym_module_add(const char *path, uintptr_t bias)
{
	bool added;
	return module_find_or_add(path, bias, &added);
}

const char *sp_sym_module_path(int module, uintptr_t *ret_bias)
{
	if (module < 0 || module >= nmodules)
		return NULL;
	*ret_bias = modules[module].bias;
	return modules[module].path;
}

int sp_sym_module_count(void)
{
	return nmodules;
}

int sp_sym_module_find(const char *path)
{
	for (int i = 0; i < nmodules; i++)
		if (strcmp(modules[i].path, path) == 0)
			return i;
	return -ENOENT;
}

static Dwfl_Module *module_open(struct module *m)
{
	if (m->opened || m->stale)
		return m->mod;
	m->opened = true;
	if (sp_lazy_load(SP_LAZY_DW))
		return NULL; /* names stay module+offset */
	callbacks.find_elf = dwfl_build_id_find_elf;
	callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	callbacks.section_address = dwfl_offline_section_address;
	m->dwfl = dwfl_begin(&callbacks);
	if (!m->dwfl)
		return NULL;
	dwfl_report_begin(m->dwfl);
	const char *base = strrchr(m->path, '/');
	m->mod = dwfl_report_elf(m->dwfl, base ? base + 1 : m->path, m->path, -1, m->bias, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	return m->mod;
}

int sp_sym_module_check(int module, const void *build_id, size_t n)
{
	if (module < 0 || module >= nmodules)
		return -EINVAL;
	struct module *m = &modules[module];
	if (m->stale)
		return -ESTALE;
	if (access(m->path, R_OK) != 0)
		return -errno;
	Dwfl_Module *mod = module_open(m);
	if (!mod)
		return -ENOEXEC;
	const unsigned char *id;
	GElf_Addr vaddr;
	int k = dwfl_module_build_id(mod, &id, &vaddr);
	if (n && (k != (int)n || memcmp(id, build_id, n) != 0)) {
		/* Another build of the file: its symbols would name other code. */
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->mod = NULL;
		m->stale = true;
		free(m->syms);
		m->syms = NULL;
		m->nsyms = 0;
		return -ESTALE;
	}
	return 0;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static bool tried;
	if (!tried) {
		tried = true;
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn) {
			void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (h)
				fn = (demangle_fn)dlsym(h, "__cxa_demangle");
		}
	}
	return fn;
}

/* Compiler-made copies of a function keep its name plus a suffix. */
static void strip_clone_suffix(char *s)
{
	static const char *const suffixes[] = {
		".constprop.", ".isra.", ".part.", ".cold", ".lto_priv.", ".localalias",
		".llvm.", ".clone.",
	};
	char *cut = NULL;
	for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
		char *p = strstr(s, suffixes[i]);
		if (p && (!cut || p < cut))
			cut = p;
	}
	if (cut)
		*cut = '\0';
}

/*
 * A demangled function template carries its return type in front
 * ("int geo::square<int>(int)"). Drop it: the name then starts with the
 * qualified name, which is what an anchored INCLUDE/EXCLUDE regex expects.
 * The return type ends at the last space outside brackets before the
 * parameter list; operator names and "(anonymous namespace)" are skipped.
 */
static const char *skip_return_type(const char *s)
{
	int depth = 0;
	const char *space = NULL;
	for (const char *p = s; *p; p++) {
		if (depth == 0 && strncmp(p, "(anonymous namespace)", 21) == 0) {
			p += 20;
			continue;
		}
		if (depth == 0 && strncmp(p, "operator", 8) == 0 &&
		    (p == s || p[-1] == ':' || p[-1] == ' ')) {
			p += 8;
			if (p[0] == '(' && p[1] == ')')
				p += 2;
			while (*p && *p != '(')
				p++;
			break;
		}
		switch (*p) {
		case '(':
			if (depth == 0)
				return space ? space + 1 : s;
			/* fallthrough */
		case '<': case '[': case '{':
			depth++;
			break;
		case ')': case '>': case ']': case '}':
			if (--depth < 0)
				return s; /* not a shape we understand: keep it all */
			break;
		case ' ':
			if (depth == 0)
				space = p;
			break;
		}
	}
	return space ? space + 1 : s;
}

char *sp_sym_demangle(const char *raw)
{
	char *copy = strdup(raw);
	if (!copy)
		return NULL;
	strip_clone_suffix(copy);
	demangle_fn fn = strncmp(copy, "_Z", 2) == 0 ? demangler() : NULL;
	int status = -1;
	char *dem = fn ? fn(copy, NULL, NULL, &status) : NULL;
	if (!dem || status != 0) {
		free(dem);
		return copy;
	}
	char *out = strdup(skip_return_type(dem));
	free(dem);
	free(copy);
	return out;
}

static char *unresolved_name(int module, uintptr_t addr)
{
	char *s = NULL;
	if (module >= 0 && module < nmodules) {
		const char *p = modules[module].path, *base = strrchr(p, '/');
		if (asprintf(&s, "%s+0x%" PRIxPTR, base ? base + 1 : p, addr - modules[module].bias) < 0)
			s = NULL;
	} else if (asprintf(&s, "unknown+0x%" PRIxPTR, addr) < 0) {
		s = NULL;
	}
	return s;
}

/*
 * realpath() of the source files, remembered until sp_sym_close_all: a
 * module's functions come from few files (headers mostly), and realpath
 * costs a readlink per path component. Resolving the proxy's 440
 * functions made 3,000 of them a rank (now ~60): about 1 ms on a local
 * disk, far more with the sources on a network file system, every rank.
 * Keyed by the path's hash (sp_map), checked by the path itself; a
 * colliding path is resolved without the memo.
 */
struct real_memo {
	char *path, *real; /* real NULL: realpath failed (kept as given) */
};
static struct sp_map memo_map;
static struct real_memo *memo;
static uint32_t nmemo, capmemo;

static uint64_t path_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h;
}

/* realpath(p), or NULL: memoised (the result is the caller's). */
static char *real_path(const char *p)
{
	uint64_t h = path_hash(p);
	uint32_t *i = sp_map_find(&memo_map, h);
	if (i && strcmp(memo[*i].path, p) == 0)
		return memo[*i].real ? strdup(memo[*i].real) : NULL;
	char *real = realpath(p, NULL);
	if (i)
		return real; /* another path of the same hash: not remembered */
	if (nmemo == capmemo) {
		uint32_t cap = capmemo ? 2 * capmemo : 64;
		struct real_memo *v = realloc(memo, cap * sizeof *v);
		if (!v)
			return real;
		memo = v;
		capmemo = cap;
	}
	char *path = strdup(p), *copy = real ? strdup(real) : NULL;
	if (!path || (real && !copy) || sp_map_put(&memo_map, h, nmemo) != 0) {
		free(path);
		free(copy);
		return real;
	}
	memo[nmemo++] = (struct real_memo){ path, copy };
	return real;
}

static void real_memo_free(void)
{
	for (uint32_t i = 0; i < nmemo; i++) {
		free(memo[i].path);
		free(memo[i].real);
	}
	free(memo);
	memo = NULL;
	nmemo = capmemo = 0;
	sp_map_free(&memo_map);
}

/* Join a relative DWARF file name with the unit's compilation directory. */
static char *absolute_file(const char *file, Dwarf_Die *cu)
{
	Dwarf_Attribute attr;
	const char *dir = file[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	char *s = NULL;
	if (dir && asprintf(&s, "%s/%s", dir, file) < 0)
		return NULL;
	/* Canonical when the file still exists ("build/../src/a.c" -> "src/a.c"). */
	char *real = real_path(s ? s : file);
	if (real) {
		free(s);
		return real;
	}
	return s ? s : strdup(file);
}

/* The unit holding addr. libdw's lookup needs .debug_aranges, which clang
 * does not emit by default; then walk the units' address ranges. */
static Dwarf_Die *find_cu(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *ret_bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, ret_bias);
	if (cu)
		return cu;
	while ((cu = dwfl_module_nextcu(mod, cu, ret_bias)) != NULL)
		if (dwarf_haspc(cu, addr - *ret_bias) > 0)
			return cu;
	return NULL;
}

/* DW_AT_decl_file. libdw 0.188 rejects index 0, which DWARF 5 (clang's
 * default) uses for the unit's primary file: look it up in the unit's file
 * table, else take the unit's name. */
static const char *decl_file(Dwarf_Die *die, Dwarf_Die *cu)
{
	const char *file = dwarf_decl_file(die);
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	if (file || dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &attr), &idx) != 0)
		return file;
	Dwarf_Files *files;
	size_t n;
	if (dwarf_getsrcfiles(cu, &files, &n) == 0 && idx < n)
		file = dwarf_filesrc(files, idx, NULL, NULL);
	return file ? file : idx == 0 ? dwarf_diename(cu) : NULL;
}

static void add_subprogram(struct module *m, Dwarf_Die *die)
{
	Dwarf_Addr pc, end;
	ptrdiff_t it;
	/* Declarations (a class's members, most of them) have neither: the
	 * abbreviation says so without reading the DIE's values. */
	if (!dwarf_hasattr(die, DW_AT_low_pc) && !dwarf_hasattr(die, DW_AT_ranges))
		return;
	if (dwarf_lowpc(die, &pc) != 0) {
		Dwarf_Addr base;
		if ((it = dwarf_ranges(die, 0, &base, &pc, &end)) <= 0)
			return;
	}
	if (m->nsubs == m->capsubs) {
		size_t cap = m->capsubs ? m->capsubs * 2 : 256;
		struct subprogram *v = realloc(m->subs, cap * sizeof *v);
		if (!v)
			return;
		m->subs = v;
		m->capsubs = cap;
	}
	m->subs[m->nsubs++] = (struct subprogram){ .pc = pc, .off = dwarf_dieoffset(die) };
}

/* Whether a DIE's children can hold a function's own (out-of-line) DIE.
 * Not an inlined call's (its parameters, blocks and further inlined calls:
 * the out-of-line copy has its own DIE elsewhere), a call site's, a
 * variable's or a parameter's: at -O2 those are most of a C++ unit's DIEs. */
static bool may_hold_functions(int tag)
{
	switch (tag) {
	case DW_TAG_inlined_subroutine:
	case DW_TAG_call_site:
	case DW_TAG_GNU_call_site:
	case DW_TAG_formal_parameter:
	case DW_TAG_variable:
	case DW_TAG_template_type_parameter:
	case DW_TAG_template_value_parameter:
	case DW_TAG_enumeration_type:
	case DW_TAG_subroutine_type:
		return false;
	default:
		return true;
	}
}

/* Every DIE below `die` and its siblings that can be a function
 * (namespaces, classes, functions: lambdas and local classes live inside
 * functions). */
static void walk_dies(struct module *m, Dwarf_Die *die)
{
	do {
		int tag = dwarf_tag(die);
		if (tag == DW_TAG_subprogram)
			add_subprogram(m, die);
		Dwarf_Die child;
		if (may_hold_functions(tag) && dwarf_haschildren(die) > 0 && dwarf_child(die, &child) == 0)
			walk_dies(m, &child);
	} while (dwarf_siblingof(die, die) == 0);
}

static int cmp_subprogram(const void *a, const void *b)
{
	Dwarf_Addr x = ((const struct subprogram *)a)->pc, y = ((const struct subprogram *)b)->pc;
	return x < y ? -1 : x > y;
}

/*
 * The DIE of the function that starts at addr. One walk over the module's
 * units builds a sorted index, so resolving n functions costs one pass, not
 * n (dwarf_getscopes finds nothing inside clang's namespaces in libdw 0.188).
 */
static bool find_subprogram(struct module *m, Dwarf_Addr addr, Dwarf_Die *ret_die, Dwarf_Die *ret_cu)
{
	Dwarf_Addr bias;
	if (!m->indexed) {
		m->indexed = true;
		Dwarf_Die *cu = NULL, child;
		while ((cu = dwfl_module_nextcu(m->mod, cu, &bias)) != NULL)
			if (dwarf_child(cu, &child) == 0)
				walk_dies(m, &child);
		if (m->nsubs)
			qsort(m->subs, m->nsubs, sizeof *m->subs, cmp_subprogram);
	}
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);
	size_t lo = 0, hi = m->nsubs;
	while (dw && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->subs[mid].pc < addr - bias) {
			lo = mid + 1;
		} else if (m->subs[mid].pc > addr - bias) {
			hi = mid;
		} else {
			return dwarf_offdie(dw, m->subs[mid].off, ret_die) &&
			       dwarf_diecu(ret_die, ret_cu, NULL, NULL);
		}
	}
	return false;
}

/* The definition's file and line: the function's DIE (decl_file/decl_line
 * follow abstract_origin and specification), else the line table entry of
 * its first instruction. */
static void find_source(struct module *m, Dwarf_Addr addr, struct sp_symbol *sym)
{
	Dwarf_Die die, cudie;
	int line;
	if (find_subprogram(m, addr, &die, &cudie)) {
		const char *file = decl_file(&die, &cudie);
		if (file && dwarf_decl_line(&die, &line) == 0) {
			sym->file = absolute_file(file, &cudie);
			sym->line = line;
			return;
		}
	}
	Dwarf_Addr bias;
	Dwarf_Die *cu = find_cu(m->mod, addr, &bias);
	Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
	const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (file && dwarf_lineno(l, &line) == 0) {
		sym->file = absolute_file(file, cu);
		sym->line = line;
	}
}

/* ---- symbol names by address -------------------------------------------- */

static int binding_value(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Whether section shndx of elf is loaded (SHF_ALLOC): libdwfl's address
 * lookup skips the others (linker warnings, .gnu.warning.*), whose symbols
 * it reports with shndx -1 once it has the debug file. Absolute and other
 * reserved indexes count as loaded. */
static bool in_memory(Elf *elf, GElf_Word shndx)
{
	if (shndx == (GElf_Word)-1)
		return false;
	if (!elf || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return true;
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_getscn(elf, shndx);
	return !scn || !gelf_getshdr(scn, &shdr) || (shdr.sh_flags & SHF_ALLOC);
}

/* The module's symbols that libdwfl's address lookup considers (named,
 * defined, not a section, file or TLS symbol, in a loaded section), sorted
 * by value. */
static void index_symbols(struct module *m)
{
	m->syms_indexed = true;
	int n = dwfl_module_getsymtab(m->mod);
	if (n <= 1)
		return;
	struct fsym *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return;
	size_t k = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &value, &shndx, &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS || !in_memory(elf, shndx))
			continue;
		v[k++] = (struct fsym){ .value = value, .size = sym.st_size, .index = (uint32_t)i,
					.bind = (uint8_t)binding_value(&sym),
					.code = type == STT_FUNC || type == STT_GNU_IFUNC };
	}
	qsort(v, k, sizeof *v, cmp_fsym);
	GElf_Addr end = 0;
	for (size_t i = 0; i < k; i++) {
		v[i].end_before = end;
		if (v[i].value + v[i].size > end)
			end = v[i].value + v[i].size;
	}
	m->syms = v;
	m->nsyms = k;
}

/*
 * The name libdwfl's dwfl_module_addrinfo gives a function's own address,
 * found by binary search: libdwfl reads the whole symbol table for every
 * lookup (a C++ program's tens of thousands of symbols, times each of its
 * functions, was most of the finalize's symbol time). Its choice among the
 * sized symbols that start at the address: the highest binding (global,
 * weak, local), then the smallest size, then the first in table order
 * (libdwfl 0.188's rules; test-functions checks them against libdwfl on
 * libc's and libstdc++'s aliases). NULL when that rule is not certain to
 * be libdwfl's (no sized symbol starts there, an earlier symbol covers the
 * address, a sizeless symbol there binds higher, or the choice is not a
 * function): the caller asks libdwfl.
 */
static const char *indexed_name(struct module *m, Dwarf_Addr addr, bool any_type)
{
	if (!m->syms_indexed)
		index_symbols(m);
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].value < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->nsyms || m->syms[lo].value != addr || m->syms[lo].end_before > addr)
		return NULL;
	const struct fsym *best = NULL;
	int sizeless = -1; /* the highest binding of a sizeless symbol there */
	for (size_t i = lo; i < m->nsyms && m->syms[i].value == addr; i++) {
		if (m->syms[i].size == 0) {
			if (m->syms[i].bind > sizeless)
				sizeless = m->syms[i].bind;
			continue;
		}
		if (!best || m->syms[i].bind > best->bind ||
		    (m->syms[i].bind == best->bind && m->syms[i].size < best->size))
			best = &m->syms[i]; /* ties: the first (entries sort by index) */
	}
	/* A sizeless symbol of a higher binding at the same address (a global
	 * section-end marker on a local object: __TMC_END__ at the end of
	 * .data on completed.0 at the start of .bss) is libdwfl's choice
	 * there: not certain either. */
	if (!best || (!best->code && !any_type) || sizeless > (int)best->bind)
		return NULL;
	GElf_Sym sym;
	GElf_Addr value;
	GElf_Word shndx;
	return dwfl_module_getsym_info(m->mod, (int)best->index, &sym, &value, &shndx, NULL, NULL);
}

int sp_sym_check_index(int module, size_t *ret_checked)
{
	struct module *m = module >= 0 && module < nmodules ? &modules[module] : NULL;
	if (!m || !module_open(m))
		return -ENOENT;
	if (!m->syms_indexed)
		index_symbols(m);
	int wrong = 0;
	size_t checked = 0; /* every type: the size and order rules show on data aliases */
	for (size_t i = 0; i < m->nsyms; i++) {
		if (i && m->syms[i].value == m->syms[i - 1].value)
			continue;
		const char *mine = indexed_name(m, m->syms[i].value, true);
		GElf_Off off;
		GElf_Sym esym;
		const char *theirs = dwfl_module_addrinfo(m->mod, m->syms[i].value, &off, &esym, NULL,
							  NULL, NULL);
		if (!mine)
			continue; /* the caller would ask libdwfl */
		checked++;
		if (!theirs || strcmp(mine, theirs) != 0) {
			if (wrong++ < 5)
				fprintf(stderr, "symbol index: %#" PRIx64 " %s, libdwfl %s\n",
					(uint64_t)m->syms[i].value, mine, theirs ? theirs : "(none)");
		}
	}
	*ret_checked = checked;
	return wrong;
}

int sp_sym_resolve(int module, uintptr_t addr, bool want_source, struct sp_symbol *ret_sym)
{
	struct sp_symbol sym = { .name = NULL, .file = NULL, .line = -1 };
	Dwfl_Module *mod = module >= 0 && module < nmodules ? module_open(&modules[module]) : NULL;
	if (mod) {
		const char *raw = indexed_name(&modules[module], addr, false);
		if (!raw) {
			GElf_Off off;
			GElf_Sym esym;
			raw = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
		}
		if (raw && *raw)
			sym.name = sp_sym_demangle(raw);
		if (want_source)
			find_source(&modules[module], addr, &sym);
	}
	if (!sym.name)
		sym.name = unresolved_name(module, addr);
	if (!sym.name) {
		sp_sym_free(&sym);
		return -ENOMEM;
	}
	*ret_sym = sym;
	return 0;
}

/* Name of the function inlined at pc (innermost DW_TAG_inlined_subroutine),
 * NULL when pc is not in inlined code. */
static char *inlined_name(Dwarf_Die *cu, Dwarf_Addr pc)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);
	char *name = NULL;
	for (int i = 0; i < n && !name; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Attribute attr;
		const char *raw = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name,
									&attr));
		if (!raw)
			raw = dwarf_diename(&scopes[i]);
		if (raw)
			name = sp_sym_demangle(raw);
	}
	free(scopes);
	return name;
}

int sp_sym_resolve_pc(int module, uintptr_t pc, struct sp_symbol *ret_sym)
{
	struct sp_symbol sym = { .name = NULL, .file = NULL, .line = -1 };
	Dwfl_Module *mod = module >= 0 && module < nmodules ? module_open(&modules[module]) : NULL;
	if (mod) {
		Dwarf_Addr bias;
		Dwarf_Die *cu = find_cu(mod, pc, &bias);
		Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, pc - bias) : NULL;
		const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		int line;
		if (file && dwarf_lineno(l, &line) == 0) {
			sym.file = absolute_file(file, cu);
			sym.line = line;
		}
		if (cu)
			sym.name = inlined_name(cu, pc - bias);
		GElf_Off off;
		GElf_Sym esym;
		const char *raw = sym.name ? NULL
					   : dwfl_module_addrinfo(mod, pc, &off, &esym, NULL, NULL, NULL);
		if (raw && *raw)
			sym.name = sp_sym_demangle(raw);
	}
	if (!sym.name)
		sym.name = unresolved_name(module, pc);
	if (!sym.name) {
		sp_sym_free(&sym);
		return -ENOMEM;
	}
	*ret_sym = sym;
	return 0;
}

void sp_sym_free(struct sp_symbol *sym)
{
	free(sym->name);
	free(sym->file);
	sym->name = sym->file = NULL;
}

void sp_sym_close_all(void)
{
	real_memo_free();
	for (int i = 0; i < nmodules; i++) {
		if (modules[i].dwfl)
			dwfl_end(modules[i].dwfl);
		modules[i].dwfl = NULL;
		modules[i].mod = NULL;
		modules[i].opened = false;
		free(modules[i].subs);
		modules[i].subs = NULL;
		modules[i].nsubs = modules[i].capsubs = 0;
		modules[i].indexed = false;
		free(modules[i].syms);
		modules[i].syms = NULL;
		modules[i].nsyms = 0;
		modules[i].syms_indexed = false;
	}
}
