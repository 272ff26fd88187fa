// SPDX-License-Identifier: MIT
/* The OpenCL backend on a real OpenCL device (PoCL here): backend_models.h. */
#include "backend_models.h"

int main(void)
{
	static const struct bm_target opencl = {"opencl", "ocl0", "HO_OPENCL_MODELS",
						"HO_OPENCL_PARTIAL", "Mali-G610"};

	return backend_models_main(&opencl);
}
