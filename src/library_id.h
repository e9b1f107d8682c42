/* library_id.h - the id that ties a host build's .ops record to its libraries.
 *
 * The id of a library is a hash of its bytes, written as 16 lowercase hex
 * digits: 64-bit FNV-1a over the file's little-endian 8-byte words in four
 * interleaved lanes (word i goes to lane i mod 4, each lane starting from
 * the FNV offset basis), then the four lanes' values in order and the
 * file's last (length mod 8) bytes, one at a time, into one more FNV-1a.  build-custom-op writes each
 * linked library's id into the record once every link has succeeded;
 * the runner computes the id of the file it is about to load and refuses a
 * library whose id is not the record's.  It tells a changed or half-rebuilt
 * library from the one the record was written for; it is no defence
 * against a deliberate forgery.  Needs no arena: both sides use it. */
#ifndef LIBRARY_ID_H
#define LIBRARY_ID_H

#include <stddef.h>

#include <stdint.h>

#define LIBRARY_ID_SIZE 17 /* 16 hex digits and a NUL */
#define LIBRARY_ID_LANES 4

/* The id of bytes given in pieces: library_id_start, then library_id_add
 * for each piece in order (any lengths), then library_id_finish.  The id
 * is that of the pieces joined, so a file can be read a piece at a time. */
struct library_id_hash {
	uint64_t lanes[LIBRARY_ID_LANES];
	uint64_t words;                /* whole words added so far */
	unsigned char pending[8];      /* the bytes after them */
	size_t pending_length;
};
void library_id_start(struct library_id_hash *hash);
void library_id_add(struct library_id_hash *hash, const void *bytes, size_t length);
void library_id_finish(const struct library_id_hash *hash, char id[LIBRARY_ID_SIZE]);

/* The id of length bytes. */
void library_id_of_bytes(const void *bytes, size_t length, char id[LIBRARY_ID_SIZE]);
/* The id of the length bytes read from fd, from its offset, a piece of
 * LIBRARY_ID_PIECE bytes at a time; returns 0, or -1 with errno set (EIO:
 * the file ended before length bytes). */
#define LIBRARY_ID_PIECE ((size_t)64 * 1024)
int library_id_of_descriptor(int fd, size_t length, char id[LIBRARY_ID_SIZE]);
/* The id of the file at path; returns 0, or -1 with errno set. */
int library_id_of_file(const char *path, char id[LIBRARY_ID_SIZE]);

#endif
