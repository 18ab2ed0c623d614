/*
 * arch.c: libarchive, loaded (dlopen) by the sources that need it: a
 * zstd, xz or bzip2 input, a tar or zip archive, gzip where ISA-L is not
 * built in or the stream holds a tar.  Plain JSON, TSV and gzip through
 * ISA-L never load it, so that a filter does not pay for libarchive's
 * dependencies (libxml2, ICU, nettle...: about 3.7 MB of resident
 * memory and 1.6 ms of start-up a process) on every run.  Each source
 * holds its own table of the functions (dlopen counts its users), so
 * that the core keeps no state of its own.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktint.h"

/* The names libarchive is known by: its soname, then the development link. */
static const char *const sonames[] = { "libarchive.so.13", "libarchive.so" };

int
kt_arch_load(struct kt_arch *la, char *why, size_t n)
{
	const char *own = getenv("KT_LIBARCHIVE");
	size_t i;

	memset(la, 0, sizeof(*la));
	/* KT_LIBARCHIVE: the file to load instead (kt(7), Memory). */
	if (own != NULL && *own != '\0')
		la->dl = dlopen(own, RTLD_NOW | RTLD_LOCAL);
	else
		for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++)
			if ((la->dl = dlopen(sonames[i], RTLD_NOW |
			    RTLD_LOCAL)) != NULL)
				break;
	if (la->dl == NULL) {
		const char *e = dlerror();

		snprintf(why, n, "needs libarchive (%s)", e != NULL ? e :
		    "libarchive.so.13 not found");
		return -1;
	}
#define SYM(f) do {							\
	*(void **)(void *)&la->f = dlsym(la->dl, "archive_" #f);	\
	if (la->f == NULL) {						\
		snprintf(why, n, "needs libarchive: no archive_%s in it", #f); \
		kt_arch_unload(la);					\
		return -1;						\
	}								\
} while (0)
	SYM(read_new);
	SYM(read_support_filter_all);
	SYM(read_support_format_tar);
	SYM(read_support_format_zip);
	SYM(read_support_format_raw);
	SYM(read_open);
	SYM(read_next_header);
	SYM(read_data);
	SYM(read_free);
	SYM(format);
	SYM(error_string);
	SYM(set_error);
	SYM(entry_pathname);
	SYM(entry_filetype);
#undef SYM
	return 0;
}

void
kt_arch_unload(struct kt_arch *la)
{
	if (la->dl != NULL)
		dlclose(la->dl);
	memset(la, 0, sizeof(*la));
}
