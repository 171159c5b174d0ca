/* stream: the bundled example, a game-style asset streamer.
 *
 * It allocates a staging buffer (256 MiB by default) and then, frame by
 * frame, streams 8 MiB of "asset data" into the next part of it, as a loader
 * does behind a running game.  Each frame at 120 Hz has 8.3 ms.  Every first
 * write to a page of the buffer is a page fault, taken inside the frame.
 * It prints the set-up time, the faults taken inside frames, and the worst
 * and mean frame times.
 *
 *   stream [SIZE_MIB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256, size = mib << 20, chunk = 8 << 20, off;
	static char asset[8 << 20];
	double t0 = now_ms(), setup, worst = 0, total = 0;
	char *buf = malloc(size);
	long f, frame_faults = 0;
	int frames = 0;
	if (!buf)
		return 1;
	setup = now_ms() - t0;
	memset(asset, 0x42, sizeof asset); /* the "decoded" data, warm in cache */
	for (off = 0; off + chunk <= size; off += chunk) {
		double s = now_ms(), d;
		f = faults();
		memcpy(buf + off, asset, chunk);
		frame_faults += faults() - f;
		d = now_ms() - s;
		total += d;
		if (d > worst)
			worst = d;
		frames++;
	}
	printf("buffer=%zuMiB setup_ms=%.1f frames=%d faults_in_frames=%ld worst_frame_ms=%.2f mean_frame_ms=%.2f over_8.3ms=%d\n",
	       mib, setup, frames, frame_faults, worst, total / frames, worst > 8.3);
	free(buf);
	return 0;
}
