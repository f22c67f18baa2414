/* podium.formats._png_sums: PNG rows unfiltered, and a probability map's fuzzy-jaccard sums taken as
 * its rows are unfiltered, without writing the image to memory.
 *
 * Python hands over the inflated image data (each row: its filter byte, then its bytes; the reader in
 * podium/formats/png_stream.py parses the chunks, checks their CRCs and inflates the stream), so no
 * byte here comes from a file unchecked by Python, and every length is checked again here: a
 * buffer whose size does not match the declared rows is a ValueError, never a read or a write
 * outside it. The loops hold no Python object and run with the GIL released.
 *
 * The filters (PNG specification, section 9): with x a filtered byte, a the decoded byte `step` to
 * its left, b the one above and c the one above a (0 outside the image), the decoded byte is, modulo
 * 256: 0 None x; 1 Sub x + a; 2 Up x + b; 3 Average x + floor((a + b) / 2); 4 Paeth x + whichever of
 * a, b, c is nearest to a + b - c, in that order on ties.
 */
#include "../_extension.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Whichever of a, b, c is nearest to a + b - c, in that order on ties; branch-free. */
static inline int paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - c - c);
    int ab = (pb < pa) ? b : a;
    int pab = (pb < pa) ? pb : pa;
    return (pc < pab) ? c : ab;
}

/* One row of `stride` bytes: `line` (filtered) decoded into `row` against the row `up` above it.
 * Returns 0 if the filter type is not one of the five. */
static int unfilter_row(int kind, const uint8_t *restrict line, uint8_t *restrict row, const uint8_t *restrict up,
                        Py_ssize_t stride, Py_ssize_t step) {
    Py_ssize_t x;
    switch (kind) {
    case 0:
        memcpy(row, line, (size_t)stride);
        return 1;
    case 1:
        if (step == 1) { /* a running sum kept in a register, not read back from the row */
            uint8_t left = 0;
            for (x = 0; x < stride; x++) row[x] = left = (uint8_t)(line[x] + left);
            return 1;
        }
        for (x = 0; x < step; x++) row[x] = line[x];
        for (x = step; x < stride; x++) row[x] = (uint8_t)(line[x] + row[x - step]);
        return 1;
    case 2:
        for (x = 0; x < stride; x++) row[x] = (uint8_t)(line[x] + up[x]);
        return 1;
    case 3:
        for (x = 0; x < step; x++) row[x] = (uint8_t)(line[x] + (up[x] >> 1));
        for (x = step; x < stride; x++) row[x] = (uint8_t)(line[x] + ((row[x - step] + up[x]) >> 1));
        return 1;
    case 4:
        if (step == 1) { /* a and c kept in registers: the chain through a is the whole cost */
            int a = 0, c = 0;
            for (x = 0; x < stride; x++) {
                int b = up[x];
                a = (uint8_t)(line[x] + paeth(a, b, c));
                row[x] = (uint8_t)a;
                c = b;
            }
            return 1;
        }
        for (x = 0; x < step; x++) row[x] = (uint8_t)(line[x] + up[x]); /* a = c = 0: the nearest is b */
        for (x = step; x < stride; x++) row[x] = (uint8_t)(line[x] + paeth(row[x - step], up[x], up[x - step]));
        return 1;
    default:
        return 0;
    }
}

/* 8-bit rows (one byte a pixel) sixteen at a time, with SSE2 (every x86-64 processor has it).
 *
 * A decoded byte depends only on the byte to its left and the two above it, so row k of a block can
 * be decoded at column t - k while its first row is at column t: sixteen rows advance together along
 * that diagonal, one per byte of a vector. At each step, the bytes to the left are the last step's
 * vector; the bytes above are the last step's vector moved down one lane, the first lane taking the
 * byte of the row above the block; and the bytes above-left are what was above one step earlier.
 * Paeth's chain through the byte to its left bounds a row decoded alone (libpng's way, and
 * unfilter_row's) at one byte per chain; here a chain gives sixteen. The rows' bytes are turned into
 * diagonals, and back, by 16x16 transposes of tiles loaded and stored one byte further left per row.
 * Every lane takes its own row's filter type, so any mix of the five filters goes this way. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define LANES 16
#define PAD 16                                /* zero bytes before each row of a block: its columns -16..-1 */
#define MAX_BLOCK_WIDTH ((Py_ssize_t)1 << 18) /* wider rows take unfilter_row: a block stays a few MB */

