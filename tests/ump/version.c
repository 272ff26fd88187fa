// SPDX-License-Identifier: MIT
/* ABI version and feature query; /proc/ump/status says the pool is active. */
#include <sys/ioctl.h>

#include "ump_test.h"

int main(void)
{
	struct ump_version v;
	char status[8192];
	long long n;
	struct ump u;

	t_open(&u);
	if (u.version.abi_major != UMP_ABI_MAJOR)
		T_FAIL("abi %u", u.version.abi_major);
	if (!(u.version.features & UMP_FEAT_HOST_NODES) ||
	    !(u.version.features & UMP_FEAT_DMABUF_EXPORT) ||
	    !(u.version.features & UMP_FEAT_URING_CMD))
		T_FAIL("features 0x%llx", (unsigned long long)u.version.features);
	if (u.version.nr_nodes < 1)
		T_FAIL("no NUMA node with memory");

	memset(&v, 0, sizeof(v));
	v.reserved[3] = 1;
	if (ioctl(u.fd, UMP_IOC_VERSION, &v) != -1 || errno != EINVAL)
		T_FAIL("reserved field accepted");

	T_EXPECT(ump_read_status(status, sizeof(status)) > 0, 1);
	if (!strstr(status, "ump_status: active\n"))
		T_FAIL("status: %s", status);
	/* The view for people and the ioctl for programs say the same. */
	n = t_pool("contexts");
	if (n != 1 || !strstr(status, "contexts: 1\n"))
		T_FAIL("contexts %lld with one open (status says %s)", n,
		       strstr(status, "contexts:") ? strstr(status, "contexts:") : "nothing");
	printf("abi %u.%u features 0x%llx nodes %u devices %u\n", u.version.abi_major,
	       u.version.abi_minor, (unsigned long long)u.version.features, u.version.nr_nodes,
	       u.version.nr_devices);
	ump_close(&u);
	return 0;
}
