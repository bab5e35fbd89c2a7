/* SPDX-License-Identifier: MIT */
/*
 * Where a function's code ends, from its unwind table: the FDE that starts
 * at it, found by the binary search table of .eh_frame_hdr (eh-frame.h).
 * The self-patcher uses it to find a tail exit, the `jmp` to the exit hook
 * that ends a function (preload/patch.c). The tables are read in place, in
 * the loaded module, every read bounded by the segment it is in: only the
 * encodings GCC, clang and the linkers write are read, anything else is
 * "not known" (0), never a guess.
 */
#define _GNU_SOURCE
#include "eh-frame.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A bounded reader over one readable segment of a module. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

/* A reader of `a` up to the end of the readable PT_LOAD segment of info
 * that holds it; false when none does. */
static bool rd_at(const struct dl_phdr_info *info, uintptr_t a, struct rd *r)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && a >= lo && a < hi) {
			*r = (struct rd){ (const uint8_t *)a, (const uint8_t *)hi, false };
			return true;
		}
	}
	return false;
}

/* n (<= 8) bytes, little-endian, unsigned. */
static uint64_t rd_u(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_leb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0; !r->bad; shift += 7) {
		uint8_t b = (uint8_t)rd_u(r, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v; /* the value is skipped, never used */
}

/* The size of a DW_EH_PE value: 0 for one not handled (leb128, omit). */
static unsigned enc_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	default: return 0;
	}
}

/* An encoded pointer, absolute or pc-relative (what .eh_frame holds; not
 * indirect, not aligned). */
static bool rd_ptr(struct rd *r, unsigned enc, uintptr_t *out)
{
	unsigned n = enc_size(enc), app = enc & 0x70;
	if (!n || (enc & 0x80) || (app != 0x00 && app != 0x10))
		return false;
	uintptr_t at = (uintptr_t)r->p;
	uint64_t v = rd_u(r, n);
	if ((enc & 0x08) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n); /* signed */
	*out = (app == 0x10 ? at : 0) + (uintptr_t)v;
	return !r->bad;
}

/* The pointer encoding of a CIE's FDEs ('R' of a "z" augmentation;
 * absolute without one). */
static bool cie_encoding(const struct dl_phdr_info *info, uintptr_t cie, unsigned *ret)
{
	struct rd c;
	if (!rd_at(info, cie, &c))
		return false;
	uint64_t len = rd_u(&c, 4);
	if (c.bad || len == 0 || len == 0xffffffff || len > (size_t)(c.end - c.p))
		return false;
	c.end = c.p + len;
	uint64_t id = rd_u(&c, 4), version = rd_u(&c, 1);
	if (c.bad || id != 0 || (version != 1 && version != 3))
		return false;
	const char *aug = (const char *)c.p;
	const uint8_t *z = memchr(c.p, 0, (size_t)(c.end - c.p));
	if (!z)
		return false;
	c.p = z + 1;
	*ret = 0x00;
	if (aug[0] != 'z')
		return aug[0] == '\0';
	rd_leb(&c); /* code alignment */
	rd_leb(&c); /* data alignment (signed: skipped alike) */
	if (version == 1)
		rd_u(&c, 1);
	else
		rd_leb(&c); /* return address register */
	rd_leb(&c);         /* augmentation data length */
	for (const char *a = aug + 1; *a && !c.bad; a++) {
		unsigned pe;
		switch (*a) {
		case 'R':
			*ret = (unsigned)rd_u(&c, 1);
			break;
		case 'L':
			rd_u(&c, 1);
			break;
		case 'P':
			pe = (unsigned)rd_u(&c, 1);
			if (!enc_size(pe) || (pe & 0x70) == 0x50)
				return false;
			rd_u(&c, enc_size(pe));
			break;
		case 'S':
			break;
		default:
			return false;
		}
	}
	return !c.bad;
}

uintptr_t sp_eh_frame_end(const struct dl_phdr_info *info, uintptr_t fn)
{
	const ElfW(Phdr) *eh = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum && !eh; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	struct rd r;
	uintptr_t hdr = eh ? info->dlpi_addr + eh->p_vaddr : 0;
	if (!eh || !rd_at(info, hdr, &r))
		return 0;
	uint64_t version = rd_u(&r, 1), ptr_enc = rd_u(&r, 1), count_enc = rd_u(&r, 1),
		 table_enc = rd_u(&r, 1);
	/* the table: (initial location, FDE) pairs of sdata4 from hdr */
	if (r.bad || version != 1 || count_enc != 0x03 || table_enc != 0x3b ||
	    !enc_size((unsigned)ptr_enc))
		return 0;
	rd_u(&r, enc_size((unsigned)ptr_enc)); /* .eh_frame's address */
	uint64_t count = rd_u(&r, 4);
	if (r.bad || count == 0 || count > (size_t)(r.end - r.p) / 8)
		return 0;
	const uint8_t *table = r.p;
	uint64_t lo = 0, hi = count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t loc;
		memcpy(&loc, table + 8 * mid, 4);
		if (hdr + (intptr_t)loc < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	int32_t loc, off;
	if (lo == count)
		return 0;
	memcpy(&loc, table + 8 * lo, 4);
	memcpy(&off, table + 8 * lo + 4, 4);
	struct rd f;
	if (hdr + (intptr_t)loc != fn || !rd_at(info, hdr + (intptr_t)off, &f))
		return 0;
	uint64_t len = rd_u(&f, 4);
	if (f.bad || len == 0 || len == 0xffffffff || len > (size_t)(f.end - f.p))
		return 0;
	f.end = f.p + len;
	uintptr_t id_at = (uintptr_t)f.p;
	uint64_t cie = rd_u(&f, 4);
	unsigned enc;
	uintptr_t begin;
	if (f.bad || cie == 0 || cie > id_at || !cie_encoding(info, id_at - cie, &enc) ||
	    !rd_ptr(&f, enc, &begin) || begin != fn)
		return 0;
	uint64_t range = rd_u(&f, enc_size(enc));
	return f.bad || range < 5 || fn + range < fn ? 0 : fn + (uintptr_t)range;
}
