/*
 * steps.c: the step windows of a device, the one definition of a step's
 * GPU time that kt-decompose, kt-gaps, kt-bucket and kt views share
 * (kt(7) Step windows).
 *
 * On a device, a step's window ends at the last end of the activities
 * attributed to it (by their launching call, kt_model_load) and starts
 * where the window of the step before it on the device ended (the
 * first: at its first activity's start), so that the windows tile the
 * device's time from the first step's first kernel to the last step's
 * last end.  busy is the union of every activity of the device inside
 * the window, idle the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "kt.h"

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int
kt_step_windows(const struct kt_model *m, uint32_t dev,
    struct kt_stepwin **out, size_t *nout)
{
	const struct kt_device *d = &m->devices[dev];
	struct kt_stepwin *w;
	int64_t *s, *e, *nact, *walls, reach = 0;
	size_t i, k, n = 0, end = (size_t)d->first + d->nact;

	*out = NULL;
	*nout = 0;
	if (d->nact == 0 || m->nsteps == 0)
		return 0;
	s = malloc(m->nsteps * sizeof(*s));
	e = malloc(m->nsteps * sizeof(*e));
	nact = calloc(m->nsteps, sizeof(*nact));
	w = calloc(m->nsteps, sizeof(*w));
	if (s == NULL || e == NULL || nact == NULL || w == NULL) {
		free(s);
		free(e);
		free(nact);
		free(w);
		return -1;
	}
	for (i = 0; i < m->nsteps; i++)
		s[i] = e[i] = -1;
	for (i = d->first; i < end; i++) {
		const struct kt_act *a = &m->act[i];

		if (a->step == KT_NO)
			continue;
		if (s[a->step] == -1 || a->ts < s[a->step])
			s[a->step] = a->ts;
		if (e[a->step] == -1 || a->ts + a->dur > e[a->step])
			e[a->step] = a->ts + a->dur;
		nact[a->step]++;
	}
	/* Steps are in (rank, CPU start) order: tile in that order. */
	for (i = 0; i < m->nsteps; i++) {
		if (nact[i] == 0)
			continue;
		w[n].start = n == 0 ? s[i] : w[n - 1].end;
		w[n].end = e[i] > w[n].start ? e[i] : w[n].start;
		w[n].step = (uint32_t)i;
		w[n].ref = m->steps[i].cpu_start;
		w[n].nact = nact[i];
		w[n].partial = m->steps[i].partial;
		n++;
	}
	free(s);
	free(e);
	free(nact);
	/* busy: the union of the device's activities, cut by the windows. */
	k = 0;
	for (i = d->first; i < end && n > 0; i++) {
		const struct kt_act *a = &m->act[i];
		int64_t as = a->ts, ae = a->ts + a->dur;

		if (i > d->first && as < reach)
			as = reach;
		if (ae > reach || i == d->first)
			reach = ae;
		if (ae <= as)
			continue;
		/* [as, ae) is new busy time: share it among the windows. */
		while (k > 0 && w[k].start > as)
			k--;
		for (; k < n && w[k].end <= as; k++)
			;
		for (; k < n && w[k].start < ae; k++) {
			int64_t x = as > w[k].start ? as : w[k].start;
			int64_t y = ae < w[k].end ? ae : w[k].end;

			if (y > x)
				w[k].busy += y - x;
			if (w[k].end >= ae)
				break;
		}
		if (k == n)
			k = n - 1;
	}
	for (i = 0; i < n; i++)
		w[i].idle = w[i].end - w[i].start - w[i].busy;
	/* The last window is partial when it is cut short (as Kineto's
	 * last step often is): under half the median of the others. */
	if (n >= 3) {
		if ((walls = malloc((n - 1) * sizeof(*walls))) == NULL) {
			free(w);
			return -1;
		}
		for (i = 0; i + 1 < n; i++)
			walls[i] = w[i].end - w[i].start;
		qsort(walls, n - 1, sizeof(*walls), cmp_i64);
		if (2 * (w[n - 1].end - w[n - 1].start) < walls[(n - 2) / 2])
			w[n - 1].partial = 1;
		free(walls);
	}
	*out = w;
	*nout = n;
	return 0;
}
