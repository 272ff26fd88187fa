// SPDX-License-Identifier: MIT
/* The CUDA backend on an NVIDIA GPU, where one is lent: backend_models.h. */
#include "backend_models.h"

int main(void)
{
	static const struct bm_target cuda = {"cuda", "cuda0", "HO_CUDA_MODELS", "HO_CUDA_PARTIAL",
					      "Tesla K80"};

	return backend_models_main(&cuda);
}
