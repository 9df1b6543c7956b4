#include "maxk/warp4.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/outfile.h"
#include "core/infile.h"

int64_t warp4_count(const int64_t *indptr, int64_t nrows, int warp_max_nz)
{
	int64_t n = 0;
	for (int64_t r = 0; r < nrows; r++)
		n += (indptr[r + 1] - indptr[r] + warp_max_nz - 1) / warp_max_nz;
	return n;
}

int warp4_build(const int64_t *indptr, int64_t nrows, int warp_max_nz, int32_t *records,
		const char *name, struct sp_err *err)
{
	if (nrows > INT32_MAX || indptr[nrows] > INT32_MAX)
		return sp_fail(err, "%s: %lld rows and %lld edges do not fit the int32 fields of .warp4",
			       name, (long long)nrows, (long long)indptr[nrows]);
	int32_t *rec = records;
	for (int64_t r = 0; r < nrows; r++) {
		for (int64_t at = indptr[r]; at < indptr[r + 1]; at += warp_max_nz) {
			int64_t left = indptr[r + 1] - at;
			rec[0] = (int32_t)r;
			rec[1] = (int32_t)at;
			rec[2] = (int32_t)(left < warp_max_nz ? left : warp_max_nz);
			rec[3] = 0;
			rec += 4;
		}
	}
	return 0;
}

void warp4_stats(const int64_t *indptr, int64_t nrows, int warp_max_nz, struct warp4_stats *s)
{
	s->rows = nrows;
	s->edges = indptr[nrows];
	s->records = warp4_count(indptr, nrows, warp_max_nz);
	s->empty_rows = 0;
	s->max_degree = 0;
	for (int64_t r = 0; r < nrows; r++) {
		int64_t d = indptr[r + 1] - indptr[r];
		s->empty_rows += d == 0;
		if (d > s->max_degree)
			s->max_degree = d;
	}
	s->mean_degree = nrows ? (double)s->edges / nrows : 0;
	s->records_per_row = nrows ? (double)s->records / nrows : 0;
	s->fill = s->records ? (double)s->edges / ((double)s->records * warp_max_nz) : 0;
	s->degree_imbalance = s->mean_degree > 0 ? s->max_degree / s->mean_degree : 0;
}

int warp4_write(struct outfile *f, const int32_t *records, int64_t count, struct sp_err *err)
{
	return outfile_write(f, records, (size_t)count * 4 * sizeof *records, err);
}

int warp4_read(const char *path, int32_t **records, int64_t *count, struct sp_err *err)
{
	FILE *fp;
	uint64_t size;
	if (infile_open(path, &fp, &size, err))
		return -1;
	if (size % 16 != 0) {
		fclose(fp);
		return sp_fail(err, "%s: size %llu is not a multiple of 16 bytes (4 int32 per record)",
			       path, (unsigned long long)size);
	}
	*count = (int64_t)(size / 16);
	*records = malloc(size ? (size_t)size : 1);
	if (!*records) {
		fclose(fp);
		return sp_fail(err, "%s: out of memory for %lld records", path, (long long)*count);
	}
	size_t got = fread(*records, 1, (size_t)size, fp);
	fclose(fp);
	if (got != (size_t)size) {
		free(*records);
		*records = NULL;
		return sp_fail(err, "%s: short read (%zu of %llu bytes)", path, got,
			       (unsigned long long)size);
	}
	return 0;
}

int warp4_validate(const int32_t *records, int64_t count, const int64_t *indptr, int64_t nrows,
		   int warp_max_nz, const char *name, struct sp_err *err)
{
	int64_t i = 0;
	for (int64_t r = 0; r < nrows; r++) {
		for (int64_t at = indptr[r]; at < indptr[r + 1];) {
			if (i == count)
				return sp_fail(err, "%s: row %lld is not covered (records end at %lld)", name,
					       (long long)r, (long long)count);
			const int32_t *rec = records + 4 * i;
			if (rec[0] != r || rec[1] != at)
				return sp_fail(err,
					       "%s: record %lld is (row %d, offset %d) but row %lld needs offset %lld next",
					       name, (long long)i, rec[0], rec[1], (long long)r, (long long)at);
			if (rec[2] < 1 || rec[2] > warp_max_nz || rec[2] > indptr[r + 1] - at)
				return sp_fail(err, "%s: record %lld has length %d (row %lld has %lld left, limit %d)",
					       name, (long long)i, rec[2], (long long)r,
					       (long long)(indptr[r + 1] - at), warp_max_nz);
			if (rec[3] != 0)
				return sp_fail(err, "%s: record %lld has %d in its fourth field, which is 0",
					       name, (long long)i, rec[3]);
			at += rec[2];
			i++;
		}
	}
	if (i != count)
		return sp_fail(err, "%s: %lld records beyond the last edge (record %lld is row %d)", name,
			       (long long)(count - i), (long long)i, records[4 * i]);
	return 0;
}
