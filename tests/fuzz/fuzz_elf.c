/* fuzz_elf.c: libFuzzer target for the ELF reader (tools/elfread.c) and the
 * symbol tables built from it (tools/symbols.c: .symtab, .dynsym and
 * MiniDebugInfo through the xz decoder, names through the demangler), which
 * read object and debug files the tool did not write (make fuzz-symbols).
 *
 * Any input must be refused or read within its bounds (ASan); every
 * section, segment and note is visited. */
#include "elfread.h"
#include "symbols.h"
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void visit(void *arg, const struct elf_sym *s)
{
	size_t *n = arg;
	*n += strlen(s->name) + (size_t)s->size; /* (reads every name) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf e;
	struct elf_shdr sh;
	struct elf_phdr ph;
	const char *why;
	uint8_t id[64];
	char name[512], link[256];
	uint32_t crc;
	uint64_t v;
	size_t n = 0;
	unsigned i;
	if (elf_open_mem(&e, data, size, &why) < 0)
		return 0;
	for (i = 0; elf_section(&e, i, &sh) == 0; i++) {
		const char *nm = elf_section_name(&e, &sh);
		const uint8_t *d = elf_section_data(&e, &sh);
		if (nm)
			n += strlen(nm);
		if (d && sh.size)
			n += d[sh.size - 1];
	}
	for (i = 0; elf_segment(&e, i, &ph) == 0; i++)
		n += ph.type;
	n += elf_has_interp(&e);
	n += elf_build_id(&e, id, sizeof id);
	if (elf_debuglink(&e, link, sizeof link, &crc) == 0 && !memchr(link, 0, sizeof link))
		abort();
	elf_off_to_vaddr(&e, size / 2, &v);
	elf_symbols(&e, SHT_SYMTAB, visit, &n);
	elf_symbols(&e, SHT_DYNSYM, visit, &n);
	/* The whole reader, as the profile uses it: an address in the middle. */
	symbols_from_buffer(data, size, size > 8 ? (uint64_t)data[size - 1] << 4 : 0, name, sizeof name);
	if (!memchr(name, 0, sizeof name))
		abort();
	return n == (size_t)-1;
}
