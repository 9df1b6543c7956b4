/* kernel-sample's get_all: every shape of this part of the grid timed
 * (sample_run.h), one CSV row each, and a log, under the output folder:
 *
 *   sampling_data/{device}_{kernel}_{precision}_{parts}_{part}.csv
 *   sampling_log/{device}_{kernel}_{precision}_{parts}_{part}.txt
 *
 * The CSV has the config's columns (the shape, then the forward and the
 * backward trimmed means in microseconds, to the nanosecond); each row is
 * appended and flushed as its shape finishes. A rerun resumes: the shapes
 * whose rows are already there are not timed again, a last row cut by a
 * kill is dropped and redone, and a file whose header is not the config's
 * columns is an error. Shapes the operator refuses (check) are skipped,
 * shapes that fail (out of memory, a launch error) are logged with the
 * reason; neither stops the sweep, and a rerun tries the failed ones again.
 * A sweep that cannot start (a folder or the log that cannot be opened, a
 * CSV refused), or that fails before its first row (the log cannot be
 * written, the warm-up shape cannot be made), removes the CSV, the folders
 * and the log it made: nothing is left behind, and a CSV to resume stays as
 * it was. Once the log tells of a shape (skipped or failed), what was made
 * stays, as after a row (a CSV of its header alone, then).
 *
 * The log gets a line at the start, one per skipped or failed shape, and
 * a progress line in the original's format every 5 shapes and at the end:
 *   [2024-01-15 10:30:45]Kernel: layernorm_fp16 | Progress: 100/351=28.49% |
 *   Speed: 1.23s/sample | Remaining: 0d0h5m2s
 * (one line), counting this part's shapes, those done before included, and
 * the time per shape since the previous progress line. */
#ifndef SPKIT_SAMPLE_SWEEP_H
#define SPKIT_SAMPLE_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "sample/sample_run.h"

struct sample_sweep_result {
	uint64_t total;   /* shapes in this part */
	uint64_t resumed; /* of those, already in the CSV */
	uint64_t measured, skipped, failed;
	char csv[4096], log[4096];
};

int sample_sweep(const struct sample_job *job, struct sample_sweep_result *r,
		 struct sp_err *err);

/* "{device}_{kernel}_{precision}_{parts}_{part}". */
const char *sample_output_stem(const struct sample_job *job, char *buf, size_t size);

/* The log's progress line (without its newline); stamp is the local time,
 * "2024-01-15 10:30:45", and speed the seconds per shape. */
const char *sample_log_progress(char *buf, size_t size, const char *stamp, const char *kernel,
				const char *precision, uint64_t done, uint64_t total,
				double speed);

#endif
