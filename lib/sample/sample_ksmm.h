/* The ksmm operator's link to ksmm-tune's types (lib/ksmm/ksmm.h), for its
 * CPU reference and its GPU side. */
#ifndef SPKIT_SAMPLE_KSMM_H
#define SPKIT_SAMPLE_KSMM_H

#include "ksmm/ksmm.h"
#include "sample/sample_op.h"

/* fp16, bf16, fp32 as ksmm-tune names them. */
enum ksmm_dtype sample_ksmm_dtype(enum sample_precision p);

#endif
