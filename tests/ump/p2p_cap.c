// SPDX-License-Identifier: MIT
/*
 * P2P memory is charged to no memory cgroup, so the pool caps its share of
 * each device's (the p2p_cap_mb parameter, /sys/class/ump/<dev>/p2pmem_cap):
 * an ALLOC past the cap fails with -ENOMEM however it is split, racing
 * ALLOCs stay under it, UMP_IOC_STATS reports it, and "max" lifts it.
 */
#include <pthread.h>

#include "ump_test.h"

#define CAP (1u << 20)

static const char *cap_path;
static int nr_ok;
static pthread_mutex_t ok_lock = PTHREAD_MUTEX_INITIALIZER;

struct racer {
	struct ump u;
	uint32_t region;
};

/* Allocate 64 KiB pieces until -ENOMEM; counts the ones that fit. */
static void *race(void *arg)
{
	struct racer *r = arg;
	uint32_t h;
	int ret;

	while (!(ret = ump_alloc(&r->u, r->region, 65536, &h))) {
		pthread_mutex_lock(&ok_lock);
		nr_ok++;
		pthread_mutex_unlock(&ok_lock);
	}
	if (ret != -ENOMEM)
		T_FAIL("racing alloc: %d", ret);
	return NULL;
}

static void read_cap(char *buf, size_t len)
{
	FILE *f = fopen(cap_path, "r");

	if (!f || !fgets(buf, (int)len, f))
		T_FAIL("cannot read %s", cap_path);
	fclose(f);
}

int main(void)
{
	char path[128], name[32], buf[64], val[32];
	struct racer r[4];
	pthread_t t[4];
	struct ump_dev_info di;
	struct ump u;
	uint32_t h, h2;
	int i, dev;

	t_open(&u);
	dev = (int)t_p2p_device(&u, &di, name);
	snprintf(path, sizeof(path), "/sys/class/ump/%s/p2pmem_cap", name);
	cap_path = path;
	snprintf(buf, sizeof(buf), "region p2p%d", dev);

	read_cap(val, sizeof(val));
	if (strcmp(val, "max\n"))
		T_FAIL("default cap '%s', expected max", val);
	T_EXPECT(t_stat(buf, "capacity"), 0);
	T_EXPECT(t_write_file(path, "lots"), -EINVAL);
	T_EXPECT(t_write_file(path, "-1"), -EINVAL);

	T_OK(t_write_file(path, "1048576"));
	read_cap(val, sizeof(val));
	if (strcmp(val, "1048576\n"))
		T_FAIL("cap reads '%s' after writing 1048576", val);
	T_EXPECT(t_stat(buf, "capacity"), CAP);
	T_EXPECT(ump_alloc(&u, UMP_REGION_P2P(dev), CAP + 1, &h), -ENOMEM);
	T_OK(ump_alloc(&u, UMP_REGION_P2P(dev), CAP, &h));
	T_EXPECT(ump_alloc(&u, UMP_REGION_P2P(dev), 1, &h2), -ENOMEM);
	T_EXPECT(t_stat(buf, "used"), CAP);
	T_OK(ump_free(&u, h));

	/* Four files racing in 64 KiB pieces get exactly the cap between them. */
	for (i = 0; i < 4; i++) {
		t_open(&r[i].u);
		r[i].region = UMP_REGION_P2P(dev);
		if (pthread_create(&t[i], NULL, race, &r[i]))
			T_FAIL("pthread_create");
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (nr_ok != CAP / 65536)
		T_FAIL("racing files got %d pieces of 64 KiB under a 1 MiB cap", nr_ok);
	T_EXPECT(t_stat(buf, "used"), CAP);
	for (i = 0; i < 4; i++)
		ump_close(&r[i].u);
	T_EXPECT(t_stat(buf, "used"), 0);

	/* Lifted: more than the old cap fits again. */
	T_OK(t_write_file(path, "max"));
	T_EXPECT(t_stat(buf, "capacity"), 0);
	T_OK(ump_alloc(&u, UMP_REGION_P2P(dev), 2 * CAP, &h));
	T_OK(ump_free(&u, h));
	ump_close(&u);
	printf("p2p_cap: %s capped at 1 MiB, 4 racing files got %d x 64 KiB\n", name, nr_ok);
	return 0;
}
