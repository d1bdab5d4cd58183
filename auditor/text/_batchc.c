/* auditor.text._batchc: the byte loops of a TokenBatch (auditor/text/batch.py) in C.
 *
 * Fourteen functions, each doing exactly what its twin in auditor/text/_batchpy.py does (the tests
 * compare them on real data and generated strings); batch.py imports this module when the package
 * was built with a C compiler and _batchpy otherwise:
 *
 *   not_plain(texts)        -> list[int]   texts that are not plain ASCII without & < % NUL ESC or a
 *                                          hyphen ending a line (those take the per-text path)
 *   join(pieces)            -> bytes       each piece (ASCII str or bytes) followed by " \x00 "
 *   camel_runs(raw, humps)  -> list        (start, end) of each whitespace-delimited run of raw with
 *                                          a lower-case letter before a capital and at least `humps`
 *                                          pieces between its humps (aA, AAa)
 *   squeeze(raw, table)     -> tuple       raw translated by table, runs of spaces squeezed to one and
 *                                          leading spaces dropped (a bytearray), and three int64
 *                                          buffers: token offsets, text offsets, token starts
 *   token_hashes(data, offsets) -> bytes   xxh64 of each token data[offsets[j]:offsets[j+1]-1] (uint64s)
 *   head_hits(data, offsets, heads, width) -> bytes   the j of each offsets[j] (int64s) whose first
 *                                          `width` bytes of data (zeros past its end, a little-endian
 *                                          uint64) are one of heads (sorted uint64s), as int64s
 *   lookup(hashes, keys)    -> bytearray   per uint64 of hashes: 1 + the index of its first copy in
 *                                          keys (uint64s), or 0 (int64s)
 *   slow_lines(text)        -> list        (start, end) of each line of text (split at \n) that is not
 *                                          plain on its own: a character not ASCII, NUL, & < % or ESC
 *   line_tokens(raw, table) -> tuple      per line of raw (split at \n): the tokens in it (bytes not
 *                                          translated to a space by table, in runs: int64s), whether it
 *                                          holds a byte that is no ASCII whitespace (uint8s), and where
 *                                          each \n stands (int64s)
 *   first_in(text, ranges)  -> int         the index of the first character of text whose code point
 *                                          lies in one of ranges (uint32 pairs lo, hi: inclusive,
 *                                          sorted, disjoint), or -1
 *   char_set(text)          -> set         the distinct characters of text (set(text))
 *   line_runs(text, most)   -> list        (start, end) of each run of lines of text (split at \n)
 *                                          holding a character not ASCII or NUL, with the blank lines
 *                                          between two such lines, at most `most` characters a run
 *                                          (but for a longer line, a run alone)
 *   blank_lines(text)       -> int         how many lines of text (split at \n) hold only whitespace
 *   distinct_runs(values, starts, lengths) -> tuple   the sorted distinct uint64s of each run
 *                                          values[starts[i]:starts[i]+lengths[i]], one after the other
 *                                          (a bytearray), and where each begins (int64s, runs + 1)
 *
 * Nothing here keeps state; every function raises TypeError for arguments of the wrong type.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static const char SEPARATOR[] = " \x00 ";
#define SEPARATOR_LEN 3

/* bytes that may keep an ASCII text off the plain path: & < % NUL ESC, and '-' (before a line end) */
static unsigned char special[256];
/* ASCII whitespace as str.isspace holds it: space, \t \n \v \f \r and \x1c-\x1f */
static unsigned char whitespace[256];

static int ascii_str(PyObject *t) {
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(t) < 0) return -1;
#endif
    return PyUnicode_IS_ASCII(t) ? 1 : 0;
}

static PyObject *not_plain(PyObject *Py_UNUSED(self), PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "not_plain() takes a sequence of str");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(0);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = items[i];
        if (!PyUnicode_Check(t)) {
            PyErr_Format(PyExc_TypeError, "not_plain() takes str, not %.80s", Py_TYPE(t)->tp_name);
            goto fail;
        }
        int ascii = ascii_str(t);
        if (ascii < 0) goto fail;
        int slow = !ascii;
        if (!slow) {
            const unsigned char *s = PyUnicode_1BYTE_DATA(t);
            Py_ssize_t len = PyUnicode_GET_LENGTH(t);
            for (Py_ssize_t j = 0; j < len; j++) {
                if (!special[s[j]]) continue;
                if (s[j] != '-') { slow = 1; break; }
                if (j + 1 < len && (s[j + 1] == '\n' || (s[j + 1] == '\r' && j + 2 < len && s[j + 2] == '\n'))) {
                    slow = 1;
                    break;
                }
            }
        }
        if (slow) {
            PyObject *k = PyLong_FromSsize_t(i);
            if (k == NULL || PyList_Append(out, k) < 0) { Py_XDECREF(k); goto fail; }
            Py_DECREF(k);
        }
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_XDECREF(out);
    Py_DECREF(seq);
    return NULL;
}

