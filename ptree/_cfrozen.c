/* freeze's common case in C: a plain JSON value of exact dicts, lists and tuples.
 *
 * freeze_plain(value) -> a FrozenDict or FrozenList equal to what ptree.frozen.freeze
 * gives for ``value`` (an exact dict, list or tuple), or None when ``value`` holds
 * anything else: a key that is not an exact str, a value that is not an exact str,
 * int, bool, None, finite float, dict, list or tuple (a subclass, a frozen value, a set,
 * NaN, ...), or a container nested deeper than the limit.  freeze then takes its own
 * path from the start, which gives the same value or names the culprit: this module
 * never decides an error.  (A dict is first copied whole with dict's own merge, as the
 * Python path's dict.__init__ copies it: an error only a key's own __eq__ could raise
 * there is raised the same way by both.)
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
#include <time.h>
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
        /* A copy of the whole dict first, as the Python path's dict.__init__ makes
         * (CPython clones a compact dict's table at once): only its containers are
         * replaced afterwards. */
        f->out = PyDict_Type.tp_new(FrozenDictType, empty_tuple, NULL);
        if (f->out != NULL && PyDict_Update(f->out, source) < 0) Py_CLEAR(f->out);
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
freeze_plain_value(PyObject *value)
{
    Frame stack[MAX_FRAMES];
    int depth = 0;
    PyObject *result = NULL;
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
            /* A dict's copy holds it already. */
            if (!f->is_dict && put(f, key, item) < 0) goto fail;
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

static PyObject *
freeze_plain(PyObject *module, PyObject *value)
{
    (void)module;
    return freeze_plain_value(value);
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

/* ------------------------------------------------------------------ the context walk
 *
 * walk_plain(out, entry, end, mask) -> the first entry from ``entry`` back towards the
 * root that is not plainly a message to collect, or ``end``.  From ``entry`` (an entry
 * or ``end``) it follows parent links while the entry is not ``end``, is a message
 * entry (of a kind whose ``shape`` is MessageEntry's own, reading its slot) whose shape
 * is filled in and has no bit of ``mask`` set, and is linked; each such entry is
 * appended to ``out`` (a list; None: only walked past).  The entry it stops at is left to
 * ptree/context.py's walk, which takes it exactly as it takes any entry: this code
 * decides nothing but "plain, or not mine to say", so the Python walk stays the one
 * owner of the rules (an empty shape slot, an unlinked entry, an entry of any other
 * kind: all stop here).  Cost: O(entries walked past), no Python code run.
 * tests/test_context_compiled.py compares every context with the Python walk's. */

static PyTypeObject *MessageEntryType = NULL;
static PyObject *shape_descr = NULL;  /* MessageEntry's member descriptor of its shape slot */
static PyObject *shape_reader = NULL; /* MessageEntry's "shape", which reads that slot */
static PyObject *shape_str = NULL, *getattribute_str = NULL;
static PyObject *object_getattribute = NULL; /* object.__getattribute__ (borrowed) */
static Py_ssize_t shape_offset = 0;
/* The last kind found to read its shape from the slot (held), and its version tag then:
 * a change to the class or a base (``shape`` set on it) gives it a new tag, or none. */
static PyTypeObject *plain_type = NULL;
static unsigned int plain_version = 0;

/* Whether an object of ``type`` reads its shape from MessageEntry's slot (its class
 * and every base leave ``shape`` to MessageEntry's, and attribute reads are plain). */
static int
reads_slot_shape(PyTypeObject *type)
{
    if (type == plain_type && type->tp_version_tag == plain_version
        && PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG)) {
        return 1;
    }
    /* A class with __getattr__ (LazyMessageEntry has one, for an empty slot) reads
     * attributes through a hook that calls __getattribute__ first: object's reads
     * the slot, as the generic read does. */
    if (!PyType_IsSubtype(type, MessageEntryType) || _PyType_Lookup(type, shape_str) != shape_reader
        || (type->tp_getattro != PyObject_GenericGetAttr
            && _PyType_Lookup(type, getattribute_str) != object_getattribute)) {
        return 0;
    }
    Py_XSETREF(plain_type, (PyTypeObject *)Py_NewRef(type));
    plain_version = type->tp_version_tag; /* _PyType_Lookup gave it one, if it can */
    return 1;
}

static PyObject *
walk_plain(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *out, *e, *end, *shape;
    long mask, value;
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "walk_plain(out, entry, end, mask)");
        return NULL;
    }
    if (MessageEntryType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree._cfrozen.setup_walk was not called");
        return NULL;
    }
    out = args[0];
    e = args[1];
    end = args[2];
    if (out != Py_None && !PyList_CheckExact(out)) {
        PyErr_SetString(PyExc_TypeError, "walk_plain: out must be a list or None");
        return NULL;
    }
    mask = PyLong_AsLong(args[3]);
    if (mask == -1 && PyErr_Occurred()) return NULL;
    while (e != end) {
        PyObject *parent;
        if (!reads_slot_shape(Py_TYPE(e))) break;
        shape = *(PyObject **)((char *)e + shape_offset);
        if (shape == NULL || !PyLong_CheckExact(shape)) break;
        value = PyLong_AsLong(shape);
        if (value == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            break;
        }
        parent = ((Links *)e)->parent;
        if (value & mask || parent == NULL) break;
        if (out != Py_None && PyList_Append(out, e) < 0) return NULL;
        e = parent;
    }
    return Py_NewRef(e);
}

