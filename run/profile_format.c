/* profile_format.c - a profile as JSON, as a table and as an SVG picture
 * (rco_profile_json, rco_profile_table, rco_profile_svg). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "runcustomop.h"

/* Text written into a caller's buffer, measured whole even when it does
 * not fit, as snprintf measures. */
struct text {
	char *data;
	size_t size;
	size_t length;
};

static void add(struct text *text, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *text, const char *format, ...)
{
	char scratch[1];
	int room = text->length < text->size;
	va_list arguments;
	va_start(arguments, format);
	int written = vsnprintf(room ? text->data + text->length : scratch,
	                        room ? text->size - text->length : 0, format, arguments);
	va_end(arguments);
	if (written > 0)
		text->length += (size_t)written;
}

static struct text text_in(char *data, size_t size)
{
	if (size > 0)
		data[0] = '\0';
	return (struct text){data, size, 0};
}

/* The op's name as a JSON string's contents or as XML text. */
static void add_escaped(struct text *text, const char *name, int xml)
{
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		if (xml && (*c == '<' || *c == '>' || *c == '&' || *c == '"'))
			add(text, "%s", *c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : "&quot;");
		else if (!xml && (*c == '"' || *c == '\\'))
			add(text, "\\%c", *c);
		else if (*c < 0x20)
			add(text, xml ? "?" : "\\u%04x", *c);
		else
			add(text, "%c", *c);
	}
}


size_t rco_profile_json(const struct rco_profile *profile, char *data, size_t size)
{
	struct text text = text_in(data, size);
	add(&text, "{\"op\": \"");
	add_escaped(&text, profile->op, 0);
	add(&text, "\", \"cores\": [");
	for (int i = 0; i < profile->core_count; i++) {
		const struct rco_core_profile *core = &profile->cores[i];
		add(&text, "%s\n  {\"core\": %d, \"element_reads\": %llu, \"element_writes\": %llu, "
		    "\"stream_reads\": %llu, \"stream_writes\": %llu, \"tensor_to_tcm_bytes\": %llu, "
		    "\"tcm_to_tensor_bytes\": %llu, \"tcm_peak_bytes\": %llu, \"result_copy_bytes\": %llu, "
		    "\"output_elements_written\": ",
		    i ? "," : "", core->core, (unsigned long long)core->element_reads,
		    (unsigned long long)core->element_writes, (unsigned long long)core->stream_reads,
		    (unsigned long long)core->stream_writes, (unsigned long long)core->tensor_to_tcm_bytes,
		    (unsigned long long)core->tcm_to_tensor_bytes, (unsigned long long)core->tcm_peak_bytes,
		    (unsigned long long)core->result_copy_bytes);
		if (core->output_elements_written < 0)
			add(&text, "null");
		else
			add(&text, "%lld", (long long)core->output_elements_written);
		add(&text, ",\n   \"estimated_us_by_kind\": {");
		for (int kind = 0; kind < RCO_PROFILE_KINDS; kind++)
			add(&text, "%s\"%s\": %.3f", kind ? ", " : "", rco_profile_kind_name(kind),
			    core->estimated_us[kind]);
		add(&text, "}, \"estimated_device_us\": %.3f}", core->estimated_device_us);
	}
	add(&text, "],\n \"estimated_device_us\": %.3f, \"imbalance\": %.3f, \"hints\": [",
	    profile->estimated_device_us, profile->imbalance);
	for (int i = 0; i < profile->hint_count; i++) {
		const struct rco_profile_hint *hint = &profile->hints[i];
		add(&text, "%s\n  {\"kind\": \"%s\", \"text\": \"", i ? "," : "",
		    rco_hint_kind_name(hint->kind));
		add_escaped(&text, hint->text, 0);
		add(&text, "\", \"saves_us\": %.3f}", hint->saves_us);
	}
	add(&text, "]}\n");
	return text.length;
}