/* a piece's bytes: an ASCII str's own buffer, or a bytes object's */
static int piece_bytes(PyObject *p, const char **data, Py_ssize_t *len) {
    if (PyBytes_Check(p)) {
        *data = PyBytes_AS_STRING(p);
        *len = PyBytes_GET_SIZE(p);
        return 0;
    }
    if (PyUnicode_Check(p)) {
        int ascii = ascii_str(p);
        if (ascii < 0) return -1;
        if (ascii) {
            *data = (const char *)PyUnicode_1BYTE_DATA(p);
            *len = PyUnicode_GET_LENGTH(p);
            return 0;
        }
        PyErr_SetString(PyExc_TypeError, "join() takes ASCII str, not other text");
        return -1;
    }
    PyErr_Format(PyExc_TypeError, "join() takes bytes or ASCII str, not %.80s", Py_TYPE(p)->tp_name);
    return -1;
}

static PyObject *join(PyObject *Py_UNUSED(self), PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "join() takes a sequence of pieces");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Py_ssize_t total = 0;
    const char *data;
    Py_ssize_t len;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (piece_bytes(items[i], &data, &len) < 0) { Py_DECREF(seq); return NULL; }
        total += len + SEPARATOR_LEN;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL) { Py_DECREF(seq); return NULL; }
    char *w = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        piece_bytes(items[i], &data, &len); /* checked above */
        memcpy(w, data, (size_t)len);
        w += len;
        memcpy(w, SEPARATOR, SEPARATOR_LEN);
        w += SEPARATOR_LEN;
    }
    Py_DECREF(seq);
    return out;
}

static inline int lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static inline int upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }

#define ONES 0x0101010101010101ULL
#define LOW7 0x7F7F7F7F7F7F7F7FULL

/* the high bit of each byte of x that is 0, and no other bit (exact: no carry crosses a byte) */
static inline uint64_t zero_bytes(uint64_t x) { return ~(((x & LOW7) + LOW7) | x | LOW7); }

/* the first capital (A-Z) of s[j:n], or n: 8 bytes at a time where the machine reads words in
   little-endian order (each byte of a word tested at once, Bit Twiddling Hacks' hasbetween: a byte
   between '@' and '[', not one of 0x80 or more), else byte by byte */
static inline Py_ssize_t next_upper(const unsigned char *s, Py_ssize_t j, Py_ssize_t n) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; j + 8 <= n; j += 8) {
        uint64_t x, y;
        memcpy(&x, s + j, 8);
        y = x & LOW7;
        uint64_t hit = (ONES * (127 + 'Z' + 1) - y) & ~x & (y + ONES * (127 - ('A' - 1))) & ~LOW7;
        if (hit) return j + (__builtin_ctzll(hit) >> 3);
    }
#endif
    while (j < n && !upper(s[j])) j++;
    return j;
}

static PyObject *camel_runs(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    Py_ssize_t humps;
    if (!PyArg_ParseTuple(args, "y*n:camel_runs", &view, &humps)) return NULL;
    const unsigned char *s = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len;
    PyObject *out = PyList_New(0);
    if (out == NULL) { PyBuffer_Release(&view); return NULL; }
    Py_ssize_t i = 0, done = 0; /* done: where the last run read ended */
    for (;;) {
        /* the next lower-case letter followed by a capital: few in any text, so found first, from
           the capitals (8 bytes at a time) */
        Py_ssize_t j = i + 1;
        for (;;) {
            j = next_upper(s, j, n);
            if (j >= n || lower(s[j - 1])) break;
            j++;
        }
        if (j >= n) break;
        i = j - 1;
        Py_ssize_t start = i, end = i + 2, rises = 0, falls = 0; /* aA, and AAa */
        while (start > done && !whitespace[s[start - 1]]) start--;
        while (end < n && !whitespace[s[end]]) end++;
        for (Py_ssize_t j = start; j + 1 < end; j++) {
            if (lower(s[j]) && upper(s[j + 1])) rises++;
            else if (j + 2 < end && upper(s[j]) && upper(s[j + 1]) && lower(s[j + 2])) falls++;
        }
        if (rises + falls + 1 >= humps) {
            PyObject *span = Py_BuildValue("(nn)", start, end);
            if (span == NULL || PyList_Append(out, span) < 0) {
                Py_XDECREF(span);
                Py_DECREF(out);
                PyBuffer_Release(&view);
                return NULL;
            }
            Py_DECREF(span);
        }
        i = done = end;
    }
    PyBuffer_Release(&view);
    return out;
}

