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

void library_id_of_bytes(const void *bytes, size_t length, char id[LIBRARY_ID_SIZE])
{
	const unsigned char *at = bytes;
	/* Four lanes: four multiplications in flight instead of one. */
	uint64_t lanes[LIBRARY_ID_LANES];
	for (int lane = 0; lane < LIBRARY_ID_LANES; lane++)
		lanes[lane] = FNV_OFFSET;
	size_t words = length / 8;
	size_t i = 0;
	for (; i + LIBRARY_ID_LANES <= words; i += LIBRARY_ID_LANES)
		for (int lane = 0; lane < LIBRARY_ID_LANES; lane++)
			lanes[lane] = (lanes[lane] ^ load_word(at + (i + (size_t)lane) * 8)) * FNV_PRIME;
	for (; i < words; i++)
		lanes[i % LIBRARY_ID_LANES] = (lanes[i % LIBRARY_ID_LANES] ^ load_word(at + i * 8)) * FNV_PRIME;
	uint64_t hash = FNV_OFFSET;
	for (int lane = 0; lane < LIBRARY_ID_LANES; lane++)
		hash = (hash ^ lanes[lane]) * FNV_PRIME;
	for (i = words * 8; i < length; i++)
		hash = (hash ^ at[i]) * FNV_PRIME;
	snprintf(id, LIBRARY_ID_SIZE, "%016llx", (unsigned long long)hash);
}

int library_id_of_file(const char *path, char id[LIBRARY_ID_SIZE])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned char *bytes = NULL;
	size_t length = 0;
	int status = fstat(fd, &st);
	if (status == 0 && !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		status = -1;
	}
	if (status == 0) {
		length = (size_t)st.st_size;
		bytes = malloc(length ? length : 1);
		if (!bytes)
			status = -1;
	}
	for (size_t done = 0; status == 0 && done < length;) {
		ssize_t got = read(fd, bytes + done, length - done);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO; /* shorter than fstat said: it changed */
			status = -1;
			break;
		}
		done += (size_t)got;
	}
	int saved = errno;
	close(fd);
	if (status == 0)
		library_id_of_bytes(bytes, length, id);
	free(bytes);
	errno = saved;
	return status;
}
