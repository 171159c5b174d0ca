/* bintrees: the benchmarks game's binary trees, in C with malloc and free.
 *
 *   bintrees [DEPTH]        (default 16)
 *
 * Builds a stretch tree of DEPTH+1, keeps one tree of DEPTH alive throughout,
 * and for d = 4, 6, ... DEPTH builds, checks and frees 2^(DEPTH-d+4) trees of
 * depth d.  Every node is its own malloc(24) and free: at depth 16 that is
 * 15.0 million malloc/free pairs and almost nothing else, so a preloaded
 * malloc's cost per call shows at full size (issue 10).
 *
 * Prints its own time (the whole workload, not process start or exit) and
 * what it did:  "MS ms depth D pairs N check C".  bench/observe.sh reads the
 * first field.  Built with -fno-builtin, so every malloc and free is a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct node {
	struct node *left, *right;
	long item; /* 24 bytes: the node size the issue measured */
};

static long pairs;

static struct node *make(int depth)
{
	struct node *n = malloc(sizeof *n);
	if (!n) {
		perror("malloc");
		exit(1);
	}
	pairs++;
	n->item = depth;
	if (depth > 0) {
		n->left = make(depth - 1);
		n->right = make(depth - 1);
	} else {
		n->left = n->right = NULL;
	}
	return n;
}

static long check(const struct node *n)
{
	return n->left ? 1 + check(n->left) + check(n->right) : 1;
}

static void release(struct node *n)
{
	if (n->left) {
		release(n->left);
		release(n->right);
	}
	free(n);
}

int main(int argc, char **argv)
{
	int min = 4, max = argc > 1 ? atoi(argv[1]) : 16, d;
	long sum = 0, i, iters;
	struct node *t, *longlived;
	struct timespec a, b;
	if (max < min + 2)
		max = min + 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	t = make(max + 1);
	sum += check(t);
	release(t);
	longlived = make(max);
	for (d = min; d <= max; d += 2) {
		iters = 1L << (max - d + min);
		for (i = 0; i < iters; i++) {
			t = make(d);
			sum += check(t);
			release(t);
		}
	}
	sum += check(longlived);
	release(longlived);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f ms depth %d pairs %ld check %ld\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e6, max, pairs, sum);
	return 0;
}
