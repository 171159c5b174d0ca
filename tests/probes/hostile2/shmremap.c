/* A 1 MiB anonymous mapping replaced in place by a SysV shared memory
 * attachment (shmat SHM_REMAP), used, detached with munmap; then a fresh
 * private anonymous 1 MiB mapping.  The shared segment must keep its data
 * and the fresh mapping must be private. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	size_t n = 1 << 20;
	int id = shmget(IPC_PRIVATE, n, IPC_CREAT | 0600);
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shmat(id, p, SHM_REMAP) != p) { perror("shmat"); return 2; }
	strcpy(p, "precious shared data");
	munmap(p, n); /* detach */
	char *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(q, "private scribble");
	char *s = shmat(id, NULL, 0);
	printf("fresh mapping %s the old address; shared segment now holds: \"%s\"\n", q == p ? "is at" : "is not at", s);
	shmctl(id, IPC_RMID, NULL);
	return strcmp(s, "precious shared data") != 0;
}