size_t rco_profile_table(const struct rco_profile *profile, char *data, size_t size)
{
	struct text text = text_in(data, size);
	add(&text, "profile of op %s on %d core%s (device time: an estimate from the cost model of "
	    "run-custom-op(1), not a measurement)\n", profile->op, profile->core_count,
	    profile->core_count == 1 ? "" : "s");
	add(&text, "core  element r/w    stream r/w     to TCM B   from TCM B  TCM peak B    written   "
	    "host us  estimated us\n");
	for (int i = 0; i < profile->core_count; i++) {
		const struct rco_core_profile *core = &profile->cores[i];
		char elements[48], streams[48], written[24];
		snprintf(elements, sizeof elements, "%llu/%llu", (unsigned long long)core->element_reads,
		         (unsigned long long)core->element_writes);
		snprintf(streams, sizeof streams, "%llu/%llu", (unsigned long long)core->stream_reads,
		         (unsigned long long)core->stream_writes);
		if (core->output_elements_written < 0)
			snprintf(written, sizeof written, "-");
		else
			snprintf(written, sizeof written, "%lld", (long long)core->output_elements_written);
		add(&text, "%4d  %-13s  %-13s  %10llu  %10llu  %10llu  %9s  %8.1f  %12.3f\n", core->core,
		    elements, streams, (unsigned long long)core->tensor_to_tcm_bytes,
		    (unsigned long long)core->tcm_to_tensor_bytes,
		    (unsigned long long)core->tcm_peak_bytes, written, core->host_us,
		    core->estimated_device_us);
	}
	add(&text, "estimated us by kind");
	for (int kind = 0; kind < RCO_PROFILE_KINDS; kind++)
		add(&text, "  %12s", rco_profile_kind_name(kind));
	add(&text, "\n");
	for (int i = 0; i < profile->core_count; i++) {
		const struct rco_core_profile *core = &profile->cores[i];
		add(&text, "core %-15d", core->core);
		for (int kind = 0; kind < RCO_PROFILE_KINDS; kind++)
			add(&text, "  %12.3f", core->estimated_us[kind]);
		add(&text, "\n");
	}
	add(&text, "op %s: estimated device time %.3f us (the slowest core, core %d, plus %g us fixed); "
	    "imbalance %.2f (the busiest core / the mean)\n", profile->op, profile->estimated_device_us,
	    profile->cores[profile_busiest(profile)].core, profile->fixed_us, profile->imbalance);
	if (profile->hint_count == 0)
		add(&text, "hints: none (no change the cost model prices saves 1%% of the op's time)\n");
	else
		add(&text, "hints, the largest saving first (each against the op as it is; see "
		    "run-custom-op(1), THE PROFILE):\n");
	for (int i = 0; i < profile->hint_count; i++)
		add(&text, "  %s, saves %.3f us: %s\n", rco_hint_kind_name(profile->hints[i].kind),
		    profile->hints[i].saves_us, profile->hints[i].text);
	return text.length;
}

/* The picture's layout, in pixels. */
#define SVG_WIDTH 760
#define SVG_LABEL 70
#define SVG_BAR_WIDTH 520
#define SVG_ROW 26
#define SVG_TOP 64

static const char *const kind_names[RCO_PROFILE_KINDS] = {
	[RCO_PROFILE_HBM_ELEMENTS] = "HBM element accesses", [RCO_PROFILE_STREAM] = "stream",
	[RCO_PROFILE_TCM_COPIES] = "TCM copies", [RCO_PROFILE_COMPUTE] = "compute",
	[RCO_PROFILE_RESULT_COPY] = "result copy"};
static const char *const kind_colours[RCO_PROFILE_KINDS] = {
	[RCO_PROFILE_HBM_ELEMENTS] = "#d62728", [RCO_PROFILE_STREAM] = "#ff7f0e",
	[RCO_PROFILE_TCM_COPIES] = "#1f77b4", [RCO_PROFILE_COMPUTE] = "#2ca02c",
	[RCO_PROFILE_RESULT_COPY] = "#9467bd"};

size_t rco_profile_svg(const struct rco_profile *profile, char *data, size_t size)
{
	struct text text = text_in(data, size);
	int height = SVG_TOP + profile->core_count * SVG_ROW + 70;
	double largest = profile->cores[profile_busiest(profile)].estimated_device_us;
	add(&text, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	    "font-family=\"sans-serif\" font-size=\"12\">\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", SVG_WIDTH, height, SVG_WIDTH,
	    height);
	add(&text, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">op ");
	add_escaped(&text, profile->op, 1);
	add(&text, ": estimated device time per core</text>\n"
	    "<text x=\"10\" y=\"40\" fill=\"#555\">An estimate from the cost model of run-custom-op(1), "
	    "not a measurement.</text>\n");
	for (int i = 0; i < profile->core_count; i++) {
		const struct rco_core_profile *core = &profile->cores[i];
		int y = SVG_TOP + i * SVG_ROW;
		add(&text, "<text x=\"10\" y=\"%d\">core %d</text>\n", y + 15, core->core);
		double x = SVG_LABEL;
		for (int kind = 0; kind < RCO_PROFILE_KINDS; kind++) {
			double width = largest > 0 ? core->estimated_us[kind] / largest * SVG_BAR_WIDTH : 0;
			if (width <= 0)
				continue;
			add(&text, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"20\" fill=\"%s\">"
			    "<title>core %d, %s: %.3f us</title></rect>\n", x, y, width, kind_colours[kind],
			    core->core, kind_names[kind], core->estimated_us[kind]);
			x += width;
		}
		add(&text, "<text x=\"%.1f\" y=\"%d\">%.3f us</text>\n", x + 6, y + 15,
		    core->estimated_device_us);
	}
	int y = SVG_TOP + profile->core_count * SVG_ROW + 16;
	for (int kind = 0, x = 10; kind < RCO_PROFILE_KINDS; kind++) {
		add(&text, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		    "<text x=\"%d\" y=\"%d\">%s</text>\n", x, y, kind_colours[kind], x + 16, y + 11,
		    kind_names[kind]);
		x += 30 + 8 * (int)strlen(kind_names[kind]);
	}
	add(&text, "<text x=\"10\" y=\"%d\">op: %.3f us (the slowest core plus %g us fixed); "
	    "imbalance %.2f (the busiest core / the mean)</text>\n</svg>\n", y + 36,
	    profile->estimated_device_us, profile->fixed_us, profile->imbalance);
	return text.length;
}