/* setup_walk(MessageEntry, slot, shape): the message entry class, its shape slot's
 * member descriptor and the ``shape`` it reads that slot with (ptree/context.py hands
 * them over: the layout has one owner). */
static PyObject *
setup_walk(PyObject *module, PyObject *args)
{
    PyTypeObject *type;
    PyObject *descr, *reader;
    PyMemberDescrObject *d;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!OO", &PyType_Type, &type, &descr, &reader)) return NULL;
    d = (PyMemberDescrObject *)descr;
    if (!PyType_IsSubtype(type, &LinksType) || !Py_IS_TYPE(descr, &PyMemberDescr_Type)
        || d->d_member->type != T_OBJECT_EX || PyDescr_TYPE(descr) != type) {
        PyErr_Format(PyExc_TypeError, "setup_walk: %R is not an object slot of %s", descr,
                     type->tp_name);
        return NULL;
    }
    if (shape_str == NULL) {
        shape_str = PyUnicode_InternFromString("shape");
        getattribute_str = PyUnicode_InternFromString("__getattribute__");
        if (shape_str == NULL || getattribute_str == NULL) return NULL;
        object_getattribute = _PyType_Lookup(&PyBaseObject_Type, getattribute_str);
        if (object_getattribute == NULL) {
            PyErr_SetString(PyExc_TypeError, "setup_walk: object has no __getattribute__");
            return NULL;
        }
    }
    Py_XSETREF(MessageEntryType, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(shape_descr, Py_NewRef(descr));
    Py_XSETREF(shape_reader, Py_NewRef(reader));
    shape_offset = d->d_member->offset;
    Py_CLEAR(plain_type);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ append's common case
 *
 * append_message(tree, message) -> what SessionTree.append(message) gives (no id, no
 * timestamp given), or None when this is not the common case: the tree makes ids and
 * timestamps the default way, the message is an exact dict freeze_plain takes (or a
 * FrozenDict) with a string role, and the tree ends where its store does (no branch).
 * ptree/tree.py then takes its own path from the start, which gives the same value or
 * raises the error: this code never decides an error (only the clock's own, or memory).
 *
 * It does what tree.py's append does, with the same objects: the entry
 * (MessageEntry.unchecked, its links as entries._link sets them) and the store's
 * claim, under the store's lock, and its indexes (arrays.Store.add, for a message
 * entry).  The objects' slots are found at setup from their member descriptors,
 * which tree.py hands over, so the layout has one owner: the Python classes.
 * tests/test_append_compiled.py compares every result with the Python path's.
 */

enum {
    T_STORE, T_SIZE, T_LEAF, T_MAX_SEQ, T_HEADER, T_CONFIG,
    E_ID, E_PARENT_ID, E_TIMESTAMP, E_EXTRA, E_MESSAGE,
    S_BASE, S_ENTRIES, S_BY_ID, S_CHILDREN, S_LOCK,
    N_SLOTS
};

static Py_ssize_t offsets[N_SLOTS];
static PyTypeObject *TreeType = NULL, *EntryType = NULL, *BaseEntryType = NULL,
                    *StoreType = NULL, *HeaderType = NULL;
static PyObject *default_config = NULL, *default_clock = NULL, *empty_extra = NULL;
static PyObject *role_str = NULL, *acquire_str = NULL, *release_str = NULL, *locked_str = NULL;
static int clock_is_ours = 0; /* default_clock is this module's utc_now */

#define SLOT(obj, i) (*(PyObject **)((char *)(obj) + offsets[i]))

/* Set an empty slot of a new object (``value`` borrowed). */
static inline void
fill(PyObject *obj, int i, PyObject *value)
{
    SLOT(obj, i) = Py_NewRef(value);
}

static int
call_lock(PyObject *lock, PyObject *name, PyObject *arg, PyObject **result)
{
    PyObject *args[2] = {lock, arg};
    *result = PyObject_VectorcallMethod(name, args, arg == NULL ? 1 : 2, NULL);
    return *result == NULL ? -1 : 0;
}

/* Index ``entry`` (a child of ``leaf``, the store's ``entries`` holding ``n`` before
 * it) in the store's children, as arrays.Store.add does: nothing for the child stored
 * right after its parent; else one child bare, more in a list, the parent's first
 * child (stored right after it, not indexed) joining the list. */
static int
push_child(PyObject *children, PyObject *entries, Py_ssize_t base, PyObject *parent_id,
           PyObject *leaf, PyObject *entry)
{
    Py_ssize_t n = PyList_GET_SIZE(entries), i;
    PyObject *slot, *first = NULL, *pair;
    int rc, gc_was_on;
    if (n > 0 && PyList_GET_ITEM(entries, n - 1) == leaf) return 0;
    slot = PyDict_GetItemWithError(children, parent_id);
    if (slot == NULL) {
        if (PyErr_Occurred()) return -1;
        if (leaf != Py_None && ((Links *)leaf)->seq != 0) { /* Store._next_of(leaf) */
            i = ((Links *)leaf)->seq - base; /* leaf.seq + 1 - base */
            if (0 < i && i < n) {
                PyObject *after = PyList_GET_ITEM(entries, i);
                if (PyObject_TypeCheck(after, &LinksType) && ((Links *)after)->parent == leaf) {
                    first = after;
                }
            }
        }
        if (first == NULL) return PyDict_SetItem(children, parent_id, entry);
        slot = first;
    }
    else if (PyList_CheckExact(slot)) {
        return PyList_Append(slot, entry);
    }
    /* The collector kept off for this allocation: it could run finalizers (Python code,
     * which could let another thread claim the store's end) in the claim's midst. */
    gc_was_on = PyGC_Disable();
    pair = PyList_New(2);
    if (gc_was_on) PyGC_Enable();
    if (pair == NULL) return -1;
    PyList_SET_ITEM(pair, 0, Py_NewRef(slot));
    PyList_SET_ITEM(pair, 1, Py_NewRef(entry));
    rc = PyDict_SetItem(children, parent_id, pair);
    Py_DECREF(pair);
    return rc;
}

/* The default clock, ptree.ids.utc_now's rule in C: the current UTC time as Pi writes it,
 * ``2026-01-01T00:00:00.000Z`` (time.time_ns() // 10**6 is CLOCK_REALTIME in
 * milliseconds; the seconds formatted by strftime of gmtime, as time.strftime does, then
 * the milliseconds).  One string per millisecond, as ids.py caches it: later calls in
 * the same millisecond return the same object.  A new reference, or NULL with an error. */
#ifdef CLOCK_REALTIME
#define HAVE_CLOCK 1
static long long clock_ms = -1;
static PyObject *clock_text = NULL;

/* The text of the time ``ms`` milliseconds after the epoch (ids._utc_text's rule). */
static PyObject *
format_ms(long long ms)
{
    struct tm tm;
    long long secs = ms / 1000, milli = ms % 1000;
    time_t t;
    char buf[64];
    size_t len;
    if (milli < 0) { /* divmod's floor */
        secs -= 1;
        milli += 1000;
    }
    t = (time_t)secs;
    if ((long long)t != secs || gmtime_r(&t, &tm) == NULL) {
        PyErr_SetString(PyExc_OverflowError, "a time out of range");
        return NULL;
    }
    len = strftime(buf, sizeof(buf) - 6, "%Y-%m-%dT%H:%M:%S", &tm);
    if (len == 0) {
        PyErr_SetString(PyExc_ValueError, "a time strftime cannot format");
        return NULL;
    }
    snprintf(buf + len, 6, ".%03dZ", (int)milli);
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len + 5);
}

static PyObject *
clock_now(void)
{
    struct timespec ts;
    long long ms;
    PyObject *text;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return PyErr_SetFromErrno(PyExc_OSError);
    ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (ms == clock_ms && clock_text != NULL) return Py_NewRef(clock_text);
    text = format_ms(ms);
    if (text == NULL) return NULL;
    clock_ms = ms;
    Py_XSETREF(clock_text, Py_NewRef(text));
    return text;
}

static PyObject *
utc_now(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return clock_now();
}

static PyObject *
utc_text(PyObject *module, PyObject *ms_obj)
{
    long long ms = PyLong_AsLongLong(ms_obj);
    (void)module;
    if (ms == -1 && PyErr_Occurred()) return NULL;
    return format_ms(ms);
}
#else
#define HAVE_CLOCK 0
#endif

/* "e<k>" for k >= 1 (an exact str, as f"e{k}" makes), written directly. */
static PyObject *
counter_id(long long k)
{
    char digits[24];
    int n = 0;
    PyObject *out;
    Py_UCS1 *data;
    while (k > 0) {
        digits[n++] = (char)('0' + k % 10);
        k /= 10;
    }
    out = PyUnicode_New(n + 1, 127);
    if (out == NULL) return NULL;
    data = PyUnicode_1BYTE_DATA(out);
    data[0] = 'e';
    for (int i = 0; i < n; i++) data[i + 1] = (Py_UCS1)digits[n - 1 - i];
    return out;
}

/* Store.claim's body for a message entry: 1 if added, 0 if the store does not end at
 * ``size`` (nothing changed), -1 with an error (memory). */
static int
claim(PyObject *store, Py_ssize_t size, PyObject *parent_id, PyObject *leaf, PyObject *entry,
      PyObject *entry_id)
{
    PyObject *entries = SLOT(store, S_ENTRIES);
    Py_ssize_t base = PyLong_AsSsize_t(SLOT(store, S_BASE));
    if (base < 0 || !PyList_CheckExact(entries) || base + PyList_GET_SIZE(entries) != size) {
        PyErr_Clear();
        return 0;
    }
    return push_child(SLOT(store, S_CHILDREN), entries, base, parent_id, leaf, entry) == 0
                   && PyList_Append(entries, entry) == 0
                   && PyDict_SetItem(SLOT(store, S_BY_ID), entry_id, entry) == 0
               ? 1 : -1;
}

/* The lock type Store makes (handed to setup_append) and its ``locked`` method's C
 * function (no arguments), called directly; NULL when that type has no such method
 * (every lock is then acquired and released by method calls). */
static PyTypeObject *lock_type = NULL;
static PyCFunction lock_locked = NULL;

static PyObject *
append_message(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *tree, *message, *store, *leaf, *header, *size_obj, *max_obj;
    PyObject *parent_id = Py_None, *role, *got;
    Py_ssize_t depth = 1; /* Links' encoding: the depth + 1 */
    PyObject *frozen = NULL, *timestamp = NULL, *entry_id = NULL, *new_max = NULL;
    PyObject *new_size = NULL, *entry = NULL, *out = NULL;
    PyObject *lock;
    Py_ssize_t size;
    long long max_seq;
    int overflow, ok;
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "append_message(tree, message)");
        return NULL;
    }
    if (TreeType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree._cfrozen.setup_append was not called");
        return NULL;
    }
    tree = args[0];
    message = args[1];
    if (!Py_IS_TYPE(tree, TreeType) || SLOT(tree, T_CONFIG) != default_config) Py_RETURN_NONE;
    store = SLOT(tree, T_STORE);
    leaf = SLOT(tree, T_LEAF);
    header = SLOT(tree, T_HEADER);
    size_obj = SLOT(tree, T_SIZE);
    max_obj = SLOT(tree, T_MAX_SEQ);
    if (store == NULL || !Py_IS_TYPE(store, StoreType) || leaf == NULL || header == NULL
        || size_obj == NULL || !PyLong_CheckExact(size_obj) || max_obj == NULL
        || !PyLong_CheckExact(max_obj)) {
        Py_RETURN_NONE;
    }
    size = PyLong_AsSsize_t(size_obj);
    max_seq = PyLong_AsLongLongAndOverflow(max_obj, &overflow);
    if (size < 0 || size == PY_SSIZE_T_MAX || overflow || max_seq < 0 || max_seq == LLONG_MAX) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (leaf != Py_None) {
        if (!PyObject_TypeCheck(leaf, BaseEntryType) || !PyObject_TypeCheck(leaf, &LinksType)) {
            Py_RETURN_NONE;
        }
        parent_id = SLOT(leaf, E_ID);
        if (parent_id == NULL || ((Links *)leaf)->depth == 0) {
            Py_RETURN_NONE;
        }
    }
    if (Py_IS_TYPE(message, FrozenDictType)) {
        frozen = Py_NewRef(message);
    }
    else if (PyDict_CheckExact(message)) {
        frozen = freeze_plain_value(message);
        if (frozen == NULL) return NULL;
        if (frozen == Py_None) return frozen;
    }
    else {
        Py_RETURN_NONE;
    }
    role = PyDict_GetItemWithError(frozen, role_str);
    if (role == NULL || !PyUnicode_CheckExact(role)) {
        Py_DECREF(frozen);
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }

