/* SPDX-License-Identifier: MIT */
/*
 * The box and its profile, shared by the scheduler, the runtime and the
 * probes: a box's devices and links as its JSON file describes them
 * (box.c), and the profile heteroopt probe measured of this machine
 * (profile.c), with what it says a node or a copy costs.
 *
 * Ownership: ho_box_free() and ho_profile_free() release all of it.  Errors:
 * -errno plus a struct ho_error (error.h).
 */
#ifndef HETEROOPT_BOX_H
#define HETEROOPT_BOX_H

#include <stdbool.h>
#include <stdint.h>

#include "heteroopt/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HO_MAX_DEVICES 32
#define HO_CORE_WORDS 4 /* CPU ids 0..255 as a bitmask */
#define HO_NAME_LEN 32

/* ---- box model (user/box/box.c) ---- */

struct ho_device {
	char name[HO_NAME_LEN];
	char kind[HO_NAME_LEN];		/* cpu, gpu, npu, fpga, ... */
	double peak_flops[HO_DT_COUNT]; /* FLOP/s per element type; 0 = not supported */
	double mem_bw;			/* bytes/s */
	double mem_capacity;		/* bytes */
	double energy_per_flop;		/* J */
	double energy_per_byte;		/* J per byte of device-memory traffic */
	double idle_power, peak_power;	/* W */
	double launch_overhead;		/* s per node */
	double efficiency[4];		/* per enum ho_op_class: fraction of peak reached */
	int numa_node;
	int threads;		       /* CPU devices: cores the runtime gives it */
	uint64_t cores[HO_CORE_WORDS]; /* CPU devices: the CPU ids it runs on; none: any */
	char pci[16];	 /* a PCI device's address (0000:03:00.0), for its NUMA node */
	bool p2p_memory; /* its memory is that PCI device's P2P memory (through ump.ko) */
	uint32_t n_unsupported;
	char (*unsupported)[HO_NAME_LEN]; /* op types it cannot run */
	uint32_t n_supported;
	char (*supported)[HO_NAME_LEN]; /* if set, the only op types it runs */
	/* What runs it (box key "backend"): a runtime backend by name ("": its kind's),
	 * and which of its platforms and devices (substrings of their names; "": the first). */
	char backend[HO_NAME_LEN];
	char platform[64], device[64];
	/* Backend key "memory": where its tensors live, "host" (host memory it addresses in
	 * place), "device" (its own: tensors cross by copies), "": as the device offers. */
	char memory[8];
	/* Box key "alternative_to": the devices whose cores this one is, as one device; a
	 * schedule uses it or them, never both.  0: none. */
	uint64_t whole_of;
};

struct ho_link {
	int a, b;	  /* device indices */
	double bandwidth; /* bytes/s */
	double latency;	  /* s */
	double energy_per_byte;
	bool p2p;	    /* peer-to-peer; else copies stage through the host */
	bool shared_memory; /* both address one memory: consumers read in place, nothing moves */
};

struct ho_box {
	char name[64];
	uint32_t n_devices, n_links;
	struct ho_device *dev;
	struct ho_link *links;
	int host;	       /* the device whose memory stages non-P2P copies */
	double small_transfer; /* s: fixed cost of any transfer (driver, sync) */
	double mem_safety;     /* usable fraction of capacity (default 0.85) */
};

int ho_box_load(const char *path, struct ho_box **out, struct ho_error *err);
int ho_box_parse(const char *json_text, struct ho_box **out, struct ho_error *err);
void ho_box_free(struct ho_box *box);
int ho_box_device(const struct ho_box *box, const char *name); /* index or -1 */
/* The devices whose memory device dev reads in place (shared_memory links), as a mask. */
uint64_t ho_box_in_place(const struct ho_box *box, int dev);
bool ho_device_supports(const struct ho_device *d, const char *op_type);
/* The devices dev excludes (alternative_to, either way): a schedule uses one side only. */
uint64_t ho_box_exclusive(const struct ho_box *box, int dev);
/* Whether any device or link of the box has a power figure: else energy is not measured. */
bool ho_box_has_energy(const struct ho_box *box);

/* ---- the profile (user/box/profile.c): this machine as heteroopt probe measured it ---- */

struct ho_profile;
struct json_t;
/* Read and check path against box (its devices, their keys and figures). */
int ho_profile_load(const char *path, const struct ho_box *box, struct ho_profile **out,
		    struct ho_error *err);
