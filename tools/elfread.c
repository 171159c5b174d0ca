/* elfread.c: see elfread.h.  Field offsets are the System V gABI's, for ELFCLASS32
 * and ELFCLASS64; every multi-byte read goes through rd(), which honours the
 * file's byte order, and every range is checked with inside() first. */
#include "elfread.h"
#include <elf.h>
#include <string.h>
#include <unistd.h>

static int inside(const struct elf *e, uint64_t off, uint64_t len) { return off <= e->n && len <= e->n - off; }

/* A little- or big-endian unsigned of `bytes` bytes at off (in bounds). */
static uint64_t rd(const struct elf *e, uint64_t off, unsigned bytes)
{
	const uint8_t *p = e->p + off;
	uint64_t v = 0;
	unsigned i;
	for (i = 0; i < bytes; i++)
		v |= (uint64_t)p[e->le ? i : bytes - 1 - i] << (8 * i);
	return v;
}

/* A word of the class's size: 4 or 8 bytes. */
static uint64_t rdw(const struct elf *e, uint64_t off) { return rd(e, off, e->is64 ? 8 : 4); }

int elf_open_mem(struct elf *e, const uint8_t *p, size_t n, const char **why)
{
	struct elf_shdr s0;
	uint64_t hsize;
	memset(e, 0, sizeof *e);
	e->p = p;
	e->n = n;
	if (n < EI_NIDENT || memcmp(p, ELFMAG, SELFMAG)) {
		*why = "not an ELF file";
		return -1;
	}
	if ((p[EI_CLASS] != ELFCLASS32 && p[EI_CLASS] != ELFCLASS64) || (p[EI_DATA] != ELFDATA2LSB && p[EI_DATA] != ELFDATA2MSB)) {
		*why = "an ELF file of an unknown class or byte order";
		return -1;
	}
	e->is64 = p[EI_CLASS] == ELFCLASS64;
	e->le = p[EI_DATA] == ELFDATA2LSB;
	hsize = e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (n < hsize) {
		*why = "an ELF header cut short";
		return -1;
	}
	e->type = (unsigned)rd(e, 16, 2);
	e->machine = (unsigned)rd(e, 18, 2);
	e->phoff = rdw(e, e->is64 ? 32 : 28);
	e->shoff = rdw(e, e->is64 ? 40 : 32);
	e->phentsize = (unsigned)rd(e, e->is64 ? 54 : 42, 2);
	e->phnum = (unsigned)rd(e, e->is64 ? 56 : 44, 2);
	e->shentsize = (unsigned)rd(e, e->is64 ? 58 : 46, 2);
	e->shnum = (unsigned)rd(e, e->is64 ? 60 : 48, 2);
	e->shstrndx = (unsigned)rd(e, e->is64 ? 62 : 50, 2);
	/* Sections: a table that does not fit is no table. */
	if (e->shentsize < (e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) || !e->shoff)
		e->shnum = 0;
	if (e->shoff && e->shentsize >= (e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) &&
	    inside(e, e->shoff, e->shentsize)) {
		/* Counts too large for the header live in section 0. */
		unsigned save = e->shnum;
		e->shnum = 1;
		elf_section(e, 0, &s0);
		e->shnum = save;
		if (!e->shnum)
			e->shnum = s0.size < 0x1000000 ? (unsigned)s0.size : 0;
		if (e->shstrndx == SHN_XINDEX)
			e->shstrndx = s0.link;
		if (e->phnum == PN_XNUM)
			e->phnum = s0.info < 0x1000000 ? s0.info : 0;
	}
	if (!inside(e, e->shoff, (uint64_t)e->shnum * e->shentsize))
		e->shnum = 0;
	if (e->phentsize < (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
	    !inside(e, e->phoff, (uint64_t)e->phnum * e->phentsize))
		e->phnum = 0;
	return 0;
}

int elf_section(const struct elf *e, unsigned i, struct elf_shdr *sh)
{
	uint64_t o = e->shoff + (uint64_t)i * e->shentsize;
	if (i >= e->shnum)
		return -1;
	sh->name = (uint32_t)rd(e, o, 4);
	sh->type = (uint32_t)rd(e, o + 4, 4);
	if (e->is64) {
		sh->flags = rd(e, o + 8, 8);
		sh->addr = rd(e, o + 16, 8);
		sh->offset = rd(e, o + 24, 8);
		sh->size = rd(e, o + 32, 8);
		sh->link = (uint32_t)rd(e, o + 40, 4);
		sh->info = (uint32_t)rd(e, o + 44, 4);
		sh->align = rd(e, o + 48, 8);
		sh->entsize = rd(e, o + 56, 8);
	} else {
		sh->flags = rd(e, o + 8, 4);
		sh->addr = rd(e, o + 12, 4);
		sh->offset = rd(e, o + 16, 4);
		sh->size = rd(e, o + 20, 4);
		sh->link = (uint32_t)rd(e, o + 24, 4);
		sh->info = (uint32_t)rd(e, o + 28, 4);
		sh->align = rd(e, o + 32, 4);
		sh->entsize = rd(e, o + 36, 4);
	}
	return 0;
}

const uint8_t *elf_section_data(const struct elf *e, const struct elf_shdr *sh)
{
	if (sh->type == SHT_NOBITS || !inside(e, sh->offset, sh->size))
		return NULL;
	return e->p + sh->offset;
}

/* The string at off of a string-table section, or NULL. */
static const char *str_at(const struct elf *e, const struct elf_shdr *tab, uint64_t off)
{
	const uint8_t *d = elf_section_data(e, tab);
	if (!d || off >= tab->size || !memchr(d + off, 0, tab->size - off))
		return NULL;
	return (const char *)d + off;
}

const char *elf_section_name(const struct elf *e, const struct elf_shdr *sh)
{
	struct elf_shdr st;
	if (elf_section(e, e->shstrndx, &st) < 0)
		return NULL;
	return str_at(e, &st, sh->name);
}

int elf_find_section(const struct elf *e, const char *name, struct elf_shdr *sh)
{
	unsigned i;
	for (i = 0; i < e->shnum; i++) {
		const char *s;
		if (elf_section(e, i, sh) < 0)
			return -1;
		s = elf_section_name(e, sh);
		if (s && !strcmp(s, name))
			return 0;
	}
	return -1;
}

int elf_segment(const struct elf *e, unsigned i, struct elf_phdr *ph)
{
	uint64_t o = e->phoff + (uint64_t)i * e->phentsize;
	if (i >= e->phnum)
		return -1;
	ph->type = (uint32_t)rd(e, o, 4);
	if (e->is64) {
		ph->flags = (uint32_t)rd(e, o + 4, 4);
		ph->offset = rd(e, o + 8, 8);
		ph->vaddr = rd(e, o + 16, 8);
		ph->filesz = rd(e, o + 32, 8);
		ph->memsz = rd(e, o + 40, 8);
	} else {
		ph->offset = rd(e, o + 4, 4);
		ph->vaddr = rd(e, o + 8, 4);
		ph->filesz = rd(e, o + 16, 4);
		ph->memsz = rd(e, o + 20, 4);
		ph->flags = (uint32_t)rd(e, o + 24, 4);
	}
	return 0;
}

int elf_has_interp(const struct elf *e)
{
	struct elf_phdr ph;
	unsigned i;
	for (i = 0; elf_segment(e, i, &ph) == 0; i++)
		if (ph.type == PT_INTERP)
			return 1;
	return 0;
}

int elf_off_to_vaddr(const struct elf *e, uint64_t off, uint64_t *vaddr)
{
	struct elf_phdr ph;
	unsigned i;
	for (i = 0; elf_segment(e, i, &ph) == 0; i++) {
		if (ph.type == PT_LOAD && off >= ph.offset && off - ph.offset < ph.filesz) {
			*vaddr = off - ph.offset + ph.vaddr;
			return 0;
		}
	}
	return -1;
}

/* The build ID among the notes in [off, off + len) of the file. */
static size_t notes_build_id(const struct elf *e, uint64_t off, uint64_t len, uint64_t align, uint8_t *id, size_t cap)
{
	uint64_t end, a = align == 8 ? 8 : 4;
	if (!inside(e, off, len))
		return 0;
	end = off + len;
	while (end - off >= 12) {
		uint64_t nsz = rd(e, off, 4), dsz = rd(e, off + 4, 4), type = rd(e, off + 8, 4);
		uint64_t name = off + 12, desc = name + ((nsz + a - 1) & ~(a - 1));
		if (nsz > end - name || desc > end || dsz > end - desc)
			return 0;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(e->p + name, "GNU", 4) && dsz) {
			memcpy(id, e->p + desc, dsz < cap ? dsz : cap);
			return dsz;
		}
		off = desc + ((dsz + a - 1) & ~(a - 1));
		if (off > end)
			return 0;
	}
	return 0;
}