/* The 16x16 bytes of r transposed in place: byte k of r[j] becomes byte j of r[k]. */
static inline void transpose16(__m128i r[LANES]) {
    __m128i t[LANES];
    for (int stage = 0; stage < 4; stage++) {
        for (int i = 0; i < 8; i++) {
            t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        memcpy(r, t, sizeof(t));
    }
}

/* |x - y| of unsigned bytes. */
static inline __m128i absdiff(__m128i x, __m128i y) { return _mm_or_si128(_mm_subs_epu8(x, y), _mm_subs_epu8(y, x)); }

/* x <= y of unsigned bytes, as 0xFF or 0. */
static inline __m128i less_equal(__m128i x, __m128i y) { return _mm_cmpeq_epi8(_mm_min_epu8(x, y), x); }

/* where mask: x, else y. */
static inline __m128i choose(__m128i mask, __m128i x, __m128i y) {
    return _mm_or_si128(_mm_and_si128(mask, x), _mm_andnot_si128(mask, y));
}

/* paeth() on sixteen bytes at once, in bytes: with pa = |b - c| and pb = |a - c|, a + b - 2c is
 * pa + pb when b - c and a - c have one sign (then never below either, so saturating at 255 keeps
 * every comparison) and |pa - pb| when they differ (a zero difference fits either case). */
static inline __m128i paeth16(__m128i a, __m128i b, __m128i c) {
    __m128i pa = absdiff(b, c), pb = absdiff(a, c);
    __m128i one_sign = _mm_cmpeq_epi8(less_equal(c, b), less_equal(c, a));
    __m128i pc = choose(one_sign, _mm_adds_epu8(pa, pb), absdiff(pa, pb));
    __m128i take_a = _mm_and_si128(less_equal(pa, pb), less_equal(pa, pc));
    __m128i take_b = less_equal(pb, pc);
    return choose(take_a, a, choose(take_b, b, c));
}

/* A block's scratch: its filtered rows and its decoded rows, each `pitch` bytes with PAD zeros first,
 * and the decoded row above the block, the same way. */
typedef struct {
    Py_ssize_t width, pitch;
    uint8_t *filtered, *decoded, *above;
} Block;

static int block_open(Block *block, Py_ssize_t width) {
    block->width = width;
    block->pitch = PAD + (width + 2 * LANES + 15) / 16 * 16; /* the last tile reaches column width + 30 */
    block->filtered = calloc((size_t)(2 * LANES + 1), (size_t)block->pitch);
    block->decoded = block->filtered ? block->filtered + LANES * block->pitch : NULL;
    block->above = block->filtered ? block->decoded + LANES * block->pitch : NULL;
    return block->filtered != NULL;
}

static void block_close(Block *block) { free(block->filtered); }

/* Decode rows y .. y + n - 1 (n <= LANES) of `raw` (rows of width + 1 bytes, filter byte first) into
 * block->decoded (row k at decoded + k * pitch + PAD), against block->above, which then holds row
 * y + n - 1. Returns 0 if a row's filter type is not one of the five. */
static int block_unfilter(Block *block, const uint8_t *raw, Py_ssize_t y, int n) {
    const Py_ssize_t width = block->width, pitch = block->pitch;
    uint8_t kinds[LANES] = {0};
    int chained = 0; /* a row of Average or Paeth: a chain of several operations a byte, which the diagonal shortens */
    for (int k = 0; k < n; k++) {
        kinds[k] = raw[(y + k) * (width + 1)];
        if (kinds[k] > 4) return 0;
        chained |= kinds[k] >= 3;
    }
    if (!chained) { /* None, Sub and Up run at memory speed a row at a time (label images: Sub) */
        for (int k = 0; k < n; k++)
            unfilter_row(kinds[k], raw + (y + k) * (width + 1) + 1, block->decoded + k * pitch + PAD,
                         k ? block->decoded + (k - 1) * pitch + PAD : block->above + PAD, width, 1);
        memcpy(block->above + PAD, block->decoded + (n - 1) * pitch + PAD, (size_t)width);
        return 1;
    }
    for (int k = 0; k < n; k++) memcpy(block->filtered + k * pitch + PAD, raw + (y + k) * (width + 1) + 1, (size_t)width);
    /* Lanes n..15 decode what their rows last held: nothing of theirs reaches a lane above. */
    const __m128i kind = _mm_loadu_si128((const __m128i *)kinds);
    const __m128i is_sub = _mm_cmpeq_epi8(kind, _mm_set1_epi8(1)), is_up = _mm_cmpeq_epi8(kind, _mm_set1_epi8(2));
    const __m128i is_average = _mm_cmpeq_epi8(kind, _mm_set1_epi8(3)), is_paeth = _mm_cmpeq_epi8(kind, _mm_set1_epi8(4));
    const __m128i one = _mm_set1_epi8(1);
    const uint8_t *above = block->above + PAD;
    __m128i left = _mm_setzero_si128(), up = _mm_setzero_si128(), tile[LANES];
    for (Py_ssize_t t0 = 0; t0 < width + LANES - 1; t0 += LANES) {
        for (int k = 0; k < LANES; k++)
            tile[k] = _mm_loadu_si128((const __m128i *)(block->filtered + k * pitch + PAD + t0 - k));
        transpose16(tile); /* tile[j]: lane k holds row k's column t0 + j - k */
        for (int j = 0; j < LANES; j++) {
            __m128i up_left = up;
            up = _mm_or_si128(_mm_slli_si128(left, 1), _mm_cvtsi32_si128(above[t0 + j]));
            __m128i average = _mm_sub_epi8(_mm_avg_epu8(left, up), _mm_and_si128(_mm_xor_si128(left, up), one));
            __m128i guess = _mm_or_si128(_mm_or_si128(_mm_and_si128(is_sub, left), _mm_and_si128(is_up, up)),
                                         _mm_or_si128(_mm_and_si128(is_average, average),
                                                      _mm_and_si128(is_paeth, paeth16(left, up, up_left))));
            left = _mm_add_epi8(tile[j], guess);
            tile[j] = left;
        }
        transpose16(tile); /* tile[k]: row k's columns t0 - k .. t0 - k + 15 */
        for (int k = 0; k < LANES; k++)
            _mm_storeu_si128((__m128i *)(block->decoded + k * pitch + PAD + t0 - k), tile[k]);
    }
    memcpy(block->above + PAD, block->decoded + (n - 1) * pitch + PAD, (size_t)width);
    return 1;
}
#endif

/* What is done with each decoded row, in order: row y's `stride` bytes, valid until the next call. */
typedef void (*RowSink)(void *context, const uint8_t *row, Py_ssize_t y);

/* Undo the filters of `raw` (height rows, each its filter type then `stride` bytes) and hand every
 * row to `sink` in order: sixteen rows at a time where they are single bytes and no wider than a
 * block, one at a time against the row above otherwise. Returns 1, 0 if a row's filter type is not
 * one of the five (the rows before it were handed over), or -1 if memory ran out. Takes no Python
 * object: runs without the GIL. */
static int decode_rows(const uint8_t *raw, Py_ssize_t height, Py_ssize_t stride, Py_ssize_t step, RowSink sink,
                       void *context) {
    Py_ssize_t y;
    int ok = 1;
#if defined(__SSE2__)
    if (step == 1 && stride <= MAX_BLOCK_WIDTH) {
        Block block;
        if (!block_open(&block, stride)) return -1;
        for (y = 0; y < height && ok; y += LANES) {
            int n = height - y < LANES ? (int)(height - y) : LANES;
            ok = block_unfilter(&block, raw, y, n);
            for (int k = 0; k < n && ok; k++) sink(context, block.decoded + k * block.pitch + PAD, y + k);
        }
        block_close(&block);
        return ok;
    }
#endif
    uint8_t *rows = calloc(2 * (size_t)stride, 1); /* the row above (zeros at first) and this row, in turn */
    if (rows == NULL) return -1;
    for (y = 0; y < height && ok; y++) {
        const uint8_t *line = raw + y * (stride + 1);
        uint8_t *row = rows + (y & 1) * stride, *up = rows + ((y + 1) & 1) * stride;
        ok = unfilter_row(line[0], line + 1, row, up, stride, step);
        if (ok) sink(context, row, y);
    }
    free(rows);
    return ok;
}

/* A buffer of the caller, released on every path. */
typedef struct {
    Py_buffer view;
    int held;
} Held;

static void release(Held *held) {
    if (held->held) PyBuffer_Release(&held->view);
    held->held = 0;
}

static int get_buffer(PyObject *object, Held *held, int writable, const char *what) {
    if (PyObject_GetBuffer(object, &held->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s buffer", what, writable ? " writable" : "");
        return 0;
    }
    held->held = 1;
    return 1;
}

/* The item size of an unsigned integer or boolean buffer (1 or 2), else 0. */
static int unsigned_itemsize(const Py_buffer *view) {
    const char *format = view->format ? view->format : "B";
    if (*format == '<' || *format == '=' || *format == '@') format++;
    if (strcmp(format, "B") == 0 || strcmp(format, "?") == 0) return view->itemsize == 1 ? 1 : 0;
    if (strcmp(format, "H") == 0) return view->itemsize == 2 ? 2 : 0;
    return 0;
}

/* unfilter's sink: row y copied into the image. */
typedef struct {
    uint8_t *image;
    Py_ssize_t stride;
} Copy;

static void copy_row(void *context, const uint8_t *row, Py_ssize_t y) {
    Copy *copy = context;
    memcpy(copy->image + y * copy->stride, row, (size_t)copy->stride);
}

PyDoc_STRVAR(unfilter_doc,
             "unfilter(raw, rows, stride, step) -> bool\n\n"
             "Undo the PNG filters of ``raw`` (each row: its filter type, then ``stride`` bytes) into the writable\n"
             "buffer ``rows`` (height * stride bytes); ``step`` is the bytes per pixel (1 to 8). False if a row's\n"
             "filter type is not 0 to 4 (``rows`` is then partly written). ValueError if the sizes do not match.");

static PyObject *unfilter(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *raw_object, *rows_object;
    Py_ssize_t stride, step;
    Held raw = {0}, rows = {0};
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "OOnn:unfilter", &raw_object, &rows_object, &stride, &step)) return NULL;
    if (!get_buffer(raw_object, &raw, 0, "raw") || !get_buffer(rows_object, &rows, 1, "rows")) goto done;
    if (stride < 1 || stride > PY_SSIZE_T_MAX / 4 || step < 1 || step > 8 || step > stride) {
        PyErr_SetString(PyExc_ValueError, "unfilter: stride must be at least step (and sizes fit memory), step 1 to 8");
        goto done;
    }
    if (rows.view.len % stride != 0 || rows.view.len / stride > PY_SSIZE_T_MAX / (stride + 1) ||
        raw.view.len != rows.view.len / stride * (stride + 1)) {
        PyErr_SetString(PyExc_ValueError, "unfilter: rows must hold height * stride bytes and raw height * (stride + 1)");
        goto done;
    }
    {
        Copy copy = {rows.view.buf, stride};
        int ok;
        Py_BEGIN_ALLOW_THREADS
        ok = decode_rows(raw.view.buf, rows.view.len / stride, stride, step, copy_row, &copy);
        Py_END_ALLOW_THREADS
        result = ok < 0 ? PyErr_NoMemory() : PyBool_FromLong(ok);
    }
done:
    release(&raw);
    release(&rows);
    return result;
}