void ho_profile_free(struct ho_profile *prof);
/*
 * Write doc (jansson's json_t), a profile of box, to path in one rename, once
 * it reads back as ho_profile_load reads it: what the probes write is what the
 * scheduler reads, checked in one place.
 */
int ho_profile_write(struct json_t *doc, const struct ho_box *box, const char *path,
		     struct ho_error *err);
/* Write doc (a box, a profile) to path whole or not at all: a temporary file renamed. */
int ho_json_write_file(struct json_t *doc, const char *path, struct ho_error *err);
/* The machine the profile was measured on (jansson's json_t, borrowed), or NULL. */
struct json_t *ho_profile_machine(const struct ho_profile *prof);
/* Every measured node time names a node of g: a renamed one would keep the estimate. */
int ho_profile_check_nodes(const struct ho_profile *prof, const struct ho_graph *g,
			   const struct ho_box *box, struct ho_error *err);
/*
 * Device dev's figures: the profile's where it measured them, else the box's
 * (prof may be NULL).  Launch overhead and bandwidth in s and bytes/s, peak in
 * FLOP/s for element type dt (0: none), efficiency of op_type (class op_class).
 */
double ho_profile_launch(const struct ho_profile *prof, const struct ho_box *box, int dev);
double ho_profile_peak(const struct ho_profile *prof, const struct ho_box *box, int dev, int dt);
double ho_profile_mem_bw(const struct ho_profile *prof, const struct ho_box *box, int dev);
double ho_profile_efficiency(const struct ho_profile *prof, const struct ho_box *box, int dev,
			     const char *op_type, int op_class);
/*
 * What the probes measured of node nd on dev, in s: its node_us, else its
 * family's points or its class's fitted model plus launch; < 0: nothing.
 */
double ho_profile_node_time(const struct ho_profile *prof, const struct ho_graph *g,
			    const struct ho_node *nd, int dev, double launch);
/*
 * Whether nd's own time on dev was measured (its node_us, or its family's
 * points, which hold whatever post-ops were fused into it then).
 */
bool ho_profile_node_measured(const struct ho_profile *prof, const struct ho_graph *g,
			      const struct ho_node *nd, int dev);
/* s per element that a post-op of op_type adds fused into a kernel on dev; 0: unmeasured. */
double ho_profile_post_op(const struct ho_profile *prof, int dev, const char *op_type);
/* How many times faster than float32 device dev's kernel of class kc and work (ho_node_work)
 * computes in precision (the runtime's name), as the probes measured its class's kernels
 * (between the two nearest in work); 0: not measured, or it has none. */
double ho_profile_speedup(const struct ho_profile *prof, int dev, const char *precision, int kc,
			  double work);
/* Bytes/s at which device dev turns a tensor from NCHW to channels-last or back
 * (the probe's relayout row); 0: not measured. */
double ho_profile_relayout_bw(const struct ho_profile *prof, int dev);
/* The streaming rate (GB/s) at a working set of bytes, from a bandwidth_by_size list. */
double ho_profile_bw_at(const struct json_t *curve, double bytes);
/*
 * The rate (bytes/s) a streaming class whose rate in the caches is class_bw
 * gets at a working set of bytes: class_bw up to the curve's peak (where
 * launches, not caches, bind), past it the curve's rate where slower.
 */
double ho_profile_stream_bw(const struct json_t *curve, double bytes, double class_bw);
/* Whether kernel class kc is priced past the caches that way (and so fitted: ho_fit_class_model).
 */
bool ho_class_past_caches(int kc);
/* Link a-b as measured: hand-off latency (< 0: the box's), copy rate and the rate b
 * reads a's fresh tensor in place at (bytes/s, <= 0: none). */
double ho_profile_link_latency(const struct ho_profile *prof, int a, int b);
double ho_profile_link_bw(const struct ho_profile *prof, int a, int b);
double ho_profile_handoff_bw(const struct ho_profile *prof, int a, int b);
/* Interference: whether any was measured, and how many times slower work of class c
 * (0: memory-bound, 1: compute-bound) runs on device i while j runs (1: not at all). */
bool ho_profile_interferes(const struct ho_profile *prof);
double ho_profile_slowdown(const struct ho_profile *prof, int c, int i, int j);

#ifdef __cplusplus
}
#endif

#endif