size_t elf_build_id(const struct elf *e, uint8_t *id, size_t cap)
{
	struct elf_shdr sh;
	struct elf_phdr ph;
	unsigned i;
	size_t n;
	for (i = 0; elf_section(e, i, &sh) == 0; i++)
		if (sh.type == SHT_NOTE && (n = notes_build_id(e, sh.offset, sh.size, sh.align, id, cap)))
			return n;
	for (i = 0; elf_segment(e, i, &ph) == 0; i++)
		if (ph.type == PT_NOTE && (n = notes_build_id(e, ph.offset, ph.filesz, 4, id, cap)))
			return n;
	return 0;
}

int elf_debuglink(const struct elf *e, char *name, size_t cap, uint32_t *crc)
{
	struct elf_shdr sh;
	const uint8_t *d;
	const uint8_t *nul;
	size_t len, at;
	if (elf_find_section(e, ".gnu_debuglink", &sh) < 0 || !(d = elf_section_data(e, &sh)))
		return -1;
	nul = memchr(d, 0, sh.size);
	if (!nul)
		return -1;
	len = (size_t)(nul - d);
	at = (len + 4) & ~(size_t)3; /* the name, its NUL, padding to 4 */
	if (!len || len >= cap || at + 4 > sh.size || memchr(d, '/', len))
		return -1;
	memcpy(name, d, len + 1);
	*crc = (uint32_t)rd(e, sh.offset + at, 4);
	return 0;
}

