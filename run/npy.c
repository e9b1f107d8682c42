/* npy.c - NumPy .npy arrays (see npy.h).
 *
 * The format: the magic "\x93NUMPY", a version byte pair, the header length
 * (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), and a header that
 * is a Python dict literal with exactly the keys 'descr', 'fortran_order'
 * and 'shape', padded with spaces and ending in '\n'; the data follows.
 * The header is parsed by a small tokenizer rather than pattern matching
 * because writers differ in quoting, spacing and key order. */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "output.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct dtype_info {
	const char *name;
	char kind;   /* the descr's type letter; 0 for bfloat16, which has its own descr */
	size_t size;
};

/* Indexed by enum npy_dtype. */
static const struct dtype_info dtype_table[NPY_DTYPE_COUNT] = {
	{"float32", 'f', 4},
	{"bfloat16", 0, 2},
	{"float16", 'f', 2},
	{"int32", 'i', 4},
	{"int8", 'i', 1},
	{"int64", 'i', 8},
	{"int16", 'i', 2},
	{"uint8", 'u', 1},
};

static const char supported_dtypes[] =
	"float32 '<f4', bfloat16 'bfloat16', float16 '<f2', int32 '<i4', int8 '|i1', "
	"int64 '<i8', int16 '<i2', uint8 '|u1'";

const char *npy_dtype_name(enum npy_dtype dtype)
{
	return dtype_table[dtype].name;
}

int npy_dtype_from_name(const char *name, enum npy_dtype *dtype)
{
	for (int i = 0; i < NPY_DTYPE_COUNT; i++) {
		if (strcmp(dtype_table[i].name, name) == 0) {
			*dtype = (enum npy_dtype)i;
			return 0;
		}
	}
	return -1;
}

size_t npy_dtype_size(enum npy_dtype dtype)
{
	return dtype_table[dtype].size;
}

int npy_dtype_is_float(enum npy_dtype dtype)
{
	return dtype == NPY_FLOAT32 || dtype == NPY_BFLOAT16 || dtype == NPY_FLOAT16;
}

static int host_is_little_endian(void)
{
	const uint16_t probe = 1;
	unsigned char first;
	memcpy(&first, &probe, 1);
	return first == 1;
}

/* ---- the header: a Python dict literal ---- */

struct header_cursor {
	const char *text;
	size_t length;
	size_t at;
};

/* What the header says, before it is checked against the data. */
struct header_fields {
	int have_descr, have_fortran, have_shape;
	char descr[40];           /* the descr string, made printable; truncated with "..." */
	int descr_is_string;      /* 0 when descr was a list (a structured dtype) */
	int fortran_order;
	int rank;
	uint64_t shape[NPY_MAX_RANK];
};

static void skip_space(struct header_cursor *cursor)
{
	while (cursor->at < cursor->length) {
		char c = cursor->text[cursor->at];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		cursor->at++;
	}
}

/* Skips space, then consumes c if it comes next; returns 1 when it did. */
static int accept(struct header_cursor *cursor, char c)
{
	skip_space(cursor);
	if (cursor->at < cursor->length && cursor->text[cursor->at] == c) {
		cursor->at++;
		return 1;
	}
	return 0;
}

static int expected(struct header_cursor *cursor, const char *what, struct rco_error *error)
{
	if (cursor->at >= cursor->length)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: expected %s, found "
		                  "the end of the header", what);
	unsigned char c = (unsigned char)cursor->text[cursor->at];
	if (c >= 0x20 && c < 0x7f)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: expected %s at "
		                  "header byte %zu, found '%c'", what, cursor->at, c);
	return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: expected %s at header byte "
	                  "%zu, found byte 0x%02x", what, cursor->at, c);
}

/* Reads a quoted string (no escapes) into out, made printable and cut to
 * out_size; the cursor is on the opening quote. */