#if HAVE_CLOCK
    timestamp = clock_is_ours ? clock_now() : PyObject_CallNoArgs(default_clock);
#else
    timestamp = PyObject_CallNoArgs(default_clock);
#endif
    if (timestamp == NULL) goto fail;
    entry_id = counter_id(max_seq + 1);
    new_max = PyLong_FromLongLong(max_seq + 1);
    /* One int for both where they are equal (a tree of default ids, never branched). */
    new_size = (long long)size == max_seq ? Py_XNewRef(new_max) : PyLong_FromSsize_t(size + 1);
    if (entry_id == NULL || new_max == NULL || new_size == NULL) goto fail;
    if (leaf != Py_None) depth = ((Links *)leaf)->depth + 1;

    entry = EntryType->tp_alloc(EntryType, 0);
    if (entry == NULL) goto fail;
    fill(entry, E_ID, entry_id);
    fill(entry, E_PARENT_ID, parent_id);
    fill(entry, E_TIMESTAMP, timestamp);
    fill(entry, E_EXTRA, empty_extra);
    fill(entry, E_MESSAGE, frozen);
    /* The links as link() sets them (machine integers, each stored plus one). */
    ((Links *)entry)->parent = Py_NewRef(leaf);
    ((Links *)entry)->depth = depth;
    ((Links *)entry)->seq = size + 1;

    out = TreeType->tp_alloc(TreeType, 0);
    if (out == NULL) goto fail;
    fill(out, T_STORE, store);
    fill(out, T_SIZE, new_size);
    fill(out, T_LEAF, entry);
    fill(out, T_MAX_SEQ, new_max);
    fill(out, T_HEADER, header);
    fill(out, T_CONFIG, default_config);

    /* Store.claim: the end is claimed under the store's lock, which another thread
     * may hold (it then takes tree.py's path, which waits for it).  A lock of the
     * type Store makes (threading.Lock) is only asked whether it is held: the claim
     * below runs no Python code and never lets another thread run (the GIL is held
     * throughout, the collector is kept off for push_child's allocation), so it is as
     * atomic as under the lock, without the two method calls. */
    lock = SLOT(store, S_LOCK);
    if (lock == NULL) goto fail;
    if (lock_locked != NULL && Py_IS_TYPE(lock, lock_type)) {
        got = lock_locked(lock, NULL);
        if (got == NULL) goto fail;
        Py_DECREF(got);
        if (got != Py_False) goto decline;
        ok = claim(store, size, parent_id, leaf, entry, entry_id);
    }
    else {
        if (call_lock(lock, acquire_str, Py_False, &got) < 0) goto fail;
        Py_DECREF(got);
        if (got != Py_True) goto decline;
        ok = claim(store, size, parent_id, leaf, entry, entry_id);
        {
            /* Released whatever happened, the error (memory) kept across the call. */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            if (call_lock(lock, release_str, NULL, &got) < 0) {
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(tb);
                goto fail;
            }
            Py_DECREF(got);
            PyErr_Restore(type, value, tb);
        }
    }
    if (ok < 0) goto fail;
    if (ok == 0) goto decline;
    /* Neither can be part of a reference cycle: the entry holds strings, ints, a
     * frozen message and its parent (an older entry); the value holds the store
     * (entries and their indexes), the entry, the default configuration and a header
     * of the exact class (strings and frozen values).  Untracked, the cyclic collector
     * never walks them, as it never walks a frozen message: at 10^5 entries it spent
     * a third of each append walking them again and again.  (Only a FrozenDict changed
     * through dict's own methods, against its promise, could close a cycle through
     * them; the collector would then not free that cycle.) */
    PyObject_GC_UnTrack(entry);
    if (header == Py_None || Py_IS_TYPE(header, HeaderType)) PyObject_GC_UnTrack(out);
    Py_DECREF(frozen);
    Py_DECREF(timestamp);
    Py_DECREF(entry_id);
    Py_DECREF(new_max);
    Py_DECREF(new_size);
    Py_DECREF(entry);
    return out;
