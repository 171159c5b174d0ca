/* demangle_test.c: the C++ demangler (tools/demangle.c) on names real
 * programs produce, against what GNU c++filt prints (binutils 2.40) with
 * and without -p (perf shows the -p form).  Built by `make probes`, run by
 * `make unit` and tests/symbols.bats.  With an argument "-" it demangles
 * the names on stdin instead, one per line (full with -f): the suite
 * compares that with c++filt on a library's symbols.  Exits 1 on a failure. */
#include "demangle.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *mangled, *full, *name;
} cases[] = {
	/* issue 22 #27: gcc -O2 -c, profiled */
	{ "_Z18ggc_internal_allocmPFvPvEmm", "ggc_internal_alloc(unsigned long, void (*)(void*), unsigned long, unsigned long)",
	  "ggc_internal_alloc" },
	{ "_Z9rtx_alloc8rtx_code", "rtx_alloc(rtx_code)", "rtx_alloc" },
	/* nested names, templates, substitutions, std:: abbreviations */
	{ "_ZN2ns6Filler4fillIlEEvRSt6vectorIT_SaIS3_EEm",
	  "void ns::Filler::fill<long>(std::vector<long, std::allocator<long> >&, unsigned long)", "ns::Filler::fill<long>" },
	{ "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
	  "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
	  "std::vector<int, std::allocator<int> > >, int const&)",
	  "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>" },
	{ "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE5c_strEv",
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::c_str() const",
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::c_str" },
	{ "_ZNSs4_Rep10_M_destroyERKSaIcE",
	  "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::_Rep::_M_destroy(std::allocator<char> const&)",
	  "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::_Rep::_M_destroy" },
	{ "_ZNSo3putEc", "std::basic_ostream<char, std::char_traits<char> >::put(char)",
	  "std::basic_ostream<char, std::char_traits<char> >::put" },
	{ "_ZN1AIiE1fIlEEviT_", "void A<int>::f<long>(int, long)", "A<int>::f<long>" },
	{ "_Z1fILi5ELb1ELj3EEvv", "void f<5, true, 3u>()", "f<5, true, 3u>" },
	{ "_Z1fIJidEEvDpT_", "void f<int, double>(int, double)", "f<int, double>" },
	{ "_Z1fIJEEvv", "void f<>()", "f<>" },
	/* function, array, pointer-to-member and qualified types */
	{ "_Z1fPFviEPA3_iM1AFvvEM1Ai", "f(void (*)(int), int (*) [3], void (A::*)(), int A::*)", "f" },
	{ "_Z1fPFPFivEvE", "f(int (*(*)())())", "f" },
	{ "_Z1fM1AKFvvE", "f(void (A::*)() const)", "f" },
	{ "_Z1fRA3_i", "f(int (&) [3])", "f" },
	{ "_Z1fPKcz", "f(char const*, ...)", "f" },
	{ "_ZNKSt8functionIFviEEclEi", "std::function<void (int)>::operator()(int) const", "std::function<void (int)>::operator()" },
	/* operators, constructors, destructors, conversions */
	{ "_ZltIiEbRKT_S2_", "bool operator< <int>(int const&, int const&)", "operator< <int>" },
	{ "_ZNSsC1Ev", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string()",
	  "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string" },
	{ "_ZNSdD0Ev", "std::basic_iostream<char, std::char_traits<char> >::~basic_iostream()",
	  "std::basic_iostream<char, std::char_traits<char> >::~basic_iostream" },
	{ "_ZNSt8ios_base4InitC1Ev", "std::ios_base::Init::Init()", "std::ios_base::Init::Init" },
	{ "_ZN1AcviEv", "A::operator int()", "A::operator int" },
	{ "_ZNR1A1fEv", "A::f() &", "A::f" },
	{ "_ZN1A1fEOS_", "A::f(A&&)", "A::f" },
	/* local names, lambdas, unnamed types, anonymous namespaces, ABI tags */
	{ "_ZZ1fvE1x", "f()::x", "f()::x" },
	{ "_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const", "main::{lambda()#1}::operator()" },
	{ "_ZN3fooUt0_3barEv", "foo::{unnamed type#2}::bar()", "foo::{unnamed type#2}::bar" },
	{ "_ZN12_GLOBAL__N_11fEv", "(anonymous namespace)::f()", "(anonymous namespace)::f" },
	{ "_Z3fooB5cxx11v", "foo[abi:cxx11]()", "foo[abi:cxx11]" },
	/* special names and clones */
	{ "_ZTV1A", "vtable for A", "vtable for A" },
	{ "_ZThn8_N1B1fEv", "non-virtual thunk to B::f()", "non-virtual thunk to B::f()" },
	{ "_ZGVZ1fvE1x", "guard variable for f()::x", "guard variable for f()::x" },
	{ "_ZL5touchPcmi.constprop.0", "touch(char*, unsigned long, int) [clone .constprop.0]", "touch" },
	{ "_Z1fv.part.0.cold", "f() [clone .part.0] [clone .cold]", "f" },
	/* not understood: NULL, and the caller shows the mangled name */
	{ "_Z", NULL, NULL },
	{ "_Z1", NULL, NULL },
	{ "_Z3foo", "foo", "foo" }, /* a variable */
	{ "_ZN1AE", "A", "A" },
	{ "_Z1fIXplT_Li1EEEvv", NULL, NULL },
	{ "_Z1fS0_", NULL, NULL },
	{ "_Z1fv.x-y", NULL, NULL },
	{ "main", NULL, NULL },
};

static int failures;

static void check(const char *m, int full, const char *want)
{
	char *got = demangle(m, full);
	if ((!got && want) || (got && !want) || (got && strcmp(got, want))) {
		failures++;
		printf("FAIL %s (%s): got \"%s\", want \"%s\"\n", m, full ? "full" : "name", got ? got : "(null)",
		       want ? want : "(null)");
	} else {
		printf("ok   %s -> %s\n", m, got ? got : "(not understood)");
	}
	free(got);
}

int main(int argc, char **argv)
{
	size_t i;
	char line[65536];
	if (argc > 1 && !strcmp(argv[argc - 1], "-")) {
		int full = argc > 2 && !strcmp(argv[1], "-f");
		while (fgets(line, sizeof line, stdin)) {
			char *r;
			line[strcspn(line, "\n")] = 0;
			r = demangle(line, full);
			puts(r ? r : line);
			free(r);
		}
		return 0;
	}
	/* Depth and size: a hostile name is refused, never a crash: nesting
	 * past any stack, and substitutions that double the output at every
	 * step (2^40 characters). */
	{
		static char deep[200000];
		size_t k;
		int lvl;
		memcpy(deep, "_Z1f", 4);
		for (k = 4; k + 3 < sizeof deep; k += 2)
			memcpy(deep + k, "PF", 2);
		deep[k] = 0;
		check(deep, 1, NULL);
		k = (size_t)snprintf(deep, sizeof deep, "_Z1fPFviE");
		for (lvl = 0; lvl < 40; lvl++) { /* PFv S<2l>_ S<2l>_ E: the previous pointer, twice */
			static const char b36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
			char id[8];
			int sub = 2 * lvl; /* seq-id of substitution 2 * lvl + 1, in base 36 */
			if (sub < 36)
				snprintf(id, sizeof id, "S%c_", b36[sub]);
			else
				snprintf(id, sizeof id, "S%c%c_", b36[sub / 36], b36[sub % 36]);
			k += (size_t)snprintf(deep + k, sizeof deep - k, "PFv%s%sE", id, id);
		}
		check(deep, 1, NULL);
	}
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		check(cases[i].mangled, 1, cases[i].full);
		check(cases[i].mangled, 0, cases[i].name);
	}
	printf("%s: %d failure%s\n", argv[0], failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
