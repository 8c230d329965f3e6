/* The LibreChat reader's common case in C (ptree/formats/librechat.py, _Reader.direct).
 *
 * entries(messages, parents, endpoint, titled) -> (entries, their parents, first time),
 * None, or False: an export whose messages make their entries under their own ids
 * (every messageId once; an assistant's structured content an entry per step and tool
 * result, ``<messageId>#2`` … free, no part to report; the newest message without
 * replies, no cycle), its entries made (MessageEntry.unchecked's way: each slot filled
 * as its member descriptor fills it) in the order assemble writes them (parents first,
 * a message's entries a chain with its replies under the last, the leaf's branch last
 * at every fork, siblings in document order), each with its parent entry (None for a
 * root): the caller adds them to a TreeBuilder in that order.  The leaf is the last
 * entry.  None for anything else (the Python paths then read the
 * export, and say what is wrong); False for a flat list that nests after all (a
 * message with replies in ``children``).  ``parents`` None: the messages are a flat
 * list (or the linear variant) whose links are read as _Reader.flat reads them; else
 * the parent messageId (or None) of each message, as _Reader.messages gives them.
 *
 * Every rule here is the Python path's (_Reader.flat, _Reader.direct,
 * _Reader.one_entry, _Reader.step_messages, _common.plain_message_entry); tests/test_formats_librechat.py
 * compares the two paths on generated exports.  A kept field that is not a plain
 * string, number, boolean or null is frozen by ptree.frozen.freeze, as the Python
 * path freezes it; what freeze refuses gives None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <structmember.h>

#include "../_frozen_types.h"

enum { E_ID, E_PARENT, E_TIME, E_EXTRA, E_MESSAGE, E_COUNT };
static PyTypeObject *EntryType = NULL;
static Py_ssize_t entry_offsets[E_COUNT];
static PyObject *freeze_fn = NULL, *ms_fn = NULL, *zero_usage = NULL;
/* The Python owners of a tool call's pieces (_common.call_arguments, librechat's
 * _output_text, _common.text_blocks, _common.tool_result), and the frozen empty extra fields. */
static PyObject *arguments_fn = NULL, *output_fn = NULL, *text_blocks_fn = NULL,
                *tool_result_fn = NULL, *empty_frozen = NULL;

static PyObject *s_message_id, *s_parent_id, *s_children, *s_content, *s_user, *s_created,
    *s_text, *s_value, *s_model, *s_sender, *s_endpoint, *s_error, *s_unfinished, *s_role,
    *s_timestamp, *s_api, *s_provider, *s_usage, *s_stop, *s_type, *s_librechat,
    *s_error_message, *v_user, *v_assistant, *v_api, *v_librechat, *v_unknown, *v_stop,
    *v_error, *v_aborted, *v_text, *v_empty, *v_epoch, *v_no_parent, *v_session_name,
    *s_thinking, *s_tool_call, *s_id, *s_name, *s_args, *s_arguments, *s_output,
    *v_tool_call, *v_tool_use;

static PyObject *drop[5];
static Py_hash_t drop_hash[5];
/* The keys of a user's and an assistant's Pi message, in order (values replaced). */
static PyObject *user_shape = NULL, *assistant_shape = NULL, *block_shape = NULL;

/* setup(cls, descriptors, freeze, ms, zero_usage, FrozenDict, FrozenList, call_arguments,
 * output_text, text_blocks, tool_result): make entries of cls (descriptors: the member
 * descriptors of its slots id, parent_id, timestamp, extra, message); freeze kept
 * fields and structured messages with ``freeze``, convert times with ``ms`` (a str ->
 * int); ``zero_usage`` the frozen usage of every assistant message; a tool call's
 * arguments, output text, result blocks and result message made by the last four. */