long elf_symbols(const struct elf *e, unsigned sh_type, void (*fn)(void *arg, const struct elf_sym *s), void *arg)
{
	struct elf_shdr sh, st;
	unsigned i, esz = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	long count = -1;
	for (i = 0; elf_section(e, i, &sh) == 0; i++) {
		uint64_t k, n;
		if (sh.type != sh_type || (sh.entsize && sh.entsize != esz) || !elf_section_data(e, &sh) ||
		    elf_section(e, sh.link, &st) < 0 || !elf_section_data(e, &st))
			continue;
		if (count < 0)
			count = 0;
		n = sh.size / esz;
		for (k = 0; k < n; k++) {
			uint64_t o = sh.offset + k * esz;
			struct elf_sym s;
			unsigned info;
			if (e->is64) {
				info = (unsigned)rd(e, o + 4, 1);
				s.shndx = (unsigned)rd(e, o + 6, 2);
				s.value = rd(e, o + 8, 8);
				s.size = rd(e, o + 16, 8);
			} else {
				s.value = rd(e, o + 4, 4);
				s.size = rd(e, o + 8, 4);
				info = (unsigned)rd(e, o + 12, 1);
				s.shndx = (unsigned)rd(e, o + 14, 2);
			}
			s.bind = info >> 4;
			s.type = info & 0xF;
			s.name = str_at(e, &st, rd(e, o, 4));
			if (!s.name || !*s.name)
				continue;
			fn(arg, &s);
			count++;
		}
	}
	return count;
}

/* ---- a program's file ---- */

int elf_fd_interp(int fd)
{
	/* The ELF header and the program headers: in the first page in every
	 * file a linker writes; read up to 64 KiB. */
	uint8_t buf[64 << 10];
	ssize_t n = pread(fd, buf, sizeof buf, 0);
	struct elf e;
	const char *why;
	if (n <= 0 || elf_open_mem(&e, buf, (size_t)n, &why) < 0 || !e.phnum)
		return -1;
	return elf_has_interp(&e);
}
