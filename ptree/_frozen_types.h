/* What ptree's C extensions (ptree/_cfrozen.c, ptree/pi/_scan.c,
 * ptree/formats/_librechat.c) share: the types of the frozen values they build, ptree.frozen's FrozenDict and FrozenList, which
 * Python hands to each module's setup() once, and the empty tuple dict's tp_new is
 * called with.  One rule for both: a frozen value built in C is of these two types,
 * whichever module builds it.  Each extension includes this file after <Python.h> and
 * has its own copy of these statics.
 */
#ifndef PTREE_FROZEN_TYPES_H
#define PTREE_FROZEN_TYPES_H

static PyTypeObject *FrozenDictType = NULL, *FrozenListType = NULL;
static PyObject *empty_tuple = NULL;

/* Keep dict_type and list_type as the frozen types: 0, or -1 with a TypeError unless
 * they subclass dict and tuple (what the C code builds them as). */
static int
set_frozen_types(PyTypeObject *dict_type, PyTypeObject *list_type)
{
    if (!PyType_IsSubtype(dict_type, &PyDict_Type) || !PyType_IsSubtype(list_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "setup needs a dict subclass and a tuple subclass");
        return -1;
    }
    Py_XSETREF(FrozenDictType, (PyTypeObject *)Py_NewRef(dict_type));
    Py_XSETREF(FrozenListType, (PyTypeObject *)Py_NewRef(list_type));
    return 0;
}

/* For the module's init: 0, or -1 with a MemoryError. */
static int
init_frozen_types(void)
{
    empty_tuple = PyTuple_New(0);
    return empty_tuple == NULL ? -1 : 0;
}

/* The offsets of ``count`` object slots of ``cls`` (a class whose instances the C code
 * makes itself, each slot filled as its member descriptor's __set__ fills it), from the
 * tuple of their member descriptors: 0, or -1 with a TypeError unless each is a writable
 * object slot of cls (or a base).  Needs <structmember.h>. */
static inline int
slot_offsets(PyTypeObject *cls, PyObject *descriptors, Py_ssize_t *offsets, Py_ssize_t count)
{
    if (!PyTuple_Check(descriptors) || PyTuple_GET_SIZE(descriptors) != count ||
        cls->tp_alloc == NULL) {
        PyErr_Format(PyExc_TypeError, "needs a class and its %zd slot descriptors", count);
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *d = PyTuple_GET_ITEM(descriptors, k);
        PyMemberDef *member;
        if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
            PyErr_SetString(PyExc_TypeError, "needs member descriptors (slots)");
            return -1;
        }
        member = ((PyMemberDescrObject *)d)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY) ||
            !PyType_IsSubtype(cls, PyDescr_TYPE(d)) || member->offset <= 0 ||
            member->offset + (Py_ssize_t)sizeof(PyObject *) > cls->tp_basicsize) {
            PyErr_SetString(PyExc_TypeError, "needs writable object slots of the class");
            return -1;
        }
        offsets[k] = member->offset;
    }
    return 0;
}

#endif /* PTREE_FROZEN_TYPES_H */