decline:
    Py_INCREF(Py_None);
    Py_XSETREF(out, Py_None);
    goto done;
fail:
    Py_CLEAR(out);
done:
    Py_XDECREF(frozen);
    Py_XDECREF(timestamp);
    Py_XDECREF(entry_id);
    Py_XDECREF(new_max);
    Py_XDECREF(new_size);
    Py_XDECREF(entry);
    return out;
}

/* The offset of a slot from its member descriptor, which must be an object slot of
 * ``owner`` (or a base of it); -1 with a TypeError otherwise. */
static Py_ssize_t
offset_of(PyObject *descr, PyTypeObject *owner)
{
    PyMemberDescrObject *d = (PyMemberDescrObject *)descr;
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type) || d->d_member->type != T_OBJECT_EX
        || !PyType_IsSubtype(owner, PyDescr_TYPE(descr))) {
        PyErr_Format(PyExc_TypeError, "setup_append: %R is not an object slot of %s", descr,
                     owner->tp_name);
        return -1;
    }
    return d->d_member->offset;
}

/* setup_append(SessionTree, MessageEntry, Entry, Store, SessionHeader, default_config,
 *              clock, empty, tree_slots, entry_slots, store_slots, lock_type) */
static PyObject *
setup_append(PyObject *module, PyObject *args)
{
    PyTypeObject *tree_type, *entry_type, *base_type, *store_type, *header_type, *lock_t;
    PyObject *config, *clock_fn, *empty, *tree_slots, *entry_slots, *store_slots, *descr;
    PyCFunction locked = NULL;
    PyObject *groups[3];
    PyTypeObject *owners[3];
    Py_ssize_t firsts[4] = {T_STORE, E_ID, S_BASE, N_SLOTS}, found[N_SLOTS], i;
    int g;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OOOO!O!O!O!", &PyType_Type, &tree_type, &PyType_Type,
                          &entry_type, &PyType_Type, &base_type, &PyType_Type, &store_type,
                          &PyType_Type, &header_type, &config, &clock_fn, &empty, &PyTuple_Type, &tree_slots,
                          &PyTuple_Type, &entry_slots, &PyTuple_Type, &store_slots,
                          &PyType_Type, &lock_t)) {
        return NULL;
    }
    if (FrozenDictType == NULL || !Py_IS_TYPE(empty, FrozenDictType)
        || !PyType_IsSubtype(entry_type, base_type)) {
        PyErr_SetString(PyExc_TypeError, "setup_append: call setup first; empty is a FrozenDict");
        return NULL;
    }
    groups[0] = tree_slots;
    groups[1] = entry_slots;
    groups[2] = store_slots;
    owners[0] = tree_type;
    owners[1] = entry_type;
    owners[2] = store_type;
    for (g = 0; g < 3; g++) {
        if (PyTuple_GET_SIZE(groups[g]) != firsts[g + 1] - firsts[g]) {
            PyErr_SetString(PyExc_TypeError, "setup_append: wrong number of slots");
            return NULL;
        }
        for (i = firsts[g]; i < firsts[g + 1]; i++) {
            Py_ssize_t off = offset_of(PyTuple_GET_ITEM(groups[g], i - firsts[g]), owners[g]);
            if (off < 0) return NULL;
            found[i] = off;
        }
    }
    /* The links (parent, depth) are read from a leaf of any kind: slots of the base. */
    if (offset_of(PyTuple_GET_ITEM(entry_slots, E_ID - E_ID), base_type) < 0
        || !PyType_IsSubtype(entry_type, &LinksType)) {
        return NULL;
    }
    if (role_str == NULL) {
        role_str = PyUnicode_InternFromString("role");
        acquire_str = PyUnicode_InternFromString("acquire");
        release_str = PyUnicode_InternFromString("release");
        locked_str = PyUnicode_InternFromString("locked");
        if (role_str == NULL || acquire_str == NULL || release_str == NULL || locked_str == NULL) {
            return NULL;
        }
    }
    /* The lock's ``locked``: a method of no arguments written in C (threading.Lock's). */
    descr = _PyType_Lookup(lock_t, locked_str); /* borrowed */
    if (descr != NULL && Py_IS_TYPE(descr, &PyMethodDescr_Type)
        && ((PyMethodDescrObject *)descr)->d_method->ml_flags == METH_NOARGS) {
        locked = ((PyMethodDescrObject *)descr)->d_method->ml_meth;
    }
    memcpy(offsets, found, sizeof(offsets)); /* all or nothing */
    Py_XSETREF(TreeType, (PyTypeObject *)Py_NewRef(tree_type));
    Py_XSETREF(EntryType, (PyTypeObject *)Py_NewRef(entry_type));
    Py_XSETREF(BaseEntryType, (PyTypeObject *)Py_NewRef(base_type));
    Py_XSETREF(StoreType, (PyTypeObject *)Py_NewRef(store_type));
    Py_XSETREF(HeaderType, (PyTypeObject *)Py_NewRef(header_type));
    Py_XSETREF(default_config, Py_NewRef(config));
    Py_XSETREF(default_clock, Py_NewRef(clock_fn));
