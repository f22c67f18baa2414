/* What every C extension of podium declares alike: a module of functions and no state (most: one fast-call
 * function), which subinterpreters with their own GIL and free-threaded builds may load. Included by the extensions' sources
 * (pyproject.toml's ext-modules name it in their depends). */
#ifndef PODIUM_EXTENSION_H
#define PODIUM_EXTENSION_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

static struct PyModuleDef_Slot podium_slots[] = {
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_GIL_DISABLED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

/* The integer arguments args[first:] into sizes; -1 with TypeError `usage` unless there are `expected` arguments. */
static inline int
podium_arguments(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected, const char *usage, Py_ssize_t first,
                 Py_ssize_t *sizes)
{
    if (nargs != expected) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    for (Py_ssize_t i = first; i < nargs; i++) {
        sizes[i - first] = PyLong_AsSsize_t(args[i]);
        if (sizes[i - first] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* The module `qualified` (its file named `name`) holding the functions of `methods` (a PyMethodDef table), and its
 * PyInit. */
#define PODIUM_MODULE_OF(name, qualified, doc, methods)                                                              \
    static struct PyModuleDef podium_module = {                                                                      \
        PyModuleDef_HEAD_INIT,                                                                                       \
        .m_name = qualified,                                                                                         \
        .m_doc = doc,                                                                                                \
        .m_size = 0,                                                                                                 \
        .m_methods = methods,                                                                                        \
        .m_slots = podium_slots,                                                                                     \
    };                                                                                                               \
    PyMODINIT_FUNC PyInit_##name(void) { return PyModuleDef_Init(&podium_module); }

/* The module `qualified` (its file named `name`) holding `function` (a METH_FASTCALL function), and its PyInit. */
#define PODIUM_MODULE(name, qualified, doc, function, function_doc)                                                  \
    static PyMethodDef podium_methods[] = {                                                                          \
        {#function, (PyCFunction)(void (*)(void))function, METH_FASTCALL, function_doc},                             \
        {NULL, NULL, 0, NULL},                                                                                       \
    };                                                                                                               \
    PODIUM_MODULE_OF(name, qualified, doc, podium_methods)

#endif
