// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend keeping its tensors in buffers of its own, as on a
 * discrete GPU or an FPGA card (PoCL told "memory": "device"):
 * backend_models.h, every crossing a copy through clEnqueueRead/WriteBuffer.
 */
#include "backend_models.h"

int main(void)
{
	static const struct bm_target opencl = {.backend = "opencl",
						.dev = "ocl0",
						.env_models = "HO_OPENCL_DEVICE_MEMORY_MODELS",
						.env_partial = "HO_OPENCL_DEVICE_MEMORY_PARTIAL",
						.absent = "Mali-G610",
						.memory = "device",
						.models = "squeezenet1_1"};

	return backend_models_main(&opencl);
}
