/* SPDX-License-Identifier: MIT */
/*
 * sp_eh_frame_end (recorder/eh-frame.c), the end of a function's code from
 * its FDE: for functions of this program it equals the end of the ELF
 * symbol (dladdr1's, the program is linked -rdynamic), an address inside a
 * function starts no FDE (0); a crafted table in a buffer gives its end,
 * and every broken or hostile variant of it gives 0 without a read outside
 * the buffer (the sanitizer build checks that), mutated at random too.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eh-frame.h"
#include "check-main.h"

/* Exported (in .dynsym: dladdr1 gives their symbols). */
int sp_test_eh_a(int x);
void sp_test_eh_b(volatile int *p);
double sp_test_eh_c(double x);

__attribute__((noinline)) int sp_test_eh_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) void sp_test_eh_b(volatile int *p)
{
	for (int i = 0; i < 10; i++)
		*p += i;
}

__attribute__((noinline)) double sp_test_eh_c(double x)
{
	return x * x - 2.0;
}

struct probe {
	uintptr_t fn, end;
	bool seen;
};

static int probe_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct probe *p = data;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && p->fn >= lo && p->fn < lo + ph->p_memsz) {
			p->seen = true;
			p->end = sp_eh_frame_end(info, p->fn);
			return 1;
		}
	}
	return 0;
}

static uintptr_t end_of(uintptr_t fn)
{
	struct probe p = { .fn = fn };
	dl_iterate_phdr(probe_module, &p);
	ck_assert(p.seen);
	return p.end;
}

START_TEST(test_own_functions)
{
	const void *fns[] = { (const void *)sp_test_eh_a, (const void *)sp_test_eh_b,
			      (const void *)sp_test_eh_c };
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		Dl_info di;
		const ElfW(Sym) *sym = NULL;
		ck_assert(dladdr1(fns[i], &di, (void **)&sym, RTLD_DL_SYMENT));
		ck_assert_ptr_nonnull(sym);
		ck_assert_ptr_eq(di.dli_saddr, fns[i]);
		uintptr_t fn = (uintptr_t)fns[i];
		ck_assert_uint_eq(end_of(fn), fn + sym->st_size);
		ck_assert_uint_eq(end_of(fn + 1), 0); /* inside: no FDE starts there */
	}
}
END_TEST

/* A module of one readable segment, `img`, that holds .eh_frame_hdr with
 * one entry, its CIE ("zR", pc-relative sdata4) and its FDE for FN, of
 * RANGE bytes. */
enum { HDR = 0, CIE = 64, FDE = 128, IMG = 256, RANGE = 100 };
static _Alignas(16) uint8_t img[IMG];
#define FN ((uintptr_t)img + 4096)

static void put32(size_t at, uint32_t v)
{
	memcpy(img + at, &v, 4);
}

static void build(void)
{
	memset(img, 0, sizeof img);
	img[HDR] = 1;        /* version */
	img[HDR + 1] = 0x1b; /* .eh_frame pointer: pcrel sdata4 */
	img[HDR + 2] = 0x03; /* count: udata4 */
	img[HDR + 3] = 0x3b; /* table: datarel sdata4 */
	put32(HDR + 4, 0);
	put32(HDR + 8, 1);
	put32(HDR + 12, (uint32_t)(int32_t)(FN - (uintptr_t)img));
	put32(HDR + 16, FDE);
	/* CIE: length, id 0, version 1, "zR", code 1, data -8, ra 16, aug 1, R */
	put32(CIE, 20);
	put32(CIE + 4, 0);
	static const uint8_t cie[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b };
	memcpy(img + CIE + 8, cie, sizeof cie);
	/* FDE: length, CIE pointer, pc_begin (pcrel), pc_range, aug 0 */
	put32(FDE, 16);
	put32(FDE + 4, FDE + 4 - CIE);
	put32(FDE + 8, (uint32_t)(int32_t)(FN - ((uintptr_t)img + FDE + 8)));
	put32(FDE + 12, RANGE);
}

static uintptr_t crafted(size_t load_size, size_t eh_at)
{
	ElfW(Phdr) ph[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R, .p_vaddr = (uintptr_t)img, .p_memsz = load_size },
		{ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R, .p_vaddr = (uintptr_t)img + eh_at,
		  .p_memsz = 20 },
	};
	struct dl_phdr_info info = { .dlpi_addr = 0, .dlpi_phdr = ph, .dlpi_phnum = 2 };
	return sp_eh_frame_end(&info, FN);
}

START_TEST(test_crafted)
{
	build();
	ck_assert_uint_eq(crafted(IMG, HDR), FN + RANGE);
	ck_assert_uint_eq(crafted(8, HDR), 0);       /* the segment ends in the header */
	ck_assert_uint_eq(crafted(FDE + 8, HDR), 0); /* ... in the FDE */
	ck_assert_uint_eq(crafted(IMG, IMG + 64), 0); /* .eh_frame_hdr outside it */
	struct { size_t at; uint32_t v; int width; } bad[] = {
		{ HDR, 2, 1 },                 /* version */
		{ HDR + 3, 0x1b, 1 },          /* table encoding */
		{ HDR + 2, 0x0b, 1 },          /* count encoding */
		{ HDR + 8, 0x7fffffff, 4 },    /* count beyond the segment */
		{ HDR + 8, 0, 4 },             /* no entry */
		{ HDR + 16, 0x7ffffff0, 4 },   /* FDE outside */
		{ FDE, 0xffffffff, 4 },        /* 64-bit FDE */
		{ FDE, 0x10000, 4 },           /* FDE longer than the segment */
		{ FDE + 4, 0x7fffffff, 4 },    /* CIE before the image */
		{ FDE + 4, 0, 4 },             /* a CIE id where an FDE's pointer is */
		{ FDE + 8, 0, 4 },             /* pc_begin is not fn */
		{ CIE + 4, 5, 4 },             /* CIE id */
		{ CIE + 8, 2, 1 },             /* CIE version */
		{ CIE + 10, 'X', 1 },          /* unknown augmentation */
		{ CIE + 16, 0x0f, 1 },         /* an FDE encoding of unknown size */
		{ CIE + 16, 0x9b, 1 },         /* indirect */
		{ CIE, 3, 4 },                 /* CIE too short for its fields */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		build();
		if (bad[i].width == 1)
			img[bad[i].at] = (uint8_t)bad[i].v;
		else
			put32(bad[i].at, bad[i].v);
		ck_assert_msg(crafted(IMG, HDR) == 0, "variant %zu", i);
	}
	/* An augmentation string without its NUL up to the end of the CIE. */
	build();
	memset(img + CIE + 9, 'z', 15);
	ck_assert_uint_eq(crafted(IMG, HDR), 0);
	/* Random bytes changed: an answer or 0, never a read outside. */
	srand(1);
	for (int round = 0; round < 20000; round++) {
		build();
		for (int k = rand() % 4 + 1; k > 0; k--)
			img[rand() % IMG] = (uint8_t)rand();
		uintptr_t end = crafted(IMG, HDR);
		ck_assert(end == 0 || end > FN);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eh-frame");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_own_functions);
	tcase_add_test(tc, test_crafted);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
