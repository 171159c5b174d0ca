// newdelete: bench/bintrees.c in C++, with new and delete.
//
//   newdelete [DEPTH]        (default 16)
//
// The same trees, the same 24-byte nodes, the same count of allocations
// (15.0 million at depth 16), but through libstdc++'s operator new and
// operator delete, which call malloc and free through the PLT: the path most
// C++ programs take into a preloaded malloc.  Prints its own time like
// bintrees: "MS ms depth D pairs N check C".
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

struct Node {
	Node *left, *right;
	long item; // 24 bytes
};

long pairs;

// noinline: the tree must really be built; GCC may drop a new/delete pair
// it can see both ends of.
__attribute__((noinline)) Node *make(int depth)
{
	Node *n = new Node;
	pairs++;
	n->item = depth;
	if (depth > 0) {
		n->left = make(depth - 1);
		n->right = make(depth - 1);
	} else {
		n->left = n->right = nullptr;
	}
	return n;
}

long check(const Node *n)
{
	return n->left ? 1 + check(n->left) + check(n->right) : 1;
}

__attribute__((noinline)) void release(Node *n)
{
	if (n->left) {
		release(n->left);
		release(n->right);
	}
	delete n;
}

} // namespace

int main(int argc, char **argv)
{
	int min = 4, max = argc > 1 ? std::atoi(argv[1]) : 16;
	long sum = 0;
	timespec a, b;
	if (max < min + 2)
		max = min + 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	Node *t = make(max + 1);
	sum += check(t);
	release(t);
	Node *longlived = make(max);
	for (int d = min; d <= max; d += 2) {
		long iters = 1L << (max - d + min);
		for (long i = 0; i < iters; i++) {
			t = make(d);
			sum += check(t);
			release(t);
		}
	}
	sum += check(longlived);
	release(longlived);
	clock_gettime(CLOCK_MONOTONIC, &b);
	std::printf("%.2f ms depth %d pairs %ld check %ld\n",
	            ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e6, max, pairs, sum);
	return 0;
}
