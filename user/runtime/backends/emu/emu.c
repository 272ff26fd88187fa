// SPDX-License-Identifier: MIT
/*
 * The emu backend: an accelerator stand-in for tests.  The cpu backend's
 * oneDNN kernels in a memory region of its own, nothing read in place from
 * other devices, optionally paced by the executor to the schedule's times.
 * A real accelerator's backend (CUDA, XRT) fills the same ops table.
 */
#include "../cpu/cpu.h"

static int emu_open_dev(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
			struct ho_error *err)
{
	int ret = ho_cpu_open(threads, out, err);

	if (!ret)
		(*out)->emulated = true;
	(void)dev;
	return ret;
}

const struct ho_backend_ops ho_backend_emu = HO_ONEDNN_OPS("emu", emu_open_dev);
