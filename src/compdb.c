/* compdb.c - compile_commands.json, clang's JSON compilation database. */
#include "compdb.h"

#include "arena.h"
#include "buffer.h"
#include "fsutil.h"
#include "plan.h"

/* Appends text as a JSON string.  Bytes >= 0x80 pass through: paths are
 * bytes, and UTF-8 paths stay readable. */
static void put_json_string(struct buffer *out, const char *text)
{
	buffer_putc(out, '"');
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		switch (*p) {
		case '"': buffer_puts(out, "\\\""); break;
		case '\\': buffer_puts(out, "\\\\"); break;
		case '\n': buffer_puts(out, "\\n"); break;
		case '\t': buffer_puts(out, "\\t"); break;
		case '\r': buffer_puts(out, "\\r"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				buffer_printf(out, "\\u%04x", *p);
			else
				buffer_putc(out, (char)*p);
		}
	}
	buffer_putc(out, '"');
}

int compdb_write(struct arena *arena, const struct plan *plan, const char *directory,
                 const char *path, struct diag *diag)
{
	struct buffer out;
	buffer_init(&out, arena);
	buffer_puts(&out, "[\n");
	for (size_t i = 0; i < plan->compile_count; i++) {
		const struct step *step = &plan->steps[i];
		buffer_puts(&out, "  {\n    \"directory\": ");
		put_json_string(&out, directory);
		buffer_puts(&out, ",\n    \"arguments\": [");
		for (size_t a = 0; step->argv[a]; a++) {
			if (a)
				buffer_puts(&out, ", ");
			put_json_string(&out, step->argv[a]);
		}
		buffer_puts(&out, "],\n    \"file\": ");
		put_json_string(&out, plan->files[i].source);
		buffer_puts(&out, ",\n    \"output\": ");
		put_json_string(&out, step->outputs[0]);
		buffer_puts(&out, i + 1 < plan->compile_count ? "\n  },\n" : "\n  }\n");
	}
	buffer_puts(&out, "]\n");
	return fs_write_atomic(arena, path, out.data, out.length, diag);
}
