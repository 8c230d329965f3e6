/* freeze's common case in C: a plain JSON value of exact dicts, lists and tuples.
 *
 * freeze_plain(value) -> a FrozenDict or FrozenList equal to what ptree.frozen.freeze
 * gives for ``value`` (an exact dict, list or tuple), or None when ``value`` holds
 * anything else: a key that is not an exact str, a value that is not an exact str,
 * int, bool, None, finite float, dict, list or tuple (a subclass, a frozen value, a set,
 * NaN, ...), or a container nested deeper than the limit.  freeze then takes its own
 * path from the start, which gives the same value or names the culprit: this module
 * never decides an error.
 *
 * The containers it makes hold only strings, numbers and containers like themselves,
 * so they can never be part of a reference cycle: each is untracked by the garbage
 * collector once made, as CPython untracks its own dicts and tuples of such values (a
 * FrozenDict changed through dict's own methods, against its promise, is tracked again
 * by dict itself).  The collector then never walks a frozen message.
 *
 * Iterative: containers are followed on a fixed array of at most MAX_DEPTH frames.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#include "_frozen_types.h"

#define MAX_FRAMES 128 /* >= ptree.frozen.MAX_DEPTH, checked by setup() */

static int max_depth = 0;

typedef struct {
    PyObject *source; /* the dict, list or tuple being copied (borrowed) */
    PyObject *out;    /* the FrozenDict or FrozenList being filled (owned) */
    PyObject *key;    /* the key of the child being frozen (borrowed) */
    Py_ssize_t pos;   /* PyDict_Next position, or the next index */
    int is_dict;
} Frame;

/* 1 for a value kept as it is, 2 for a container to copy, 0 for anything else. */
static int
kind_of(PyObject *v)
{
    if (PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyBool_Check(v) || v == Py_None) {
        return 1;
    }
    if (PyFloat_CheckExact(v)) return isfinite(PyFloat_AS_DOUBLE(v)) ? 1 : 0;
    if (PyDict_CheckExact(v) || PyList_CheckExact(v) || PyTuple_CheckExact(v)) return 2;
    return 0;
}

static int
open_frame(Frame *f, PyObject *source)
{
    f->source = source;
    f->key = NULL;
    f->pos = 0;
    f->is_dict = PyDict_CheckExact(source);
    if (f->is_dict) {
        f->out = PyDict_Type.tp_new(FrozenDictType, empty_tuple, NULL);
    }
    else {
        f->out = FrozenListType->tp_alloc(FrozenListType, PySequence_Fast_GET_SIZE(source));
    }
    return f->out == NULL ? -1 : 0;
}

/* Put ``value`` (borrowed) into the frame's container, at its key or next index. */
static int
put(Frame *f, PyObject *key, PyObject *value)
{
    if (f->is_dict) return PyDict_SetItem(f->out, key, value);
    PyTuple_SET_ITEM(f->out, f->pos - 1, Py_NewRef(value));
    return 0;
}

static PyObject *
freeze_plain(PyObject *module, PyObject *value)
{
    Frame stack[MAX_FRAMES];
    int depth = 0;
    PyObject *result = NULL;
    (void)module;
    if (FrozenDictType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree._cfrozen.setup was not called");
        return NULL;
    }
    if (!PyDict_CheckExact(value) && !PyList_CheckExact(value) && !PyTuple_CheckExact(value)) {
        Py_RETURN_NONE;
    }
    if (open_frame(&stack[depth++], value) < 0) goto fail;
    while (depth > 0) {
        Frame *f = &stack[depth - 1];
        PyObject *key = NULL, *item;
        int kind;
        if (f->is_dict) {
            /* A dict changed meanwhile (only Python code could, and none runs here)
             * would make PyDict_Next stop early: the sizes are compared at the end. */
            if (!PyDict_Next(f->source, &f->pos, &key, &item)) item = NULL;
            else if (!PyUnicode_CheckExact(key)) goto other;
        }
        else {
            if (f->pos < PySequence_Fast_GET_SIZE(f->source)) {
                item = PySequence_Fast_GET_ITEM(f->source, f->pos);
                f->pos++;
            }
            else {
                item = NULL;
            }
        }
        if (item == NULL) { /* the container is complete */
            PyObject *done = f->out;
            if (f->is_dict && PyDict_GET_SIZE(done) != PyDict_GET_SIZE(f->source)) goto other;
            f->out = NULL;
            depth--;
            PyObject_GC_UnTrack(done);
            if (depth == 0) return done;
            f = &stack[depth - 1];
            if (put(f, f->key, done) < 0) {
                Py_DECREF(done);
                goto fail;
            }
            Py_DECREF(done);
            continue;
        }
        kind = kind_of(item);
        if (kind == 1) {
            if (put(f, key, item) < 0) goto fail;
            continue;
        }
        if (kind == 0 || depth >= max_depth) goto other;
        f->key = key;
        if (open_frame(&stack[depth++], item) < 0) {
            depth--;
            goto fail;
        }
    }
other:
    result = Py_NewRef(Py_None);
fail:
    while (depth > 0) {
        Py_XDECREF(stack[--depth].out);
    }
    return result;
}

/* setup(FrozenDict, FrozenList, max_depth): the types it makes, and the nesting limit. */
static PyObject *
setup(PyObject *module, PyObject *args)
{
    PyTypeObject *dict_type, *list_type;
    int limit;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O!i", &PyType_Type, &dict_type, &PyType_Type, &list_type,
                          &limit)) {
        return NULL;
    }
    if (limit < 1 || limit > MAX_FRAMES) {
        PyErr_SetString(PyExc_ValueError, "max_depth out of range");
        return NULL;
    }
    if (set_frozen_types(dict_type, list_type) < 0) return NULL;
    max_depth = limit;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"freeze_plain", freeze_plain, METH_O,
     "freeze_plain(value) -> freeze(value) for a plain JSON value, else None."},
    {"setup", setup, METH_VARARGS,
     "setup(FrozenDict, FrozenList, max_depth): the types freeze_plain makes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "ptree._cfrozen",
    "freeze's common case in C (see ptree/frozen.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__cfrozen(void)
{
    if (init_frozen_types() < 0) return NULL;
    return PyModule_Create(&module);
}
