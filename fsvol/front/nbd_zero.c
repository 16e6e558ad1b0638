/* nbd_zero: trim and write-zeroes. */
#include "fsvol/core/engine.h"
#include "fsvol/front/nbd_int.h"

/* A trim or zero: zeros written through the engine, NBDS_ZERO_BUF at a
 * time, up to NBDS_ZERO_WINDOW pieces at once (counted, and every level's
 * redundancy stays consistent, which a hole punched below would not; a
 * trim leaves zeros too, so reads after it are defined). Whoever finds no
 * one driving drives: submits what the window allows, with c->lock
 * dropped (a piece may complete inside engine_submit and only note that
 * the driver must look again), and finishes the job once nothing is left
 * in flight. A completion touches j only under the lock, so the driver may
 * free it as soon as it decides. done: a piece completed with r. */
static void nbds_zero_piece_done(void *arg, int r);

static void nbds_zero_pump(struct nbds_job *j, int done, int r)
{
	struct nbds_conn *c = j->c;
	struct vol *v = c->s->v;
	pthread_mutex_lock(&c->lock);
	if (done) {
		j->zinflight--;
		if (r && !j->zerr)
			j->zerr = r;
	}
	if (j->zdriving) {
		j->zagain = 1;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	j->zdriving = 1;
	do {
		j->zagain = 0;
		while (!j->zerr && j->zleft && j->zinflight < NBDS_ZERO_WINDOW) {
			uint64_t off = j->zoff, n = j->zleft < NBDS_ZERO_BUF ? j->zleft : NBDS_ZERO_BUF;
			j->zoff += n;
			j->zleft -= n;
			j->zinflight++;
			pthread_mutex_unlock(&c->lock);
			int e = engine_submit(v, ENGINE_WRITE, c->s->zeros, off, n, nbds_zero_piece_done, j);
			pthread_mutex_lock(&c->lock);
			if (e) {
				j->zinflight--;
				if (!j->zerr)
					j->zerr = e;
			}
		}
	} while (j->zagain);
	j->zdriving = 0;
	int end = !j->zinflight && (j->zerr || !j->zleft);
	r = j->zerr;
	pthread_mutex_unlock(&c->lock);
	if (end)
		j->zdone(j, r);
}

static void nbds_zero_piece_done(void *arg, int r)
{
	nbds_zero_pump(arg, 1, r);
}

void nbds_zero_start(struct nbds_job *j, void (*done)(struct nbds_job *j, int r))
{
	j->zdone = done;
	j->zoff = j->off;
	j->zleft = j->len;
	nbds_zero_pump(j, 0, 0);
}
