/* library_id.c - the id that ties a host build's .ops record to its libraries. */
#include "library_id.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

/* The little-endian 8-byte word at bytes, whatever the host's byte order. */
static uint64_t load_word(const unsigned char *bytes)
{
	uint64_t word;
	memcpy(&word, bytes, sizeof word);
	const uint16_t one = 1;
	if (*(const unsigned char *)&one == 1)
		return word;
	uint64_t swapped = 0;
	for (int b = 7; b >= 0; b--)
		swapped = swapped << 8 | bytes[b];
	return swapped;
}

void library_id_start(struct library_id_hash *hash)
{
	for (int lane = 0; lane < LIBRARY_ID_LANES; lane++)
		hash->lanes[lane] = FNV_OFFSET;
	hash->words = 0;
	hash->pending_length = 0;
}

/* Adds the word at bytes to its lane. */
static void add_word(struct library_id_hash *hash, const unsigned char *bytes)
{
	uint64_t *lane = &hash->lanes[hash->words % LIBRARY_ID_LANES];
	*lane = (*lane ^ load_word(bytes)) * FNV_PRIME;
	hash->words++;
}

void library_id_add(struct library_id_hash *hash, const void *bytes, size_t length)
{
	const unsigned char *at = bytes;
	/* A word begun by the last piece. */
	while (hash->pending_length > 0 && length > 0) {
		hash->pending[hash->pending_length++] = *at++;
		length--;
		if (hash->pending_length == 8) {
			add_word(hash, hash->pending);
			hash->pending_length = 0;
		}
	}
	if (length == 0)
		return;
	while (hash->words % LIBRARY_ID_LANES != 0 && length >= 8) {
		add_word(hash, at);
		at += 8;
		length -= 8;
	}
	/* Four lanes: four multiplications in flight instead of one. */
	uint64_t lanes[LIBRARY_ID_LANES];
	memcpy(lanes, hash->lanes, sizeof lanes);
	const size_t round_bytes = (size_t)8 * LIBRARY_ID_LANES;
	size_t rounds = length / round_bytes;
	for (size_t r = 0; r < rounds; r++, at += round_bytes)
		for (int lane = 0; lane < LIBRARY_ID_LANES; lane++)
			lanes[lane] = (lanes[lane] ^ load_word(at + (size_t)lane * 8)) * FNV_PRIME;
	memcpy(hash->lanes, lanes, sizeof lanes);
	hash->words += (uint64_t)rounds * LIBRARY_ID_LANES;
	length -= rounds * round_bytes;
	for (; length >= 8; at += 8, length -= 8)
		add_word(hash, at);
	memcpy(hash->pending, at, length);
	hash->pending_length = length;
}

void library_id_finish(const struct library_id_hash *hash, char id[LIBRARY_ID_SIZE])
{
	uint64_t value = FNV_OFFSET;
	for (int lane = 0; lane < LIBRARY_ID_LANES; lane++)
		value = (value ^ hash->lanes[lane]) * FNV_PRIME;
	for (size_t i = 0; i < hash->pending_length; i++)
		value = (value ^ hash->pending[i]) * FNV_PRIME;
	snprintf(id, LIBRARY_ID_SIZE, "%016llx", (unsigned long long)value);
}

void library_id_of_bytes(const void *bytes, size_t length, char id[LIBRARY_ID_SIZE])
{
	struct library_id_hash hash;
	library_id_start(&hash);
	library_id_add(&hash, bytes, length);
	library_id_finish(&hash, id);
}

int library_id_of_descriptor(int fd, size_t length, char id[LIBRARY_ID_SIZE])
{
	/* Pieces that the heap keeps, not a fresh mapping of the whole file
	 * whose every page would fault in. */
	size_t size = length < LIBRARY_ID_PIECE ? length : LIBRARY_ID_PIECE;
	unsigned char *piece = malloc(size ? size : 1);
	if (!piece)
		return -1;
	struct library_id_hash hash;
	library_id_start(&hash);
	int status = 0;
	for (size_t done = 0; done < length;) {
		size_t want = length - done < size ? length - done : size;
		ssize_t got = read(fd, piece, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO; /* shorter than length: it changed */
			status = -1;
			break;
		}
		library_id_add(&hash, piece, (size_t)got);
		done += (size_t)got;
	}
	int saved = errno;
	free(piece);
	if (status == 0)
		library_id_finish(&hash, id);
	errno = saved;
	return status;
}

int library_id_of_file(const char *path, char id[LIBRARY_ID_SIZE])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	int status = fstat(fd, &st);
	if (status == 0 && !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		status = -1;
	}
	if (status == 0)
		status = library_id_of_descriptor(fd, (size_t)st.st_size, id);
	int saved = errno;
	close(fd);
	errno = saved;
	return status;
}
