/*
 * fuzz/afl/launch.c: runs one filter on an input that holds both its
 * command line and its standard input, for AFL++ on the filters
 * (`make fuzz-afl`) and for the replay of the kept inputs in `make
 * check` (tests/t/aflreplay.sh).
 *
 * The input: one flags byte (bit 0: standard input is a pipe, else the
 * file "in" opened), the arguments as NUL-terminated strings up to an
 * empty one (or the end), and the rest: the content, written to the
 * file "in" of a scratch folder, the working folder of the run.  So
 * "in" or "-" reads it, and an option that takes a file (--rules in,
 * --merge in) reads it too.
 *
 * Built with -DKT_LAUNCH_LINKED, it calls kt_filter_main(), the filter's
 * main() compiled with -Dmain=kt_filter_main and linked in (AFL's fork
 * server then forks at our main, every run is a new process, and
 * whatever the filter keeps or exits with is gone with it).  Built
 * without it, it executes the filter named by its first argument
 * instead (the replay: the suite's own binaries).  Usage:
 *
 *	afl-NAME SCRATCH [FILE]		(linked; FILE absent: stdin)
 *	launch SCRATCH FILE FILTER	(exec)
 *
 * An argument with a '/' ends the run quietly (status 0, nothing run):
 * a run writes only inside its scratch folder, which it empties first.
 * A finding is a crash, a sanitizer report or a hang, never a status.
 */
#define _GNU_SOURCE

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXIN	(1 << 20)	/* bytes of input read */
#define MAXARGS	64
#define PIPEMAX	65536		/* a pipe's buffer: stdin beyond is cut */

#ifdef KT_LAUNCH_LINKED
int	kt_filter_main(int, char *[]);
#endif

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

/* Empty the working folder (files and folders a run left). */
static void
empty_here(void)
{
	nftw(".", rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static char *
slurp(const char *path, size_t *n)
{
	char *buf;
	int fd = path ? open(path, O_RDONLY) : 0;
	ssize_t r;

	*n = 0;
	if (fd == -1 || (buf = malloc(MAXIN)) == NULL)
		return NULL;
	while (*n < MAXIN && (r = read(fd, buf + *n, MAXIN - *n)) > 0)
		*n += (size_t)r;
	if (path)
		close(fd);
	return buf;
}

int
main(int argc, char *argv[])
{
	char *buf, *p, *e, *args[MAXARGS + 2];
	const char *name;
	size_t n;
	int na = 0, fd, flags;

#ifdef KT_LAUNCH_LINKED
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s SCRATCH [FILE]\n", argv[0]);
		return 2;
	}
	/* argv[0] as the filter's own: afl-NAME runs as kt-NAME. */
	{
		const char *base = strrchr(argv[0], '/');
		static char own[256];

		base = base ? base + 1 : argv[0];
		if (strncmp(base, "afl-", 4) == 0)
			base += 4;
		snprintf(own, sizeof(own), "kt-%s", base);
		name = own;
	}
#else
	if (argc != 4) {
		fprintf(stderr, "usage: %s SCRATCH FILE FILTER\n", argv[0]);
		return 2;
	}
	name = argv[3];
#endif
	if ((buf = slurp(argc > 2 ? argv[2] : NULL, &n)) == NULL) {
		perror("launch: input");
		return 2;
	}
	if (chdir(argv[1]) == -1) {
		perror(argv[1]);
		return 2;
	}
	empty_here();
	if (n == 0)
		return 0;
	flags = (unsigned char)buf[0];
	p = buf + 1;
	e = buf + n;
	/* The arguments: NUL-terminated, up to an empty one. */
	args[na++] = (char *)name;
	while (p < e && *p != '\0') {
		char *z = memchr(p, '\0', (size_t)(e - p));

		if (z == NULL || na > MAXARGS || strchr(p, '/') != NULL)
			return 0;
		args[na++] = p;
		p = z + 1;
	}
	args[na] = NULL;
	if (p < e)
		p++;		/* the empty argument */
	/* The content: the file "in", and standard input. */
	if ((fd = open("in", O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    write_all(fd, p, (size_t)(e - p)) == -1 || close(fd) == -1) {
		perror("launch: in");
		return 2;
	}
	if (flags & 1) {
		int pp[2];
		size_t m = (size_t)(e - p);

		if (pipe(pp) == -1) {
			perror("launch: pipe");
			return 2;
		}
		(void)fcntl(pp[1], F_SETPIPE_SZ, PIPEMAX);
		if (m > PIPEMAX)
			m = PIPEMAX;
		if (write_all(pp[1], p, m) == -1) {
			perror("launch: pipe");
			return 2;
		}
		close(pp[1]);
		fd = pp[0];
	} else if ((fd = open("in", O_RDONLY)) == -1) {
		perror("launch: in");
		return 2;
	}
	if (dup2(fd, 0) == -1) {
		perror("launch: stdin");
		return 2;
	}
	close(fd);
#ifdef KT_LAUNCH_LINKED
	return kt_filter_main(na, args);
#else
	execv(name, args);
	perror(name);
	return 127;
#endif
}
