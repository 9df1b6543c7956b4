/* libFuzzer target for the rendezvous file (core/rendezvous.h): whatever a
 * file of the run's name holds, rendezvous_wait either takes a whole, valid
 * file of the right size and rank count, or gives up at its (tiny) timeout
 * with an error naming the file; never a crash, a leak or a hang. The first
 * byte picks the rank count the waiting rank expects (1..4), so a valid
 * file of another count is seen too. */
#include "fuzzdir.h"

#include <stdint.h>

#include "core/err.h"
#include "core/rendezvous.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const int world = 1 + data[0] % 4;
	fuzz_put("spkit-rendezvous-f.id", data + 1, size - 1);
	unsigned char blob[128];
	struct sp_err err;
	if (rendezvous_wait(fuzz_dir(), "f", world, blob, sizeof blob, 0.002, &err) != 0) {
		fuzz_check_message(err.msg);
		if (!strstr(err.msg, "spkit-rendezvous-f.id"))
			abort();
	}
	return 0;
}
