/* Hand-written models in YAML, read into the same operator graph
 * (opgraph.h) an ONNX file gives, so shape inference and every analysis
 * are shared.
 *
 *	name: mlp                      # optional
 *	opset: 17                      # optional (17): the ONNX semantics of ops
 *	inputs:                        # graph inputs: name: dims; a dim that is a
 *	  x: [N, 784]                  #   name (N) is symbolic: --batch sets it
 *	params:                        # weights, counted as parameters: name: dims
 *	  fc1.w: [256, 784]
 *	  fc1.b: [256]
 *	constants:                     # small tensors with values, not parameters:
 *	  flat: [0, -1]                #   a number or a list; integers are int64, a
 *	  scales: [1.0, 1.0, 2.0, 2.0] #   list with a decimal point or exponent float
 *	nodes:
 *	  - {op: Gemm, name: fc1, inputs: [x, fc1.w, fc1.b], outputs: [h], attrs: {transB: 1}}
 *	  - {op: Relu, inputs: [h], outputs: [a]}   # name: the first output's
 *	  - repeat: 4                  # a block, copied 4 times
 *	    input: a                   # what $in is in the first copy
 *	    output: y                  # what $out is in the last copy
 *	    params: {blk$i.w: [256, 256]}
 *	    nodes:
 *	      - {op: MatMul, name: blk$i.mm, inputs: [$in, blk$i.w], outputs: [blk$i.h]}
 *	      - {op: Relu, name: blk$i.relu, inputs: [blk$i.h], outputs: [$out]}
 *	outputs: [y]                   # optional: graph outputs
 *
 * Nodes are ONNX operators with their ONNX attributes: an integer, a
 * number, a string, or a list of integers or numbers; ConstantOfShape's
 * value is a number. An empty input name ("") is an absent optional input.
 *
 * In a block, $i is the copy's index (0, 1, ...), $in is the block's input
 * in copy 0 and the previous copy's $out after, and $out is the block's
 * output in the last copy and OUTPUT#i before. A '$' starts a placeholder
 * named by the letters after it ("b$i.w", "x$i_y"; "$ix" is an error).
 * Names in params, constants and nodes are substituted; a param or constant
 * without $i is declared once and shared by every copy. Blocks do not nest.
 *
 * Errors name the file and line: "m.yaml:12: unknown key 'imputs' in a
 * node (expected op, name, inputs, outputs, attrs)", "m.yaml:20: node
 * 'fc2': output 'h' is already produced by node 'fc1' (line 14)"; nodes
 * keep their line, so shape inference's messages have it too. */
#ifndef SPKIT_MODEL_YAML_H
#define SPKIT_MODEL_YAML_H

#include <stddef.h>

#include "core/err.h"
#include "partition/opgraph.h"

/* The most nodes a model may expand to (repeats included). */
#define MODEL_YAML_MAX_NODES 2000000

int model_yaml_load(const char *path, struct opgraph *g, struct sp_err *err);
/* The same from memory; name stands for the file in messages. */
int model_yaml_load_buffer(const void *buf, size_t len, const char *name, struct opgraph *g,
			   struct sp_err *err);

#endif
