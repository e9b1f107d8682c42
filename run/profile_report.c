/* profile_report.c - run-custom-op's --profile and --profile-svg. */
#include "profile_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* text (a profile rendered by one of the rco_profile_* functions), in a
 * buffer of its size; NULL when out of memory. */
static char *render(size_t (*format)(const struct rco_profile *, char *, size_t),
                    const struct rco_profile *profile)
{
	size_t length = format(profile, NULL, 0);
	char *text = malloc(length + 1);
	if (text)
		format(profile, text, length + 1);
	return text;
}

static int write_rendered(const char *path, size_t (*format)(const struct rco_profile *, char *, size_t),
                          const struct rco_profile *profile)
{
	if (!path)
		return 0;
	char *text = render(format, profile);
	struct rco_error error;
	int status = 0;
	if (!text) {
		fprintf(stderr, "run-custom-op: out of memory for the profile\n");
		return 1;
	}
	if (output_write(path, text, strlen(text), &error) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", error.message);
		status = 1;
	}
	free(text);
	return status;
}

int profile_report(rco_library *library, const char *json_path, const char *svg_path)
{
	if (!json_path && !svg_path)
		return 0;
	struct rco_profile profile;
	if (rco_last_profile(library, &profile) != 0) {
		fprintf(stderr, "run-custom-op: no profile: the op did not run to its end on every core\n");
		return 1;
	}
	char *table = render(rco_profile_table, &profile);
	if (table)
		fputs(table, stderr);
	free(table);
	int status = write_rendered(json_path, rco_profile_json, &profile);
	return write_rendered(svg_path, rco_profile_svg, &profile) || status;
}
