/* podium.accel._malloc: glibc's mmap and trim thresholds set without ctypes (podium.accel.allocator).
 *
 * ctypes costs a podium command about 2 ms of CPU to import, for one call to mallopt: this module makes that call.
 * Where the C library is not glibc, it sets nothing and says so.
 */
#include "../_extension.h"
#include <limits.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

PyDoc_STRVAR(thresholds_doc, "thresholds(mmap_bytes, trim_bytes, /)\n--\n\n"
                             "Set glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD (bytes, 0..INT_MAX); whether both were\n"
                             "set (False where the C library is not glibc).");

static PyObject *
thresholds(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t sizes[2];
    if (podium_arguments(args, nargs, 2, "thresholds() takes the mmap and trim thresholds in bytes", 0, sizes) < 0)
        return NULL;
    if (sizes[0] < 0 || sizes[0] > INT_MAX || sizes[1] < 0 || sizes[1] > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "the thresholds must be within 0..INT_MAX bytes");
        return NULL;
    }
#if defined(__GLIBC__)
    return PyBool_FromLong(mallopt(M_MMAP_THRESHOLD, (int)sizes[0]) && mallopt(M_TRIM_THRESHOLD, (int)sizes[1]));
#else
    Py_RETURN_FALSE;
#endif
}

PODIUM_MODULE(_malloc, "podium.accel._malloc", "glibc's allocator thresholds set without ctypes (podium.accel.allocator).",
              thresholds, thresholds_doc)
