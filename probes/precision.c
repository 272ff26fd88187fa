// SPDX-License-Identifier: MIT
/*
 * The reduced precisions a device's kernels compute in (bf16, int8), measured: each
 * convolution and product by weights of the sweep timed again with its main node asked
 * the precision, the conversions its kernel makes (the input rounded or quantized on the
 * way in) inside the time.  The speed-ups over float32 per kernel class, by the work of
 * each row (a small kernel gains less, or loses: the conversion does not shrink with it),
 * are what the cost model prices a node's precision by.  A row whose kernel does
 * not take the precision there (a CPU without the instructions, a depthwise
 * convolution, which stays float32) measures nothing.
 */
#include <errno.h>
#include <math.h>

#include "probe_priv.h"

int ho_probe_precisions(const struct ho_box *box, const struct ho_probe_case *c, int d, int kc,
			double f32_s, const struct ho_probe_method *m, volatile sig_atomic_t *stop,
			struct ho_probe_speedups *sp, json_t *row, struct ho_error *err)
{
	for (uint32_t q = 1; ho_rt_precisions[q] && q < 4; q++) {
		struct ho_probe_run r;
		struct ho_probe_stat st;
		int ret = ho_probe_case_open_in(box, c, d, ho_rt_precisions[q], &r, err);

		/* one run first: the kernel says whether it took the precision */
		if (!ret && ho_probe_run_once(&r) < 0)
			ret = ho_err(err, -EIO, "probe: %s in %s failed to run", c->what,
				     ho_rt_precisions[q]);
		if (!ret && ho_rt_last_report(r.rt)->node_precision[r.main] &&
		    !(ret = ho_probe_measure(ho_probe_run_once, &r, m, stop, &st)) &&
		    st.median > 0 && sp->n[q][kc] < HO_PROBE_PREC_ROWS) {
			char key[32];

			sp->work[q][kc][sp->n[q][kc]] = ho_node_work(&r.g->nodes[r.main]);
			sp->r[q][kc][sp->n[q][kc]++] = f32_s / st.median;
			snprintf(key, sizeof(key), "%s_speedup", ho_rt_precisions[q]);
			json_object_set_new(row, key, json_real(f32_s / st.median));
		}
		ho_probe_run_close(&r);
		if (ret == -EINTR)
			return ho_err(err, ret, "probe: interrupted");
		if (ret)
			return ret == -EOPNOTSUPP ? 0 : ret;
	}
	return 0;
}

json_t *ho_probe_speedups_json(const struct ho_probe_speedups *sp)
{
	json_t *o = json_object();

	for (uint32_t q = 1; ho_rt_precisions[q] && q < 4; q++) {
		json_t *by_class = json_object();

		for (int kc = 0; kc < HO_KC_COUNT; kc++) {
			json_t *pts = json_array();

			for (uint32_t i = 0; i < sp->n[q][kc]; i++)
				json_array_append_new(
				    pts, json_pack("[f, f]", sp->work[q][kc][i], sp->r[q][kc][i]));
			if (json_array_size(pts))
				json_object_set_new(by_class, ho_kernel_class_name(kc), pts);
			else
				json_decref(pts);
		}
		if (json_object_size(by_class))
			json_object_set_new(o, ho_rt_precisions[q], by_class);
		else
			json_decref(by_class);
	}
	if (!json_object_size(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}
