// SPDX-License-Identifier: MIT
/*
 * The emulated discrete accelerator (memory of its own, on any machine):
 * backend_models.h, so the executor's copies into and out of a device's own
 * memory, its outputs fetched back and its control flow's host side are
 * checked here, not only on a lent GPU.
 */
#include "backend_models.h"

int main(void)
{
	static const struct bm_target disc = {.backend = "emu-discrete",
					      .dev = "emu0",
					      .env_models = "HO_EMU_DISCRETE_MODELS",
					      .env_partial = "HO_EMU_DISCRETE_PARTIAL"};

	return backend_models_main(&disc);
}
