/* dict_actions: the policy language's action words, from shim/actions.h, as
 * lines of a libFuzzer dictionary (the Makefile adds them to
 * tests/fuzz/policy.dict). */
#include <stdio.h>
#include "policy.h"

int main(void)
{
	const struct pol_action *a;
	for (a = pol_actions; a->word; a++)
		printf("\"%s\"\n", a->word);
	return 0;
}