static PyObject *
setup(PyObject *module, PyObject *args)
{
    PyTypeObject *cls, *dict_type, *list_type;
    PyObject *descriptors, *freeze, *ms, *usage, *arguments, *output, *blocks, *result;
    Py_ssize_t offsets[E_COUNT];
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O!OOOO!O!OOOO", &PyType_Type, &cls, &PyTuple_Type,
                          &descriptors, &freeze, &ms, &usage, &PyType_Type, &dict_type,
                          &PyType_Type, &list_type, &arguments, &output, &blocks, &result)) {
        return NULL;
    }
    if (slot_offsets(cls, descriptors, offsets, E_COUNT) < 0) return NULL;
    if (set_frozen_types(dict_type, list_type) < 0) return NULL;
    if (!Py_IS_TYPE(usage, FrozenDictType)) {
        PyErr_SetString(PyExc_TypeError, "setup needs the usage frozen");
        return NULL;
    }
    memcpy(entry_offsets, offsets, sizeof(offsets));
    Py_XSETREF(EntryType, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(freeze_fn, Py_NewRef(freeze));
    Py_XSETREF(ms_fn, Py_NewRef(ms));
    Py_XSETREF(zero_usage, Py_NewRef(usage));
    Py_XSETREF(arguments_fn, Py_NewRef(arguments));
    Py_XSETREF(output_fn, Py_NewRef(output));
    Py_XSETREF(text_blocks_fn, Py_NewRef(blocks));
    Py_XSETREF(tool_result_fn, Py_NewRef(result));
    Py_XSETREF(empty_frozen, PyDict_Type.tp_new(FrozenDictType, empty_tuple, NULL));
    if (empty_frozen == NULL) return NULL;
    PyObject_GC_UnTrack(empty_frozen);
    Py_XSETREF(user_shape, Py_BuildValue("{sOsOsO}", "role", v_user, "content", Py_None,
                                         "timestamp", Py_None));
    Py_XSETREF(assistant_shape, PyDict_New());
    Py_XSETREF(block_shape, Py_BuildValue("{sOsO}", "type", v_text, "text", Py_None));
    if (user_shape == NULL || assistant_shape == NULL || block_shape == NULL) return NULL;
    {
        PyObject *keys[8] = {s_role, s_api, s_provider, s_model, s_usage, s_timestamp, s_content,
                             s_stop};
        PyObject *values[8] = {v_assistant, v_api, Py_None, Py_None, usage, Py_None, Py_None,
                               v_stop};
        for (int k = 0; k < 8; k++) {
            if (PyDict_SetItem(assistant_shape, keys[k], values[k]) < 0) return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* 1 for a value a frozen value keeps as it is (what freeze_plain keeps), else 0. */
static int
plain(PyObject *v)
{
    if (PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyBool_Check(v) || v == Py_None) {
        return 1;
    }
    return PyFloat_CheckExact(v) && isfinite(PyFloat_AS_DOUBLE(v));
}

/* A new empty FrozenDict, or NULL. */
static PyObject *
new_frozen_dict(void)
{
    return PyDict_Type.tp_new(FrozenDictType, empty_tuple, NULL);
}

/* ``d`` done: untracked (it holds only plain values and untracked frozen ones). */
static PyObject *
done(PyObject *d)
{
    PyObject_GC_UnTrack(d);
    return d;
}

/* Whether ``key`` is one of the fields an entry does not keep (librechat.py's _DROP). */
static int
dropped(PyObject *key)
{
    Py_hash_t hash = PyObject_Hash(key); /* cached: the key of a dict */
    if (hash == -1) return -1;
    for (int k = 0; k < 5; k++) {
        if (key == drop[k]) return 1;
        if (hash == drop_hash[k]) {
            int same = PyUnicode_Compare(key, drop[k]);
            if (same == 0) return 1;
            if (same == -1 && PyErr_Occurred()) return -1;
        }
    }
    return 0;
}

/* The frozen ``{"librechat": kept}`` of a message: its fields but the dropped ones, in
 * their order.  NULL with an exception; Py_None when freeze refuses them (a ValueError,
 * cleared). */
static PyObject *
kept_extra(PyObject *message)
{
    PyObject *keep = new_frozen_dict(), *extra, *key, *value, *frozen;
    Py_ssize_t pos = 0;
    int all_plain = 1;
    if (keep == NULL) return NULL;
    while (PyDict_Next(message, &pos, &key, &value)) {
        int drop_it;
        if (!PyUnicode_CheckExact(key)) {
            all_plain = 0;
            drop_it = PyUnicode_Check(key) ? dropped(key) : 0;
        }
        else {
            drop_it = dropped(key);
        }
        if (drop_it < 0) goto fail;
        if (drop_it) continue;
        if (!plain(value)) all_plain = 0;
        if (PyDict_SetItem(keep, key, value) < 0) goto fail;
    }
    if (all_plain) {
        extra = new_frozen_dict();
        if (extra == NULL || PyDict_SetItem(extra, s_librechat, done(keep)) < 0) {
            Py_XDECREF(extra);
            goto fail;
        }
        Py_DECREF(keep);
        return done(extra);
    }
    /* freeze({"librechat": keep}) of a plain copy: nested as deep as the entry's fields
     * nest there. */
    extra = PyDict_New();
    frozen = PyDict_New();
    if (extra == NULL || frozen == NULL || PyDict_Update(frozen, keep) < 0 ||
        PyDict_SetItem(extra, s_librechat, frozen) < 0) {
        Py_XDECREF(extra);
        Py_XDECREF(frozen);
        goto fail;
    }
    Py_DECREF(frozen);
    Py_DECREF(keep);
    frozen = PyObject_CallOneArg(freeze_fn, extra);
    Py_DECREF(extra);
    if (frozen == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (frozen != NULL && !Py_IS_TYPE(frozen, FrozenDictType)) {
        Py_DECREF(frozen);
        Py_RETURN_NONE;
    }
    return frozen;
fail:
    Py_DECREF(keep);
    return NULL;
}

/* A new FrozenDict holding a copy of ``shape`` (a plain dict: its table cloned at once),
 * whose values are then replaced; NULL with an exception. */
static PyObject *
frozen_like(PyObject *shape)
{
    PyObject *d = new_frozen_dict();
    if (d != NULL && PyDict_Update(d, shape) < 0) Py_CLEAR(d);
    return d;
}

/* d.get(key) as a borrowed reference (NULL when absent), or NULL with an exception. */
#define GET(d, key) PyDict_GetItemWithError((d), (key))

/* message.get(key) or fallback, as Python's ``or``: borrowed; NULL with an exception. */
static PyObject *
get_or(PyObject *message, PyObject *key, PyObject *fallback, int *failed)
{
    PyObject *v = GET(message, key);
    int truth;
    if (v == NULL) {
        if (PyErr_Occurred()) {
            *failed = 1;
            return NULL;
        }
        return fallback;
    }
    truth = PyObject_IsTrue(v);
    if (truth < 0) {
        *failed = 1;
        return NULL;
    }
    return truth ? v : fallback;
}

/* The frozen Pi message of one message made at ``when`` (_Reader.one_entry); NULL with
 * an exception. */
/* A message's text (``text``, or its ``value``; else ""), in *text (borrowed); -1 with
 * an exception. */
static int
text_of(PyObject *message, PyObject **text)
{
    PyObject *t = GET(message, s_text);
    if (t == NULL && PyErr_Occurred()) return -1;
    if (t != NULL && PyDict_Check(t)) {
        t = GET(t, s_value);
        if (t == NULL && PyErr_Occurred()) return -1;
    }
    *text = t == NULL || !PyUnicode_Check(t) ? v_empty : t;
    return 0;
}

/* An assistant message's model (``model`` or ``sender``, else "unknown") and provider
 * (its ``endpoint`` or the export's, else "librechat"), borrowed; -1 with an
 * exception. */
static int
model_and_provider(PyObject *message, PyObject *default_endpoint, PyObject **model,
                   PyObject **provider)
{
    PyObject *m, *endpoint;
    int failed = 0;
    m = get_or(message, s_model, NULL, &failed);
    if (m == NULL && !failed) m = GET(message, s_sender);
    if (m == NULL && PyErr_Occurred()) return -1;
    endpoint = get_or(message, s_endpoint, default_endpoint, &failed);
    if (failed) return -1;
    if (endpoint == NULL || !PyUnicode_Check(endpoint) || PyUnicode_GET_LENGTH(endpoint) == 0) {
        endpoint = v_librechat;
    }
    if (m == NULL || !PyUnicode_Check(m) || PyUnicode_GET_LENGTH(m) == 0) m = v_unknown;
    *model = m;
    *provider = endpoint;
    return 0;
}

static PyObject *
pi_message(PyObject *message, PyObject *when, PyObject *default_endpoint)
{
    PyObject *text, *user, *msg = NULL, *block = NULL, *content = NULL;
    PyObject *model, *endpoint, *flag;
    if (text_of(message, &text) < 0) return NULL;
    user = GET(message, s_user);
    if (user == NULL && PyErr_Occurred()) return NULL;
    msg = frozen_like(user == Py_True ? user_shape : assistant_shape);
    if (msg == NULL) return NULL;
    if (user == Py_True) {
        if (PyDict_SetItem(msg, s_content, text) < 0 || PyDict_SetItem(msg, s_timestamp, when) < 0) {
            goto fail;
        }
        return done(msg);
    }
    if (model_and_provider(message, default_endpoint, &model, &endpoint) < 0) goto fail;
    block = frozen_like(block_shape);
    if (block == NULL || PyDict_SetItem(block, s_text, text) < 0) goto fail;
    content = FrozenListType->tp_alloc(FrozenListType, 1);
    if (content == NULL) goto fail;
    PyTuple_SET_ITEM(content, 0, done(block));
    block = NULL;
    if (PyDict_SetItem(msg, s_provider, endpoint) < 0 || PyDict_SetItem(msg, s_model, model) < 0 ||
        PyDict_SetItem(msg, s_timestamp, when) < 0 ||
        PyDict_SetItem(msg, s_content, done(content)) < 0) {
        goto fail;
    }
    Py_CLEAR(content);
    flag = GET(message, s_error);
    if (flag == NULL && PyErr_Occurred()) goto fail;
    if (flag == Py_True) {
        if (PyDict_SetItem(msg, s_stop, v_error) < 0 ||
            PyDict_SetItem(msg, s_error_message,
                           PyUnicode_GET_LENGTH(text) ? text : v_error) < 0) {
            goto fail;
        }
    }
    else {
        flag = GET(message, s_unfinished);
        if (flag == NULL && PyErr_Occurred()) goto fail;
        if (flag == Py_True && PyDict_SetItem(msg, s_stop, v_aborted) < 0) goto fail;
    }
    return done(msg);
fail:
    Py_XDECREF(block);
    Py_XDECREF(content);
    Py_DECREF(msg);
    return NULL;
}

/* A new FrozenDict of ``n`` keys and values, in their order, done; NULL with an
 * exception. */
static PyObject *
frozen_of(int n, PyObject **keys, PyObject **values)
{
    PyObject *d = new_frozen_dict();
    if (d == NULL) return NULL;
    for (int k = 0; k < n; k++) {
        if (PyDict_SetItem(d, keys[k], values[k]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return done(d);
}

/* ``freeze(value)`` for a value from Python (a tool call's arguments, its result) that
 * sits ``levels`` containers deep in its entry's fields: frozen where it is, wrapped in
 * as many lists, so that freeze counts its depth as plain_message_entry's freeze of the
 * whole message does.  A new reference; Py_None where freeze refuses it (a ValueError,
 * cleared); NULL with an exception.  Steals ``value``. */
static PyObject *
frozen_at(PyObject *value, int levels)
{
    PyObject *frozen;
    if (value == NULL) return NULL;
    for (int k = 0; k < levels; k++) {
        PyObject *wrap = PyList_New(1);
        if (wrap == NULL) {
            Py_DECREF(value);
            return NULL;
        }
        PyList_SET_ITEM(wrap, 0, value);
        value = wrap;
    }
    frozen = PyObject_CallOneArg(freeze_fn, value);
    Py_DECREF(value);
    if (frozen == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
        PyErr_Clear();
        Py_RETURN_NONE; /* not JSON, or too deep: the general path says why */
    }
    for (int k = 0; k < levels; k++) {
        PyObject *inner;
        if (!PyTuple_Check(frozen) || PyTuple_GET_SIZE(frozen) != 1) {
            Py_DECREF(frozen);
            Py_RETURN_NONE;
        }
        inner = Py_NewRef(PyTuple_GET_ITEM(frozen, 0));
        Py_SETREF(frozen, inner);
    }
    return frozen;
}

/* One step of structured content as _Reader.step_messages makes it: the frozen
 * assistant message of ``blocks`` (frozen blocks; ``results``: its frozen tool
 * results, appended after it; ``last``: the message's last step) appended to ``out``;
 * -1 with an exception. */
static int
add_step(PyObject *out, PyObject *message, PyObject *names[3], PyObject *when, PyObject *blocks,
         PyObject *results, int last)
{
    Py_ssize_t n = PyList_GET_SIZE(blocks);
    PyObject *msg = frozen_like(assistant_shape), *flag,
             *content = FrozenListType->tp_alloc(FrozenListType, n);
    if (msg == NULL || content == NULL) goto fail;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyTuple_SET_ITEM(content, k, Py_NewRef(PyList_GET_ITEM(blocks, k)));
    }
    if (PyDict_SetItem(msg, s_provider, names[2]) < 0 ||
        PyDict_SetItem(msg, s_model, names[1]) < 0 || PyDict_SetItem(msg, s_timestamp, when) < 0 ||
        PyDict_SetItem(msg, s_content, done(content)) < 0 ||
        (PyList_GET_SIZE(results) && PyDict_SetItem(msg, s_stop, v_tool_use) < 0)) {
        goto fail;
    }
    Py_CLEAR(content);
    if (last) {
        flag = GET(message, s_error);
        if (flag == NULL && PyErr_Occurred()) goto fail;
        if (flag == Py_True) {
            if (PyDict_SetItem(msg, s_stop, v_error) < 0 ||
                PyDict_SetItem(msg, s_error_message,
                               PyUnicode_GET_LENGTH(names[0]) ? names[0] : v_error) < 0) {
                goto fail;
            }
        }
        else {
            flag = GET(message, s_unfinished);
            if (flag == NULL && PyErr_Occurred()) goto fail;
            if (flag == Py_True && PyDict_SetItem(msg, s_stop, v_aborted) < 0) goto fail;
        }
    }
    if (PyList_Append(out, done(msg)) < 0) goto fail;
    Py_DECREF(msg);
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(results); k++) {
        if (PyList_Append(out, PyList_GET_ITEM(results, k)) < 0) return -1;
    }
    return 0;
fail:
    Py_XDECREF(msg);
    Py_XDECREF(content);
    return -1;
}

/* The frozen Pi messages of an assistant's structured ``content`` (a non-empty list)
 * made at ``when``, as _Reader.step_messages makes them with ``strict`` (and
 * plain_message_entry freezes them): a new list; Py_None for a part that is not an
 * object or that would be reported, or values freeze refuses; NULL with an exception.
 * A tool call's arguments, output and result are made by their Python owners
 * (arguments_fn, output_fn, text_blocks_fn, tool_result_fn). */
static PyObject *
structured(PyObject *message, PyObject *content, PyObject *when, PyObject *default_endpoint)
{
    PyObject *names[3], *out, *blocks, *results;
    if (text_of(message, &names[0]) < 0) return NULL;
    if (model_and_provider(message, default_endpoint, &names[1], &names[2]) < 0) return NULL;
    out = PyList_New(0);
    blocks = PyList_New(0);
    results = PyList_New(0);
    if (out == NULL || blocks == NULL || results == NULL) goto fail;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(content); j++) {
        PyObject *part = PyList_GET_ITEM(content, j), *ptype, *block, *call;
        int is_call = 0, text_kind = -1; /* 0 text, 1 think, 2 error */
        if (!PyDict_Check(part)) goto other;
        ptype = GET(part, s_type);
        if (ptype == NULL && PyErr_Occurred()) goto fail;
        if (ptype != NULL && PyUnicode_Check(ptype)) {
            is_call = PyUnicode_CompareWithASCIIString(ptype, "tool_call") == 0;
            if (PyUnicode_CompareWithASCIIString(ptype, "text") == 0) text_kind = 0;
            else if (PyUnicode_CompareWithASCIIString(ptype, "think") == 0) text_kind = 1;
            else if (PyUnicode_CompareWithASCIIString(ptype, "error") == 0) text_kind = 2;
        }
        if (!is_call && PyList_GET_SIZE(results)) { /* the step ends at a part after calls */
            if (add_step(out, message, names, when, blocks, results, 0) < 0) goto fail;
            Py_SETREF(blocks, PyList_New(0));
            Py_SETREF(results, PyList_New(0));
            if (blocks == NULL || results == NULL) goto fail;
        }
        if (text_kind >= 0) {
            PyObject *value = GET(part, ptype);
            if (value == NULL && PyErr_Occurred()) goto fail;
            if (value != NULL && PyDict_Check(value)) {
                value = GET(value, s_value);
                if (value == NULL && PyErr_Occurred()) goto fail;
            }
            if (value == NULL || !PyUnicode_Check(value)) value = v_empty;
            {
                PyObject *keys[2] = {s_type, text_kind == 1 ? s_thinking : s_text};
                PyObject *values[2] = {text_kind == 1 ? s_thinking : v_text, value};
                block = frozen_of(2, keys, values);
            }
            if (block == NULL || PyList_Append(blocks, block) < 0) {
                Py_XDECREF(block);
                goto fail;
            }
            Py_DECREF(block);
            continue;
        }
        call = is_call ? GET(part, s_tool_call) : NULL;
        if (call == NULL && PyErr_Occurred()) goto fail;
        if (call == NULL || !PyDict_Check(call)) goto other; /* a part reported */
        {
            PyObject *id = GET(call, s_id), *name, *args, *output, *text = NULL, *tb = NULL,
                     *result = NULL;
            int refused = 0;
            block = NULL;
            if (id == NULL && PyErr_Occurred()) goto fail;
            if (id == NULL || !PyUnicode_Check(id) || PyUnicode_GET_LENGTH(id) == 0) {
                id = PyUnicode_FromFormat("call-%zd", j);
            }
            else {
                Py_INCREF(id);
            }
            if (id == NULL) goto fail;
            name = GET(call, s_name);
            args = name == NULL && PyErr_Occurred() ? NULL : GET(call, s_args);
            if (name == NULL || !PyUnicode_Check(name)) name = v_unknown;
            if (args == NULL && PyErr_Occurred()) {
                /* an error: none below */
            }
            else if (args == NULL || args == Py_None) {
                block = new_frozen_dict(); /* arguments {} */
                args = block == NULL ? NULL : done(block);
                block = NULL;
            }
            else {
                /* tuple, message, content, block: the arguments are the fifth level */
                args = frozen_at(PyObject_CallOneArg(arguments_fn, args), 4);
                refused = args == Py_None;
            }
            if (args != NULL && !refused) {
                PyObject *keys[4] = {s_type, s_id, s_name, s_arguments};
                PyObject *values[4] = {v_tool_call, id, name, args};
                block = frozen_of(4, keys, values);
                if (block != NULL && PyList_Append(blocks, block) < 0) Py_CLEAR(block);
            }
            Py_XDECREF(args);
            if (block != NULL) {
                Py_CLEAR(block);
                output = GET(call, s_output);
                if (output != NULL || !PyErr_Occurred()) {
                    text = PyObject_CallOneArg(output_fn, output == NULL ? Py_None : output);
                }
            }
            if (text != NULL) tb = PyObject_CallOneArg(text_blocks_fn, text);
            if (tb != NULL) {
                /* tuple, message: the result is the second level */
                result = frozen_at(PyObject_CallFunctionObjArgs(tool_result_fn, id, name, tb,
                                                                Py_False, when, NULL),
                                   1);
                refused = result == Py_None;
            }
            Py_XDECREF(text);
            Py_XDECREF(tb);
            Py_DECREF(id);
            if (refused) {
                Py_XDECREF(result);
                goto other;
            }
            if (result == NULL || PyList_Append(results, result) < 0) {
                Py_XDECREF(result);
                goto fail;
            }
            Py_DECREF(result);
        }
    }
    if (add_step(out, message, names, when, blocks, results, 1) < 0) goto fail;
    Py_DECREF(blocks);
    Py_DECREF(results);
    return out;
other:
    Py_DECREF(out);
    Py_DECREF(blocks);
    Py_DECREF(results);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(out);
    Py_XDECREF(blocks);
    Py_XDECREF(results);
    return NULL;
}

/* The Unix milliseconds of a time written the one way LibreChat (JavaScript's
 * toISOString) writes it, ``yyyy-mm-ddThh:mm:ss.sssZ`` (year 0001-9999, hour 00-23),
 * as ptree.context.iso_to_ms reads it (a day up to 31 in any month rolls over), in
 * *ms; 1, or 0 for any other text (the caller asks iso_to_ms, through ms_fn). */
static int
fixed_ms(PyObject *text, long long *ms)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    const char *c;
    long long year, month, day, hour, minute, second, milli, era, yoe, doy, doe;
    if (PyUnicode_GET_LENGTH(text) != 24 || !PyUnicode_IS_ASCII(text)) return 0;
    c = (const char *)PyUnicode_DATA(text);
    for (int k = 0; k < 24; k++) {
        if (shape[k] == 'd' ? (c[k] < '0' || c[k] > '9') : c[k] != shape[k]) return 0;
    }
#define NUM2(at) ((c[at] - '0') * 10 + (c[(at) + 1] - '0'))
    year = NUM2(0) * 100 + NUM2(2);
    month = NUM2(5);
    day = NUM2(8);
    hour = NUM2(11);
    minute = NUM2(14);
    second = NUM2(17);
    milli = (c[20] - '0') * 100 + NUM2(21);
#undef NUM2
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
        second > 59) {
        return 0;
    }
    /* Hinnant's days_from_civil, as context._days_before_month (year >= 0 here). */
    year -= month <= 2;
    era = year / 400;
    yoe = year - era * 400;
    doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *ms = ((era * 146097 + doe - 719468) + day - 1) * 86400000LL +
          ((hour * 60 + minute) * 60 + second) * 1000 + milli;
    return 1;
}

/* ms_fixed(text) -> fixed_ms's milliseconds, or None (for the tests). */
static PyObject *
ms_fixed(PyObject *module, PyObject *text)
{
    long long ms;
    (void)module;
    if (!PyUnicode_Check(text) || !fixed_ms(text, &ms)) Py_RETURN_NONE;
    return PyLong_FromLongLong(ms);
}

/* A new entry of EntryType holding the given values (borrowed), or NULL. */
static PyObject *
make_entry(PyObject *values[E_COUNT])
{
    PyObject *entry = EntryType->tp_alloc(EntryType, 0);
    if (entry == NULL) return NULL;
    for (int k = 0; k < E_COUNT; k++) {
        PyObject **slot = (PyObject **)((char *)entry + entry_offsets[k]);
        Py_XSETREF(*slot, Py_NewRef(values[k]));
    }
    return entry;
}

/* The id of an entry of EntryType (borrowed). */
#define ENTRY_ID(entry) (*(PyObject **)((char *)(entry) + entry_offsets[E_ID]))

typedef struct {
    PyObject *id;     /* borrowed from the message */
    PyObject *parent; /* the parent messageId given (borrowed), or NULL */
    PyObject *stamp;  /* the entry's timestamp (borrowed) */
    PyObject *when;   /* Unix ms (owned) */
    PyObject *content; /* an assistant's structured content (borrowed), or NULL */
    Py_ssize_t up;    /* the parent's position, or -1 */
    Py_ssize_t first_kid, kids, toward, next; /* the replies, the one toward the leaf */
} Item;

static PyObject *
entries(PyObject *module, PyObject *args)
{
    PyObject *messages, *given, *endpoint, *index = NULL, *result = NULL, *made = NULL,
                                           *ups = NULL, *first_time = NULL, *previous = NULL;
    int titled;
    Py_ssize_t n, newest = -1, count = 0, *order = NULL, *stack = NULL, *kid_list = NULL;
    long long newest_when = 0;
    Item *items = NULL;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!OOp", &PyList_Type, &messages, &given, &endpoint, &titled)) {
        return NULL;
    }
    if (EntryType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree.formats._librechat.setup was not called");
        return NULL;
    }
    n = PyList_GET_SIZE(messages);
    if (n == 0 || (given != Py_None && (!PyList_CheckExact(given) || PyList_GET_SIZE(given) != n))) {
        Py_RETURN_NONE;
    }
    items = PyMem_Calloc(n, sizeof(Item));
    order = PyMem_Calloc(n, sizeof(Py_ssize_t));
    stack = PyMem_Calloc(n, sizeof(Py_ssize_t));
    kid_list = PyMem_Calloc(n, sizeof(Py_ssize_t));
    index = PyDict_New();
    if (items == NULL || order == NULL || stack == NULL || kid_list == NULL || index == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    /* Pass 1: each message's place, the newest, the first time (_Reader.direct). */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *m = PyList_GET_ITEM(messages, i), *mid, *parent = NULL, *content, *stamp, *pos;
        Item *it = &items[i];
        long long when = 0;
        int has;
        if (!PyDict_CheckExact(m)) goto other;
        mid = GET(m, s_message_id);
        if (mid == NULL) {
            if (PyErr_Occurred()) goto fail;
            goto other;
        }
        if (!PyUnicode_CheckExact(mid) || PyUnicode_GET_LENGTH(mid) == 0) goto other;
        if (given == Py_None) { /* _Reader.flat */
            PyObject *children;
            PyObject *g = GET(m, s_parent_id);
            if (g == NULL && PyErr_Occurred()) goto fail;
            if (g == NULL) {
                parent = previous;
            }
            else if (g == Py_None) {
                parent = NULL;
            }
            else if (PyUnicode_CheckExact(g)) {
                int root = PyUnicode_Compare(g, v_no_parent);
                if (root == -1 && PyErr_Occurred()) goto fail;
                parent = root == 0 ? NULL : g;
            }
            else {
                goto other;
            }
            children = GET(m, s_children);
            if (children == NULL && PyErr_Occurred()) goto fail;
            if (children != NULL && children != Py_None) {
                if (!PyList_CheckExact(children)) goto other;
                if (PyList_GET_SIZE(children)) {
                    result = Py_NewRef(Py_False);
                    goto fail;
                }
            }
            previous = mid;
        }
        else {
            PyObject *g = PyList_GET_ITEM(given, i);
            if (g != Py_None && !PyUnicode_CheckExact(g)) goto other;
            parent = g == Py_None ? NULL : g;
        }
        has = PyDict_Contains(index, mid);
        if (has < 0) goto fail;
        if (has) goto other; /* a second message of that id */
        content = GET(m, s_content);
        if (content == NULL && PyErr_Occurred()) goto fail;
        if (content != NULL && PyList_Check(content) && PyList_GET_SIZE(content) &&
            GET(m, s_user) != Py_True) {
            it->content = content; /* an entry per step and tool result */
        }
        if (PyErr_Occurred()) goto fail;
        stamp = GET(m, s_created);
        if (stamp == NULL && PyErr_Occurred()) goto fail;
        if (stamp != NULL && PyUnicode_Check(stamp)) {
            if (first_time == NULL) first_time = stamp;
            if (fixed_ms(stamp, &when)) {
                it->when = PyLong_FromLongLong(when);
                if (it->when == NULL) goto fail;
            }
            else {
                it->when = PyObject_CallOneArg(ms_fn, stamp);
                if (it->when == NULL) goto fail;
                when = PyLong_AsLongLong(it->when);
                if (when == -1 && PyErr_Occurred()) goto fail;
            }
            it->stamp = PyUnicode_GET_LENGTH(stamp) ? stamp : v_epoch;
        }
        else {
            it->when = PyLong_FromLong(0);
            if (it->when == NULL) goto fail;
            it->stamp = v_epoch;
        }
        it->id = mid;
        it->parent = parent;
        if (newest < 0 || when >= newest_when) {
            newest = i;
            newest_when = when;
        }
        pos = PyLong_FromSsize_t(i);
        if (pos == NULL || PyDict_SetItem(index, mid, pos) < 0) {
            Py_XDECREF(pos);
            goto fail;
        }
        Py_DECREF(pos);
    }
    /* The newest message without replies, the title's id free. */
    if (titled) {
        int has = PyDict_Contains(index, v_session_name);
        if (has < 0) goto fail;
        if (has) goto other;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Item *it = &items[i];
        PyObject *pos;
        it->up = -1;
        it->toward = -1;
        it->first_kid = -1;
        if (it->parent == NULL) continue;
        if (it->parent == items[newest].id) goto other;
        {
            int same = PyUnicode_Compare(it->parent, items[newest].id);
            if (same == -1 && PyErr_Occurred()) goto fail;
            if (same == 0) goto other;
        }
        pos = GET(index, it->parent);
        if (pos == NULL) {
            if (PyErr_Occurred()) goto fail;
            continue; /* no such message: a root */
        }
        it->up = PyLong_AsSsize_t(pos);
        if (it->up == i) {
            if (it->content != NULL) goto other; /* the general path makes its chain a cycle */
            it->up = -1;                         /* its own parent: a root */
        }
    }
    /* The replies of each message in document order (a list per message, in kid_list). */
    {
        Py_ssize_t *last = stack; /* the last reply so far, per message (reused below) */
        Py_ssize_t root_first = -1, root_last = -1;
        for (Py_ssize_t i = 0; i < n; i++) last[i] = -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t up = items[i].up;
            items[i].next = -1;
            if (up < 0) {
                if (root_last < 0) root_first = i;
                else items[root_last].next = i;
                root_last = i;
            }
            else {
                if (last[up] < 0) items[up].first_kid = i;
                else items[last[up]].next = i;
                last[up] = i;
                items[up].kids++;
            }
        }
        /* The leaf's ancestors: at each, the reply toward the leaf (a cycle above the
         * leaf ends the walk; its messages are never reached, below). */
        Py_ssize_t root_toward = -1, step = newest;
        for (Py_ssize_t k = 0; k < n && step >= 0; k++) {
            Py_ssize_t up = items[step].up;
            if (up < 0) root_toward = step;
            else items[up].toward = step;
            step = up;
        }
        /* Depth first, each message's replies popped in document order but the one
         * toward the leaf, which comes last (_common.push_order). */
        Py_ssize_t top = 0;
#define PUSH_ALL(first, toward_one)                                            \
    do {                                                                       \
        Py_ssize_t _t = (toward_one), _c, _k = 0, _start;                      \
        if (_t >= 0) stack[top++] = _t;                                        \
        _start = top;                                                          \
        for (_c = (first); _c >= 0; _c = items[_c].next) {                     \
            if (_c != _t) kid_list[_k++] = _c;                                 \
        }                                                                      \
        while (_k > 0) stack[top++] = kid_list[--_k];                          \
        (void)_start;                                                          \
    } while (0)
        for (Py_ssize_t i = 0; i < n; i++) last[i] = -1;
        stack = PyMem_Calloc(n, sizeof(Py_ssize_t));
        if (stack == NULL) {
            stack = last;
            PyErr_NoMemory();
            goto fail;
        }
        PyMem_Free(last);
        {
            int toward_is_root = 0;
            for (Py_ssize_t c = root_first; c >= 0; c = items[c].next) {
                if (c == root_toward) toward_is_root = 1;
            }
            PUSH_ALL(root_first, toward_is_root ? root_toward : -1);
        }
        while (top > 0) {
            Py_ssize_t i = stack[--top];
            Item *it = &items[i];
            order[count++] = i;
            if (it->kids == 1) {
                stack[top++] = it->first_kid;
            }
            else if (it->kids > 1) {
                PUSH_ALL(it->first_kid, it->toward);
            }
        }
#undef PUSH_ALL
    }
    if (count != n || order[n - 1] != newest) goto other; /* a cycle */
    /* The entries, parents first: a structured message's as a chain, its replies under
     * its last entry. */
    made = PyList_New(0);
    ups = PyList_New(0);
    if (made == NULL || ups == NULL) goto fail;
    {
        PyObject **by_pos = (PyObject **)kid_list; /* each message's last entry (borrowed) */
        for (Py_ssize_t k = 0; k < n; k++) {
            Py_ssize_t i = order[k];
            Item *it = &items[i];
            PyObject *m = PyList_GET_ITEM(messages, i), *extra, *msgs, *up;
            PyObject *values[E_COUNT];
            int appended;
            extra = kept_extra(m);
            if (extra == NULL) goto fail;
            if (extra == Py_None) {
                Py_DECREF(extra);
                goto other;
            }
            up = it->up < 0 ? Py_None : by_pos[it->up];
            values[E_TIME] = it->stamp;
            if (it->content == NULL) {
                PyObject *msg = pi_message(m, it->when, endpoint), *entry;
                if (msg == NULL) {
                    Py_DECREF(extra);
                    goto fail;
                }
                values[E_ID] = it->id;
                values[E_PARENT] = up == Py_None ? Py_None : ENTRY_ID(up);
                values[E_EXTRA] = extra;
                values[E_MESSAGE] = msg;
                entry = make_entry(values);
                Py_DECREF(extra);
                Py_DECREF(msg);
                if (entry == NULL) goto fail;
                appended = PyList_Append(made, entry) < 0 || PyList_Append(ups, up) < 0;
                Py_DECREF(entry);
                if (appended) goto fail;
                by_pos[i] = entry;
                continue;
            }
            msgs = structured(m, it->content, it->when, endpoint);
            if (msgs == NULL || msgs == Py_None) {
                Py_DECREF(extra);
                if (msgs == NULL) goto fail;
                Py_DECREF(msgs);
                goto other;
            }
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(msgs); j++) {
                PyObject *eid, *entry = NULL;
                int taken = 0;
                if (j == 0) {
                    eid = Py_NewRef(it->id);
                }
                else {
                    eid = PyUnicode_FromFormat("%U#%zd", it->id, j + 1);
                    if (eid != NULL) taken = PyDict_Contains(index, eid);
                }
                if (eid != NULL && taken == 0) {
                    values[E_ID] = eid;
                    values[E_PARENT] = up == Py_None ? Py_None : ENTRY_ID(up);
                    values[E_MESSAGE] = PyList_GET_ITEM(msgs, j);
                    values[E_EXTRA] = j ? empty_frozen : extra; /* kept on the first */
                    entry = make_entry(values);
                }
                Py_XDECREF(eid);
                if (entry == NULL) {
                    Py_DECREF(extra);
                    Py_DECREF(msgs);
                    if (taken == 1) goto other; /* an id taken: the general path renames */
                    goto fail;
                }
                appended = PyList_Append(made, entry) < 0 || PyList_Append(ups, up) < 0;
                Py_DECREF(entry);
                if (appended) {
                    Py_DECREF(extra);
                    Py_DECREF(msgs);
                    goto fail;
                }
                up = entry; /* held by made */
            }
            Py_DECREF(extra);
            Py_DECREF(msgs);
            by_pos[i] = up;
        }
    }
    result = Py_BuildValue("(OOO)", made, ups, first_time == NULL ? Py_None : first_time);
    goto fail; /* clean up */