static int read_string(struct header_cursor *cursor, char *out, size_t out_size,
                       struct rco_error *error)
{
	char quote = cursor->text[cursor->at++];
	size_t kept = 0;
	int cut = 0;
	while (cursor->at < cursor->length && cursor->text[cursor->at] != quote) {
		unsigned char c = (unsigned char)cursor->text[cursor->at++];
		if (c == '\\')
			return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: escape "
			                  "sequences in strings are not supported (header byte %zu)",
			                  cursor->at - 1);
		if (kept + 4 >= out_size)
			cut = 1;
		else if (c >= 0x20 && c < 0x7f)
			out[kept++] = (char)c;
		else
			out[kept++] = '?';
	}
	if (cursor->at >= cursor->length)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: a string is not "
		                  "closed");
	cursor->at++;
	if (cut) {
		memcpy(out + kept, "...", 3);
		kept += 3;
	}
	out[kept] = '\0';
	return 0;
}

static int read_word(struct header_cursor *cursor, const char *word)
{
	size_t length = strlen(word);
	if (cursor->length - cursor->at < length || memcmp(cursor->text + cursor->at, word, length) != 0)
		return 0;
	cursor->at += length;
	return 1;
}

static int is_digit(struct header_cursor *cursor)
{
	return cursor->at < cursor->length && cursor->text[cursor->at] >= '0' &&
	       cursor->text[cursor->at] <= '9';
}

/* Reads "(d, d, ...)" with an optional trailing comma; Python 2 writers put
 * an 'L' after each number. */
static int read_shape(struct header_cursor *cursor, struct header_fields *fields,
                      struct rco_error *error)
{
	cursor->at++; /* '(' */
	fields->rank = 0;
	if (accept(cursor, ')'))
		return 0;
	for (;;) {
		skip_space(cursor);
		if (cursor->at < cursor->length && cursor->text[cursor->at] == '-')
			return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: negative "
			                  "dimension in 'shape'");
		if (!is_digit(cursor))
			return expected(cursor, "a dimension", error);
		if (fields->rank == NPY_MAX_RANK)
			return error_fail(error, RCO_ERROR_SYSTEM, "shape has more than %d "
			                  "dimensions", NPY_MAX_RANK);
		uint64_t value = 0;
		while (is_digit(cursor)) {
			unsigned digit = (unsigned)(cursor->text[cursor->at++] - '0');
			if (value > (UINT64_MAX - digit) / 10)
				return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: a "
				                  "dimension in 'shape' is too large");
			value = value * 10 + digit;
		}
		if (cursor->at < cursor->length &&
		    (cursor->text[cursor->at] == 'L' || cursor->text[cursor->at] == 'l'))
			cursor->at++;
		fields->shape[fields->rank++] = value;
		if (accept(cursor, ')'))
			return 0;
		if (!accept(cursor, ','))
			return expected(cursor, "',' or ')' in 'shape'", error);
		if (accept(cursor, ')'))
			return 0;
	}
}

/* Skips a list value (a structured dtype's fields), brackets balanced. */
static int skip_list(struct header_cursor *cursor, struct rco_error *error)
{
	int depth = 0;
	while (cursor->at < cursor->length) {
		char c = cursor->text[cursor->at++];
		if (c == '[' || c == '(')
			depth++;
		else if ((c == ']' || c == ')') && --depth == 0)
			return 0;
	}
	return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: a list is not closed");
}

