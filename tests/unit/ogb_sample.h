/* A small dataset in OGB's raw layout (file, text): 5 nodes, 2 features,
 * 4 classes; each edge once (one given both ways, one repeated), a
 * self-loop on node 2. test_gnn_data.c checks what it loads to; the
 * fuzz_ogb target mutates one file of it at a time. */
#ifndef SPKIT_OGB_SAMPLE_H
#define SPKIT_OGB_SAMPLE_H

static const char *const ogb_sample[][2] = {
	{"raw/num-node-list.csv.gz", "5\n"},
	{"raw/edge.csv.gz", "0,1\n1,0\n0,3\n0,3\n2,2\n4,3\n"},
	{"raw/node-feat.csv.gz", "0.5,-1\n1.5,-2\n2.5,-3\n3.5,-4\n4.5,-5e2\n"},
	{"raw/node-label.csv.gz", "0\n3\n1\n1\n2\n"},
	{"split/time/train.csv.gz", "0\n1\n"},
	{"split/time/valid.csv.gz", "2\n"},
	{"split/time/test.csv.gz", "3\n"},
};
enum { OGB_FILES = sizeof ogb_sample / sizeof *ogb_sample };

#endif
