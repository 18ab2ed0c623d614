/*
 * fuzz/replay/main.c: a driver that runs a libFuzzer harness over files
 * without libFuzzer, so that `make check` (and check-asan, under the
 * sanitizers) replays the kept corpora in tests/fuzz/corpus/NAME/ and
 * every input a fuzzer ever found.  Each argument is a file or a folder
 * of files; the exit status is 0 when every input ran (a crash or a
 * sanitizer report ends the process on its own).
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Run the harness on the file at path.  0, or -1 when it is unreadable. */
static int
one(const char *path)
{
	FILE *f;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, r;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	for (;;) {
		if (cap - n < 65536) {
			uint8_t *t;

			cap = cap ? 2 * cap : 65536;
			if ((t = realloc(buf, cap)) == NULL) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = t;
		}
		if ((r = fread(buf + n, 1, cap - n, f)) == 0)
			break;
		n += r;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int
main(int argc, char *argv[])
{
	int i, bad = 0;
	long count = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) == -1) {
			fprintf(stderr, "replay: %s: cannot stat\n", argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (one(argv[i]) == -1)
				bad = 1;
			count++;
			continue;
		}
		if ((d = opendir(argv[i])) == NULL) {
			bad = 1;
			continue;
		}
		while ((de = readdir(d)) != NULL) {
			char p[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			if (one(p) == -1)
				bad = 1;
			count++;
		}
		closedir(d);
	}
	printf("replay: %ld inputs\n", count);
	return bad;
}
