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
#include <structmember.h>

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

/* Links: the base of ptree.entries.Entry where this extension is built (the Python
 * fallback is a class of three slots, ptree/entries.py's _Links).  Where an entry sits
 * in the tree that holds it: its parent entry, its depth and its position, set once by
 * link() / link_parent() / set_position() and read as attributes (read-only).  Depth
 * and position are machine integers: a slot holding an int above 256 cost a 32-byte
 * object per entry (10^6 loaded entries: 32 MB for the positions alone).  An attribute
 * not set yet reads as an AttributeError, as an empty slot does.
 *
 * An entry's parent is an entry made before it, so links never form a cycle; they are
 * still traversed for the garbage collector, as the slots were. */
typedef struct {
    PyObject_HEAD
    PyObject *parent; /* NULL: not linked yet; Py_None: a root */
    Py_ssize_t depth; /* the depth + 1; 0: not set (object.__new__ zeroes it) */
    Py_ssize_t seq;   /* the position + 1; 0: not set */
} Links;

static PyTypeObject LinksType;

static int
links_traverse(Links *self, visitproc visit, void *arg)
{
    Py_VISIT(self->parent);
    return 0;
}

static int
links_clear(Links *self)
{
    Py_CLEAR(self->parent);
    return 0;
}

static void
links_dealloc(Links *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->parent);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
unset(PyObject *self, const char *name)
{
    PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%s'",
                 Py_TYPE(self)->tp_name, name);
    return NULL;
}

static PyObject *
links_depth(Links *self, void *closure)
{
    if (self->depth == 0) return unset((PyObject *)self, "depth");
    return PyLong_FromSsize_t(self->depth - 1);
}

static PyObject *
links_seq(Links *self, void *closure)
{
    if (self->seq == 0) return unset((PyObject *)self, "seq");
    return PyLong_FromSsize_t(self->seq - 1);
}

static PyGetSetDef links_getset[] = {
    {"depth", (getter)links_depth, NULL, "The number of ancestors.", NULL},
    {"seq", (getter)links_seq, NULL, "The position in insertion order.", NULL},
    {NULL},
};

/* The parent as a member, not a getter: CPython specialises reading an object member
 * (a slot) into a load at its offset, and walking a path reads nothing else.  NULL (not
 * linked yet) reads as an AttributeError, as an empty slot does. */
static PyMemberDef links_members[] = {
    {"parent_entry", T_OBJECT_EX, offsetof(Links, parent), READONLY,
     "The parent entry (None for a root)."},
    {NULL},
};

static PyTypeObject LinksType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptree._cfrozen.Links",
    .tp_basicsize = sizeof(Links),
    .tp_dealloc = (destructor)links_dealloc,
    .tp_traverse = (traverseproc)links_traverse,
    .tp_clear = (inquiry)links_clear,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_members = links_members,
    .tp_getset = links_getset,
    .tp_doc = "Where an entry sits in its tree (see ptree/entries.py's _Links).",
};

static Links *
as_links(PyObject *entry)
{
    if (!PyObject_TypeCheck(entry, &LinksType)) {
        PyErr_Format(PyExc_TypeError, "not an entry: %.100s", Py_TYPE(entry)->tp_name);
        return NULL;
    }
    return (Links *)entry;
}

/* The entry kinds whose instances can never be part of a reference cycle (a tuple of
 * types, set by acyclic()): ptree's own kinds, whose fields hold strings, numbers, frozen
 * JSON values and, through the links, only entries made before them. */
static PyObject *acyclic_kinds = NULL;

/* Stop the garbage collector from tracking entry if it is of one of the acyclic kinds,
 * or of a subclass that adds no field (the same size, no __dict__): the collector then
 * never walks the entries of a tree (10^6 entries: one walk per full collection), as
 * CPython untracks its own tuples of such values.  An instance of a subclass that adds
 * fields stays tracked: those could make a cycle. */
static void
untrack_if_acyclic(PyObject *entry)
{
    PyTypeObject *type = Py_TYPE(entry);
    Py_ssize_t i, n;
    if (acyclic_kinds == NULL || type->tp_dictoffset != 0 || !PyObject_GC_IsTracked(entry)) {
        return;
    }
    n = PyTuple_GET_SIZE(acyclic_kinds);
    for (i = 0; i < n; i++) {
        PyTypeObject *kind = (PyTypeObject *)PyTuple_GET_ITEM(acyclic_kinds, i);
        if (type->tp_basicsize == kind->tp_basicsize && PyType_IsSubtype(type, kind)) {
            PyObject_GC_UnTrack(entry);
            return;
        }
    }
}

