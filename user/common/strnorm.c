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

/* The next code point of x (advanced), or -1 on a malformed byte (taken as itself). */
static long strnorm_next(const unsigned char **x)
{
	const unsigned char *p = *x;
	int more = p[0] >= 0xf0 ? 3 : p[0] >= 0xe0 ? 2 : p[0] >= 0xc0 ? 1 : 0;
	long c = more ? p[0] & (0x3f >> more) : p[0];

	if (p[0] >= 0x80 && p[0] < 0xc0) {
		*x = p + 1;
		return -1;
	}
	for (int i = 1; i <= more; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*x = p + 1;
			return -1;
		}
		c = c << 6 | (p[i] & 0x3f);
	}
	*x = p + more + 1;
	return c;
}

static size_t strnorm_put(unsigned long c, char *o)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f)), o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

size_t ho_strnorm_case(const struct ho_strnorm *s, const char *x, int change, char *out)
{
	const unsigned char *p = (const unsigned char *)x;
	size_t len = 0;

	while (*p) {
		const unsigned char *at = p;
		long c = strnorm_next(&p);

		if (c < 0) { /* not UTF-8: the byte as it is */
			out[len++] = (char)*at;
			continue;
		}
		if (change && s->loc)
			c = (long)(change == 1 ? towlower_l((wint_t)c, s->loc)
					       : towupper_l((wint_t)c, s->loc));
		else if (change && c < 0x80)
			c = change == 1 ? (c >= 'A' && c <= 'Z' ? c + 32 : c)
					: (c >= 'a' && c <= 'z' ? c - 32 : c);
		len += strnorm_put((unsigned long)c, out + len);
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
