#include "macko/macko_output.h"

#include "formats/npy.h"
#include "macko/macko_npz.h"

static int write_dense(const char *path, const struct macko *m, struct sp_err *err)
{
	struct npy_array a = {NPY_F2, 2, 2, {m->rows, m->cols}, NULL};
	if (npy_alloc(&a, path, err))
		return -1;
	macko_decompress(m, a.data);
	int rc = npy_write(path, &a, err);
	npy_free(&a);
	return rc;
}

int macko_output_write(const char *path, const struct macko *m, enum macko_output form,
		       struct sp_err *err)
{
	if (form == MACKO_OUTPUT_DENSE)
		return write_dense(path, m, err);
	return macko_save(path, m, form == MACKO_OUTPUT_NPZ_DEFLATED, err);
}