static int read_entry(struct header_cursor *cursor, struct header_fields *fields,
                      struct rco_error *error)
{
	char key[40];
	skip_space(cursor);
	if (cursor->at >= cursor->length ||
	    (cursor->text[cursor->at] != '\'' && cursor->text[cursor->at] != '"'))
		return expected(cursor, "a quoted key", error);
	if (read_string(cursor, key, sizeof key, error) != 0)
		return -1;
	if (!accept(cursor, ':'))
		return expected(cursor, "':' after the key", error);
	skip_space(cursor);
	int *seen;
	if (strcmp(key, "descr") == 0)
		seen = &fields->have_descr;
	else if (strcmp(key, "fortran_order") == 0)
		seen = &fields->have_fortran;
	else if (strcmp(key, "shape") == 0)
		seen = &fields->have_shape;
	else
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: unknown key '%s' "
		                  "(the keys are 'descr', 'fortran_order' and 'shape')", key);
	if (*seen)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: key '%s' given twice",
		                  key);
	*seen = 1;

	char c = '\0';
	if (cursor->at < cursor->length)
		c = cursor->text[cursor->at];
	if (seen == &fields->have_descr) {
		if (c == '[') {
			fields->descr_is_string = 0;
			return skip_list(cursor, error);
		}
		if (c != '\'' && c != '"')
			return expected(cursor, "a string for 'descr'", error);
		fields->descr_is_string = 1;
		return read_string(cursor, fields->descr, sizeof fields->descr, error);
	}
	if (seen == &fields->have_fortran) {
		if (read_word(cursor, "True"))
			fields->fortran_order = 1;
		else if (read_word(cursor, "False"))
			fields->fortran_order = 0;
		else
			return expected(cursor, "True or False for 'fortran_order'", error);
		return 0;
	}
	if (c != '(')
		return expected(cursor, "a tuple for 'shape'", error);
	return read_shape(cursor, fields, error);
}

static int parse_header(const char *text, size_t length, struct header_fields *fields,
                        struct rco_error *error)
{
	struct header_cursor cursor = {text, length, 0};
	memset(fields, 0, sizeof *fields);
	if (!accept(&cursor, '{'))
		return expected(&cursor, "'{'", error);
	while (!accept(&cursor, '}')) {
		if (read_entry(&cursor, fields, error) != 0)
			return -1;
		if (accept(&cursor, '}'))
			break;
		if (!accept(&cursor, ','))
			return expected(&cursor, "',' or '}'", error);
	}
	skip_space(&cursor);
	if (cursor.at != cursor.length)
		return expected(&cursor, "only spaces after '}'", error);
	if (!fields->have_descr)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: missing key 'descr'");
	if (!fields->have_fortran)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: missing key "
		                  "'fortran_order'");
	if (!fields->have_shape)
		return error_fail(error, RCO_ERROR_SYSTEM, "malformed header: missing key 'shape'");
	return 0;
}

/* Maps a descr to a dtype and whether its bytes need swapping. */
static int decode_descr(const char *descr, enum npy_dtype *dtype, int *swap,
                        struct rco_error *error)
{
	char order = descr[0];
	const char *type = descr + 1;
	if (order != '<' && order != '>' && order != '|' && order != '=') {
		order = '<';
		type = descr;
		if (strcmp(descr, "bfloat16") != 0)
			goto unsupported;
	}
	int found = -1;
	for (int i = 0; i < NPY_DTYPE_COUNT; i++) {
		char spelled[16];
		if (dtype_table[i].kind)
			snprintf(spelled, sizeof spelled, "%c%zu", dtype_table[i].kind, dtype_table[i].size);
		else
			snprintf(spelled, sizeof spelled, "%s", dtype_table[i].name);
		if (strcmp(type, spelled) == 0)
			found = i;
	}
	if (found < 0)
		goto unsupported;
	size_t size = dtype_table[found].size;
	if (order == '|' && size != 1)
		return error_fail(error, RCO_ERROR_SYSTEM, "unsupported dtype '%s': '|' (no byte "
		                  "order) is for 1-byte types; a %zu-byte type needs '<' or '>'",
		                  descr, size);
	*dtype = (enum npy_dtype)found;
	int file_little = order == '<' || (order == '=' && host_is_little_endian());
	*swap = size > 1 && order != '|' && file_little != host_is_little_endian();
	return 0;
unsupported:
	if (strcmp(type, "V2") == 0)
		return error_fail(error, RCO_ERROR_SYSTEM, "unsupported dtype '%s': a raw 2-byte "
		                  "type, which is how ml_dtypes saves bfloat16; for bfloat16 write "
		                  "the descr 'bfloat16'", descr);
	return error_fail(error, RCO_ERROR_SYSTEM, "unsupported dtype '%s'; the supported ones are "
	                  "%s", descr, supported_dtypes);
}

static void swap_bytes(unsigned char *data, size_t count, size_t size)
{
	for (size_t i = 0; i < count; i++) {
		unsigned char *element = data + i * size;
		for (size_t low = 0, high = size - 1; low < high; low++, high--) {
			unsigned char keep = element[low];
			element[low] = element[high];
			element[high] = keep;
		}
	}
}

