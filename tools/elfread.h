/* elfread.h: reading ELF files without libelf: headers, sections, segments,
 * notes and symbol tables, of 32- or 64-bit files of either byte order.
 *
 * The reader works on a buffer (a file mapped whole, or an ELF file that
 * .gnu_debugdata decompressed to) and trusts nothing in it: every offset,
 * size, count and string is checked against the buffer before use; a bad
 * file gives an error or fewer results, never a read outside it.  Fuzzed by
 * tests/fuzz/fuzz_elf.c.  elf_fd_interp() answers cause.c's question: is a
 * program statically linked, so that no loader runs to preload the shim? */
#ifndef PREFAULT_ELFREAD_H
#define PREFAULT_ELFREAD_H
#include <stddef.h>
#include <stdint.h>

struct elf {
	const uint8_t *p;
	size_t n;
	int is64, le;
	unsigned type, machine;
	uint64_t phoff, shoff;
	unsigned phnum, phentsize, shnum, shentsize, shstrndx;
};

struct elf_shdr {
	uint32_t name, type, link, info;
	uint64_t flags, addr, offset, size, align, entsize;
};

struct elf_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz;
};

struct elf_sym {
	const char *name; /* NUL-terminated, inside the buffer */
	uint64_t value, size;
	unsigned bind, type, shndx;
};

/* Check the headers of p[0, n); 0, or -1 with *why set. */
int elf_open_mem(struct elf *e, const uint8_t *p, size_t n, const char **why);
/* Section i (0 <= i < shnum); 0, or -1 if it lies outside the file. */
int elf_section(const struct elf *e, unsigned i, struct elf_shdr *sh);
/* Its name, or NULL. */
const char *elf_section_name(const struct elf *e, const struct elf_shdr *sh);
/* The first section named `name`; 0, or -1. */
int elf_find_section(const struct elf *e, const char *name, struct elf_shdr *sh);
/* A section's bytes, or NULL (SHT_NOBITS, or not inside the file). */
const uint8_t *elf_section_data(const struct elf *e, const struct elf_shdr *sh);
/* Program header i; 0, or -1. */
int elf_segment(const struct elf *e, unsigned i, struct elf_phdr *ph);
/* Has a PT_INTERP: the loader (and so LD_PRELOAD) runs for it. */
int elf_has_interp(const struct elf *e);
/* The virtual address of file offset `off`, through the PT_LOAD segments. */
int elf_off_to_vaddr(const struct elf *e, uint64_t off, uint64_t *vaddr);
/* The GNU build ID (from the note sections, else the PT_NOTE segments):
 * its length (at most cap bytes copied), 0 if none. */
size_t elf_build_id(const struct elf *e, uint8_t *id, size_t cap);
/* .gnu_debuglink: the debug file's name and CRC32; 0, or -1 if none. */
int elf_debuglink(const struct elf *e, char *name, size_t cap, uint32_t *crc);
/* Call fn for each named symbol of every section of type sh_type
 * (SHT_SYMTAB or SHT_DYNSYM); returns how many, or -1 if none is readable. */
long elf_symbols(const struct elf *e, unsigned sh_type, void (*fn)(void *arg, const struct elf_sym *s), void *arg);

/* A program's file open on fd: 1 if it has a program interpreter (the
 * loader runs, and reads LD_PRELOAD), 0 if it has none (statically
 * linked), -1 if it is no ELF file or its program headers are not within
 * its first 64 KiB. */
int elf_fd_interp(int fd);
#endif
