// SPDX-License-Identifier: MIT
/* The OpenCL backend on a real OpenCL device (PoCL here): backend_models.h. */
#include "backend_models.h"

int main(void)
{
	static const struct bm_target opencl = {.backend = "opencl",
						.dev = "ocl0",
						.env_models = "HO_OPENCL_MODELS",
						.env_partial = "HO_OPENCL_PARTIAL",
						.absent = "Mali-G610"};

	return backend_models_main(&opencl);
}
