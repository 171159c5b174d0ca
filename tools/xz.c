/* xz.c: see xz.h.  The container (stream header, blocks, index, stream
 * footer) and the LZMA2 chunks follow the .xz file format specification
 * 1.1.0 and the LZMA2 rules liblzma enforces; the LZMA decoder is the
 * classic range-coded one.  The whole output is the dictionary: a match
 * may reach back to the last dictionary reset, never further. */
#include "xz.h"
#include <stdlib.h>
#include <string.h>

/* ---- checksums ---- */

static uint32_t crc32_tab[256];
static uint64_t crc64_tab[256];

static void crc_tables(void)
{
	uint32_t i, k;
	if (crc32_tab[1])
		return;
	for (i = 0; i < 256; i++) {
		uint32_t c = i;
		uint64_t d = i;
		for (k = 0; k < 8; k++) {
			c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
			d = d & 1 ? (d >> 1) ^ 0xC96C5795D7870F42ull : d >> 1;
		}
		crc32_tab[i] = c;
		crc64_tab[i] = d;
	}
}

uint32_t xz_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	crc_tables();
	crc = ~crc;
	while (n--)
		crc = crc32_tab[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

uint64_t xz_crc64(uint64_t crc, const uint8_t *p, size_t n)
{
	crc_tables();
	crc = ~crc;
	while (n--)
		crc = crc64_tab[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

/* ---- the decoder's state ---- */

#define PROB_INIT 1024
#define STATES 12

struct lenc {
	uint16_t choice, choice2, low[16][8], mid[16][8], high[256];
};

/* Every probability, and only them (reset as one array of uint16_t). */
struct probs {
	uint16_t is_match[STATES][16], is_rep[STATES], is_rep0[STATES], is_rep1[STATES], is_rep2[STATES];
	uint16_t is_rep0_long[STATES][16];
	uint16_t dist_slot[4][64], dist_special[114], dist_align[16];
	struct lenc len, rep_len;
	uint16_t literal[16][0x300]; /* lc + lp <= 4 */
};

struct rec {
	uint64_t unpadded, uncompressed;
};

struct xzd {
	uint8_t *out;
	size_t len, cap, max;
	size_t dict_start;      /* where the last dictionary reset was */
	struct probs pr;
	uint32_t state, rep[4];
	unsigned lc, lp, pb;
	struct rec *recs;       /* the blocks of the current stream, for its index */
	size_t nrecs, caprecs;
	const char *why;
};

#define FAIL(d, msg)                                                                                                   \
	do {                                                                                                           \
		(d)->why = (msg);                                                                                      \
		return -1;                                                                                             \
	} while (0)

/* Room for `more` bytes of output, within the caller's limit. */
static int reserve(struct xzd *d, size_t more)
{
	size_t want = d->len + more, cap = d->cap ? d->cap : 4096;
	uint8_t *p;
	if (more > d->max - d->len)
		FAIL(d, "the data decompresses to more than the limit");
	if (want <= d->cap)
		return 0;
	while (cap < want)
		cap = cap > d->max / 2 ? d->max : cap * 2;
	p = realloc(d->out, cap ? cap : 1);
	if (!p)
		FAIL(d, "out of memory");
	d->out = p;
	d->cap = cap;
	return 0;
}

static void lzma_reset(struct xzd *d)
{
	uint16_t *p = (uint16_t *)&d->pr;
	size_t i;
	for (i = 0; i < sizeof d->pr / sizeof *p; i++)
		p[i] = PROB_INIT;
	d->state = 0;
	d->rep[0] = d->rep[1] = d->rep[2] = d->rep[3] = 0;
}

/* ---- the range decoder: input past the chunk reads as 0 and marks it bad ---- */

struct rc {
	const uint8_t *p, *end;
	uint32_t range, code;
	int bad;
};

static int rc_init(struct rc *rc, const uint8_t *p, size_t n)
{
	if (n < 5 || p[0] != 0)
		return -1;
	rc->code = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	rc->range = 0xFFFFFFFFu;
	rc->p = p + 5;
	rc->end = p + n;
	rc->bad = 0;
	return 0;
}

static inline void rc_norm(struct rc *rc)
{
	if (rc->range < (1u << 24)) {
		rc->range <<= 8;
		rc->code <<= 8;
		if (rc->p < rc->end)
			rc->code |= *rc->p++;
		else
			rc->bad = 1;
	}
}

static inline unsigned rc_bit(struct rc *rc, uint16_t *prob)
{
	uint32_t bound;
	rc_norm(rc);
	bound = (rc->range >> 11) * *prob;
	if (rc->code < bound) {
		rc->range = bound;
		*prob = (uint16_t)(*prob + ((2048 - *prob) >> 5));
		return 0;
	}
	rc->range -= bound;
	rc->code -= bound;
	*prob = (uint16_t)(*prob - (*prob >> 5));
	return 1;
}

static uint32_t rc_tree(struct rc *rc, uint16_t *probs, unsigned bits)
{
	uint32_t s = 1;
	unsigned i;
	for (i = 0; i < bits; i++)
		s = (s << 1) | rc_bit(rc, &probs[s]);
	return s - (1u << bits);
}

static uint32_t rc_rtree(struct rc *rc, uint16_t *probs, unsigned bits)
{
	uint32_t s = 1, r = 0;
	unsigned i, b;
	for (i = 0; i < bits; i++) {
		b = rc_bit(rc, &probs[s]);
		s = (s << 1) | b;
		r |= b << i;
	}
	return r;
}

static uint32_t rc_direct(struct rc *rc, unsigned bits)
{
	uint32_t r = 0;
	while (bits--) {
		rc_norm(rc);
		rc->range >>= 1;
		if (rc->code >= rc->range) {
			rc->code -= rc->range;
			r = (r << 1) | 1;
		} else {
			r <<= 1;
		}
	}
	return r;
}

static uint32_t len_dec(struct rc *rc, struct lenc *l, uint32_t ps)
{
	if (!rc_bit(rc, &l->choice))
		return 2 + rc_tree(rc, l->low[ps], 3);
	if (!rc_bit(rc, &l->choice2))
		return 10 + rc_tree(rc, l->mid[ps], 3);
	return 18 + rc_tree(rc, l->high, 8);
}

/* ---- one LZMA chunk: `unpacked` bytes from in[0, packed) ---- */

static int lzma_chunk(struct xzd *d, const uint8_t *in, size_t packed, size_t unpacked)
{
	struct probs *pr = &d->pr;
	struct rc rc;
	size_t pos = d->len, end = pos + unpacked, base = d->dict_start;
	uint32_t pb_mask = (1u << d->pb) - 1, lp_mask = (1u << d->lp) - 1;
	uint32_t state = d->state, *rep = d->rep;
	uint8_t *o;
	if (rc_init(&rc, in, packed) < 0)
		FAIL(d, "an LZMA chunk does not start as a range-coded one");
	if (reserve(d, unpacked) < 0)
		return -1;
	o = d->out;
	while (pos < end) {
		uint32_t ps = (uint32_t)(pos - base) & pb_mask, len, k;
		if (rc.bad)
			FAIL(d, "an LZMA chunk is shorter than its data");
		if (!rc_bit(&rc, &pr->is_match[state][ps])) { /* a literal */
			uint32_t prev = pos > base ? o[pos - 1] : 0, sym = 1;
			uint16_t *p = pr->literal[((((uint32_t)(pos - base)) & lp_mask) << d->lc) + (prev >> (8 - d->lc))];
			if (state < 7) {
				while (sym < 0x100)
					sym = (sym << 1) | rc_bit(&rc, &p[sym]);
			} else {
				uint32_t mb, off = 0x100, mbit;
				if (rep[0] >= pos - base)
					FAIL(d, "a distance reaches before the dictionary");
				mb = (uint32_t)o[pos - rep[0] - 1] << 1;
				while (sym < 0x100) {
					mbit = mb & off;
					mb <<= 1;
					if (rc_bit(&rc, &p[off + mbit + sym])) {
						sym = (sym << 1) | 1;
						off = mbit;
					} else {
						sym <<= 1;
						off &= ~mbit;
					}
				}
			}
			o[pos++] = (uint8_t)sym;
			state = state < 4 ? 0 : state < 10 ? state - 3 : state - 6;
			continue;
		}
		if (rc_bit(&rc, &pr->is_rep[state])) {
			if (!rc_bit(&rc, &pr->is_rep0[state])) {
				if (!rc_bit(&rc, &pr->is_rep0_long[state][ps])) { /* one byte at rep0 */
					if (rep[0] >= pos - base)
						FAIL(d, "a distance reaches before the dictionary");
					state = state < 7 ? 9 : 11;
					o[pos] = o[pos - rep[0] - 1];
					pos++;
					continue;
				}
			} else {
				uint32_t dist;
				if (!rc_bit(&rc, &pr->is_rep1[state])) {
					dist = rep[1];
				} else {
					if (!rc_bit(&rc, &pr->is_rep2[state])) {
						dist = rep[2];
					} else {
						dist = rep[3];
						rep[3] = rep[2];
					}
					rep[2] = rep[1];
				}
				rep[1] = rep[0];
				rep[0] = dist;
			}
			state = state < 7 ? 8 : 11;
			len = len_dec(&rc, &pr->rep_len, ps);
		} else {
			uint32_t slot, dist;
			rep[3] = rep[2];
			rep[2] = rep[1];
			rep[1] = rep[0];
			state = state < 7 ? 7 : 10;
			len = len_dec(&rc, &pr->len, ps);
			slot = rc_tree(&rc, pr->dist_slot[len < 6 ? len - 2 : 3], 6);
			if (slot < 4) {
				dist = slot;
			} else {
				unsigned nb = (slot >> 1) - 1;
				dist = (2 | (slot & 1)) << nb;
				if (slot < 14)
					dist += rc_rtree(&rc, pr->dist_special + dist - slot - 1, nb);
				else
					dist += (rc_direct(&rc, nb - 4) << 4) + rc_rtree(&rc, pr->dist_align, 4);
			}
			if (dist == 0xFFFFFFFFu)
				FAIL(d, "an end marker inside an LZMA2 chunk");
			rep[0] = dist;
		}
		if (rep[0] >= pos - base)
			FAIL(d, "a distance reaches before the dictionary");
		if (len > end - pos)
			FAIL(d, "a match runs past the end of its chunk");
		for (k = 0; k < len; k++, pos++)
			o[pos] = o[pos - rep[0] - 1];
	}
	rc_norm(&rc);
	if (rc.bad || rc.p != rc.end || rc.code != 0)
		FAIL(d, "an LZMA chunk does not end where its header says");
	d->len = pos;
	d->state = state;
	return 0;
}

/* ---- LZMA2: chunks up to the end byte; returns the bytes read, or -1 ---- */

static long lzma2(struct xzd *d, const uint8_t *p, size_t n)
{
	size_t i = 0;
	int need_dict = 1, need_props = 1;
	for (;;) {
		unsigned c;
		size_t unpacked, packed;
		if (i >= n)
			FAIL(d, "the LZMA2 data is cut short");
		c = p[i++];
		if (c == 0)
			return (long)i;
		if (c == 1 || c == 2) { /* stored bytes */
			if (c == 1) {
				d->dict_start = d->len;
				need_dict = 0;
				need_props = 1;
			} else if (need_dict) {
				FAIL(d, "LZMA2 data that does not start with a dictionary reset");
			}
			if (n - i < 2)
				FAIL(d, "the LZMA2 data is cut short");
			unpacked = ((size_t)p[i] << 8 | p[i + 1]) + 1;
			i += 2;
			if (n - i < unpacked)
				FAIL(d, "the LZMA2 data is cut short");
			if (reserve(d, unpacked) < 0)
				return -1;
			memcpy(d->out + d->len, p + i, unpacked);
			d->len += unpacked;
			i += unpacked;
			continue;
		}
		if (c < 0x80)
			FAIL(d, "an LZMA2 control byte that means nothing");
		if (n - i < 4 + (c >= 0xC0))
			FAIL(d, "the LZMA2 data is cut short");
		unpacked = ((size_t)(c & 0x1F) << 16 | (size_t)p[i] << 8 | p[i + 1]) + 1;
		packed = ((size_t)p[i + 2] << 8 | p[i + 3]) + 1;
		i += 4;
		if (c >= 0xE0) {
			d->dict_start = d->len;
			need_dict = 0;
			need_props = 1;
		} else if (need_dict) {
			FAIL(d, "LZMA2 data that does not start with a dictionary reset");
		}
		if (c >= 0xC0) {
			unsigned pr = p[i++];
			if (pr >= 9 * 5 * 5)
				FAIL(d, "LZMA properties out of range");
			d->lc = pr % 9;
			d->lp = (pr / 9) % 5;
			d->pb = pr / 45;
			if (d->lc + d->lp > 4)
				FAIL(d, "LZMA2 properties with lc + lp above 4");
			need_props = 0;
			lzma_reset(d);
		} else if (need_props) {
			FAIL(d, "an LZMA2 chunk without the properties it needs");
		} else if (c >= 0xA0) {
			lzma_reset(d);
		}
		if (n - i < packed)
			FAIL(d, "the LZMA2 data is cut short");
		if (lzma_chunk(d, p + i, packed, unpacked) < 0)
			return -1;
		i += packed;
	}
}

/* ---- the container ---- */

static int vli(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
	uint64_t r = 0;
	unsigned k;
	for (k = 0; k < 9; k++) {
		uint8_t b;
		if (*i >= n)
			return -1;
		b = p[(*i)++];
		r |= (uint64_t)(b & 0x7F) << (7 * k);
		if (!(b & 0x80)) {
			if (k && !b)
				return -1; /* not the shortest form */
			*v = r;
			return 0;
		}
	}
	return -1;
}

static const uint8_t check_size[16] = { 0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64 };

/* One block at p (its header's first byte nonzero); returns the bytes it
 * takes, padding and check included, or -1. */
static long block(struct xzd *d, const uint8_t *p, size_t n, unsigned check)
{
	size_t hs = ((size_t)p[0] + 1) * 4, j = 2, start = d->len, cs, k;
	uint64_t csize = UINT64_MAX, usize = UINT64_MAX, id, psize;
	const uint8_t *data;
	unsigned flags;
	long used;
	if (hs > n)
		FAIL(d, "a block header is cut short");
	if (xz_crc32(0, p, hs - 4) != le32(p + hs - 4))
		FAIL(d, "a block header's CRC32 does not match");
	flags = p[1];
	if (flags & 0x3C)
		FAIL(d, "a block header with reserved flags set");
	if ((flags & 0x40) && vli(p, hs - 4, &j, &csize) < 0)
		FAIL(d, "a bad compressed size in a block header");
	if ((flags & 0x80) && vli(p, hs - 4, &j, &usize) < 0)
		FAIL(d, "a bad uncompressed size in a block header");
	if ((flags & 3) != 0)
		FAIL(d, "a filter chain other than LZMA2 alone (not supported)");
	if (vli(p, hs - 4, &j, &id) < 0 || vli(p, hs - 4, &j, &psize) < 0)
		FAIL(d, "a bad filter in a block header");
	if (id != 0x21)
		FAIL(d, "a filter other than LZMA2 (not supported)");
	if (psize != 1 || j >= hs - 4 || p[j] > 40)
		FAIL(d, "bad LZMA2 filter properties");
	for (j++; j < hs - 4; j++)
		if (p[j])
			FAIL(d, "a block header with nonzero padding");
	used = lzma2(d, p + hs, n - hs);
	if (used < 0)
		return -1;
	if (csize != UINT64_MAX && csize != (uint64_t)used)
		FAIL(d, "a block's compressed size is not what its header says");
	if (usize != UINT64_MAX && usize != d->len - start)
		FAIL(d, "a block's uncompressed size is not what its header says");
	j = hs + (size_t)used;
	while (j % 4) {
		if (j >= n || p[j])
			FAIL(d, "bad block padding");
		j++;
	}
	cs = check_size[check];
	if (n - j < cs)
		FAIL(d, "a block's check is cut short");
	data = d->out ? d->out + start : (const uint8_t *)""; /* (an empty block: nothing allocated yet) */
	if (check == 1 && xz_crc32(0, data, d->len - start) != le32(p + j))
		FAIL(d, "a block's CRC32 does not match its data");
	if (check == 4 && xz_crc64(0, data, d->len - start) != le64(p + j))
		FAIL(d, "a block's CRC64 does not match its data");
	if (d->nrecs == d->caprecs) {
		struct rec *r;
		k = d->caprecs ? d->caprecs * 2 : 8;
		r = realloc(d->recs, k * sizeof *r);
		if (!r)
			FAIL(d, "out of memory");
		d->recs = r;
		d->caprecs = k;
	}
	d->recs[d->nrecs].unpadded = hs + (uint64_t)used + cs;
	d->recs[d->nrecs++].uncompressed = d->len - start;
	return (long)(j + cs);
}

static const uint8_t magic[6] = { 0xFD, '7', 'z', 'X', 'Z', 0 };

/* One stream at p; returns the bytes it takes, or -1. */
static long stream(struct xzd *d, const uint8_t *p, size_t n)
{
	size_t i = 12, start, k;
	uint64_t count, v;
	unsigned check;
	if (n < 24)
		FAIL(d, "too short for an xz stream");
	if (memcmp(p, magic, 6))
		FAIL(d, "not xz data (no stream header)");
	if (p[6] || (p[7] & 0xF0))
		FAIL(d, "unsupported stream flags");
	if (xz_crc32(0, p + 6, 2) != le32(p + 8))
		FAIL(d, "the stream header's CRC32 does not match");
	check = p[7];
	d->nrecs = 0;
	for (;;) {
		long b;
		if (i >= n)
			FAIL(d, "the stream is cut short (no index)");
		if (!p[i])
			break;
		b = block(d, p + i, n - i, check);
		if (b < 0)
			return -1;
		i += (size_t)b;
	}
	start = i++;
	if (vli(p, n, &i, &count) < 0 || count != d->nrecs)
		FAIL(d, "the index does not list the blocks decoded");
	for (k = 0; k < d->nrecs; k++) {
		if (vli(p, n, &i, &v) < 0 || v != d->recs[k].unpadded)
			FAIL(d, "the index does not match the blocks");
		if (vli(p, n, &i, &v) < 0 || v != d->recs[k].uncompressed)
			FAIL(d, "the index does not match the blocks");
	}
	while ((i - start) % 4) {
		if (i >= n || p[i])
			FAIL(d, "bad index padding");
		i++;
	}
	if (n - i < 4 + 12)
		FAIL(d, "the stream is cut short (no footer)");
	if (xz_crc32(0, p + start, i - start) != le32(p + i))
		FAIL(d, "the index's CRC32 does not match");
	i += 4;
	if (xz_crc32(0, p + i + 4, 6) != le32(p + i))
		FAIL(d, "the stream footer's CRC32 does not match");
	if (((uint64_t)le32(p + i + 4) + 1) * 4 != i - start)
		FAIL(d, "the stream footer gives the wrong index size");
	if (memcmp(p + i + 8, p + 6, 2) || p[i + 10] != 'Y' || p[i + 11] != 'Z')
		FAIL(d, "a bad stream footer");
	return (long)(i + 12);
}

int xz_decode(const uint8_t *in, size_t n, size_t max_out, uint8_t **out, size_t *out_len, const char **why)
{
	struct xzd *d = calloc(1, sizeof *d);
	size_t i = 0;
	int streams = 0;
	*out = NULL;
	*out_len = 0;
	if (!d) {
		*why = "out of memory";
		return -1;
	}
	d->max = max_out;
	while (i < n) {
		long s;
		if (streams && n - i >= 4 && !le32(in + i)) { /* stream padding */
			i += 4;
			continue;
		}
		s = stream(d, in + i, n - i);
		if (s < 0)
			goto fail;
		i += (size_t)s;
		streams++;
	}
	if (!streams) {
		d->why = "no xz stream";
		goto fail;
	}
	*out = d->out ? d->out : malloc(1);
	*out_len = d->len;
	free(d->recs);
	free(d);
	if (!*out) {
		*why = "out of memory";
		return -1;
	}
	return 0;
fail:
	*why = d->why;
	free(d->out);
	free(d->recs);
	free(d);
	return -1;
}
