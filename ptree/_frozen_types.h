/* What ptree's two C extensions (ptree/_cfrozen.c, ptree/pi/_scan.c) share: the types
 * of the frozen values they build, ptree.frozen's FrozenDict and FrozenList, which
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

#endif /* PTREE_FROZEN_TYPES_H */