/* acyclic(kinds): the entry kinds link() and link_parent() untrack (a tuple of types). */
static PyObject *
acyclic(PyObject *module, PyObject *kinds)
{
    Py_ssize_t i;
    if (!PyTuple_Check(kinds)) {
        PyErr_SetString(PyExc_TypeError, "acyclic() takes a tuple of entry types");
        return NULL;
    }
    for (i = 0; i < PyTuple_GET_SIZE(kinds); i++) {
        PyObject *kind = PyTuple_GET_ITEM(kinds, i);
        if (!PyType_Check(kind) || !PyType_IsSubtype((PyTypeObject *)kind, &LinksType)) {
            PyErr_SetString(PyExc_TypeError, "acyclic() takes a tuple of entry types");
            return NULL;
        }
    }
    Py_XSETREF(acyclic_kinds, Py_NewRef(kinds));
    Py_RETURN_NONE;
}

/* The depth of an entry under parent (None: a root); -1 with an error set. */
static Py_ssize_t
depth_under(PyObject *parent)
{
    Links *p;
    if (parent == Py_None) return 0;
    p = as_links(parent);
    if (p == NULL) return -1;
    if (p->depth == 0) {
        unset(parent, "depth");
        return -1;
    }
    return p->depth; /* the parent's depth + 1 */
}

/* link(entry, parent, seq): set all three links (see ptree.entries._link). */
static PyObject *
link_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Links *e;
    Py_ssize_t depth, seq;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "link(entry, parent, seq)");
        return NULL;
    }
    e = as_links(args[0]);
    if (e == NULL) return NULL;
    depth = depth_under(args[1]);
    if (depth < 0) return NULL;
    seq = PyLong_AsSsize_t(args[2]);
    if (seq == -1 && PyErr_Occurred()) return NULL;
    if (seq < 0 || seq == PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_ValueError, "a position out of range");
        return NULL;
    }
    Py_XSETREF(e->parent, Py_NewRef(args[1]));
    e->depth = depth + 1;
    e->seq = seq + 1;
    untrack_if_acyclic(args[0]);
    Py_RETURN_NONE;
}

/* link_parent(entry, parent, depth): set the parent and depth, not the position. */
static PyObject *
link_entry_parent(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Links *e;
    Py_ssize_t depth;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "link_parent(entry, parent, depth)");
        return NULL;
    }
    e = as_links(args[0]);
    if (e == NULL) return NULL;
    depth = PyLong_AsSsize_t(args[2]);
    if (depth == -1 && PyErr_Occurred()) return NULL;
    if (depth < 0 || depth == PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_ValueError, "a depth out of range");
        return NULL;
    }
    Py_XSETREF(e->parent, Py_NewRef(args[1]));
    e->depth = depth + 1;
    untrack_if_acyclic(args[0]);
    Py_RETURN_NONE;
}

/* set_position(entry, seq): set only the position. */
static PyObject *
set_entry_position(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Links *e;
    Py_ssize_t seq;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "set_position(entry, seq)");
        return NULL;
    }
    e = as_links(args[0]);
    if (e == NULL) return NULL;
    seq = PyLong_AsSsize_t(args[1]);
    if (seq == -1 && PyErr_Occurred()) return NULL;
    if (seq < 0 || seq == PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_ValueError, "a position out of range");
        return NULL;
    }
    e->seq = seq + 1;
    Py_RETURN_NONE;
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
    {"link", (PyCFunction)(void (*)(void))link_entry, METH_FASTCALL,
     "link(entry, parent, seq): set an entry's parent, depth and position."},
    {"link_parent", (PyCFunction)(void (*)(void))link_entry_parent, METH_FASTCALL,
     "link_parent(entry, parent, depth): set an entry's parent and depth."},
    {"set_position", (PyCFunction)(void (*)(void))set_entry_position, METH_FASTCALL,
     "set_position(entry, seq): set an entry's position."},
    {"acyclic", acyclic, METH_O,
     "acyclic(kinds): the entry types whose linked instances the collector skips."},
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
    PyObject *m;
    if (init_frozen_types() < 0) return NULL;
    /* object's own constructor (zeroed memory: nothing linked yet), so that
     * object.__new__(cls), what attrs and the fast constructors call, accepts it. */
    LinksType.tp_new = PyBaseObject_Type.tp_new;
    if (PyType_Ready(&LinksType) < 0) return NULL;
    m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddType(m, &LinksType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
