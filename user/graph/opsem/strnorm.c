// SPDX-License-Identifier: MIT
/*
 * StringNormalizer, once, for the shape rule (when the input's strings are
 * known) and the kernel alike: a string equal to a stopword (case-folded
 * both sides unless is_case_sensitive) is dropped, what is left changes
 * case as case_change_action says, per Unicode code point (C.UTF-8's
 * mapping, ASCII's where that locale is missing).  Whole strings are
 * matched, as ONNX Runtime does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "common.h"
#include "heteroopt/opsem.h"

int ho_strnorm_parse(const struct ho_node *n, struct ho_strnorm *s, struct ho_error *err)
{
	static const char *const actions[] = {"NONE", "LOWER", "UPPER"};
	const struct ho_attr *ca = ho_node_attr(n, "case_change_action");
	const struct ho_attr *cs = ho_node_attr(n, "is_case_sensitive");
	const struct ho_attr *sw = ho_node_attr(n, "stopwords");

	memset(s, 0, sizeof(*s));
	if (ca && ca->type == HO_ATTR_STRING) {
		while (s->change < 3 && strcmp(ca->s, actions[s->change]))
			s->change++;
		if (s->change == 3)
			return ho_err(err, -EINVAL,
				      "node '%s' (StringNormalizer): case_change_action '%s' is "
				      "not NONE, LOWER or UPPER",
				      n->name, ca->s);
	}
	s->case_sensitive = cs && cs->i;
	if (sw && sw->type == HO_ATTR_STRINGS) {
		s->stop = sw->strings;
		s->n_stop = sw->n;
	}
	s->loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	return 0;
}

void ho_strnorm_free(struct ho_strnorm *s)
{
	if (s->loc)
		freelocale(s->loc);
	s->loc = (locale_t)0;
}

size_t ho_strnorm_case(const struct ho_strnorm *s, const char *x, int change, char *out)
{
	const char *p = x;
	size_t len = 0;

	while (*p) {
		const char *at = p;
		long c = ho_utf8_next(&p);

		if (c < 0) { /* not UTF-8: the byte as it is */
			out[len++] = *at;
			continue;
		}
		if (change && s->loc)
			c = (long)(change == 1 ? towlower_l((wint_t)c, s->loc)
					       : towupper_l((wint_t)c, s->loc));
		else if (change && c < 0x80)
			c = change == 1 ? (c >= 'A' && c <= 'Z' ? c + 32 : c)
					: (c >= 'a' && c <= 'z' ? c - 32 : c);
		len += ho_utf8_put((unsigned long)c, out + len);
	}
	out[len] = '\0';
	return len;
}

int ho_strnorm_kept(const struct ho_strnorm *s, const char *x)
{
	char *a = NULL, *b = NULL;
	int kept = 1;

	if (!s->case_sensitive && s->n_stop && !(a = malloc(4 * strlen(x) + 1)))
		return -ENOMEM;
	if (a)
		ho_strnorm_case(s, x, 1, a);
	for (size_t i = 0; i < s->n_stop && kept == 1; i++) {
		if (s->case_sensitive) {
			kept = strcmp(x, s->stop[i]) != 0;
			continue;
		}
		if (!(b = malloc(4 * strlen(s->stop[i]) + 1))) {
			kept = -ENOMEM;
			break;
		}
		ho_strnorm_case(s, s->stop[i], 1, b);
		kept = strcmp(a, b) != 0;
		free(b);
	}
	free(a);
	return kept;
}