other:
    result = Py_NewRef(Py_None);
fail:
    if (items != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(items[i].when);
    }
    PyMem_Free(items);
    PyMem_Free(order);
    PyMem_Free(stack);
    PyMem_Free(kid_list);
    Py_XDECREF(index);
    Py_XDECREF(made);
    Py_XDECREF(ups);
    return result;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(cls, descriptors, freeze, ms, zero_usage, FrozenDict, FrozenList, call_arguments, "
     "output_text, text_blocks, tool_result)."},
    {"ms_fixed", ms_fixed, METH_O, "ms_fixed(text) -> Unix ms of yyyy-mm-ddThh:mm:ss.sssZ, or None."},
    {"entries", entries, METH_VARARGS,
     "entries(messages, parents, endpoint, titled) -> (entries, parents, first time), None "
     "or False."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "ptree.formats._librechat",
    "The LibreChat reader's common case in C (see ptree/formats/_librechat.c).", -1, methods,
};

#define STR(var, text)                                  \
    do {                                                \
        var = PyUnicode_InternFromString(text);         \
        if (var == NULL) return NULL;                   \
    } while (0)

PyMODINIT_FUNC
PyInit__librechat(void)
{
    if (init_frozen_types() < 0) return NULL;
    STR(s_message_id, "messageId");
    STR(s_parent_id, "parentMessageId");
    STR(s_children, "children");
    STR(s_content, "content");
    STR(s_user, "isCreatedByUser");
    STR(s_created, "createdAt");
    STR(s_text, "text");
    STR(s_value, "value");
    STR(s_model, "model");
    STR(s_sender, "sender");
    STR(s_endpoint, "endpoint");
    STR(s_error, "error");
    STR(s_unfinished, "unfinished");
    STR(s_role, "role");
    STR(s_timestamp, "timestamp");
    STR(s_api, "api");
    STR(s_provider, "provider");
    STR(s_usage, "usage");
    STR(s_stop, "stopReason");
    STR(s_type, "type");
    STR(s_librechat, "librechat");
    STR(s_error_message, "errorMessage");
    STR(v_user, "user");
    STR(v_assistant, "assistant");
    STR(v_api, "librechat-export");
    STR(v_librechat, "librechat");
    STR(v_unknown, "unknown");
    STR(v_stop, "stop");
    STR(v_error, "error");
    STR(v_aborted, "aborted");
    STR(v_text, "text");
    STR(v_empty, "");
    STR(v_epoch, "1970-01-01T00:00:00.000Z");
    STR(v_no_parent, "00000000-0000-0000-0000-000000000000");
    STR(v_session_name, "session-name");
    STR(s_thinking, "thinking");
    STR(s_tool_call, "tool_call");
    STR(s_id, "id");
    STR(s_name, "name");
    STR(s_args, "args");
    STR(s_arguments, "arguments");
    STR(s_output, "output");
    STR(v_tool_call, "toolCall");
    STR(v_tool_use, "toolUse");
    drop[0] = s_text;
    drop[1] = s_content;
    drop[2] = s_children;
    drop[3] = s_parent_id;
    drop[4] = s_message_id;
    for (int k = 0; k < 5; k++) {
        drop_hash[k] = PyObject_Hash(drop[k]);
        if (drop_hash[k] == -1) return NULL;
    }
    return PyModule_Create(&module);
}
