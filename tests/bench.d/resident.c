/*
 * resident.c: keep the bench's input files in memory while a section
 * measures them (built and run by tests/bench.sh, warm).
 *
 * usage: resident READY FILE...
 *
 * Maps each FILE, reads it in and locks it (mlock(2)), then creates
 * READY and waits until it is killed.  A machine that reclaims page
 * cache that has not been touched for a few seconds (this project's VM
 * runs DAMON with a pageout scheme) would otherwise drop the input
 * between two runs of a command, and the next run would pay for the
 * disk, which the bench means to leave out.  Where mlock is refused
 * (RLIMIT_MEMLOCK without CAP_IPC_LOCK) it says so once on stderr and
 * only reads the files in, as `cat FILE >/dev/null` did.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	volatile unsigned char sum = 0;
	long page = sysconf(_SC_PAGESIZE);
	int i, fd, warned = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: resident READY FILE...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		struct stat st;
		unsigned char *p;
		off_t o;

		if ((fd = open(argv[i], O_RDONLY)) == -1 ||
		    fstat(fd, &st) == -1) {
			fprintf(stderr, "resident: %s: %s\n", argv[i],
			    strerror(errno));
			return 2;
		}
		if (st.st_size == 0) {
			close(fd);
			continue;
		}
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			fprintf(stderr, "resident: %s: mmap: %s\n", argv[i],
			    strerror(errno));
			return 2;
		}
		if (mlock(p, (size_t)st.st_size) == -1 && !warned) {
			fprintf(stderr, "resident: mlock: %s: the inputs are "
			    "read in, not locked\n", strerror(errno));
			warned = 1;
		}
		for (o = 0; o < st.st_size; o += page)
			sum += p[o];
	}
	if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1) {
		fprintf(stderr, "resident: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	close(fd);
	for (;;)
		pause();
}
