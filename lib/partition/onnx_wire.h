/* An .onnx file's protobuf wire format, slimmed before decoding: a copy of
 * the ModelProto without the tensor data that shape inference never reads.
 *
 * protobuf-c copies every bytes field while it unpacks, so decoding a
 * 300 MB model with its weights needs the file in memory plus a copy of
 * every initializer. This pass streams the file instead (stdio, seeking
 * over what it drops) and writes a new message in which every tensor data
 * field (raw_data, float_data, int64_data, ...) longer than
 * ONNX_WIRE_KEEP_BYTES is left out, and training_info, which only holds
 * training graphs, too. Small data stays: the int64 shape constants and
 * the float scales of dynamic exports. Memory is then proportional to the
 * graph, not to the weights.
 *
 * Tensors are found wherever ONNX puts them: graph initializers, sparse
 * initializers, node attributes (a Constant's value), subgraphs of If and
 * Loop, functions. Every length is checked against what encloses it, so a
 * truncated or foreign file fails here with the byte offset, and the
 * messages that can nest (subgraphs, TypeProto in its sequence, map and
 * optional types) are walked too: nesting past ONNX_WIRE_MAX_DEPTH fails
 * here, before protobuf-c's unpack recurses once per level. */
#ifndef SPKIT_ONNX_WIRE_H
#define SPKIT_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

enum { ONNX_WIRE_KEEP_BYTES = 1024, ONNX_WIRE_MAX_DEPTH = 32 };

struct onnx_wire_stats {
	uint64_t dropped_bytes;  /* tensor data left out */
	uint64_t dropped_fields; /* how many fields that was */
};

/* Slim the model in path into out (appended). */
int onnx_wire_slim_file(const char *path, struct buf *out, struct onnx_wire_stats *st,
			struct sp_err *err);
/* The same from memory; name stands for the file in messages. */
int onnx_wire_slim_mem(const void *data, size_t size, const char *name, struct buf *out,
		       struct onnx_wire_stats *st, struct sp_err *err);

#endif
