// SPDX-License-Identifier: MIT
/* The CUDA backend on an NVIDIA GPU, where one is lent: backend_models.h. */
#include "backend_models.h"

int main(void)
{
	static const struct bm_target cuda = {.backend = "cuda",
					      .dev = "cuda0",
					      .env_models = "HO_CUDA_MODELS",
					      .env_partial = "HO_CUDA_PARTIAL",
					      .absent = "Tesla K80"};

	return backend_models_main(&cuda);
}
