/*
 * bench.d/scan-kt.c: kt's scanner alone, for tests/bench.d/scan.sh: the
 * reader over a plain trace held in memory (mapped and read in before
 * the clock starts), every event scanned as kt_reader_next does for
 * every filter (fields located, times parsed).  It prints
 * "BYTES EVENTS SECONDS", the best CPU time (of this thread) of N passes.
 * KT_SCAN picks the scanner's path as for any filter, where kt has
 * several.
 *
 * usage: scan-kt FILE [N]
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kt.h"

static double
cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
	struct stat st;
	const char *m;
	volatile unsigned char sink = 0;
	double best = -1;
	unsigned long long n = 0;
	int fd, k, reps = argc > 2 ? atoi(argv[2]) : 3;
	off_t i;

	if (argc < 2 || (fd = open(argv[1], O_RDONLY)) == -1 ||
	    fstat(fd, &st) == -1 || st.st_size == 0) {
		fprintf(stderr, "usage: scan-kt FILE [N]\n");
		return 2;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 2;
	for (i = 0; i < st.st_size; i += 4096)
		sink ^= (unsigned char)m[i];	/* fault every page in */
	for (k = 0; k < reps; k++) {
		struct kt_reader *r;
		struct kt_event ev;
		struct kt_error err;
		double t0 = cpu(), t;
		int rc;

		r = kt_reader_mem(m, (size_t)st.st_size, argv[1], 0);
		if (r == NULL)
			return 2;
		n = 0;
		while ((rc = kt_reader_next(r, &ev, &err)) == 1)
			n++;
		kt_reader_free(r);
		t = cpu() - t0;
		if (rc == -1) {
			fprintf(stderr, "scan-kt: %s: %s\n", argv[1], err.msg);
			return 2;
		}
		if (best < 0 || t < best)
			best = t;
	}
	printf("%lld %llu %.4f\n", (long long)st.st_size, n, best);
	return 0;
}
