#include "core/timer.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

double timer_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double timer_peak_rss(void)
{
	/* VmHWM is this program's own high-water mark; getrusage's ru_maxrss
	 * survives exec, so it would count the process that forked us */
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	double kib = -1;
	while (fp && kib < 0 && fgets(line, sizeof line, fp))
		if (sscanf(line, "VmHWM: %lf kB", &kib) != 1)
			kib = -1;
	if (fp)
		fclose(fp);
	struct rusage ru;
	if (kib < 0)
		kib = getrusage(RUSAGE_SELF, &ru) ? 0 : (double)ru.ru_maxrss; /* KiB on Linux */
	return kib * 1024;
}
