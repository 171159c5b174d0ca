/* spread.c: the least, the median and the greatest of a sample: how trial
 * and bench summarise repeated runs. */
#include "cli.h"
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct spread spread_of(double *v, int n)
{
	struct spread s;
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	s.lo = v[0];
	s.hi = v[n - 1];
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return s;
}
