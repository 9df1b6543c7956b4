/* Wall-clock time for the host side, and the process's peak memory. GPU
 * work is timed with events instead (kernels/gpu.h), because device work is
 * asynchronous. */
#ifndef SPKIT_TIMER_H
#define SPKIT_TIMER_H

/* Seconds on the monotonic clock; differences are meaningful. */
double timer_now(void);

/* The most resident memory this program has had so far, in bytes. */
double timer_peak_rss(void);

#endif
