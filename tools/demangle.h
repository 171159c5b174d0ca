/* demangle.h: C++ names (the Itanium ABI's mangling, used by GCC and Clang
 * on every Unix) made readable, as c++filt and perf print them, without
 * libstdc++ or libiberty.
 *
 * Covers what real programs produce: nested and local names, the std::
 * abbreviations and substitutions, templates and template parameters,
 * argument packs and their expansions, function, array, pointer-to-member
 * and qualified types, operators, constructors and destructors, ABI tags,
 * lambdas and unnamed types, vtables, typeinfo, thunks and guard
 * variables, clone suffixes; template arguments that are expressions only
 * in their common forms.  Anything else gives NULL (the caller shows the
 * mangled name): a name is never guessed at.  The input is untrusted:
 * bounded in depth, nodes and output; fuzzed by tests/fuzz/fuzz_demangle.c. */
#ifndef PREFAULT_DEMANGLE_H
#define PREFAULT_DEMANGLE_H

/* full: return type, parameters, qualifiers and clone suffix, as c++filt
 * prints; otherwise the name alone, as perf shows it by default (c++filt
 * -p): "ns::Filler::fill<long>".  A malloc'd string, or NULL. */
char *demangle(const char *mangled, int full);
#endif
