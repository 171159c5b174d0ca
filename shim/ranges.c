/* ranges.c: see ranges.h (after Sleator and Tarjan's top-down splay). */
#include "ranges.h"
#include "glue.h"
#include <sys/mman.h>

/* Bring the node whose start is key, or the last node on the way to where
 * it would be (its neighbour in order), to the root. */
static struct rnode *splay(struct rnode *t, uintptr_t key)
{
	struct rnode n, *l, *r, *y;
	if (!t)
		return t;
	n.left = n.right = NULL;
	l = r = &n;
	for (;;) {
		if (key < t->start) {
			if (!t->left)
				break;
			if (key < t->left->start) { /* rotate right */
				y = t->left;
				t->left = y->right;
				y->right = t;
				t = y;
				if (!t->left)
					break;
			}
			r->left = t; /* link right */
			r = t;
			t = t->left;
		} else if (key > t->start) {
			if (!t->right)
				break;
			if (key > t->right->start) { /* rotate left */
				y = t->right;
				t->right = y->left;
				y->left = t;
				t = y;
				if (!t->right)
					break;
			}
			l->right = t; /* link left */
			l = t;
			t = t->right;
		} else {
			break;
		}
	}
	l->right = t->left;
	r->left = t->right;
	t->left = n.right;
	t->right = n.left;
	return t;
}

static struct rnode *leftmost(struct rnode *n)
{
	while (n && n->left)
		n = n->left;
	return n;
}

static struct rnode *rightmost(struct rnode *n)
{
	while (n && n->right)
		n = n->right;
	return n;
}

struct rnode *rt_first(struct rtree *t, uintptr_t addr)
{
	struct rnode *root;
	if (!t->root)
		return NULL;
	root = t->root = splay(t->root, addr);
	if (root->start <= addr)
		return root->end > addr ? root : leftmost(root->right);
	/* root is the first range starting above addr; the one before it
	 * may still reach past addr. */
	{
		struct rnode *pred = rightmost(root->left);
		return pred && pred->end > addr ? pred : root;
	}
}

struct rnode *rt_next(struct rtree *t, const struct rnode *n)
{
	t->root = splay(t->root, n->start);
	return leftmost(t->root->right);
}

struct rnode *rt_find(struct rtree *t, uintptr_t start)
{
	if (!t->root)
		return NULL;
	t->root = splay(t->root, start);
	return t->root->start == start ? t->root : NULL;
}

void rt_insert(struct rtree *t, struct rnode *n)
{
	struct rnode *root = t->root;
	n->left = n->right = NULL;
	if (root) {
		root = splay(root, n->start);
		if (n->start < root->start) {
			n->left = root->left;
			n->right = root;
			root->left = NULL;
		} else {
			n->right = root->right;
			n->left = root;
			root->right = NULL;
		}
	}
	t->root = n;
	t->n++;
}

void rt_remove(struct rtree *t, struct rnode *n)
{
	struct rnode *root = splay(t->root, n->start);
	if (root != n)
		return; /* not in this tree */
	if (!root->left) {
		t->root = root->right;
	} else {
		/* Every key on the left is below n's: splaying for n's key brings
		 * the greatest of them up, with no right child. */
		struct rnode *x = splay(root->left, n->start);
		x->right = root->right;
		t->root = x;
	}
	t->n--;
}

#define CHUNK (64u << 10)

void *slab_get(struct slab *s)
{
	void *p = s->free;
	if (p) {
		s->free = *(void **)p;
		return p;
	}
	if (s->cur == NULL || s->cur + s->size > s->end) {
		/* (the spare is asked for again either way: slab_refill) */
		__atomic_store_n(&s->want, 1, __ATOMIC_RELAXED);
		if (!s->spare)
			return NULL;
		s->cur = s->spare;
		s->end = s->spare + CHUNK;
		s->spare = NULL;
		__atomic_store_n(&s->chunks, s->chunks + 1, __ATOMIC_RELAXED); /* (slab_refill reads it) */
	}
	p = s->cur;
	s->cur += (s->size + 15) & ~(size_t)15;
	return p;
}

int slab_refill(struct slab *s, spin_t *lock)
{
	char *c;
	if (!__atomic_load_n(&s->want, __ATOMIC_RELAXED))
		return 0;
	/* Populated here once the slab has used two chunks (thousands of
	 * records): its records are first written under the caller's lock,
	 * and a page fault there is a wait in the kernel with the lock held.
	 * Not sooner: a process that tracks a few regions would hold each
	 * slab's spare resident for nothing (+370 KiB a process with recycle
	 * when every spare was populated). */
	int pop = __atomic_load_n(&s->chunks, __ATOMIC_RELAXED) >= 2 ? MAP_POPULATE : 0;
	if (backoff_skip(&s->fail)) /* (no failing mmap on every call: backoff.h) */
		return -1;
	c = sys_mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | pop, -1, 0);
	if (c == MAP_FAILED) {
		backoff_failed(&s->fail);
		return -1;
	}
	backoff_ok(&s->fail);
	glue_own_add(CHUNK);
	spin_lock(lock);
	if (!s->spare) {
		s->spare = c;
		c = NULL;
	}
	__atomic_store_n(&s->want, 0, __ATOMIC_RELAXED);
	spin_unlock(lock);
	if (c) { /* (another thread mapped one meanwhile) */
		sys_munmap(c, CHUNK);
		glue_own_add(-(int64_t)CHUNK);
	}
	return 0;
}

void slab_put(struct slab *s, void *p)
{
	*(void **)p = s->free;
	s->free = p;
}
