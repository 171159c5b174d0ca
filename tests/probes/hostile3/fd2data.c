/* A program closes stderr, opens a data file (it gets fd 2), maps 4 MiB and
 * writes its data (issue 19 item 4: the populate fallback's one-time
 * warning went to fd 2 unchecked, into the data file).  Prints the file. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char buf[256] = "";
	int fd;
	char *p;
	close(2);
	fd = open(argc > 1 ? argv[1] : "data.txt", O_RDWR | O_CREAT | O_TRUNC, 0600);
	p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 1;
	write(fd, "data\n", 5);
	pread(fd, buf, sizeof buf - 1, 0);
	printf("fd %d holds: %s", fd, buf);
	return 0;
}
