// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's kernels, CUDA C compiled to PTX by clang at build time
 * (no CUDA toolkit: -nocudainc -nocudalib), embedded in the library, and
 * compiled for the GPU by its driver when the backend opens it.  Without
 * libdevice the math is ours: exp and log through the hardware's base-2
 * approximations, erf by Abramowitz and Stegun 7.1.26 (1.5e-7).  Tensors are
 * float32, row-major; every tensor is a pointer and an offset in elements.
 * Activations are opsem.h's enum ho_act_code, binary operators its
 * enum ho_bin_code.
 */
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#include <__clang_cuda_builtin_vars.h>

#define MAXR 8
struct dims8 {
	int v[MAXR];
};

__device__ static long gid(void)
{
	return (long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ static float ex(float v)
{
	return __nvvm_ex2_approx_f(v * 1.4426950408889634f);
}

__device__ static float ln(float v)
{
	return __nvvm_lg2_approx_f(v) * 0.6931471805599453f;
}

__device__ static float erf7(float v)
{
	float a = __builtin_fabsf(v), t = 1.0f / (1.0f + 0.3275911f * a);
	float p = t * (0.254829592f +
		       t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
	float r = 1.0f - p * ex(-a * a);

	return v < 0 ? -r : r;
}

__device__ static float act(float v, int a, float p, float q)
{
	switch (a) {
	case 1: return __builtin_fmaxf(v, 0.0f);
	case 2: return 1.0f / (1.0f + ex(-v));
	case 3: return 1.0f - 2.0f / (ex(2.0f * v) + 1.0f);
	case 4: return __builtin_fminf(__builtin_fmaxf(v, p), q);
	case 5: return v >= 0.0f ? v : v * p;
	case 6: return __builtin_fminf(__builtin_fmaxf(v * p + q, 0.0f), 1.0f);
	case 7: return v * __builtin_fminf(__builtin_fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f);
	case 8: return v / (1.0f + ex(-v));
	case 9: return ex(v);
	case 10: return __nvvm_sqrt_rn_f(v);
	case 11: return -v;
	case 12: return __builtin_fabsf(v);
	case 13: return erf7(v);
	case 14: return 1.0f / v;
	case 15: return 0.5f * v * (1.0f + erf7(v * 0.70710678118654752f));
	case 16: return ln(v);
	case 17: return __builtin_floorf(v);
	case 18: return __builtin_ceilf(v);
	case 19: return v > 0.0f ? v : p * (ex(v) - 1.0f);
	case 20: return v > 20.0f ? v : ln(1.0f + ex(v));
	case 21: return v / (1.0f + ex(-1.5957691216057308f * (v + 0.044715f * v * v * v)));
	default: return v;
	}
}

__device__ static float bin(float u, float v, int op)
{
	switch (op) {
	case 0: return u + v;
	case 1: return u - v;
	case 2: return u * v;
	case 3: return u / v;
	case 4: return __builtin_fmaxf(u, v);
	case 5: return __builtin_fminf(u, v);
	case 6: return v == 2.0f ? u * u : v == 0.5f ? __nvvm_sqrt_rn_f(u) : v == 1.0f ? u
		       : __nvvm_ex2_approx_f(v * __nvvm_lg2_approx_f(u));
	case 7: return u >= 0.0f ? u : u * v;
	default: return u;
	}
}

extern "C" __global__ void unary(float *y, long yo, const float *x, long xo, long n, int a,
				 float p, float q)
{
	long i = gid();

	if (i < n)
		y[yo + i] = act(x[xo + i], a, p, q);
}

extern "C" __global__ void binary_flat(float *y, long yo, const float *a, long ao, const float *b,
				       long bo, long n, int sa, int sb, int op)
{
	long i = gid();

	if (i < n)
		y[yo + i] = bin(a[ao + i * sa], b[bo + i * sb], op);
}

/* numpy broadcasting: per axis the output's extent and each operand's stride */
extern "C" __global__ void binary(float *y, long yo, const float *a, long ao, const float *b,
				  long bo, long n, int rank, struct dims8 d, struct dims8 sa,
				  struct dims8 sb, int op)
{
	long i = gid(), r = i, ia = 0, ib = 0;

	if (i >= n)
		return;
	for (int k = rank - 1; k >= 0; k--) {
		int c = (int)(r % d.v[k]);

		r /= d.v[k];
		ia += (long)c * sa.v[k];
		ib += (long)c * sb.v[k];
	}
	y[yo + i] = bin(a[ao + ia], b[bo + ib], op);
}

/* any permutation or strided view: output index -> source offset by strides */
extern "C" __global__ void gather_nd(float *y, long yo, const float *x, long xo, long n, int rank,
				     struct dims8 d, struct dims8 s)
{
	long i = gid(), r = i, ix = 0;

	if (i >= n)
		return;
	for (int k = rank - 1; k >= 0; k--) {
		ix += (long)(r % d.v[k]) * s.v[k];
		r /= d.v[k];
	}
	y[yo + i] = x[xo + ix];
}

/* Concat: an input's rows of inner elements into the output's rows at col */
extern "C" __global__ void place(float *y, long yo, const float *x, long xo, long n, int inner,
				 int out_inner, int col)
{
	long i = gid();

	if (i < n)
		y[yo + (i / inner) * out_inner + col + i % inner] = x[xo + i];
}

/* A sliding window: extents, strides, leading pads, dilations, (y, x) each. */
struct window {
	int kh, kw, sh, sw, ph, pw, dh, dw;
};

/* im2col of one image: rows c * KH * KW + i * KW + j, columns the output's pixels */
extern "C" __global__ void im2col(float *col, long co, const float *x, long xo, long n, int H,
				  int W, int OH, int OW, struct window w)
{
	long i = gid();
	int P = OH * OW, p, r, oy, ox, c, ki, kj, iy, ix;

	if (i >= n)
		return;
	p = (int)(i % P);
	r = (int)(i / P);
	oy = p / OW, ox = p % OW;
	kj = r % w.kw, ki = (r / w.kw) % w.kh, c = r / (w.kw * w.kh);
	iy = oy * w.sh - w.ph + ki * w.dh;
	ix = ox * w.sw - w.pw + kj * w.dw;
	col[co + i] = iy < 0 || iy >= H || ix < 0 || ix >= W ? 0.0f
							     : x[xo + ((long)c * H + iy) * W + ix];
}

/* Direct convolution (depthwise and other thin groups), one output element a thread, NCHW. */
extern "C" __global__ void conv2d(float *y, long yo, const float *x, long xo, const float *wt,
				  const float *bias, int has_bias, int C, int H, int W, int K,
				  int OH, int OW, struct window w, int G, long n, int a, float p,
				  float q)
{
	long i = gid();
	int ox, oy, k, img, cg, kg, g;
	float s;

	if (i >= n)
		return;
	ox = (int)(i % OW);
	oy = (int)(i / OW % OH);
	k = (int)(i / ((long)OW * OH) % K);
	img = (int)(i / ((long)OW * OH * K));
	cg = C / G, kg = K / G, g = k / kg;
	s = has_bias ? bias[k] : 0.0f;
	for (int c = 0; c < cg; c++) {
		const float *xc = x + xo + ((long)img * C + g * cg + c) * H * W;
		const float *wc = wt + ((long)k * cg + c) * w.kh * w.kw;

		for (int ki = 0; ki < w.kh; ki++) {
			int iy = oy * w.sh - w.ph + ki * w.dh;

			if (iy < 0 || iy >= H)
				continue;
			for (int kj = 0; kj < w.kw; kj++) {
				int ix = ox * w.sw - w.pw + kj * w.dw;

				if (ix >= 0 && ix < W)
					s += xc[iy * W + ix] * wc[ki * w.kw + kj];
			}
		}
	}
	y[yo + i] = act(s, a, p, q);
}

/*
 * C = act(alpha A B + beta bias), row-major, batch on grid z at strides sa, sb,
 * sc; A [M, K] (ta: stored [K, M]), B [K, N] (tb: [N, K]).  A 64 x 64 tile a
 * block of 256 threads, 4 x 4 outputs a thread, K in steps of 16 through
 * shared memory.  bias at row stride bm and column stride bn (0: broadcast).
 * splits > 1 (one batch): grid z splits K, each adds alpha A B over its part
 * into C, zeroed before; bias_act finishes it.
 */
#define TM 64
#define TN 64
#define TK 16
struct gemm_shape {
	int M, N, K, ta, tb, bm, bn, has_bias, splits, pad_;
	long lda, ldb, ldc, sa, sb, sc;
	float alpha, beta;
};

extern "C" __global__ void gemm(float *c, long co, const float *a, long ao, const float *b,
				long bo, const float *bias, long biaso, struct gemm_shape s, int act_a,
				float p, float q)
{
	__shared__ float as[TK][TM + 1], bs[TK][TN + 1];
	int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
	float acc[4][4];

	int z = s.splits > 1 ? 0 : blockIdx.z, per = (s.K + s.splits - 1) / s.splits;
	int k_lo = 0, k_hi = s.K;

	if (s.splits > 1) { /* whole steps of TK a split */
		per = (per + TK - 1) / TK * TK;
		k_lo = blockIdx.z * per;
		k_hi = k_lo + per < s.K ? k_lo + per : s.K;
	}
	a += ao + (long)z * s.sa;
	b += bo + (long)z * s.sb;
	c += co + (long)z * s.sc;
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.0f;
	for (int k0 = k_lo; k0 < k_hi; k0 += TK) {
		for (int e = threadIdx.x; e < TK * TM; e += 256) {
			int kk = e % TK, mm = e / TK, m = m0 + mm, k = k0 + kk;

			as[kk][mm] = m < s.M && k < k_hi ? a[s.ta ? (long)k * s.lda + m
								 : (long)m * s.lda + k]
							: 0.0f;
		}
		for (int e = threadIdx.x; e < TK * TN; e += 256) {
			int nn = e % TN, kk = e / TN, n = n0 + nn, k = k0 + kk;

			bs[kk][nn] = n < s.N && k < k_hi ? b[s.tb ? (long)n * s.ldb + k
								 : (long)k * s.ldb + n]
							: 0.0f;
		}
		__syncthreads();
		for (int kk = 0; kk < TK; kk++) {
			float av[4], bv[4];

			for (int i = 0; i < 4; i++)
				av[i] = as[kk][ty + 16 * i];
			for (int j = 0; j < 4; j++)
				bv[j] = bs[kk][tx + 16 * j];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += av[i] * bv[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
			float v;

			if (m >= s.M || n >= s.N)
				continue;
			v = s.alpha * acc[i][j];
			if (s.splits > 1) {
				__nvvm_atom_add_gen_f(&c[(long)m * s.ldc + n], v);
				continue;
			}
			if (s.has_bias)
				v += s.beta * bias[biaso + (long)m * s.bm + (long)n * s.bn];
			c[(long)m * s.ldc + n] = act(v, act_a, p, q);
		}
}

/* A split GEMM's C: zeroed before, then its bias and activation after. */
extern "C" __global__ void fill0(float *y, long yo, long n)
{
	long i = gid();

	if (i < n)
		y[yo + i] = 0.0f;
}

extern "C" __global__ void bias_act(float *c, long co, const float *bias, long biaso,
				    struct gemm_shape s, int a, float p, float q, long n)
{
	long i = gid(), m, j;
	float v;

	if (i >= n)
		return;
	m = i / s.N, j = i % s.N;
	v = c[co + m * s.ldc + j];
	if (s.has_bias)
		v += s.beta * bias[biaso + m * s.bm + j * s.bn];
	c[co + m * s.ldc + j] = act(v, a, p, q);
}

/* MaxPool (mode 0), AveragePool without (1) and with (2) the pads counted */
extern "C" __global__ void pool2d(float *y, long yo, const float *x, long xo, int H, int W,
				  int OH, int OW, struct window w, int mode, long n)
{
	long i = gid();
	const float *xc;
	float s;
	int ox, oy, cnt = 0;

	if (i >= n)
		return;
	ox = (int)(i % OW), oy = (int)(i / OW % OH);
	xc = x + xo + i / ((long)OW * OH) * H * W;
	s = mode ? 0.0f : -__builtin_inff();
	for (int ki = 0; ki < w.kh; ki++)
		for (int kj = 0; kj < w.kw; kj++) {
			int iy = oy * w.sh - w.ph + ki * w.dh, ix = ox * w.sw - w.pw + kj * w.dw;

			if (mode == 2 && iy < H + w.ph && ix < W + w.pw)
				cnt++; /* pads count, within the padded extent */
			if (iy < 0 || iy >= H || ix < 0 || ix >= W)
				continue;
			s = mode ? s + xc[iy * W + ix] : __builtin_fmaxf(s, xc[iy * W + ix]);
			cnt += mode == 1;
		}
	y[yo + i] = mode ? s / (float)(cnt ? cnt : 1) : s;
}

/* Global average (mode 1) or max (0) of each row of len elements: a block a row. */
extern "C" __global__ void row_reduce(float *y, long yo, const float *x, long xo, long len,
				      int mode)
{
	__shared__ float part[256];
	const float *r = x + xo + (long)blockIdx.x * len;
	float s = mode ? 0.0f : -__builtin_inff();

	for (long j = threadIdx.x; j < len; j += 256)
		s = mode ? s + r[j] : __builtin_fmaxf(s, r[j]);
	part[threadIdx.x] = s;
	__syncthreads();
	for (int h = 128; h > 0; h >>= 1) {
		if ((int)threadIdx.x < h)
			part[threadIdx.x] = mode ? part[threadIdx.x] + part[threadIdx.x + h]
						 : __builtin_fmaxf(part[threadIdx.x],
								   part[threadIdx.x + h]);
		__syncthreads();
	}
	if (threadIdx.x == 0)
		y[yo + blockIdx.x] = mode ? part[0] / (float)len : part[0];
}

/* Softmax (or LogSoftmax) along an axis of len elements at stride inner. */
extern "C" __global__ void softmax(float *y, long yo, const float *x, long xo, long n, int len,
				   int inner, int log_out)
{
	long i = gid(), base;
	float mx = -__builtin_inff(), s = 0.0f;

	if (i >= n)
		return;
	base = i / inner * (long)len * inner + i % inner;
	for (int j = 0; j < len; j++)
		mx = __builtin_fmaxf(mx, x[xo + base + (long)j * inner]);
	for (int j = 0; j < len; j++)
		s += ex(x[xo + base + (long)j * inner] - mx);
	for (int j = 0; j < len; j++) {
		float v = x[xo + base + (long)j * inner] - mx;

		y[yo + base + (long)j * inner] = log_out ? v - ln(s) : ex(v) / s;
	}
}

/* LayerNormalization over the last len elements of each row. */
extern "C" __global__ void layer_norm(float *y, long yo, const float *x, long xo, const float *g,
				      long go, const float *b, long bo, int has_b, long n, int len,
				      float eps)
{
	long i = gid();
	const float *r;
	float mean = 0.0f, var = 0.0f, inv;

	if (i >= n)
		return;
	r = x + xo + i * len;
	for (int j = 0; j < len; j++)
		mean += r[j];
	mean /= (float)len;
	for (int j = 0; j < len; j++)
		var += (r[j] - mean) * (r[j] - mean);
	inv = 1.0f / __nvvm_sqrt_rn_f(var / (float)len + eps);
	for (int j = 0; j < len; j++)
		y[yo + i * len + j] =
		    (r[j] - mean) * inv * g[go + j] + (has_b ? b[bo + j] : 0.0f);
}

/* Inference BatchNormalization folded into a scale and shift per channel. */
extern "C" __global__ void channel_affine(float *y, long yo, const float *x, long xo,
					  const float *ss, long n, int C, int inner)
{
	long i = gid();
	int c;

	if (i >= n)
		return;
	c = (int)(i / inner % C);
	y[yo + i] = x[xo + i] * ss[c] + ss[C + c];
}

/* ConvTranspose 2-D, one output element a thread: the inputs whose window covers it. */
extern "C" __global__ void conv_transpose2d(float *y, long yo, const float *x, long xo,
					    const float *wt, const float *bias, int has_bias, int C,
					    int H, int W, int K, int OH, int OW, struct window w,
					    int G, long n, int a, float p, float q)
{
	long i = gid();
	int ox, oy, k, img, cg, kg, g, kk;
	float s;

	if (i >= n)
		return;
	ox = (int)(i % OW);
	oy = (int)(i / OW % OH);
	k = (int)(i / ((long)OW * OH) % K);
	img = (int)(i / ((long)OW * OH * K));
	cg = C / G, kg = K / G, g = k / kg, kk = k % kg;
	s = has_bias ? bias[k] : 0.0f;
	for (int ki = 0; ki < w.kh; ki++) {
		int ty = oy + w.ph - ki * w.dh, iy;

		if (ty < 0 || ty % w.sh || (iy = ty / w.sh) >= H)
			continue;
		for (int kj = 0; kj < w.kw; kj++) {
			int tx = ox + w.pw - kj * w.dw, ix;

			if (tx < 0 || tx % w.sw || (ix = tx / w.sw) >= W)
				continue;
			for (int c = 0; c < cg; c++) {
				int ci = g * cg + c;

				s += x[xo + (((long)img * C + ci) * H + iy) * W + ix] *
				     wt[(((long)ci * kg + kk) * w.kh + ki) * w.kw + kj];
			}
		}
	}
	y[yo + i] = act(s, a, p, q);
}

__device__ static float blend(float a, float b, float w)
{
	return w == 0.0f ? a : a * (1 - w) + b * w;
}

/* Resize of the last two axes: each output row and column blends two source taps. */
extern "C" __global__ void resize2d(float *y, long yo, const float *x, long xo, int H, int W,
				    int OH, int OW, const int *ix, const float *wt, long n)
{
	long i = gid();
	int ox, oy, m = OH + OW, x0, x1;
	const float *xc, *r0, *r1;
	float wx;

	if (i >= n)
		return;
	ox = (int)(i % OW), oy = (int)(i / OW % OH);
	xc = x + xo + i / ((long)OW * OH) * H * W;
	r0 = xc + (long)ix[oy] * W, r1 = xc + (long)ix[m + oy] * W;
	x0 = ix[OH + ox], x1 = ix[m + OH + ox];
	wx = wt[OH + ox];
	y[yo + i] = blend(blend(r0[x0], r0[x1], wx), blend(r1[x0], r1[x1], wx), wt[oy]);
}