/* The sums of one row: n += [t == value and r], in += p [t == value and r], roi += p [r]; largest = max p.
 * Columns are taken in chunks whose 32-bit sums cannot overflow (100 * 2^24 < 2^32 for values the
 * caller accepts; any byte, 255 * 2^24, also fits). */
#define CHUNK ((Py_ssize_t)1 << 24)

typedef struct {
    uint64_t n, in, roi;
    unsigned largest;
} Sums;

#define ROW_SUMS(NAME, T)                                                                                    \
    static void NAME(const uint8_t *restrict p, const T *restrict t, unsigned value, const uint8_t *restrict r, \
                     Py_ssize_t width, Sums *sums) {                                                         \
        for (Py_ssize_t at = 0; at < width; at += CHUNK) {                                                   \
            Py_ssize_t end = width - at < CHUNK ? width : at + CHUNK, x;                                     \
            uint32_t n = 0, in = 0, roi = 0;                                                                 \
            uint8_t largest = 0;                                                                             \
            if (r == NULL) {                                                                                 \
                for (x = at; x < end; x++) {                                                                 \
                    uint32_t hit = t[x] == value;                                                            \
                    n += hit;                                                                                \
                    in += p[x] * hit;                                                                        \
                    roi += p[x];                                                                             \
                    largest = p[x] > largest ? p[x] : largest;                                               \
                }                                                                                            \
            } else {                                                                                         \
                for (x = at; x < end; x++) {                                                                 \
                    uint32_t inside = r[x] != 0, hit = (t[x] == value) & inside;                             \
                    n += hit;                                                                                \
                    in += p[x] * hit;                                                                        \
                    roi += p[x] * inside;                                                                    \
                    largest = p[x] > largest ? p[x] : largest;                                               \
                }                                                                                            \
            }                                                                                                \
            sums->n += n;                                                                                    \
            sums->in += in;                                                                                  \
            sums->roi += roi;                                                                                \
            if (largest > sums->largest) sums->largest = largest;                                            \
        }                                                                                                    \
    }

