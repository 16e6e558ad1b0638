/* spindle_queue: a disk's queue and its one service slot (HDD) or channels
 * (SSD): enqueue, the discipline's pick (FIFO, SSTF, C-SCAN), dispatch and
 * completion. The service itself is spindle.c's (spindle_serve). */
#include "fsvol/model/spindle.h"

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

int spindle_idle(const struct spindle *s)
{
	return !s->disk->queued && !s->disk->busy;
}

static unsigned slots(const struct spindle *d)
{
	return d->p.kind == SPINDLE_SSD ? d->p.channels : 1;
}

int spindle_full(const struct spindle *s)
{
	return s->disk->busy >= slots(s->disk);
}

/* ---- queue --------------------------------------------------------------- */

void spindle_enqueue(struct spindle *s, struct spindle_req *r)
{
	struct spindle *d = s->disk;
	r->disk_offset = s->base + r->offset;
	r->next = NULL;
	if (d->qtail)
		d->qtail->next = r;
	else
		d->qhead = r;
	d->qtail = r;
	d->queued++;
}

/* The request the discipline serves next; *prevp gets its predecessor. */
static struct spindle_req *pick(const struct spindle *s, struct spindle_req **prevp)
{
	struct spindle_req *best = s->qhead, *bprev = NULL, *prev = NULL;
	*prevp = NULL;
	if (s->p.kind != SPINDLE_HDD || s->p.sched == SPINDLE_FIFO || !best)
		return best;
	if (s->p.sched == SPINDLE_SSTF) {
		/* Nearest cylinder to where the last access ended; ties keep arrival order. */
		uint64_t here = spindle_disk_cylinder(s, s->pos), bd = UINT64_MAX;
		for (struct spindle_req *r = s->qhead; r; prev = r, r = r->next) {
			uint64_t c = spindle_disk_cylinder(s, r->disk_offset);
			uint64_t d = c > here ? c - here : here - c;
			if (d < bd) {
				bd = d;
				best = r;
				bprev = prev;
			}
		}
	} else {
		/* C-SCAN: lowest offset at or after the head; none left: wrap to the lowest. */
		struct spindle_req *low = NULL, *lprev = NULL;
		best = NULL;
		for (struct spindle_req *r = s->qhead; r; prev = r, r = r->next) {
			if (r->disk_offset >= s->pos && (!best || r->disk_offset < best->disk_offset)) {
				best = r;
				bprev = prev;
			}
			if (!low || r->disk_offset < low->disk_offset) {
				low = r;
				lprev = prev;
			}
		}
		if (!best) {
			best = low;
			bprev = lprev;
		}
	}
	*prevp = bprev;
	return best;
}

struct spindle_req *spindle_dispatch(struct spindle *sp, uint64_t now_ns)
{
	struct spindle *s = sp->disk;
	struct spindle_req *prev, *r;
	if (!s->qhead || s->busy >= slots(s))
		return NULL;
	r = pick(s, &prev);
	if (prev)
		prev->next = r->next;
	else
		s->qhead = r->next;
	if (s->qtail == r)
		s->qtail = prev;
	r->next = NULL;
	s->queued--;

	uint64_t t = max_u64(now_ns, r->arrival_ns);
	if (s->p.kind != SPINDLE_SSD)
		t = max_u64(t, s->free_ns); /* one slot: never before the previous completion */
	spindle_serve(s, r, t);
	if (s->p.kind != SPINDLE_SSD)
		s->free_ns = r->done_ns;
	s->busy++;
	return r;
}

void spindle_complete(struct spindle *sp, struct spindle_req *r)
{
	struct spindle *s = sp->disk;
	(void)r; /* the head moved at dispatch; only the slot is held until now */
	if (s->busy)
		s->busy--;
}