/* Writes the shape as Python would print the tuple: (), (3,), (2, 3). */
static void format_shape(char *out, size_t out_size, int rank, const uint64_t *shape)
{
	size_t used = (size_t)snprintf(out, out_size, "(");
	for (int i = 0; i < rank && used < out_size; i++)
		used += (size_t)snprintf(out + used, out_size - used, "%s%llu", i ? ", " : "",
		                         (unsigned long long)shape[i]);
	if (used < out_size)
		snprintf(out + used, out_size - used, rank == 1 ? ",)" : ")");
}

/* What the preamble and header say: where the data starts and what it is. */
struct npy_layout {
	size_t header_start, header_length;
	enum npy_dtype dtype;
	int swap;
	int rank;
	uint64_t shape[NPY_MAX_RANK];
	size_t count;
	size_t data_length;
	char shape_text[256];
};

/* The longest header read: NumPy writes a few dozen bytes, and refuses to
 * read more than 10,000 unless told to. */
#define NPY_HEADER_LIMIT ((size_t)1024 * 1024)
/* The magic, the version and a 4-byte header length. */
#define NPY_PREAMBLE_MAX 12

/* Checks the preamble in the first length bytes of a file (all of it when
 * length < NPY_PREAMBLE_MAX) and sets where the header is. */
static int read_preamble(const unsigned char *file, size_t length, struct npy_layout *layout,
                         struct rco_error *error)
{
	size_t magic_seen = length < sizeof npy_magic ? length : sizeof npy_magic;
	if (memcmp(file, npy_magic, magic_seen) != 0)
		return error_fail(error, RCO_ERROR_SYSTEM, "not a .npy file: it does not start "
		                  "with \"\\x93NUMPY\"");
	if (length < 8)
		return error_fail(error, RCO_ERROR_SYSTEM, "truncated: %zu bytes, too short for "
		                  "the .npy preamble", length);
	unsigned major = file[6], minor = file[7];
	if ((major != 1 && major != 2 && major != 3) || minor != 0)
		return error_fail(error, RCO_ERROR_SYSTEM, "unsupported .npy version %u.%u "
		                  "(versions 1.0, 2.0 and 3.0 are read)", major, minor);
	size_t length_size = major == 1 ? 2 : 4;
	if (length < 8 + length_size)
		return error_fail(error, RCO_ERROR_SYSTEM, "truncated: %zu bytes, too short for "
		                  "the .npy preamble", length);
	layout->header_length = (size_t)file[8] | (size_t)file[9] << 8;
	if (length_size == 4)
		layout->header_length |= (size_t)file[10] << 16 | (size_t)file[11] << 24;
	layout->header_start = 8 + length_size;
	return 0;
}

/* Reads the header text into the layout: dtype, shape and data length. */
static int read_layout(const char *header, struct npy_layout *layout, struct rco_error *error)
{
	struct header_fields fields;
	if (parse_header(header, layout->header_length, &fields, error) != 0)
		return -1;
	if (!fields.descr_is_string)
		return error_fail(error, RCO_ERROR_SYSTEM, "unsupported dtype: a structured dtype "
		                  "(a list of fields); the supported ones are %s",
		                  supported_dtypes);
	layout->dtype = NPY_FLOAT32;
	layout->swap = 0;
	if (decode_descr(fields.descr, &layout->dtype, &layout->swap, error) != 0)
		return -1;
	if (fields.fortran_order)
		return error_fail(error, RCO_ERROR_SYSTEM, "Fortran-order array (fortran_order: "
		                  "True); only C order is read: save numpy.ascontiguousarray(a) "
		                  "instead");
	size_t size = npy_dtype_size(layout->dtype);
	size_t count = 1;
	int too_large = 0;
	for (int i = 0; i < fields.rank; i++)
		if (fields.shape[i] == 0)
			count = 0;
	for (int i = 0; i < fields.rank && count != 0; i++) {
		if (fields.shape[i] > SIZE_MAX || count > SIZE_MAX / fields.shape[i])
			too_large = 1;
		else
			count *= (size_t)fields.shape[i];
	}
	format_shape(layout->shape_text, sizeof layout->shape_text, fields.rank, fields.shape);
	if (too_large || count > SIZE_MAX / size)
		return error_fail(error, RCO_ERROR_SYSTEM, "shape %s is too large",
		                  layout->shape_text);
	layout->rank = fields.rank;
	memcpy(layout->shape, fields.shape, sizeof fields.shape);
	layout->count = count;
	layout->data_length = count * size;
	return 0;
}

