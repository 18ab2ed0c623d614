/*
 * kt: the front command.  "kt NAME ARGS..." runs kt-NAME from the folder
 * kt itself lives in, or else from PATH, the way git runs its commands.
 * "kt help" lists the filters with one line each.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

static const struct {
	const char	*name;
	const char	*what;
} filters[] = {
	{ "bucket", "where the GPU time went: kernels by bucket, name, stream, step" },
	{ "compact-lanes", "a compact view: GPU stream rows on a few synthetic lanes, reversibly" },
	{ "correlate", "each GPU activity chased to its launch, CPU op, step and file:line" },
	{ "diff", "one run against another: the views joined by key, most changed first" },
	{ "decompose", "per step and rank: wall = busy + idle, compute, exposed communication" },
	{ "gaps", "lost GPU time, ranked: idle gaps and tiny-kernel runs per step" },
	{ "inspect", "one event in full: bytes, fields, parents, step, chain, flows, stack" },
	{ "memory", "allocated and reserved memory over time per device; peaks, headroom" },
	{ "normalize", "canonical, repaired, exact trace; --check finds problems" },
	{ "ops", "per CPU op: calls, self and total CPU and GPU time (key_averages)" },
	{ "overlap", "per collective: hidden vs exposed communication, bandwidth, skew" },
	{ "rank-tag", "tag events with their rank; merge the traces of several ranks" },
	{ "select", "search as a filter: events by kind, name, rank, stream, time, row" },
	{ "serve", "one trace to the Perfetto UI from a loopback server, under a token" },
	{ "slice-window", "cut a window: steps, a time range, an annotation, a rank" },
	{ "summary", "what a trace holds: span, kinds, ranks, streams, steps; which views apply" },
	{ "views", "render the five diagnosis views of a trace into a folder" },
	{ "layer-track", "guide track L0..Ln-1 from a once-per-layer anchor kernel" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: kt NAME [ARGS...]   (kt NAME --help for its options)\n"
	    "filters:\n");
	for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		fprintf(f, "  %-14s %s\n", filters[i].name, filters[i].what);
	fprintf(f, "see kt(1) and kt(7)\n");
}

int
main(int argc, char *argv[])
{
	char self[PATH_MAX], path[PATH_MAX + 160], prog[128];
	ssize_t n;
	char *slash;

	kt_cli_init("kt");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("kt %s\n", KT_VERSION);
		return 0;
	}
	if (strchr(argv[1], '/') != NULL || argv[1][0] == '-' ||
	    strlen(argv[1]) > 100) {
		kt_cli_warn("'%s' is not a filter name", argv[1]);
		return 2;
	}
	snprintf(prog, sizeof(prog), "kt-%s", argv[1]);
	argv[1] = prog;
	/* First the folder kt lives in. */
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/%s", self, prog);
			if (access(path, X_OK) == 0)
				execv(path, argv + 1);
		}
	}
	execvp(prog, argv + 1);
	kt_cli_warn("'%s' is not a kt filter (kt help lists them)",
	    argv[1] + 3);
	return 2;
}