ROW_SUMS(row_sums_8, uint8_t)
ROW_SUMS(row_sums_16, uint16_t)

/* class_sums' sink: the sums of the map's row y against the truth's and the ROI's row y. */
typedef struct {
    Sums sums;
    const void *truth;
    int itemsize;
    unsigned value;
    const uint8_t *roi; /* NULL: every pixel */
    Py_ssize_t width;
} Total;

static void add_row(void *context, const uint8_t *row, Py_ssize_t y) {
    Total *total = context;
    const uint8_t *r = total->roi ? total->roi + y * total->width : NULL;
    if (total->itemsize == 1)
        row_sums_8(row, (const uint8_t *)total->truth + y * total->width, total->value, r, total->width, &total->sums);
    else
        row_sums_16(row, (const uint16_t *)total->truth + y * total->width, total->value, r, total->width, &total->sums);
}

PyDoc_STRVAR(class_sums_doc,
             "class_sums(raw, width, truth, value, roi) -> (n, sum_in, sum_roi, largest) or None\n\n"
             "The fuzzy-jaccard sums of one 8-bit grayscale probability map given by its inflated rows ``raw``\n"
             "(each row: its filter type, then ``width`` bytes), decoded a row at a time and never written whole:\n"
             "the truth is ``truth == value`` (``truth`` a C-contiguous uint8, uint16 or bool buffer of height *\n"
             "width items) inside ``roi`` (a bool or uint8 buffer of height * width, nonzero = inside; None: every\n"
             "pixel); ``n`` counts its pixels, ``sum_in`` sums the map over them, ``sum_roi`` over the ROI, and\n"
             "``largest`` is the map's largest value. None if a row's filter type is not 0 to 4. ValueError if\n"
             "the sizes do not match.");