static int wrong_data_length(const struct npy_layout *layout, size_t data_length,
                             struct rco_error *error)
{
	return error_fail(error, RCO_ERROR_SYSTEM, "data is %zu bytes but shape %s of %s needs %zu",
	                  data_length, layout->shape_text, npy_dtype_name(layout->dtype),
	                  layout->data_length);
}

/* Fills array from the layout with data (data_length bytes), taken over
 * (freed on failure). */
static void take_data(const struct npy_layout *layout, void *data, struct npy_array *array)
{
	array->dtype = layout->dtype;
	array->rank = layout->rank;
	memcpy(array->shape, layout->shape, sizeof layout->shape);
	array->count = layout->count;
	array->data = layout->count ? data : NULL;
	if (!layout->count)
		free(data);
	if (layout->swap && array->data)
		swap_bytes(array->data, layout->count, npy_dtype_size(layout->dtype));
}

int npy_parse(const void *bytes, size_t length, struct npy_array *array,
              struct rco_error *error)
{
	const unsigned char *file = bytes;
	memset(array, 0, sizeof *array);
	struct npy_layout layout;
	memset(&layout, 0, sizeof layout);
	if (read_preamble(file, length, &layout, error) != 0)
		return -1;
	if (layout.header_length > length - layout.header_start)
		return error_fail(error, RCO_ERROR_SYSTEM, "truncated header: it declares %zu "
		                  "bytes but %zu follow", layout.header_length,
		                  length - layout.header_start);
	if (read_layout((const char *)file + layout.header_start, &layout, error) != 0)
		return -1;
	size_t data_length = length - layout.header_start - layout.header_length;
	if (data_length != layout.data_length)
		return wrong_data_length(&layout, data_length, error);
	void *data = malloc(layout.data_length ? layout.data_length : 1);
	if (!data)
		return error_fail(error, RCO_ERROR_SYSTEM, "out of memory for %zu bytes of data",
		                  layout.data_length);
	memcpy(data, file + layout.header_start + layout.header_length, layout.data_length);
	take_data(&layout, data, array);
	return 0;
}

/* ---- files ---- */

/* Reads up to length bytes, fewer only at the end of the file; returns the
 * count, or -1 with errno set. */
static ssize_t read_up_to(int fd, void *buffer, size_t length)
{
	size_t done = 0;
	while (done < length) {
		ssize_t got = read(fd, (char *)buffer + done, length - done);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		done += (size_t)got;
	}
	return (ssize_t)done;
}

/* Reads the file as it goes: the preamble, then as much header as the
 * preamble declares, then as much data as the header declares, and never
 * more (a device or a pipe may never end).  A regular file's size says
 * whether the data is all there before any of it is read. */