/* an int64 buffer handed to Python as bytes, written in place */
static PyObject *int64s(Py_ssize_t n, int64_t **at) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out != NULL) *at = (int64_t *)PyBytes_AS_STRING(out);
    return out;
}

static PyObject *squeeze(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer raw, table;
    if (!PyArg_ParseTuple(args, "y*y*:squeeze", &raw, &table)) return NULL;
    PyObject *data = NULL, *tokens = NULL, *texts = NULL, *starts = NULL, *result = NULL;
    if (table.len != 256) {
        PyErr_SetString(PyExc_TypeError, "squeeze() takes a table of 256 bytes");
        goto done;
    }
    const unsigned char *s = (const unsigned char *)raw.buf, *tab = (const unsigned char *)table.buf;
    data = PyByteArray_FromStringAndSize(NULL, raw.len);
    if (data == NULL) goto done;
    unsigned char *w = (unsigned char *)PyByteArray_AS_STRING(data);
    /* pass 1, without a branch per byte: translate, and keep a byte of a word or the first space after
       one (counted: each ends a token) */
    Py_ssize_t m = 0, nuls = 0, spaces = 0;
    int after_word = 0;
    for (Py_ssize_t i = 0; i < raw.len; i++) {
        unsigned char c = tab[s[i]];
        int word = c != ' ';
        w[m] = c;
        m += word | after_word;
        spaces += (word ^ 1) & after_word;
        after_word = word;
        nuls += c == 0;
    }
    if (PyByteArray_Resize(data, m) < 0) goto done;
    w = (unsigned char *)PyByteArray_AS_STRING(data);
    /* pass 2, from space to space: one past each space (a token's end), two past each NUL, and the
       tokens before each NUL */
    int64_t *tok, *txt, *st;
    if ((tokens = int64s(spaces + 1, &tok)) == NULL || (texts = int64s(nuls + 1, &txt)) == NULL ||
        (starts = int64s(nuls + 1, &st)) == NULL)
        goto done;
    tok[0] = txt[0] = st[0] = 0;
    Py_ssize_t k = 1, t = 1, i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= m; i += 8) { /* 8 bytes at a time: the spaces and NULs among them, in order */
        uint64_t x;
        memcpy(&x, w + i, 8);
        uint64_t marks = zero_bytes(x ^ (ONES * ' ')) | zero_bytes(x);
        for (; marks; marks &= marks - 1) {
            Py_ssize_t p = i + (__builtin_ctzll(marks) >> 3);
            if (w[p] == ' ') {
                tok[k++] = p + 1;
            } else {
                txt[t] = p + 2;
                st[t++] = k;
            }
        }
    }
#endif
    for (; i < m; i++) {
        if (w[i] == ' ') {
            tok[k++] = i + 1;
        } else if (w[i] == 0) {
            txt[t] = i + 2;
            st[t++] = k;
        }
    }
    result = PyTuple_Pack(4, data, tokens, texts, starts);
done:
    Py_XDECREF(data);
    Py_XDECREF(tokens);
    Py_XDECREF(texts);
    Py_XDECREF(starts);
    PyBuffer_Release(&raw);
    PyBuffer_Release(&table);
    return result;
}

/* XXH64 (seed 0), as the xxhash package's xxh64_intdigest computes it: the hash of every token */
#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t read64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t read32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t xround(uint64_t acc, uint64_t input) { return rotl64(acc + input * P2, 31) * P1; }
static inline uint64_t xmerge(uint64_t acc, uint64_t val) { return (acc ^ xround(0, val)) * P1 + P4; }

