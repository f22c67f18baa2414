/* podium.metrics._topk: the compiled kernel of podium.metrics.imagenet.label_errors.
 *
 * One truth label per image, k guesses per image (flat, image after image), both buffers of one integer
 * format: for each image, the first guess that names its label (k when none does), counted by rank. The
 * rule itself is label_errors' (its docstring); this is its loop at C speed, with the GIL released.
 * Plain C API and the buffer protocol; every index is checked against the buffers' lengths.
 */
#include "../_extension.h"
#include <stdint.h>
#include <string.h>

#define MAX_K 64

#if defined(__GNUC__)
#define LOWEST_BIT(bits) __builtin_ctzll(bits)
#else
static int
LOWEST_BIT(uint64_t bits)
{
    int at = 0;
    while (!(bits & 1)) {
        bits >>= 1;
        at++;
    }
    return at;
}
#endif

/* hits: bit j set when guess j of the row (row[0..k-1]) names the label; no branch an image for the processor to
 * mispredict. */
#define HITS(row, label, k, hits)                                                                        \
    do {                                                                                                 \
        (hits) = 0;                                                                                      \
        for (Py_ssize_t j = 0; j < (k); j++)                                                             \
            (hits) |= (uint64_t)((row)[j] == (label)) << j;                                              \
    } while (0)

/* found[j] += the images whose label guess j is the first to name (found[k]: none does); four histograms, so that
 * an image does not wait for the previous one's count to be stored. With k == 5 (the rule's), the guesses of an
 * image are compared unrolled and a sixth bit, always set, stands for none. */
#define COUNT(type)                                                                                      \
    static void count_##type(const void *truth_buffer, const void *guess_buffer, Py_ssize_t images,      \
                             Py_ssize_t k, Py_ssize_t *found)                                            \
    {                                                                                                    \
        const type *truth = (const type *)truth_buffer, *guesses = (const type *)guess_buffer;           \
        Py_ssize_t copies[4][MAX_K + 1] = {{0}};                                                         \
        uint64_t hits;                                                                                   \
        if (k == 5)                                                                                      \
            for (Py_ssize_t i = 0; i < images; i++) {                                                    \
                HITS(guesses + i * 5, truth[i], 5, hits);                                                \
                copies[i & 3][LOWEST_BIT(hits | 32)]++;                                                  \
            }                                                                                            \
        else                                                                                             \
            for (Py_ssize_t i = 0; i < images; i++) {                                                    \
                HITS(guesses + i * k, truth[i], k, hits);                                                \
                copies[i & 3][hits ? LOWEST_BIT(hits) : k]++;                                            \
            }                                                                                            \
        for (Py_ssize_t j = 0; j <= k; j++)                                                              \
            found[j] += copies[0][j] + copies[1][j] + copies[2][j] + copies[3][j];                       \
    }

COUNT(uint8_t)
COUNT(uint16_t)
COUNT(uint32_t)
COUNT(uint64_t)

typedef void (*Counter)(const void *, const void *, Py_ssize_t, Py_ssize_t, Py_ssize_t *);

/* Integer formats of the struct module's native mode: equal values are equal bytes of one width. */
static Counter
counter_of(const char *format, Py_ssize_t itemsize)
{
    if (format == NULL)
        format = "B";
    if (format[0] == '@' || format[0] == '=')
        format++;
    if (format[0] == '\0' || format[1] != '\0' || strchr("bBhHiIlLqQnN", format[0]) == NULL)
        return NULL;
    switch (itemsize) {
    case 1:
        return count_uint8_t;
    case 2:
        return count_uint16_t;
    case 4:
        return count_uint32_t;
    case 8:
        return count_uint64_t;
    }
    return NULL;
}

PyDoc_STRVAR(misses_doc,
             "misses(truth, guesses, k, /)\n--\n\n"
             "The images whose label none of the first 1..k guesses names, as a tuple of k counts: ``truth`` holds\n"
             "one label per image and ``guesses`` k per image, image after image, both C-contiguous buffers of one\n"
             "integer format (``memoryview.cast('H')``, ``array('H')``, a NumPy integer array); TypeError for any other buffer, ValueError\n"
             "when the lengths disagree.");

static PyObject *
misses(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t k;
    if (podium_arguments(args, nargs, 3, "misses() takes truth, guesses and k", 2, &k) < 0)
        return NULL;
    if (k < 1 || k > MAX_K) {
        PyErr_SetString(PyExc_ValueError, "k must be within 1..64");
        return NULL;
    }
    Py_buffer truth, guesses;
    /* any layout is asked for (a strided NumPy array refuses a contiguous request with ValueError), then
     * anything but a C-contiguous buffer is refused with TypeError, as a buffer of another format is */
    if (PyObject_GetBuffer(args[0], &truth, PyBUF_RECORDS_RO) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &guesses, PyBUF_RECORDS_RO) < 0) {
        PyBuffer_Release(&truth);
        return NULL;
    }
    PyObject *result = NULL;
    Counter count = counter_of(truth.format, truth.itemsize);
    const char *truth_format = truth.format ? truth.format : "B", *guess_format = guesses.format ? guesses.format : "B";
    if (count == NULL || strcmp(truth_format, guess_format) != 0 || truth.itemsize != guesses.itemsize ||
        !PyBuffer_IsContiguous(&truth, 'C') || !PyBuffer_IsContiguous(&guesses, 'C')) {
        PyErr_SetString(PyExc_TypeError, "truth and guesses must be C-contiguous buffers of one integer format");
        goto done;
    }
    if ((uintptr_t)truth.buf % (uintptr_t)truth.itemsize || (uintptr_t)guesses.buf % (uintptr_t)guesses.itemsize) {
        PyErr_SetString(PyExc_TypeError, "truth and guesses must be aligned buffers");
        goto done;
    }
    Py_ssize_t images = truth.len / truth.itemsize;
    if (guesses.len / guesses.itemsize != images * k) {
        PyErr_Format(PyExc_ValueError, "%zd guesses for %zd images: %zd per image", guesses.len / guesses.itemsize,
                     images, k);
        goto done;
    }
    Py_ssize_t found[MAX_K + 1];
    memset(found, 0, sizeof(found));
    Py_BEGIN_ALLOW_THREADS;
    count(truth.buf, guesses.buf, images, k, found);
    Py_END_ALLOW_THREADS;
    result = PyTuple_New(k);
    if (result == NULL)
        goto done;
    Py_ssize_t missed = images;
    for (Py_ssize_t j = 0; j < k; j++) {
        missed -= found[j];
        PyObject *value = PyLong_FromSsize_t(missed);
        if (value == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, j, value);
    }
done:
    PyBuffer_Release(&guesses);
    PyBuffer_Release(&truth);
    return result;
}

PODIUM_MODULE(_topk, "podium.metrics._topk",
              "The compiled kernel of podium.metrics.imagenet.label_errors: top-k misses counted in C.",
              misses, misses_doc)
