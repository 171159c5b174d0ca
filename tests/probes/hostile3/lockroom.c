/* lockroom: does mlockall(MCL_CURRENT) fit under a locked-memory limit?
 *
 *   lockroom          print this process's address space (VmSize, kB)
 *   lockroom KB       as an unprivileged user (root drops to 65534 first,
 *                     since CAP_IPC_LOCK ignores the limit), set
 *                     RLIMIT_MEMLOCK to KB kB and print what mlockall says
 *   lockroom as KB MAPKB [drop]
 *                     set RLIMIT_AS to this process's size (read now, in
 *                     main) and KB kB more, then mmap MAPKB kB and print what
 *                     it says (drop: as root, drop to 65534 first, so that
 *                     the report cannot go where the tool asked)
 *
 * mlockall(MCL_CURRENT) checks the whole address space against the limit,
 * so every byte a preloaded library maps counts against the program's
 * room, used or not.  Run it plain for the size, then under the shim with
 * a limit a little above it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static long vmsize_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmSize:", 7))
			kb = strtol(line + 7, NULL, 10);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	if (argc < 2) {
		printf("vmsize_kb=%ld\n", vmsize_kb());
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "as")) {
		size_t len = (size_t)strtoul(argv[3], NULL, 10) * 1024;
		void *p;
		if (argc >= 5 && geteuid() == 0 && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)) {
			perror("drop");
			return 1;
		}
		rl.rlim_cur = rl.rlim_max = (rlim_t)(vmsize_kb() + strtol(argv[2], NULL, 10)) * 1024;
		if (setrlimit(RLIMIT_AS, &rl) != 0) {
			perror("setrlimit");
			return 1;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		printf("mmap: %s\n", p == MAP_FAILED ? strerror(errno) : "ok");
		return 0;
	}
	if (geteuid() == 0 && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)) {
		perror("drop");
		return 1;
	}
	rl.rlim_cur = rl.rlim_max = (rlim_t)strtoul(argv[1], NULL, 10) * 1024;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0) {
		perror("setrlimit");
		return 1;
	}
	if (mlockall(MCL_CURRENT) != 0) {
		printf("mlockall: %s\n", strerror(errno));
		return 0;
	}
	printf("mlockall: ok\n");
	return 0;
}
