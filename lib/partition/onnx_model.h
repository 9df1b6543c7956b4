/* An ONNX model read into an operator graph (opgraph.h). Only dims are
 * kept of initializers; their data is dropped, except small int64 and float
 * tensors (the shape arithmetic of dynamic exports and Resize's scales read
 * those).
 *
 * The protobuf is decoded with protobuf-c from Debian's onnx.proto, after
 * onnx_wire.h has streamed the file and left out the large tensor data, so
 * a model of hundreds of MB is never held in memory: what the load needs is
 * proportional to the node count, not to the weights. */
#ifndef SPKIT_ONNX_MODEL_H
#define SPKIT_ONNX_MODEL_H

#include <stddef.h>

#include "core/err.h"
#include "partition/opgraph.h"

/* Read and decode an .onnx file. On failure g is left empty (opgraph_free is safe). */
int onnx_model_load(const char *path, struct opgraph *g, struct sp_err *err);
/* The same from memory; name is used in messages. */
int onnx_model_load_mem(const void *data, size_t size, const char *name, struct opgraph *g,
			struct sp_err *err);

#endif