static uint64_t xxh64(const unsigned char *p, size_t len) {
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = (uint64_t)0 - P1;
        const unsigned char *limit = end - 32;
        do {
            v1 = xround(v1, read64(p));
            v2 = xround(v2, read64(p + 8));
            v3 = xround(v3, read64(p + 16));
            v4 = xround(v4, read64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xmerge(h, v1);
        h = xmerge(h, v2);
        h = xmerge(h, v3);
        h = xmerge(h, v4);
    } else {
        h = P5;
    }
    h += (uint64_t)len;
    while (p + 8 <= end) {
        h ^= xround(0, read64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (p + 4 <= end) {
        h ^= (uint64_t)read32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (*p) * P5;
        h = rotl64(h, 11) * P1;
        p++;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

#define SHORT_CACHE_BITS 12

static PyObject *token_hashes(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data, offsets;
    if (!PyArg_ParseTuple(args, "y*y*:token_hashes", &data, &offsets)) return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = offsets.len / (Py_ssize_t)sizeof(int64_t) - 1;
    const int64_t *off = (const int64_t *)offsets.buf;
    const unsigned char *d = (const unsigned char *)data.buf;
    if (offsets.len % (Py_ssize_t)sizeof(int64_t) || n < 0) {
        PyErr_SetString(PyExc_TypeError, "token_hashes() takes int64 offsets, at least one");
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (off[j] < 0 || off[j + 1] <= off[j] || off[j + 1] > data.len) {
            PyErr_SetString(PyExc_ValueError, "token_hashes(): offsets out of order or past the data");
            goto done;
        }
    }
    out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint64_t));
    if (out == NULL) goto done;
    uint64_t *h = (uint64_t *)PyBytes_AS_STRING(out);
    /* a token of 1 to 8 bytes is looked up by its bytes in a small cache of the last hashes
       (most words of a text are words it held before): its hash is xxh64 of those bytes all the same.
       The cache has 16 entries for a few tokens, up to 2 ** SHORT_CACHE_BITS for many */
    int bits = 4;
    while (bits < SHORT_CACHE_BITS && ((Py_ssize_t)1 << bits) < n) bits++;
    struct { uint64_t word, hash, len; } *cache = PyMem_Calloc((size_t)1 << bits, sizeof(*cache));
    if (cache == NULL) {
        PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        const unsigned char *p = d + off[j];
        uint64_t len = (uint64_t)(off[j + 1] - off[j] - 1);
        if (len - 1 >= 8) { /* empty, or over 8 bytes */
            h[j] = xxh64(p, (size_t)len);
            continue;
        }
        uint64_t word = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (off[j] + 8 <= data.len)
            word = read64(p) & (~(uint64_t)0 >> (64 - 8 * len)); /* the token's bytes, the rest zeros */
        else
#endif
            memcpy(&word, p, (size_t)len);
        size_t at = (size_t)(((word ^ len) * P1) >> (64 - bits));
        if (cache[at].len != len || cache[at].word != word) {
            cache[at].word = word;
            cache[at].len = len;
            cache[at].hash = xxh64(p, (size_t)len);
        }
        h[j] = cache[at].hash;
    }
    PyMem_Free(cache);
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    return out;
}

/* head_hits(data, offsets, heads, width): the j (int64s) of each offsets[j] (int64s) whose first `width`
   bytes of data (1 to 8, zeros past its end), read as a little-endian uint64, are one of heads (sorted
   uint64s). A bitmap of the heads' top hash bits turns nearly every offset away before a binary search */
static PyObject *head_hits(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data, offsets, heads;
    int width;
    if (!PyArg_ParseTuple(args, "y*y*y*i:head_hits", &data, &offsets, &heads, &width)) return NULL;
    PyObject *out = NULL;
    int64_t *found = NULL;
    uint64_t *bits = NULL;
    if (offsets.len % (Py_ssize_t)sizeof(int64_t) || heads.len % (Py_ssize_t)sizeof(uint64_t) || width < 1 ||
        width > 8) {
        PyErr_SetString(PyExc_TypeError, "head_hits() takes int64 offsets, uint64 heads and a width of 1 to 8");
        goto done;
    }
    const Py_ssize_t n = offsets.len / (Py_ssize_t)sizeof(int64_t), nh = heads.len / (Py_ssize_t)sizeof(uint64_t);
    const Py_ssize_t size = data.len;
    const int64_t *off = (const int64_t *)offsets.buf;
    const uint64_t *hd = (const uint64_t *)heads.buf;
    const unsigned char *d = (const unsigned char *)data.buf;
    const uint64_t mask = width == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * width)) - 1);
    bits = PyMem_Calloc(1024, sizeof(uint64_t)); /* 65536 bits: the top 16 bits of head * P1 */
    Py_ssize_t cap = 256, m = 0;
    found = PyMem_Malloc((size_t)cap * sizeof(int64_t));
    if (bits == NULL || found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nh; i++) {
        uint64_t k = (hd[i] * P1) >> 48;
        bits[k >> 6] |= (uint64_t)1 << (k & 63);
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        const int64_t o = off[j];
        if (o < 0 || o >= size) continue;
        uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (o + 8 <= size)
            w = read64(d + o);
        else
#endif
            for (Py_ssize_t b = 0; b < 8 && o + b < size; b++) w |= (uint64_t)d[o + b] << (8 * b);
        w &= mask;
        const uint64_t k = (w * P1) >> 48;
        if (!((bits[k >> 6] >> (k & 63)) & 1)) continue;
        Py_ssize_t lo = 0, hi = nh;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (hd[mid] < w) lo = mid + 1;
            else hi = mid;
        }
        if (lo == nh || hd[lo] != w) continue;
        if (m == cap) {
            int64_t *more = PyMem_Realloc(found, (size_t)(cap *= 2) * sizeof(int64_t));
            if (more == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            found = more;
        }
        found[m++] = j;
    }
    out = PyBytes_FromStringAndSize((const char *)found, m * (Py_ssize_t)sizeof(int64_t));
done:
    PyMem_Free(found);
    PyMem_Free(bits);
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&heads);
    return out;
}

