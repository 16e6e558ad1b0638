/* timer_probe: the release lateness this machine allows, as a reference for
 * the emulator's (fsvol/model/emul.c). One SCHED_FIFO thread with 1 ns timer
 * slack waits for deadlines the way the emulator's timer thread does: read()
 * on a timerfd armed with TFD_TIMER_ABSTIME, early by the lead it learns
 * (emul_lead_learn), again for the deadline itself after an early wake-up;
 * gaps between deadlines are exponential with the given mean (completions of
 * independent disks), with nothing else to do. SPIN_US > 0 instead sleeps
 * until SPIN_US before each deadline and spins the rest (the emulator's rule
 * until round 5, to compare).
 *
 *   timer_probe MEAN_GAP_US [COUNT] [SPIN_US]
 *
 * Prints "p50 X us, p99 Y us" of (wake-up - deadline) over COUNT deadlines,
 * and the CPU (user + system) one sleep and wake-up costs here: the floor
 * under any thread that sleeps once per event (on a VM, several us).
 */
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/model/emul.h"

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static long sleeps;

static void sleep_until(int tfd, uint64_t t)
{
	sleeps++;
	uint64_t fired;
	struct itimerspec it = { .it_value = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) } };
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, NULL);
	while (read(tfd, &fired, sizeof(fired)) < 0)
		;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: timer_probe MEAN_GAP_US [COUNT] [SPIN_US]\n");
		return 2;
	}
	double gap = atof(argv[1]) * 1e3;
	long n = argc > 2 ? atol(argv[2]) : 2000;
	uint64_t spin = argc > 3 ? (uint64_t)(atof(argv[3]) * 1e3) : 0, lead = 0;
	if (!(gap > 0) || n < 100) {
		fprintf(stderr, "timer_probe: MEAN_GAP_US must be > 0 and COUNT >= 100\n");
		return 2;
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (tfd < 0) {
		perror("timer_probe: timerfd_create");
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	struct sched_param sp = { .sched_priority = 1 };
	sched_setscheduler(0, SCHED_FIFO, &sp); /* as the emulator: when allowed */
	uint64_t *late = malloc((size_t)n * sizeof(*late));
	if (!late)
		return 1;
	srand48(1);
	for (long i = 0; i < n; i++) {
		uint64_t due = now_ns() + (uint64_t)(-log(1 - drand48()) * gap), t;
		if (spin) {
			if (due - now_ns() > spin)
				sleep_until(tfd, due - spin);
			while ((t = now_ns()) < due)
				__builtin_ia32_pause();
		} else {
			int learn = due > now_ns() + lead;
			if (learn) {
				sleep_until(tfd, due - lead);
				lead = emul_lead_learn(lead, now_ns() - (due - lead));
			}
			while ((t = now_ns()) < due)
				sleep_until(tfd, due); /* early: sleep again, never spin */
		}
		late[i] = t - due;
	}
	qsort(late, (size_t)n, sizeof(*late), cmp_u64);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	printf("p50 %.1f us, p99 %.1f us, CPU %.1f us per sleep\n", late[n / 2] / 1e3, late[n * 99 / 100] / 1e3,
	       sleeps ? cpu / (double)sleeps : 0);
	free(late);
	close(tfd);
	return 0;
}
