// SPDX-License-Identifier: MIT
/*
 * An Einsum equation parsed once, for the shape rule and the kernel alike:
 * each input axis and output axis as a label id.  Ellipsis axes take ids
 * 0..E-1, right-aligned (E the longest ellipsis); letters the ids after,
 * in order of first appearance.  Without "->" the output is the ellipsis,
 * then the letters used once, in alphabetical order (numpy's rule).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "common.h"
#include "heteroopt/opsem.h"

/* One term's letters and where its ellipsis is (-1: none); spaces skipped. */
static int einsum_term(const char *s, size_t len, char *letters, int *n, int *ell)
{
	*n = 0;
	*ell = -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (s[i] == '.') {
			if (*ell >= 0 || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
				return -1;
			*ell = *n;
			i += 2;
			continue;
		}
		if (!isalpha((unsigned char)s[i]) || *n >= HO_MAX_RANK)
			return -1;
		letters[(*n)++] = s[i];
	}
	return 0;
}

int ho_einsum_parse(const char *eq, int n_in, const int *ranks, struct ho_einsum *e,
		    struct ho_error *err)
{
	const char *arrow = strstr(eq, "->"), *p = eq, *end = arrow ? arrow : eq + strlen(eq);
	char letters[HO_EINSUM_MAX_IN][HO_MAX_RANK], seen[128] = {0}, ids[128];
	int nl[HO_EINSUM_MAX_IN], ell[HO_EINSUM_MAX_IN], ell_rank[HO_EINSUM_MAX_IN], E = 0;

	memset(e, 0, sizeof(*e));
	memset(ids, -1, sizeof(ids));
	if (n_in < 1 || n_in > HO_EINSUM_MAX_IN)
		return ho_err(err, -EINVAL, "einsum: %d inputs (1 to %d)", n_in, HO_EINSUM_MAX_IN);
	for (int i = 0; i < n_in; i++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *te = comma ? comma : end;

		if ((comma && i == n_in - 1) || (!comma && i < n_in - 1))
			return ho_err(err, -EINVAL, "einsum '%s': %s terms than %d inputs", eq,
				      comma ? "more" : "fewer", n_in);
		if (einsum_term(p, (size_t)(te - p), letters[i], &nl[i], &ell[i]))
			return ho_err(err, -EINVAL,
				      "einsum '%s': term %d is not letters and one '...'", eq, i);
		ell_rank[i] = ranks[i] - nl[i];
		if (ell_rank[i] < 0 || (ell[i] < 0 && ell_rank[i] > 0))
			return ho_err(err, -EINVAL,
				      "einsum '%s': term %d has %d labels for rank %d", eq, i,
				      nl[i], ranks[i]);
		E = ell_rank[i] > E ? ell_rank[i] : E;
		p = te + 1;
	}
	e->n_in = n_in;
	e->n_ell = E;
	e->n_labels = E;
	for (int i = 0; i < n_in; i++) {
		int a = 0;

		for (int j = 0; j <= nl[i]; j++) {
			if (j == ell[i])
				for (int k = 0; k < ell_rank[i]; k++)
					e->in_label[i][a++] = E - ell_rank[i] + k;
			if (j == nl[i])
				break;
			if (ids[(int)letters[i][j]] < 0)
				ids[(int)letters[i][j]] = (char)e->n_labels++;
			seen[(int)letters[i][j]]++;
			e->in_label[i][a++] = ids[(int)letters[i][j]];
		}
		e->in_rank[i] = a;
	}
	if (arrow) {
		char out[HO_MAX_RANK];
		int no, oell;

		if (einsum_term(arrow + 2, strlen(arrow + 2), out, &no, &oell) ||
		    no + (oell >= 0 ? E : 0) > HO_MAX_RANK)
			return ho_err(err, -EINVAL,
				      "einsum '%s': the output is not letters and '...'", eq);
		if (oell < 0 && E > 0)
			return ho_err(err, -EINVAL, "einsum '%s': the output drops the ellipsis",
				      eq);
		for (int j = 0; j <= no; j++) {
			if (j == oell)
				for (int k = 0; k < E; k++)
					e->out_label[e->out_rank++] = k;
			if (j == no)
				break;
			if (ids[(int)out[j]] < 0)
				return ho_err(err, -EINVAL,
					      "einsum '%s': output label '%c' is in no input", eq,
					      out[j]);
			for (int k = 0; k < e->out_rank; k++)
				if (e->out_label[k] == ids[(int)out[j]])
					return ho_err(err, -EINVAL,
						      "einsum '%s': output label '%c' twice", eq,
						      out[j]);
			e->out_label[e->out_rank++] = ids[(int)out[j]];
		}
	} else {
		for (int k = 0; k < E; k++)
			e->out_label[e->out_rank++] = k;
		for (int c = 0; c < 128; c++)
			if (seen[c] == 1 && e->out_rank < HO_MAX_RANK)
				e->out_label[e->out_rank++] = ids[c];
	}
	return 0;
}