/* lookup(hashes, keys): for each of hashes (uint64), 1 + the index of its first copy in keys, or 0 */
struct slot {
    uint64_t key;
    int64_t id; /* 0: an empty slot */
};

static PyObject *lookup(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer hb, kb;
    if (!PyArg_ParseTuple(args, "y*y*:lookup", &hb, &kb)) return NULL;
    PyObject *out = NULL;
    struct slot *table = NULL;
    if (hb.len % 8 || kb.len % 8) {
        PyErr_SetString(PyExc_TypeError, "lookup() takes uint64 buffers");
        goto done;
    }
    Py_ssize_t n = hb.len / 8, nk = kb.len / 8;
    const uint64_t *hs = (const uint64_t *)hb.buf, *ks = (const uint64_t *)kb.buf;
    /* a key and its id side by side (one cache line a probe), at most a quarter full (few probes for
       the many hashes not there); sized by the distinct keys, not all of them: grown whenever a
       quarter full (a string's 300,000 words hold some 15,000 distinct ones, whose table stays in cache) */
    size_t size = 64, used = 0;
    table = PyMem_Calloc(size, sizeof(struct slot));
    if (table == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    size_t mask = size - 1;
    for (Py_ssize_t k = 0; k < nk; k++) {
        size_t s = (size_t)(ks[k] * P1 >> 17) & mask;
        while (table[s].id && table[s].key != ks[k]) s = (s + 1) & mask;
        if (table[s].id) continue;
        table[s].key = ks[k];
        table[s].id = k + 1;
        if (4 * ++used <= size) continue;
        size_t grown = 4 * size, gmask = grown - 1;
        struct slot *bigger = PyMem_Calloc(grown, sizeof(struct slot));
        if (bigger == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (size_t t = 0; t < size; t++) {
            if (!table[t].id) continue;
            size_t g = (size_t)(table[t].key * P1 >> 17) & gmask;
            while (bigger[g].id) g = (g + 1) & gmask;
            bigger[g] = table[t];
        }
        PyMem_Free(table);
        table = bigger;
        size = grown;
        mask = gmask;
    }
    out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) goto done;
    int64_t *w = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t j = 0; j < n; j++) {
        const uint64_t h = hs[j];
        size_t s = (size_t)(h * P1 >> 17) & mask;
        while (table[s].id && table[s].key != h) s = (s + 1) & mask;
        w[j] = table[s].id;
    }
done:
    PyMem_Free(table);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&kb);
    return out;
}

/* out.append((start, end)): 0, or -1 with an exception set */
static int append_span(PyObject *out, Py_ssize_t start, Py_ssize_t end) {
    PyObject *span = Py_BuildValue("(nn)", start, end);
    if (span == NULL) return -1;
    int r = PyList_Append(out, span);
    Py_DECREF(span);
    return r;
}

/* 0 when arg is a str ready to read, else -1 with TypeError naming the function fn */
static int str_arg(PyObject *arg, const char *fn) {
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s() takes str, not %.100s", fn, Py_TYPE(arg)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(arg) < 0) return -1;
#endif
    return 0;
}

/* slow_lines(text): the lines of a str that not_plain would name on their own (a hyphen ends no line) */
static unsigned char slow_ascii[128];

static PyObject *slow_lines(PyObject *Py_UNUSED(self), PyObject *arg) {
    if (str_arg(arg, "slow_lines") < 0) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), line = 0;
    int kind = PyUnicode_KIND(arg), slow = 0;
    const void *data = PyUnicode_DATA(arg);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i <= n; i++) {
        Py_UCS4 c = i < n ? PyUnicode_READ(kind, data, i) : '\n';
        if (c == '\n') {
            if (slow && append_span(out, line, i) < 0) {
                Py_DECREF(out);
                return NULL;
            }
            line = i + 1;
            slow = 0;
        } else if (c >= 0x80 || slow_ascii[c]) {
            slow = 1;
        }
    }
    return out;
}