static int read_npy(int fd, const struct stat *st, struct npy_array *array,
                    struct rco_error *error)
{
	unsigned char preamble[NPY_PREAMBLE_MAX];
	struct npy_layout layout;
	memset(&layout, 0, sizeof layout);
	ssize_t got = read_up_to(fd, preamble, sizeof preamble);
	if (got < 0)
		return error_fail(error, RCO_ERROR_SYSTEM, "cannot read: %s", strerror(errno));
	if (read_preamble(preamble, (size_t)got, &layout, error) != 0)
		return -1;
	size_t have = (size_t)got - layout.header_start; /* header bytes read already */
	int regular = S_ISREG(st->st_mode);
	size_t file_length = regular ? (size_t)st->st_size : 0;
	if (regular && layout.header_length > file_length - layout.header_start)
		return error_fail(error, RCO_ERROR_SYSTEM, "truncated header: it declares %zu "
		                  "bytes but %zu follow", layout.header_length,
		                  file_length - layout.header_start);
	if (layout.header_length > NPY_HEADER_LIMIT)
		return error_fail(error, RCO_ERROR_SYSTEM, "a header of %zu bytes: at most %zu are "
		                  "read", layout.header_length, NPY_HEADER_LIMIT);
	char *header = malloc(layout.header_length + 1);
	if (!header)
		return error_fail(error, RCO_ERROR_SYSTEM, "out of memory");
	size_t kept = have < layout.header_length ? have : layout.header_length;
	memcpy(header, preamble + layout.header_start, kept);
	got = read_up_to(fd, header + kept, layout.header_length - kept);
	if (got < 0 || kept + (size_t)got < layout.header_length) {
		int problem = got < 0 ? errno : 0;
		free(header);
		return problem ? error_fail(error, RCO_ERROR_SYSTEM, "cannot read: %s",
		                            strerror(problem))
		               : error_fail(error, RCO_ERROR_SYSTEM, "truncated header: it "
		                            "declares %zu bytes but %zu follow",
		                            layout.header_length, kept + (size_t)got);
	}
	int status = read_layout(header, &layout, error);
	free(header);
	if (status != 0)
		return -1;
	size_t header_end = layout.header_start + layout.header_length;
	/* The data may have started in the preamble's bytes (a header shorter than declared). */
	size_t early = have > layout.header_length ? have - layout.header_length : 0;
	if (regular && file_length - header_end != layout.data_length)
		return wrong_data_length(&layout, file_length - header_end, error);
	unsigned char *data = malloc(layout.data_length ? layout.data_length : 1);
	if (!data)
		return error_fail(error, RCO_ERROR_SYSTEM, "out of memory for %zu bytes of data",
		                  layout.data_length);
	if (early > layout.data_length)
		early = layout.data_length;
	memcpy(data, preamble + header_end, early);
	got = read_up_to(fd, data + early, layout.data_length - early);
	if (got < 0 || early + (size_t)got < layout.data_length) {
		int problem = got < 0 ? errno : 0;
		free(data);
		return problem ? error_fail(error, RCO_ERROR_SYSTEM, "cannot read: %s",
		                            strerror(problem))
		               : wrong_data_length(&layout, early + (size_t)got, error);
	}
	take_data(&layout, data, array);
	return 0;
}

int npy_read_file(const char *path, struct npy_array *array, struct rco_error *error)
{
	memset(array, 0, sizeof *array);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_fail(error, RCO_ERROR_SYSTEM, "%s: cannot open: %s", path,
		                  strerror(errno));
	struct stat st;
	int status;
	if (fstat(fd, &st) != 0)
		status = error_fail(error, RCO_ERROR_SYSTEM, "cannot read: %s", strerror(errno));
	else if (S_ISDIR(st.st_mode))
		status = error_fail(error, RCO_ERROR_SYSTEM, "cannot read: %s", strerror(EISDIR));
	else
		status = read_npy(fd, &st, array, error);
	close(fd);
	if (status != 0)
		error_prefix(error, "%s: ", path);
	return status;
}

