/* .npz: .npy members in a ZIP archive (zipfile.h), read and written one at
 * a time through the npy byte-source and header functions. */
#include "formats/npz.h"

#include <stdlib.h>
#include <string.h>

enum { NAME_MAX_LEN = 250 };

int npz_open(struct npz *z, const char *path, struct sp_err *err)
{
	return zip_open(&z->zip, path, err);
}

int npz_open_stream(struct npz *z, FILE *fp, const char *name, struct sp_err *err)
{
	return zip_open_stream(&z->zip, fp, name, err);
}

void npz_close(struct npz *z)
{
	zip_close(&z->zip);
}

static const struct zip_entry *find(const struct npz *z, const char *name)
{
	char zipname[NAME_MAX_LEN + sizeof ".npy"];
	if (strlen(name) > NAME_MAX_LEN)
		return NULL;
	snprintf(zipname, sizeof zipname, "%s.npy", name);
	return zip_find(&z->zip, zipname);
}

int npz_has(const struct npz *z, const char *name)
{
	return find(z, name) != NULL;
}

static int read_member(struct npy_source *src, void *buf, size_t n, struct sp_err *err)
{
	return zip_member_read(src->ctx, buf, n, err);
}

/* Member `name`'s .npy header, and its data too when `whole`. */
static int read_npy(struct npz *z, const char *name, struct npy_array *a, int whole,
		    struct sp_err *err)
{
	char label[SP_ERR_MAX];
	struct zip_member m;
	memset(a, 0, sizeof *a);
	snprintf(label, sizeof label, "%s: member '%s'", z->zip.path, name);
	const struct zip_entry *e = find(z, name);
	if (!e)
		return sp_fail(err, "%s is missing", label);
	int rc = zip_member_open(&m, &z->zip, e, label, err);
	if (rc == 0) {
		struct npy_source src = {read_member, &m, e->usize, label, "member"};
		rc = whole ? npy_read_source(&src, a, err) : npy_read_header_source(&src, a, err);
	}
	if (rc == 0 && whole && (rc = zip_member_finish(&m, err)) != 0)
		npy_free(a);
	zip_member_close(&m);
	return rc;
}

int npz_read(struct npz *z, const char *name, struct npy_array *a, struct sp_err *err)
{
	return read_npy(z, name, a, 1, err);
}

int npz_member_shape(struct npz *z, const char *name, struct npy_array *a, struct sp_err *err)
{
	return read_npy(z, name, a, 0, err);
}

int npz_writer_open(struct npz_writer *w, const char *path, int compress, struct sp_err *err)
{
	memset(w, 0, sizeof *w);
	w->compress = compress;
	return zip_writer_open(&w->zip, path, err);
}

int npz_writer_begin(struct npz_writer *w, const char *name, const struct npy_array *a,
		     struct sp_err *err)
{
	char zipname[NAME_MAX_LEN + sizeof ".npy"], header[NPY_HEADER_MAX], label[SP_ERR_MAX];
	size_t len;
	if (strlen(name) > NAME_MAX_LEN || !name[0])
		return sp_fail(err, "%s: bad member name '%s'", w->zip.out.path, name);
	snprintf(zipname, sizeof zipname, "%s.npy", name);
	snprintf(label, sizeof label, "%s: member '%s'", w->zip.out.path, name);
	if (npy_header_encode(a, header, &len, label, err))
		return -1;
	w->left = npy_nbytes(a);
	return zip_writer_begin(&w->zip, zipname, w->compress, err) ||
	       zip_writer_write(&w->zip, header, len, err);
}

/* The open member's name without ".npy", for messages. */
static int open_name_len(const struct npz_writer *w, const char **name)
{
	*name = w->zip.members[w->zip.count - 1].name;
	return (int)strlen(*name) - 4;
}

int npz_writer_write(struct npz_writer *w, const void *buf, size_t n, struct sp_err *err)
{
	const char *name;
	int len = open_name_len(w, &name);
	if (n > w->left)
		return sp_fail(err, "%s: member '%.*s': more data than its header says",
			       w->zip.out.path, len, name);
	w->left -= n;
	return zip_writer_write(&w->zip, buf, n, err);
}

int npz_writer_end(struct npz_writer *w, struct sp_err *err)
{
	const char *name;
	int len = open_name_len(w, &name);
	if (w->left)
		return sp_fail(err, "%s: member '%.*s': %llu bytes short of what its header says",
			       w->zip.out.path, len, name, (unsigned long long)w->left);
	return zip_writer_end(&w->zip, err);
}

int npz_writer_add(struct npz_writer *w, const char *name, const struct npy_array *a,
		   struct sp_err *err)
{
	if (npz_writer_begin(w, name, a, err) ||
	    npz_writer_write(w, a->data, npy_nbytes(a), err))
		return -1;
	return npz_writer_end(w, err);
}

int npz_writer_commit(struct npz_writer *w, struct sp_err *err)
{
	return zip_writer_commit(&w->zip, err);
}

void npz_writer_abort(struct npz_writer *w)
{
	zip_writer_abort(&w->zip);
}
