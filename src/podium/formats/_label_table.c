/* podium.formats._label_table: a table of class labels checked and parsed whole, in C.
 *
 * The compiled twin of podium/formats/label_tokens.py: it takes exactly the files label_tokens takes
 * (an optional UTF-8 BOM, then lines of `width` labels, one space between them and one after them on every
 * line or on none, a line feed after each line, the last one optional, no blank line, every label one of
 * 1..classes written canonically: no sign, no leading zero) and gives their labels as native 16-bit
 * integers; any other file gives None, and the readers that name every problem read it. Plain C API and
 * the buffer protocol; the scan runs with the GIL released and reads no byte outside the buffer.
 */
#include "../_extension.h"
#include <stdint.h>
#include <string.h>

/* The label that starts at data[at] (a run of digits, at most `digits` of them, the first one 1..9, its value at most
 * `classes`) into *value; the position after it, or -1 when there is no such label there. */
static inline Py_ssize_t
label_at(const unsigned char *data, Py_ssize_t size, Py_ssize_t at, int digits, unsigned long classes,
         unsigned long *value)
{
    if (size - at > digits) { /* the label's digits and the byte after them are inside: no bound to check a byte */
        const unsigned char *label = data + at;
        unsigned int digit = (unsigned int)label[0] - '0';
        if (digit - 1 > 8)
            return -1; /* a label starts with 1..9: no sign, no leading zero, no label 0 */
        unsigned long number = digit;
        int length = 1;
        while ((digit = (unsigned int)label[length] - '0') <= 9) {
            number = number * 10 + digit;
            if (++length > digits)
                return -1; /* more digits than the largest label's */
        }
        if (number > classes)
            return -1;
        *value = number;
        return at + length;
    }
    if (at >= size || data[at] < '1' || data[at] > '9')
        return -1; /* a label starts with 1..9: no sign, no leading zero, no label 0 */
    unsigned long number = 0;
    while (at < size && data[at] >= '0' && data[at] <= '9') {
        number = number * 10 + (unsigned long)(data[at] - '0');
        if (number > classes)
            return -1; /* checked at every digit: the value never overflows */
        at++;
    }
    *value = number;
    return at;
}

/* The labels of data[0:size] into out (room for size / 2 + 1 labels: each takes a digit and a separator,
 * the last one may lack its separator); the count of labels, or -1 when the file is not clean. */
static Py_ssize_t
scan(const unsigned char *data, Py_ssize_t size, Py_ssize_t width, unsigned long classes, uint16_t *out)
{
    Py_ssize_t at = 0, count = 0;
    int trailing = -1; /* one space after the last label of a line: unknown until the first line ends */
    int digits = 1;
    for (unsigned long largest = classes; largest >= 10; largest /= 10)
        digits++;
    if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF)
        at = 3;
    if (at == size)
        return -1; /* no line */
    while (at < size) {
        for (Py_ssize_t column = 0; column < width; column++) {
            if (column > 0) {
                if (at >= size || data[at] != ' ')
                    return -1;
                at++;
            }
            unsigned long value;
            at = label_at(data, size, at, digits, classes, &value);
            if (at < 0)
                return -1;
            out[count++] = (uint16_t)value;
        }
        int space = at < size && data[at] == ' ';
        at += space;
        if (trailing < 0)
            trailing = space;
        else if (trailing != space)
            return -1; /* a space after every line's last label or after none */
        if (at < size) {
            if (data[at] != '\n')
                return -1;
            at++; /* the line feed; the next line starts after it, or the file ends */
        }
    }
    return count;
}

PyDoc_STRVAR(labels_doc,
             "labels(data, width, classes, /)\n--\n\n"
             "The labels of ``data`` (any bytes-like object) as native unsigned 16-bit integers, line after line\n"
             "(``width`` to a line), when the file has the clean shape of :mod:`podium.formats.label_tokens` and\n"
             "every label is one of 1..``classes`` written canonically; else ``None``.");

static PyObject *
labels(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t sizes[2];
    if (podium_arguments(args, nargs, 3, "labels() takes data, width and classes", 1, sizes) < 0)
        return NULL;
    Py_ssize_t width = sizes[0], classes = sizes[1];
    if (width < 1 || classes < 1 || classes > UINT16_MAX) {
        PyErr_SetString(PyExc_ValueError, "width must be at least 1 and classes within 1..65535");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *table = PyBytes_FromStringAndSize(NULL, (view.len / 2 + 1) * (Py_ssize_t)sizeof(uint16_t));
    if (table == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t count;
    Py_BEGIN_ALLOW_THREADS;
    count = scan((const unsigned char *)view.buf, view.len, width, (unsigned long)classes,
                 (uint16_t *)PyBytes_AS_STRING(table));
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&view);
    if (count < 0 || count % width) {
        Py_DECREF(table);
        Py_RETURN_NONE;
    }
    if (_PyBytes_Resize(&table, count * (Py_ssize_t)sizeof(uint16_t)) < 0)
        return NULL;
    return table;
}

PODIUM_MODULE(_label_table, "podium.formats._label_table",
              "Tables of class labels checked and parsed in C (podium.formats.label_tokens' compiled twin).",
              labels, labels_doc)