unsigned char *npy_format(const struct npy_array *array, size_t *length)
{
	char shape_text[NPY_MAX_RANK * 24 + 4];
	format_shape(shape_text, sizeof shape_text, array->rank, array->shape);
	char descr[16];
	char order = host_is_little_endian() ? '<' : '>';
	const struct dtype_info *info = &dtype_table[array->dtype];
	if (!info->kind)
		snprintf(descr, sizeof descr, "%s", info->name);
	else
		snprintf(descr, sizeof descr, "%c%c%zu", info->size == 1 ? '|' : order, info->kind,
		         info->size);
	char header[sizeof shape_text + 128];
	int header_length = snprintf(header, sizeof header,
	                             "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
	                             shape_text);
	/* magic, version, 2-byte length, header, padding, '\n': a multiple of 64 */
	size_t unpadded = 10 + (size_t)header_length + 1;
	size_t padding = (64 - unpadded % 64) % 64;
	size_t header_total = (size_t)header_length + padding + 1;
	size_t data_length = array->count * npy_dtype_size(array->dtype);
	unsigned char *out = malloc(10 + header_total + data_length);
	if (!out)
		return NULL;
	memcpy(out, npy_magic, sizeof npy_magic);
	out[6] = 1;
	out[7] = 0;
	out[8] = (unsigned char)(header_total & 0xff);
	out[9] = (unsigned char)(header_total >> 8);
	memcpy(out + 10, header, (size_t)header_length);
	memset(out + 10 + header_length, ' ', padding);
	out[10 + header_total - 1] = '\n';
	if (data_length)
		memcpy(out + 10 + header_total, array->data, data_length);
	*length = 10 + header_total + data_length;
	return out;
}

int npy_write_file(const char *path, const struct npy_array *array, struct rco_error *error)
{
	size_t length;
	unsigned char *bytes = npy_format(array, &length);
	if (!bytes)
		return error_fail(error, RCO_ERROR_SYSTEM, "cannot write %s: out of memory", path);
	int status = output_write(path, bytes, length, error);
	free(bytes);
	return status;
}

int npy_allocate(struct npy_array *array)
{
	size_t count = 1;
	for (int i = 0; i < array->rank; i++) {
		if (array->shape[i] > SIZE_MAX || (array->shape[i] && count > SIZE_MAX / array->shape[i]))
			return -1;
		count *= (size_t)array->shape[i];
	}
	size_t size = npy_dtype_size(array->dtype);
	if (count > SIZE_MAX / size)
		return -1;
	array->count = count;
	array->data = NULL;
	if (count == 0)
		return 0;
	array->data = calloc(count, size);
	return array->data ? 0 : -1;
}

void npy_free(struct npy_array *array)
{
	free(array->data);
	memset(array, 0, sizeof *array);
}

/* ---- element access ---- */

float npy_half_to_float(uint16_t bits)
{
	int sign = bits >> 15;
	int exponent = (bits >> 10) & 0x1f;
	int mantissa = bits & 0x3ff;
	float value;
	if (exponent == 0)
		value = ldexpf((float)mantissa, -24);
	else if (exponent == 31)
		value = mantissa ? NAN : INFINITY;
	else
		value = ldexpf((float)(mantissa | 0x400), exponent - 25);
	return sign ? -value : value;
}

float npy_bfloat16_to_float(uint16_t bits)
{
	uint32_t wide = (uint32_t)bits << 16;
	float value;
	memcpy(&value, &wide, sizeof value);
	return value;
}

int64_t npy_get_int(const struct npy_array *array, size_t index)
{
	const unsigned char *element = (const unsigned char *)array->data +
	                               index * npy_dtype_size(array->dtype);
	switch (array->dtype) {
	case NPY_INT8: { int8_t v; memcpy(&v, element, sizeof v); return v; }
	case NPY_UINT8: { uint8_t v; memcpy(&v, element, sizeof v); return v; }
	case NPY_INT16: { int16_t v; memcpy(&v, element, sizeof v); return v; }
	case NPY_INT32: { int32_t v; memcpy(&v, element, sizeof v); return v; }
	case NPY_INT64: { int64_t v; memcpy(&v, element, sizeof v); return v; }
	default: return (int64_t)npy_get_double(array, index);
	}
}

double npy_get_double(const struct npy_array *array, size_t index)
{
	const unsigned char *element = (const unsigned char *)array->data +
	                               index * npy_dtype_size(array->dtype);
	switch (array->dtype) {
	case NPY_FLOAT32: { float v; memcpy(&v, element, sizeof v); return v; }
	case NPY_FLOAT16: { uint16_t v; memcpy(&v, element, sizeof v); return npy_half_to_float(v); }
	case NPY_BFLOAT16: {
		uint16_t v;
		memcpy(&v, element, sizeof v);
		return npy_bfloat16_to_float(v);
	}
	default: return (double)npy_get_int(array, index);
	}
}