#if HAVE_CLOCK
    clock_is_ours = PyCFunction_Check(clock_fn) && PyCFunction_GET_FUNCTION(clock_fn) == utc_now;
#endif
    Py_XSETREF(empty_extra, Py_NewRef(empty));
    Py_XSETREF(lock_type, (PyTypeObject *)Py_NewRef(lock_t));
    lock_locked = locked;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"freeze_plain", freeze_plain, METH_O,
     "freeze_plain(value) -> freeze(value) for a plain JSON value, else None."},
    {"append_message", (PyCFunction)(void (*)(void))append_message, METH_FASTCALL,
     "append_message(tree, message) -> tree.append(message) in its common case, else None."},
#if HAVE_CLOCK
    {"utc_now", utc_now, METH_NOARGS,
     "utc_now() -> ptree.ids.utc_now() in C (the default clock)."},
    {"utc_text", utc_text, METH_O,
     "utc_text(ms) -> the default clock's text of ms milliseconds after the epoch."},
#endif
    {"setup_append", setup_append, METH_VARARGS,
     "setup_append(...): the types and slots append_message works with (ptree/tree.py)."},
    {"setup", setup, METH_VARARGS,
     "setup(FrozenDict, FrozenList, max_depth): the types freeze_plain makes."},
    {"walk_plain", (PyCFunction)(void (*)(void))walk_plain, METH_FASTCALL,
     "walk_plain(out, entry, end, mask) -> where a context walk's run of plain messages ends."},
    {"setup_walk", setup_walk, METH_VARARGS,
     "setup_walk(MessageEntry, slot, shape): the class, its shape slot and the shape that "
     "reads it, for walk_plain (ptree/context.py)."},
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