static PyObject *class_sums(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *raw_object, *truth_object, *roi_object;
    Py_ssize_t width;
    unsigned long value;
    Held raw = {0}, truth = {0}, roi = {0};
    PyObject *result = NULL;
    int itemsize;
    if (!PyArg_ParseTuple(args, "OnOkO:class_sums", &raw_object, &width, &truth_object, &value, &roi_object))
        return NULL;
    if (!get_buffer(raw_object, &raw, 0, "raw") || !get_buffer(truth_object, &truth, 0, "truth")) goto done;
    if (roi_object != Py_None && !get_buffer(roi_object, &roi, 0, "roi")) goto done;
    if (value > 0xFFFF) {
        PyErr_SetString(PyExc_ValueError, "class_sums: value must be 0 to 65535");
        goto done;
    }
    itemsize = unsigned_itemsize(&truth.view);
    if (itemsize == 0 || (roi.held && unsigned_itemsize(&roi.view) != 1)) {
        PyErr_SetString(PyExc_ValueError, "class_sums: truth must be uint8, uint16 or bool, roi bool or uint8");
        goto done;
    }
    if (width < 1 || width > PY_SSIZE_T_MAX / 4 || truth.view.len % ((Py_ssize_t)itemsize * width) != 0 ||
        truth.view.len / itemsize / width > PY_SSIZE_T_MAX / (width + 1) ||
        raw.view.len != truth.view.len / itemsize / width * (width + 1) ||
        (roi.held && roi.view.len != truth.view.len / itemsize)) {
        PyErr_SetString(PyExc_ValueError,
                        "class_sums: truth and roi must hold height * width items and raw height * (width + 1) bytes");
        goto done;
    }
    {
        Total total = {{0, 0, 0, 0}, truth.view.buf, itemsize, (unsigned)value, roi.held ? roi.view.buf : NULL, width};
        int ok;
        Py_BEGIN_ALLOW_THREADS
        ok = decode_rows(raw.view.buf, truth.view.len / itemsize / width, width, 1, add_row, &total);
        Py_END_ALLOW_THREADS
        if (ok < 0)
            result = PyErr_NoMemory();
        else if (ok == 0)
            result = Py_NewRef(Py_None);
        else
            result = Py_BuildValue("(KKKI)", (unsigned long long)total.sums.n, (unsigned long long)total.sums.in,
                                   (unsigned long long)total.sums.roi, total.sums.largest);
    }
done:
    release(&raw);
    release(&truth);
    release(&roi);
    return result;
}

static PyMethodDef methods[] = {
    {"unfilter", unfilter, METH_VARARGS, unfilter_doc},
    {"class_sums", class_sums, METH_VARARGS, class_sums_doc},
    {NULL, NULL, 0, NULL},
};

PODIUM_MODULE_OF(_png_sums, "podium.formats._png_sums",
                 "PNG rows unfiltered, and a probability map's fuzzy-jaccard sums taken as its rows are unfiltered.",
                 methods)
