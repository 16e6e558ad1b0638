/* adapter: a bus shared by emulated disks; first-fit reservations of its time
 * and its counters (see adapter.h). Presets and the spec parser live with the
 * disk presets in spindle_spec.c. */
#include "fsvol/model/adapter.h"

#include <stdio.h>
#include <string.h>

void adapter_init(struct adapter *a, const char *name, const struct adapter_params *p)
{
	memset(a, 0, sizeof(*a));
	a->p = *p;
	if (!a->p.rate_Bps)
		a->p.rate_Bps = 1;
	snprintf(a->name, sizeof(a->name), "%s", name ? name : "");
}

uint64_t adapter_hold_ns(const struct adapter *a, uint64_t len)
{
	/* ceil(len * 1e9 / rate) without overflow for any len below 2^64 / 1e9 * rate */
	unsigned __int128 ns = ((unsigned __int128)len * 1000000000u + a->p.rate_Bps - 1)
			       / a->p.rate_Bps;
	return a->p.overhead_ns + (ns > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)ns);
}

uint64_t adapter_find(const struct adapter *a, uint64_t ready, uint64_t hold)
{
	uint64_t t = ready;
	/* reservations are sorted and disjoint: slide past each one we overlap */
	for (unsigned i = 0; i < a->n; i++) {
		if (a->resv[i].hi <= t)
			continue;
		if (a->resv[i].lo >= t + hold)
			break;
		t = a->resv[i].hi;
	}
	return t;
}

void adapter_reserve(struct adapter *a, uint64_t ready, uint64_t start, uint64_t hold,
		     uint64_t bytes)
{
	a->st.cmds++;
	a->st.bytes += bytes;
	a->st.busy_ns += hold;
	a->st.wait_ns += start - ready;
	a->st.waited += start > ready;
	if (!hold)
		return;
	if (a->n == ADAPTER_SLOTS) {
		/* forget the earliest: later dispatches are almost never that early */
		memmove(&a->resv[0], &a->resv[1], (ADAPTER_SLOTS - 1) * sizeof(a->resv[0]));
		a->n--;
	}
	unsigned i = a->n;
	while (i > 0 && a->resv[i - 1].lo > start) {
		a->resv[i] = a->resv[i - 1];
		i--;
	}
	a->resv[i].lo = start;
	a->resv[i].hi = start + hold;
	a->n++;
}

void adapter_snapshot(const struct adapter *a, struct adapter_stats *out)
{
	*out = a->st;
}
