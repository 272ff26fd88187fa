// SPDX-License-Identifier: MIT
/*
 * After every test of a guest run has closed its files: no buffer, chain,
 * context or byte is left in the pool (UMP_IOC_STATS). The guest's /init
 * runs it before unloading the module.
 */
#include "ump_test.h"

int main(void)
{
	long long bufs, chains, ctxs, used;

	/* A chain whose file closed may still be finishing in its worker. */
	for (int i = 0; i < 100; i++) {
		bufs = t_pool("buffers");
		chains = t_pool("chains");
		ctxs = t_pool("contexts");
		used = t_used_total();
		if (!bufs && !chains && !ctxs && !used)
			break;
		usleep(100000);
	}
	if (bufs || chains || ctxs || used)
		T_FAIL("left in the pool: %lld buffers, %lld chains, %lld contexts, %lld bytes",
		       bufs, chains, ctxs, used);
	printf("accounting: the pool is empty\n");
	return 0;
}
