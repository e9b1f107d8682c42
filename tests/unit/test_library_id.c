/* test_library_id.c - the id of a host build's library, whole and in pieces. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "library_id.h"

/* Byte i of the test patterns. */
static unsigned char short_byte(size_t i) { return (unsigned char)(i * 7 + 3); }
static unsigned char long_byte(size_t i) { return (unsigned char)(i * 131 + i / 256); }

static unsigned char *pattern(size_t length, unsigned char (*byte)(size_t))
{
	unsigned char *bytes = malloc(length ? length : 1);
	for (size_t i = 0; bytes && i < length; i++)
		bytes[i] = byte(i);
	return bytes;
}

/* The id of bytes added in pieces of step bytes (the last one shorter). */
static void id_in_pieces(const unsigned char *bytes, size_t length, size_t step,
                         char id[LIBRARY_ID_SIZE])
{
	struct library_id_hash hash;
	library_id_start(&hash);
	for (size_t at = 0; at < length; at += step)
		library_id_add(&hash, bytes + at, length - at < step ? length - at : step);
	library_id_finish(&hash, id);
}

int main(void)
{
	char id[LIBRARY_ID_SIZE], whole[LIBRARY_ID_SIZE];
	/* The values tests/run/record.py computes from the documented definition. */
	library_id_of_bytes("", 0, id);
	CHECK_STR(id, "f7973b6e20c97451", "the id of no bytes");
	library_id_of_bytes("abc", 3, id);
	CHECK_STR(id, "c7aeedb06043666f", "the id of fewer bytes than a word");
	unsigned char *hundred = pattern(100, short_byte);
	library_id_of_bytes(hundred, 100, id);
	CHECK_STR(id, "60ba561c8dea0cd9", "the id of 100 bytes: three rounds of lanes, a word and a tail");
	const size_t long_length = 200003;
	unsigned char *big = pattern(long_length, long_byte);
	library_id_of_bytes(big, long_length, id);
	CHECK_STR(id, "30530887514672ad", "the id of 200003 bytes");

	/* Every split of every length up to 100 gives the id of the whole. */
	int differing = 0;
	for (size_t length = 0; length <= 100; length++) {
		library_id_of_bytes(hundred, length, whole);
		for (size_t step = 1; step <= 41; step++) {
			id_in_pieces(hundred, length, step, id);
			if (strcmp(id, whole) != 0 && differing++ < 5)
				printf("# %zu bytes in pieces of %zu: %s, whole %s\n", length, step, id, whole);
		}
	}
	CHECK_INT(differing, 0, "added in pieces of 1 to 41 bytes, 0 to 100 bytes have the id of the whole");
	id_in_pieces(big, long_length, 4093, id);
	CHECK_STR(id, "30530887514672ad", "200003 bytes in pieces of 4093 bytes");

	/* From a file: read a piece at a time, pieces of LIBRARY_ID_PIECE bytes. */
	char path[] = "/tmp/test_library_id.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, big, long_length) == (ssize_t)long_length,
	      "a file of 200003 bytes is written");
	CHECK(long_length > 3 * LIBRARY_ID_PIECE, "the file is longer than three pieces");
	CHECK(library_id_of_file(path, id) == 0, "its id is read");
	CHECK_STR(id, "30530887514672ad", "the file's id is its bytes' id");
	CHECK(lseek(fd, 0, SEEK_SET) == 0 && library_id_of_descriptor(fd, long_length - 3, id) == 0,
	      "the id of all but the last 3 bytes of a descriptor is read");
	library_id_of_bytes(big, long_length - 3, whole);
	CHECK_STR(id, whole, "and is the id of those bytes");
	CHECK(lseek(fd, 0, SEEK_SET) == 0, "back to the file's start");
	errno = 0;
	CHECK(library_id_of_descriptor(fd, long_length + 1, id) == -1 && errno == EIO,
	      "a descriptor that ends before the length asked for is EIO");
	close(fd);
	unlink(path);
	errno = 0;
	CHECK(library_id_of_file("/tmp", id) == -1 && errno == EINVAL, "a directory is EINVAL");
	errno = 0;
	CHECK(library_id_of_file("/nonexistent/library.so", id) == -1 && errno == ENOENT,
	      "a missing file is ENOENT");
	free(hundred);
	free(big);
	return check_failures != 0;
}