/* first_in(text, ranges): where a str first holds a code point of sorted, disjoint inclusive ranges */
static PyObject *first_in(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text;
    Py_buffer rb;
    if (!PyArg_ParseTuple(args, "Uy*", &text, &rb)) return NULL;
    if (rb.len % 8) {
        PyBuffer_Release(&rb);
        PyErr_SetString(PyExc_TypeError, "first_in() takes ranges as uint32 pairs");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        PyBuffer_Release(&rb);
        return NULL;
    }
#endif
    Py_ssize_t nr = rb.len / 8, n = PyUnicode_GET_LENGTH(text), found = -1;
    const uint32_t *r = (const uint32_t *)rb.buf;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (nr > 0 && !(PyUnicode_IS_ASCII(text) && r[0] > 0x7f)) {
        Py_UCS4 low = r[0], high = r[2 * nr - 1];
        for (Py_ssize_t i = 0; i < n && found < 0; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < low || c > high) continue;
            Py_ssize_t a = 0, b = nr; /* the first range whose end is >= c */
            while (a < b) {
                Py_ssize_t m = (a + b) / 2;
                if (r[2 * m + 1] < c) a = m + 1; else b = m;
            }
            if (a < nr && r[2 * a] <= c) found = i;
        }
    }
    PyBuffer_Release(&rb);
    return PyLong_FromSsize_t(found);
}

/* char_set(text): set(text), marking each code point seen in a bitmap (code points past U+FFFF, few
 * in any text, are added one by one) and making one str per distinct character, not one per character */
static PyObject *char_set(PyObject *Py_UNUSED(self), PyObject *text) {
    if (str_arg(text, "char_set") < 0) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *out = PySet_New(NULL);
    if (out == NULL) return NULL;
    uint64_t *seen = calloc(kind == PyUnicode_1BYTE_KIND ? 4 : 1024, sizeof(uint64_t)); /* 256 or 65,536 bits */
    if (seen == NULL) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    Py_UCS4 top = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c > 0xFFFF) {
            PyObject *ch = PyUnicode_FromOrdinal((int)c);
            if (ch == NULL || PySet_Add(out, ch) < 0) {
                Py_XDECREF(ch);
                goto fail;
            }
            Py_DECREF(ch);
            continue;
        }
        seen[c >> 6] |= (uint64_t)1 << (c & 63);
        if (c > top) top = c;
    }
    for (Py_UCS4 w = 0; n > 0 && w <= (top >> 6); w++) {
        for (uint64_t bits = seen[w]; bits; bits &= bits - 1) {
            PyObject *ch = PyUnicode_FromOrdinal((int)(w * 64 + (Py_UCS4)__builtin_ctzll(bits)));
            if (ch == NULL || PySet_Add(out, ch) < 0) {
                Py_XDECREF(ch);
                goto fail;
            }
            Py_DECREF(ch);
        }
    }
    free(seen);
    return out;
fail:
    free(seen);
    Py_DECREF(out);
    return NULL;
}

/* line_runs(text, most): the runs of lines a text past ASCII is normalized in (see _batchpy.line_runs) */
static PyObject *line_runs(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text;
    Py_ssize_t most;
    if (!PyArg_ParseTuple(args, "Un:line_runs", &text, &most) || str_arg(text, "line_runs") < 0) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), line = 0, run_start = -1, run_end = -1;
    int kind = PyUnicode_KIND(text), past = 0, blank = 1, gap_blank = 1;
    const void *data = PyUnicode_DATA(text);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i <= n; i++) {
        Py_UCS4 c = i < n ? PyUnicode_READ(kind, data, i) : '\n';
        if (c != '\n') {
            if (c == 0 || c >= 0x80) past = 1;
            if (c >= 0x80 || !whitespace[c]) blank = 0;
            continue;
        }
        if (past) { /* a line to normalize: joins the run across blank lines, or starts one */
            if (run_start >= 0 && gap_blank && i - run_start <= most) {
                run_end = i;
            } else {
                if (run_start >= 0 && append_span(out, run_start, run_end) < 0) goto fail;
                run_start = line;
                run_end = i;
            }
            gap_blank = 1;
        } else if (!blank) {
            gap_blank = 0;
        }
        line = i + 1;
        past = 0;
        blank = 1;
    }
    if (run_start >= 0 && append_span(out, run_start, run_end) < 0) goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* blank_lines(text): how many lines of a str (split at \n) hold only whitespace (str.isspace) */
static PyObject *blank_lines(PyObject *Py_UNUSED(self), PyObject *text) {
    if (str_arg(text, "blank_lines") < 0) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), count = 0;
    int kind = PyUnicode_KIND(text), blank = 1;
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i <= n; i++) {
        Py_UCS4 c = i < n ? PyUnicode_READ(kind, data, i) : '\n';
        if (c == '\n') {
            count += blank;
            blank = 1;
        } else if (blank && !(c < 0x80 ? whitespace[c] : Py_UNICODE_ISSPACE(c))) {
            blank = 0;
        }
    }
    return PyLong_FromSsize_t(count);
}

