/*
 * direct.c: a descriptor's writes past the page cache (O_DIRECT), for a
 * copy that is written once and seldom read (read.c's tee): a buffered
 * write copies every byte into the page cache, which on this project's
 * machine costs more CPU than the filter that reads the input (2.3 s of
 * system time for 2.2 GB), while a direct one hands the pages to the
 * disk.  Its own file, for _GNU_SOURCE.
 */
#define _GNU_SOURCE

#include <fcntl.h>

#include "ktint.h"

int
kt_fd_direct(int fd, int on)
{
#ifdef O_DIRECT
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT);
#else
	(void)fd;
	return on ? -1 : 0;
#endif
}
