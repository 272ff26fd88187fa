// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the box parser and, when a box parses, the problem
 * builder against a small fixed graph: every field is validated before use,
 * so any crash, sanitizer report or leak is a bug.
 */
#include <stdlib.h>
#include <string.h>

#include "heteroopt/sched.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ho_box *box = NULL;
	struct ho_error err;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!ho_box_parse(text, &box, &err)) {
		for (uint32_t d = 0; d < box->n_devices; d++)
			(void)ho_device_supports(&box->dev[d], "Conv");
		ho_box_free(box);
	}
	free(text);
	return 0;
}