/* line_tokens(raw, table): the exact tier's line units of plain texts, read in one pass */
static PyObject *line_tokens(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer raw, table;
    if (!PyArg_ParseTuple(args, "y*y*:line_tokens", &raw, &table)) return NULL;
    PyObject *counts = NULL, *marks = NULL, *breaks = NULL, *result = NULL;
    if (table.len != 256) {
        PyErr_SetString(PyExc_TypeError, "line_tokens() takes a table of 256 bytes");
        goto done;
    }
    const unsigned char *s = (const unsigned char *)raw.buf, *tab = (const unsigned char *)table.buf;
    Py_ssize_t lines = 1;
    for (const unsigned char *p = s, *end = s + raw.len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lines++;
    int64_t *cnt, *nl;
    if ((counts = int64s(lines, &cnt)) == NULL || (breaks = int64s(lines - 1, &nl)) == NULL) goto done;
    marks = PyBytes_FromStringAndSize(NULL, lines);
    if (marks == NULL) goto done;
    unsigned char *mk = (unsigned char *)PyBytes_AS_STRING(marks);
    /* each byte's class in one table: 1 a word's byte (not translated to a space), 2 no ASCII whitespace */
    unsigned char cls[256];
    for (int b = 0; b < 256; b++) cls[b] = (unsigned char)((tab[b] != ' ') | (!whitespace[b] << 1));
    Py_ssize_t line = 0;
    int64_t tokens = 0;
    int after_word = 0, held = 0;
    for (Py_ssize_t i = 0; i < raw.len; i++) {
        unsigned char b = s[i];
        if (b == '\n') {
            cnt[line] = tokens;
            mk[line] = (unsigned char)(held >> 1);
            nl[line++] = i;
            tokens = held = after_word = 0;
            continue;
        }
        int c = cls[b], word = c & 1;
        tokens += word & ~after_word;
        after_word = word;
        held |= c & 2;
    }
    cnt[line] = tokens;
    mk[line] = (unsigned char)(held >> 1);
    result = PyTuple_Pack(3, counts, marks, breaks);
done:
    Py_XDECREF(counts);
    Py_XDECREF(marks);
    Py_XDECREF(breaks);
    PyBuffer_Release(&raw);
    PyBuffer_Release(&table);
    return result;
}

/* distinct_runs: each run sorted by a bucket pass on its top bits (hashes are uniform: about one
 * value per bucket), then an insertion sort of each bucket; a crowded bucket (a word repeated in a
 * text, or values that are no hashes) is skipped when it holds one value, else sorted by qsort.
 * Then equal neighbours dropped. */
#define RUN_BUCKET_BITS 16
#define CROWDED 32

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void sort_bucket(uint64_t *a, Py_ssize_t n) {
    if (n > CROWDED) {
        Py_ssize_t i = 1;
        while (i < n && a[i] == a[0]) i++;
        if (i < n) qsort(a, (size_t)n, sizeof(uint64_t), cmp_u64);
        return;
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        Py_ssize_t j = i;
        for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

static Py_ssize_t sorted_distinct(const uint64_t *in, Py_ssize_t n, uint64_t *out, Py_ssize_t *counts) {
    if (n == 0) return 0;
    uint64_t lo = in[0], hi = in[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        if (in[i] < lo) lo = in[i];
        if (in[i] > hi) hi = in[i];
    }
    if (lo == hi) {
        out[0] = lo;
        return 1;
    }
    int width = 64 - __builtin_clzll(hi - lo), bits = 1;
    while (bits < RUN_BUCKET_BITS && ((Py_ssize_t)1 << bits) < n) bits++;
    int shift = width > bits ? width - bits : 0;
    Py_ssize_t buckets = (Py_ssize_t)1 << bits;
    memset(counts, 0, (size_t)(buckets + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n; i++) counts[((in[i] - lo) >> shift) + 1]++;
    for (Py_ssize_t b = 1; b <= buckets; b++) counts[b] += counts[b - 1];
    for (Py_ssize_t i = 0; i < n; i++) out[counts[(in[i] - lo) >> shift]++] = in[i];
    Py_ssize_t begin = 0; /* counts[b] is now where bucket b ends */
    for (Py_ssize_t b = 0; b < buckets; b++) {
        if (counts[b] - begin > 1) sort_bucket(out + begin, counts[b] - begin);
        begin = counts[b];
    }
    Py_ssize_t m = 1;
    for (Py_ssize_t i = 1; i < n; i++)
        if (out[i] != out[m - 1]) out[m++] = out[i];
    return m;
}

static PyObject *distinct_runs(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer vb, sb, lb;
    if (!PyArg_ParseTuple(args, "y*y*y*:distinct_runs", &vb, &sb, &lb)) return NULL;
    PyObject *out = NULL, *offsets = NULL, *result = NULL;
    Py_ssize_t *counts = NULL;
    if (vb.len % 8 || sb.len % 8 || sb.len != lb.len) {
        PyErr_SetString(PyExc_TypeError, "distinct_runs() takes uint64 values and as many int64 starts as lengths");
        goto done;
    }
    Py_ssize_t nv = vb.len / 8, runs = sb.len / 8, total = 0;
    const uint64_t *values = (const uint64_t *)vb.buf;
    const int64_t *starts = (const int64_t *)sb.buf, *lengths = (const int64_t *)lb.buf;
    for (Py_ssize_t r = 0; r < runs; r++) {
        if (starts[r] < 0 || lengths[r] < 0 || starts[r] > nv - lengths[r]) {
            PyErr_SetString(PyExc_ValueError, "distinct_runs(): a run past the values");
            goto done;
        }
        total += (Py_ssize_t)lengths[r];
    }
    counts = PyMem_Malloc(((1 << RUN_BUCKET_BITS) + 1) * sizeof(Py_ssize_t));
    out = PyByteArray_FromStringAndSize(NULL, total * 8);
    int64_t *offs;
    offsets = int64s(runs + 1, &offs);
    if (counts == NULL || out == NULL || offsets == NULL) {
        if (counts == NULL) PyErr_NoMemory();
        goto done;
    }
    uint64_t *w = (uint64_t *)PyByteArray_AS_STRING(out);
    Py_ssize_t at = 0;
    offs[0] = 0;
    for (Py_ssize_t r = 0; r < runs; r++) {
        at += sorted_distinct(values + starts[r], (Py_ssize_t)lengths[r], w + at, counts);
        offs[r + 1] = at;
    }
    if (PyByteArray_Resize(out, at * 8) < 0) goto done;
    result = PyTuple_Pack(2, out, offsets);
done:
    Py_XDECREF(out);
    Py_XDECREF(offsets);
    PyMem_Free(counts);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&lb);
    return result;
}

static PyMethodDef methods[] = {
    {"not_plain", not_plain, METH_O, "Indexes of the texts that are not plain ASCII (see _batchpy.not_plain)."},
    {"join", join, METH_O, "Each piece followed by the separator (see _batchpy.join)."},
    {"camel_runs", camel_runs, METH_VARARGS, "Candidate camel-cased runs (see _batchpy.camel_runs)."},
    {"squeeze", squeeze, METH_VARARGS, "Translate, squeeze spaces, offsets (see _batchpy.squeeze)."},
    {"token_hashes", token_hashes, METH_VARARGS, "xxh64 of every token (see _batchpy.token_hashes)."},
    {"head_hits", head_hits, METH_VARARGS, "The offsets whose first bytes are one of heads (see _batchpy.head_hits)."},
    {"lookup", lookup, METH_VARARGS, "Index + 1 of each hash among keys, or 0 (see _batchpy.lookup)."},
    {"slow_lines", slow_lines, METH_O, "The lines of a text that are not plain on their own (see _batchpy.slow_lines)."},
    {"line_tokens", line_tokens, METH_VARARGS, "Tokens, a mark and the break of each line (see _batchpy.line_tokens)."},
    {"first_in", first_in, METH_VARARGS, "Index of the first character in the ranges, or -1 (see _batchpy.first_in)."},
    {"char_set", char_set, METH_O, "The distinct characters of a str (see _batchpy.char_set)."},
    {"line_runs", line_runs, METH_VARARGS, "Runs of lines past ASCII (see _batchpy.line_runs)."},
    {"blank_lines", blank_lines, METH_O, "Lines holding only whitespace (see _batchpy.blank_lines)."},
    {"distinct_runs", distinct_runs, METH_VARARGS, "Sorted distinct values of each run (see _batchpy.distinct_runs)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_batchc", "The byte loops of a TokenBatch in C.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__batchc(void) {
    const char *sp = "&<%\x1b-";
    for (; *sp; sp++) special[(unsigned char)*sp] = 1;
    special[0] = 1;
    const char *ws = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f";
    for (; *ws; ws++) whitespace[(unsigned char)*ws] = 1;
    const char *sl = "&<%\x1b";
    for (; *sl; sl++) slow_ascii[(unsigned char)*sl] = 1;
    slow_ascii[0] = 1;
    return PyModule_Create(&module);
}
