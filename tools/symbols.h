/* symbols.h: naming the code addresses of a profiled process, after the
 * run, as perf names them.
 *
 * The shim records raw addresses and the file mappings that hold them (see
 * lib/profile_format.h).  An address is turned into a file offset through
 * its mapping, into the object's virtual address through its program
 * headers, and named from the best symbol table found for the object, in
 * perf's order: a separate debug file (by build ID under
 * DEBUGDIR/.build-id/xx/yyyy.debug, then by .gnu_debuglink in the object's
 * directory, its .debug/ and DEBUGDIR/ plus the directory), the object's own
 * .symtab, its MiniDebugInfo (.gnu_debugdata), and always its .dynsym.  C++
 * names are demangled as perf shows them (no parameters).  Where nothing
 * names an address it is shown as object+0xVADDR.
 *
 * DEBUGDIR is /usr/lib/debug, or the colon-separated list in
 * PREFAULT_DEBUG_DIR.  An object whose file is gone or was replaced since
 * the run (another inode) is not read: its addresses stay offsets. */
#ifndef PREFAULT_SYMBOLS_H
#define PREFAULT_SYMBOLS_H
#include <stddef.h>
#include <stdint.h>

/* One executable file mapping of a process (a profile's "object" record). */
struct mapping {
	uint64_t start, end, offset, inode;
	char *path;
};

/* Name address addr of a process with these mappings; caller: it is a
 * return address (it points after the call).  obj gets the object's file
 * name ("?" if none holds it), name the function or "obj+0xVADDR". */
void symbolize(const struct mapping *maps, size_t n, uint64_t addr, int caller, char *obj, size_t ocap, char *name,
               size_t ncap);
/* Where an object's names came from ("the .symtab of /usr/bin/x",
 * "MiniDebugInfo", "debug file /usr/lib/debug/..."), for tests and -v. */
const char *symbols_source(const char *path, uint64_t inode);
/* Drop every loaded symbol table. */
void symbols_reset(void);

/* The symbol table of an ELF file held in memory (for the fuzzer): the
 * function symbols of its .symtab, or, without one, of its MiniDebugInfo
 * and .dynsym; then name vaddr with it into name.  Returns the number of
 * symbols, or -1 if the buffer is no ELF file. */
long symbols_from_buffer(const uint8_t *p, size_t n, uint64_t vaddr, char *name, size_t ncap);
#endif
