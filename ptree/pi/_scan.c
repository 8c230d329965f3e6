/* The Pi reader's line scanner, in C: one pass over the bytes of a session file that
 * recognises plain message lines and checks each one whole, without building it.
 *
 * scan(data, start, limit, entries=False) reads the lines of the bytes ``data`` from
 * offset ``start`` (the start of a line), at most ``limit`` of them, and returns
 * ``(items, next)``: one item per line, and the offset where the next call starts
 * (len(data) at the end).  An item is
 *
 *   (id, parentId, timestamp, span, shape)
 *                                       for a line the ordinary reader would read as
 *                                       exactly {"type":"message","id":...,
 *                                       "parentId":...,"timestamp":...,"message":{...}}
 *                                       with a string role; ``span`` is the
 *                                       message's JSON text (a Span, below), ``shape``
 *                                       the message's (ptree.entries.message_shape);
 *                                       (with ``entries``, the entry of these values
 *                                       that LazyMessageEntry.pending makes, made in C:
 *                                       see entries() below);
 *   an int, the line's start offset,    for any other line: the ordinary reader takes
 *                                       it (and gives every error it gives today).
 *
 * "Would read as" means: the line is valid JSON as Python's json module reads it with
 * ptree's hooks (strict strings: no raw control characters; valid escapes; valid UTF-8
 * as Python's strict decoder has it; numbers by JSON's grammar, a number with a
 * fraction or exponent finite as a double), nested at most MAX_NESTING levels, with
 * nothing before or after the object.  Whatever this scanner is not sure of (an escape
 * in a key or in id/parentId/timestamp/type, a duplicate or unknown key, a number
 * longer than MAX_NUMBER characters, blanks around the line, ...) makes
 * the line "other": that costs time, never a different result.
 *
 * Iterative: nesting is tracked on a fixed array of MAX_NESTING levels, never by
 * recursion.  Every read is bounds-checked against the end of the line.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../_frozen_types.h"

#define MAX_NESTING 64  /* ptree.pi.fast.FAST_DEPTH: the line's object is level 1 */
#define MAX_NUMBER 100  /* longer numbers go the ordinary way (Python's int limits) */

typedef const unsigned char *ptr;

static ptr
skip_ws(ptr p, ptr end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
        p++;
    }
    return p;
}

static int
is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* One UTF-8 sequence starting at p (p[0] >= 0x80), as Python's strict decoder takes
 * it (Unicode's well-formed sequences: no overlongs, no surrogates, <= U+10FFFF).
 * The position after it, or NULL. */
static ptr
utf8_char(ptr p, ptr end)
{
    unsigned char c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if (end - p < 2 || (p[1] & 0xC0) != 0x80) return NULL;
        return p + 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        if (end - p < 3 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return NULL;
        return p + 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
        if (end - p < 4 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80)
            return NULL;
        return p + 4;
    }
    return NULL;
}

/* Bytes a string holds as they are: ASCII, no control character, quote or backslash. */
static unsigned char plain[256];

/* What follows a backslash in a valid escape: the escape's length (6 for \uXXXX, whose
 * four hex digits are checked apart), or 0. */
static unsigned char escape_length[256];

static void
init_plain(void)
{
    for (int c = 0x20; c < 0x80; c++) plain[c] = c != '"' && c != '\\';
    for (const char *c = "\"\\/bfnrt"; *c; c++) escape_length[(unsigned char)*c] = 2;
    escape_length['u'] = 6;
}

/* Skipping the plain bytes of a string a block at a time: what makes the scanner fast,
 * since strings are nearly all of a session's bytes.  A block is 16 bytes with SSE2
 * (every x86-64): one signed compare with 0x20 finds both the control characters and
 * the bytes >= 0x80, two more the quote and the backslash, and the first such byte is
 * the lowest bit of the mask.  Elsewhere, 8 bytes in a machine word: the classic
 * "has a byte less than n" tests say whether the word holds one, and the byte loop
 * then finds it.  Both read only [p, end). */
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>

static inline ptr
skip_plain(ptr p, ptr end)
{
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                                _mm_cmpeq_epi8(v, backslash)),
                                   _mm_cmplt_epi8(v, space)); /* signed: >= 0x80 too */
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask != 0) return p + __builtin_ctz(mask);
        p += 16;
    }
    while (p < end && plain[*p]) p++;
    return p;
}
#else
#include <stdint.h>

static inline ptr
skip_plain(ptr p, ptr end)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (end - p >= 8) {
        uint64_t v, q, b;
        memcpy(&v, p, 8);
        q = v ^ (ones * '"');
        b = v ^ (ones * '\\');
        /* a zero byte in q or b, a byte < 0x20 in v, or a byte >= 0x80 in v */
        if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v) | v) & highs)
            break;
        p += 8;
    }
    while (p < end && plain[*p]) p++;
    return p;
}
#endif

/* A JSON string whose opening quote is at p.  The position after the closing quote,
 * or NULL; *escaped says whether it holds a backslash escape. */
static ptr
string(ptr p, ptr end, int *escaped)
{
    *escaped = 0;
    p++;
    for (;;) {
        unsigned char c;
        p = skip_plain(p, end);
        if (p >= end) return NULL;
        c = *p;
        if (c == '"') return p + 1;
        if (c == '\\') {
            unsigned char n;
            *escaped = 1;
            if (end - p < 2) return NULL;
            n = escape_length[p[1]];
            if (n == 0) return NULL;
            if (n == 6 && (end - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) ||
                           !is_hex(p[5])))
                return NULL;
            p += n;
        }
        else if (c < 0x20) {
            return NULL;
        }
        else {
            p = utf8_char(p, end);
            if (p == NULL) return NULL;
        }
    }
}

/* A JSON number starting at p: the position after it, or NULL (bad grammar, too
 * long, or a fraction/exponent that reads as infinity).  A number with a fraction or
 * an exponent is read as a double only when it might not be finite: one whose integer
 * digits plus its exponent are at most 308 is below 10^308 (< DBL_MAX) whatever its
 * digits are, and one without an exponent has at most MAX_NUMBER digits. */
static ptr
number(ptr p, ptr end)
{
    ptr start = p;
    int is_float = 0, exponent = 0, negative_exponent = 0;
    Py_ssize_t digits;
    if (p < end && *p == '-') p++;
    if (p >= end) return NULL;
    if (*p == '0') {
        p++;
    }
    else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    else {
        return NULL;
    }
    digits = p - start;
    if (p < end && *p == '.') {
        is_float = 1;
        p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_float = 2;
        p++;
        if (p < end && (*p == '+' || *p == '-')) negative_exponent = *p++ == '-';
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') {
            if (exponent < 10000) exponent = exponent * 10 + (*p - '0');
            p++;
        }
    }
    if (p - start > MAX_NUMBER) return NULL;
    if (is_float == 2 && !negative_exponent && digits + exponent > 308) {
        char text[MAX_NUMBER + 1];
        double value;
        memcpy(text, start, (size_t)(p - start));
        text[p - start] = '\0';
        value = PyOS_string_to_double(text, NULL, NULL);
        if (value == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (!isfinite(value)) return NULL;
    }
    return p;
}

static ptr
literal(ptr p, ptr end, const char *word, Py_ssize_t n)
{
    if (end - p < n || memcmp(p, word, (size_t)n) != 0) return NULL;
    return p + n;
}

/* A member's name and the colon after it, from p (at the name, blanks before it
 * skipped): the position after the colon, or NULL. */
static inline ptr
member_name(ptr p, ptr end)
{
    int escaped;
    if (p >= end || *p != '"') return NULL;
    p = string(p, end, &escaped);
    if (p == NULL) return NULL;
    p = skip_ws(p, end);
    if (p >= end || *p != ':') return NULL;
    return p + 1;
}

/* Any JSON value starting at p (after blanks), nested inside ``level`` containers
 * already.  The position after it, or NULL (invalid, or deeper than MAX_NESTING). */
static ptr
value(ptr p, ptr end, int level)
{
    char stack[MAX_NESTING + 1];
    int depth = 0; /* containers open in this value */
    int escaped;
    for (;;) {
        /* a value starts here */
        p = skip_ws(p, end);
        if (p >= end) return NULL;
        if (*p == '{' || *p == '[') {
            char open = (char)*p;
            if (level + depth + 1 > MAX_NESTING) return NULL;
            stack[depth++] = open;
            p = skip_ws(p + 1, end);
            if (p < end && *p == (open == '{' ? '}' : ']')) {
                depth--;
                p++;
            }
            else if (open == '{') {
                p = member_name(p, end);
                if (p == NULL) return NULL;
                continue; /* the member's value */
            }
            else {
                continue; /* the first item */
            }
        }
        else if (*p == '"') {
            p = string(p, end, &escaped);
        }
        else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            p = number(p, end);
        }
        else if (*p == 't') {
            p = literal(p, end, "true", 4);
        }
        else if (*p == 'f') {
            p = literal(p, end, "false", 5);
        }
        else if (*p == 'n') {
            p = literal(p, end, "null", 4);
        }
        else {
            return NULL;
        }
        if (p == NULL) return NULL;
        /* a value ended: close containers, or go on to the next member or item */
        for (;;) {
            if (depth == 0) return p;
            p = skip_ws(p, end);
            if (p >= end) return NULL;
            if (*p == ',') {
                p++;
                if (stack[depth - 1] == '{') {
                    p = member_name(skip_ws(p, end), end);
                    if (p == NULL) return NULL;
                }
                break; /* the next value */
            }
            if (*p == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                p++;
                continue;
            }
            return NULL;
        }
    }
}

/* The shape flags of ptree.entries (SHAPE_NO_CONTENT ...): what a context walk needs
 * to know of a message without decoding it.  tests/test_scanner.py checks that they
 * agree with ptree.entries.message_shape on the decoded message. */
enum { SHAPE_NO_CONTENT = 1, SHAPE_SYSTEM = 2, SHAPE_ASSISTANT = 4 };

/* The message object at p (level 2 of the line): valid, with exactly one key "role"
 * (no key spelled with an escape) whose value is a string without escapes.  After it,
 * or NULL; *shape is set to the message's shape (its content absent or null, the last
 * "content" key counting as json's decoder has it; its role "system" or "assistant"). */
static ptr
message(ptr p, ptr end, int *shape)
{
    int escaped, roles = 0, role_shape = 0, no_content = 1;
    if (p >= end || *p != '{') return NULL;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') return NULL; /* no role */
    for (;;) {
        ptr key = p, after;
        if (p >= end || *p != '"') return NULL;
        p = string(p, end, &escaped);
        if (p == NULL || escaped) return NULL;
        after = p;
        p = skip_ws(p, end);
        if (p >= end || *p != ':') return NULL;
        p = skip_ws(p + 1, end);
        if (after - key == 6 && memcmp(key, "\"role\"", 6) == 0) {
            ptr role = p;
            roles++;
            if (p >= end || *p != '"') return NULL;
            p = string(p, end, &escaped);
            if (p == NULL || escaped) return NULL; /* an escaped role: the ordinary way */
            if (p - role == 8 && memcmp(role, "\"system\"", 8) == 0)
                role_shape = SHAPE_SYSTEM;
            else if (p - role == 11 && memcmp(role, "\"assistant\"", 11) == 0)
                role_shape = SHAPE_ASSISTANT;
            else
                role_shape = 0;
        }
        else {
            if (after - key == 9 && memcmp(key, "\"content\"", 9) == 0) {
                no_content = p < end && *p == 'n';
            }
            p = value(p, end, 2);
        }
        if (p == NULL) return NULL;
        p = skip_ws(p, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}') {
            *shape = (no_content ? SHAPE_NO_CONTENT : 0) | role_shape;
            return roles == 1 ? p + 1 : NULL;
        }
        return NULL;
    }
}

enum { K_TYPE, K_ID, K_PARENT, K_TIME, K_MESSAGE, K_COUNT };

/* One line [p, end): fills spans and returns 1 for a plain message line, else 0. */
static int
envelope(ptr p, ptr end, ptr spans[K_COUNT][2], int *shape)
{
    int seen[K_COUNT] = {0, 0, 0, 0, 0};
    int escaped;
    if (p >= end || *p != '{') return 0;
    p = skip_ws(p + 1, end);
    for (;;) {
        ptr key = p, after;
        int k;
        Py_ssize_t n;
        if (p >= end || *p != '"') return 0;
        p = string(p, end, &escaped);
        if (p == NULL || escaped) return 0;
        after = p;
        n = after - key - 2;
        key++;
        if (n == 4 && memcmp(key, "type", 4) == 0) k = K_TYPE;
        else if (n == 2 && memcmp(key, "id", 2) == 0) k = K_ID;
        else if (n == 8 && memcmp(key, "parentId", 8) == 0) k = K_PARENT;
        else if (n == 9 && memcmp(key, "timestamp", 9) == 0) k = K_TIME;
        else if (n == 7 && memcmp(key, "message", 7) == 0) k = K_MESSAGE;
        else return 0;
        if (seen[k]) return 0;
        seen[k] = 1;
        p = skip_ws(p, end);
        if (p >= end || *p != ':') return 0;
        p = skip_ws(p + 1, end);
        spans[k][0] = p;
        if (k == K_MESSAGE) {
            p = message(p, end, shape);
        }
        else if (k == K_PARENT && p < end && *p == 'n') {
            p = literal(p, end, "null", 4);
            spans[k][0] = NULL;
        }
        else {
            if (p >= end || *p != '"') return 0;
            p = string(p, end, &escaped);
            if (escaped) return 0;
        }
        if (p == NULL) return 0;
        spans[k][1] = p;
        p = skip_ws(p, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}') {
            p++;
            break;
        }
        return 0;
    }
    if (p != end) return 0;
    for (int k = 0; k < K_COUNT; k++) {
        if (!seen[k]) return 0;
    }
    if (spans[K_TYPE][1] - spans[K_TYPE][0] != 9 ||
        memcmp(spans[K_TYPE][0], "\"message\"", 9) != 0)
        return 0;
    if (spans[K_ID][1] - spans[K_ID][0] == 2) return 0; /* an empty id */
    return 1;
}

/* A span of a bytes object: a read-only, zero-copy buffer of 40 bytes, not tracked by
 * the garbage collector (it holds only a bytes object, which holds nothing).  What a
 * loaded message keeps instead of its JSON text: msgspec, str(span, "utf-8"),
 * bytes(span) and memoryview(span) read it like bytes. */
typedef struct {
    PyObject_HEAD
    PyObject *owner;
    const char *start;
    Py_ssize_t size;
} Span;

static void
span_dealloc(Span *self)
{
    Py_DECREF(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
span_getbuffer(Span *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, (void *)self->start, self->size, 1, flags);
}

static Py_ssize_t
span_length(Span *self)
{
    return self->size;
}

static PyObject *
span_repr(Span *self)
{
    return PyUnicode_FromFormat("<ptree span of %zd bytes>", self->size);
}

static PyBufferProcs span_as_buffer = {.bf_getbuffer = (getbufferproc)span_getbuffer};

static PySequenceMethods span_as_sequence = {.sq_length = (lenfunc)span_length};

static PyTypeObject SpanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptree.pi._scan.Span",
    .tp_basicsize = sizeof(Span),
    .tp_dealloc = (destructor)span_dealloc,
    .tp_repr = (reprfunc)span_repr,
    .tp_as_sequence = &span_as_sequence,
    .tp_as_buffer = &span_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only span of a bytes object (see ptree/pi/fast.py).",
};

static PyObject *
new_span(PyObject *owner, const char *start, Py_ssize_t size)
{
    Span *span = PyObject_New(Span, &SpanType);
    if (span == NULL) return NULL;
    span->owner = Py_NewRef(owner);
    span->start = start;
    span->size = size;
    return (PyObject *)span;
}

/* The text of a string span (quotes included), checked already: no escapes. */
static PyObject *
text(ptr span[2])
{
    return PyUnicode_DecodeUTF8((const char *)span[0] + 1, span[1] - span[0] - 2, "strict");
}

/* The id and timestamp of the line taken last, and their strings (borrowed: that
 * line's item holds them).  A parentId naming that line (most lines follow their parent)
 * is its id object, and a timestamp equal to its timestamp (entries written in the same
 * millisecond) is its string: one object where there would be two. */
typedef struct {
    PyObject *id, *time;
    ptr id_span[2], time_span[2];
} Previous;

static int
same(ptr a[2], ptr b[2])
{
    return a[1] - a[0] == b[1] - b[0] && memcmp(a[0], b[0], (size_t)(a[1] - a[0])) == 0;
}

/* ------------------------------------------------------------ entries in C */

/* The entries the scanner makes (ptree.pi.fast.LoadedMessage), set up once by
 * entries(): the class, the offsets of the slots LazyMessageEntry.pending sets, in
 * its order (id, parent_id, timestamp, extra, _source, shape), and the value of
 * extra.  make_entry does what pending does: the object allocated as object.__new__
 * allocates it, each slot filled as its member descriptor's __set__ fills it.  The
 * one place where C knows what an entry holds: a change to pending changes the
 * descriptors fast.py hands to entries() (tests/test_scanner.py compares the two). */
enum { E_ID, E_PARENT, E_TIME, E_EXTRA, E_SOURCE, E_SHAPE, E_COUNT };
static PyTypeObject *EntryType = NULL;
static Py_ssize_t entry_offsets[E_COUNT];
static PyObject *entry_extra = NULL;

/* entries(cls, descriptors, extra): make entries of cls from now on; ``descriptors``
 * the member descriptors of cls's slots id, parent_id, timestamp, extra, _source,
 * shape (object slots of cls or a base). */
static PyObject *
entries(PyObject *module, PyObject *args)
{
    PyTypeObject *cls;
    PyObject *descriptors, *extra;
    Py_ssize_t offsets[E_COUNT];
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyType_Type, &cls, &PyTuple_Type, &descriptors,
                          &extra)) {
        return NULL;
    }
    if (slot_offsets(cls, descriptors, offsets, E_COUNT) < 0) return NULL;
    memcpy(entry_offsets, offsets, sizeof(offsets));
    Py_XSETREF(EntryType, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(entry_extra, Py_NewRef(extra));
    Py_RETURN_NONE;
}

/* ------------------------------------------------ the loaded entry type, in C */

/* LoadedType: ptree.pi.fast.LoadedMessage where this extension is built, made by
 * loaded_type() as a subclass of fast.py's Python class of that name.  Two things
 * make its instance 96 bytes where the Python class's was 112 plus a 48-byte Span:
 *
 * - Its message's bytes are found without a Span.  The ``_source`` slot holds one
 *   word, either a reference to a source object (low bit 0: a Span, a msgspec.Raw,
 *   what pending() is given) or a packed span (low bit 1): the file's bytes as an
 *   index into ``owners`` (below), the message's offset in them and its length.
 *   ``_pending()`` makes the Span when the message is read (decoded, or previewed),
 *   ``_drop_source()`` lets it go once decoded, and ``_source`` reads as the source
 *   (the member descriptor of the base must never be used on these entries: the
 *   reader and fast.py do not).  A message that does not fit (longer than 128 KiB,
 *   an offset past 16 GiB, more than 4,095 files' bytes held at once) keeps a Span.
 * - It is not a type the cyclic garbage collector knows (no GC header: 16 bytes):
 *   none of its instances can be on a reference cycle.  What an entry holds is
 *   strings, a small int (shape), frozen JSON values (FrozenDict/FrozenList of
 *   strings, numbers and containers like themselves, untracked and never holding
 *   anything else), the file's bytes (or a Span of them, or a msgspec.Raw: these
 *   hold only bytes), and its parent entry, made and linked before it.  A parent
 *   link is set once, by the tree builders, to an entry linked already (never the
 *   entry itself, nor one linked after it), so following parents always ends at a
 *   root: no cycle.  (As ptree/entries.py's other kinds are untracked once linked,
 *   only a FrozenDict changed through dict's own methods, against its promise, could
 *   close a cycle through one; this type is not subclassable, so no subclass adds a
 *   field that could.)  Its deallocator follows a chain of parents it holds the last
 *   reference to in a loop, where a Python class's uses the trashcan (which needs a
 *   GC header): dropping the last reference to a leaf of 10^6 entries whose ancestors
 *   nobody else holds must not recurse 10^6 deep. */
static PyTypeObject *LoadedType = NULL;
static Py_ssize_t loaded_source, loaded_parent; /* offsets */
#define MAX_OBJECT_SLOTS 32
static Py_ssize_t loaded_objects[MAX_OBJECT_SLOTS];
static int loaded_object_count = 0;

/* The packed span: 1 | length << 1 | offset << 18 | owner << 52. */
#define LENGTH_BITS 17
#define OFFSET_BITS 34
#define OWNER_BITS 12
#define LENGTH_MAX (((uint64_t)1 << LENGTH_BITS) - 1)
#define OFFSET_MAX (((uint64_t)1 << OFFSET_BITS) - 1)
#define OWNER_MAX (((uint64_t)1 << OWNER_BITS) - 1)
#define WORD_OF(obj) (*(uint64_t *)((char *)(obj) + loaded_source))
#define OBJECT_AT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* The files' bytes that packed spans point into, each with the number of entries
 * that do (one reference held for all of them).  Index 0 is never used. */
typedef struct {
    PyObject *owner;
    Py_ssize_t count;
} Owner;
static Owner *owners = NULL;
static Py_ssize_t owners_size = 0;

/* The index of ``owner`` (a bytes object) in owners, added if new; 0 when the
 * table is full (the caller then makes Spans) or with MemoryError set. */
static Py_ssize_t
owner_index(PyObject *owner)
{
    Py_ssize_t free_slot = 0;
    for (Py_ssize_t i = 1; i < owners_size; i++) {
        if (owners[i].owner == owner) return i;
        if (owners[i].owner == NULL && free_slot == 0) free_slot = i;
    }
    if (free_slot == 0) {
        Py_ssize_t size = owners_size == 0 ? 8 : owners_size * 2;
        Owner *grown;
        if (owners_size > (Py_ssize_t)OWNER_MAX) return 0;
        if (size > (Py_ssize_t)OWNER_MAX + 1) size = (Py_ssize_t)OWNER_MAX + 1;
        grown = PyMem_Realloc(owners, (size_t)size * sizeof(Owner));
        if (grown == NULL) {
            PyErr_NoMemory();
            return 0;
        }
        for (Py_ssize_t i = owners_size; i < size; i++) grown[i] = (Owner){NULL, 0};
        owners = grown;
        free_slot = owners_size == 0 ? 1 : owners_size;
        owners_size = size;
    }
    owners[free_slot].owner = Py_NewRef(owner);
    owners[free_slot].count = 0;
    return free_slot;
}

/* Let go of an entry's source word (a reference, or a packed span's owner). */
static void
release_word(uint64_t word)
{
    if (word == 0) return;
    if ((word & 1) == 0) {
        Py_DECREF((PyObject *)(uintptr_t)word);
        return;
    }
    {
        Owner *o = &owners[word >> (64 - OWNER_BITS)];
        if (--o->count == 0) Py_CLEAR(o->owner);
    }
}

static void
loaded_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    for (;;) {
        PyObject *parent = OBJECT_AT(self, loaded_parent);
        uint64_t word = WORD_OF(self);
        OBJECT_AT(self, loaded_parent) = NULL;
        WORD_OF(self) = 0;
        release_word(word);
        for (int i = 0; i < loaded_object_count; i++) {
            Py_CLEAR(OBJECT_AT(self, loaded_objects[i]));
        }
        type->tp_free(self);
        if (parent != NULL && Py_TYPE(parent) == type && Py_REFCNT(parent) == 1) {
            /* The last reference to the parent was this entry's: free it here (the
             * type stays alive, the parent holds a reference to it). */
            Py_DECREF(type);
            self = parent;
            continue;
        }
        Py_XDECREF(parent);
        Py_DECREF(type);
        return;
    }
}

/* Never called (the type is not the collector's); given so that the type does not
 * inherit its base's GC flag (CPython copies it only with the base's traverse). */
static int
loaded_traverse(PyObject *self, visitproc visit, void *arg)
{
    (void)self;
    (void)visit;
    (void)arg;
    return 0;
}

static PyObject *new_span(PyObject *owner, const char *start, Py_ssize_t size);

/* _pending(): the message's undecoded source (for a packed span, a Span of the
 * file's bytes made now), or AttributeError once it is decoded (dropped). */
static PyObject *
loaded_pending(PyObject *self, PyObject *unused)
{
    uint64_t word = WORD_OF(self);
    (void)unused;
    if (word == 0) {
        PyErr_SetString(PyExc_AttributeError, "_source");
        return NULL;
    }
    if ((word & 1) == 0) return Py_NewRef((PyObject *)(uintptr_t)word);
    {
        PyObject *owner = owners[word >> (64 - OWNER_BITS)].owner;
        uint64_t offset = (word >> (1 + LENGTH_BITS)) & OFFSET_MAX;
        return new_span(owner, PyBytes_AS_STRING(owner) + offset,
                        (Py_ssize_t)((word >> 1) & LENGTH_MAX));
    }
}

static PyObject *
loaded_source_get(PyObject *self, void *closure)
{
    (void)closure;
    return loaded_pending(self, NULL);
}

/* _drop_source(): let the source go (the message is decoded). */
static PyObject *
loaded_drop_source(PyObject *self, PyObject *unused)
{
    uint64_t word = WORD_OF(self);
    (void)unused;
    WORD_OF(self) = 0;
    release_word(word);
    Py_RETURN_NONE;
}

/* pending(id, parent_id, timestamp, source, shape): LazyMessageEntry.pending's
 * entry, its source kept as a reference. */
static PyObject *loaded_pending_new(PyObject *cls, PyObject *const *args, Py_ssize_t nargs);

static PyMethodDef loaded_methods[] = {
    {"_pending", loaded_pending, METH_NOARGS,
     "_pending() -> the message's undecoded source; AttributeError once decoded."},
    {"_drop_source", loaded_drop_source, METH_NOARGS,
     "_drop_source(): let the undecoded source go (the message is decoded)."},
    {"pending", (PyCFunction)(void (*)(void))loaded_pending_new,
     METH_FASTCALL | METH_CLASS,
     "pending(entry_id, parent_id, timestamp, source, shape) -> an entry whose message "
     "will be decoded from source on first read (LazyMessageEntry.pending).  O(1)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef loaded_getset[] = {
    {"_source", loaded_source_get, NULL, "The undecoded source (a Span of the file's bytes).",
     NULL},
    {NULL},
};

static PyType_Slot loaded_type_slots[] = {
    {Py_tp_dealloc, loaded_dealloc},
    {Py_tp_traverse, loaded_traverse},
    {Py_tp_free, PyObject_Free},
    {Py_tp_methods, loaded_methods},
    {Py_tp_getset, loaded_getset},
    {Py_tp_doc, "A message entry read from a Pi file, its message decoded on first read "
                "(see ptree/pi/fast.py; made in C: ptree/pi/_scan.c)."},
    {0, NULL},
};

/* loaded_type(base) -> the C LoadedMessage, a subclass of ``base`` (fast.py's
 * LoadedMessage, a subclass of ptree.entries.LazyMessageEntry) whose ``_source`` slot
 * holds a word (above); the scanner's entries() then makes it.  Made once. */
static PyObject *
loaded_type(PyObject *module, PyObject *arg)
{
    PyTypeObject *base;
    PyType_Spec spec = {
        .name = "ptree.pi.fast.LoadedMessage",
        .flags = Py_TPFLAGS_DEFAULT,
        .slots = loaded_type_slots,
    };
    Py_ssize_t parent = -1, source = -1, n;
    int count = 0;
    PyObject *type;
    (void)module;
    if (LoadedType != NULL) return Py_NewRef(LoadedType);
    if (!PyType_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "loaded_type needs a class");
        return NULL;
    }
    base = (PyTypeObject *)arg;
    if (base->tp_dictoffset != 0 || base->tp_weaklistoffset != 0 || base->tp_itemsize != 0
        || base->tp_mro == NULL) {
        PyErr_SetString(PyExc_TypeError, "loaded_type needs a class of slots only");
        return NULL;
    }
    /* Every object slot of the class and its bases (Links' parent, the attrs fields,
     * _source): what the deallocator drops. */
    n = PyTuple_GET_SIZE(base->tp_mro);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(base->tp_mro, i);
        for (PyMemberDef *m = t->tp_members; m != NULL && m->name != NULL; m++) {
            int known = 0;
            if (m->type != T_OBJECT_EX && m->type != T_OBJECT) continue;
            if (strcmp(m->name, "parent_entry") == 0) parent = m->offset;
            if (strcmp(m->name, "_source") == 0) source = m->offset;
            for (int k = 0; k < count; k++) known |= loaded_objects[k] == m->offset;
            if (known) continue;
            if (count == MAX_OBJECT_SLOTS) {
                PyErr_SetString(PyExc_TypeError, "loaded_type: too many slots");
                return NULL;
            }
            loaded_objects[count++] = m->offset;
        }
    }
    if (parent < 0 || source < 0) {
        PyErr_SetString(PyExc_TypeError, "loaded_type needs an entry class with _source");
        return NULL;
    }
    spec.basicsize = (int)base->tp_basicsize;
    type = PyType_FromSpecWithBases(&spec, arg);
    if (type == NULL) return NULL;
    if (PyType_IS_GC((PyTypeObject *)type)) { /* CPython gave it the base's GC flag */
        Py_DECREF(type);
        PyErr_SetString(PyExc_TypeError, "loaded_type: the type would be the collector's");
        return NULL;
    }
    loaded_source = source;
    loaded_parent = parent;
    /* the parent and the source word are dropped by the deallocator itself */
    for (int k = count - 1; k >= 0; k--) {
        if (loaded_objects[k] == parent || loaded_objects[k] == source) {
            loaded_objects[k] = loaded_objects[--count];
        }
    }
    loaded_object_count = count;
    LoadedType = (PyTypeObject *)Py_NewRef(type);
    return type;
}

/* A new entry of EntryType holding the given values (borrowed), or NULL; ``word``,
 * when not 0, is its packed span (LoadedType only), kept instead of values' source
 * (the owner's count is the caller's to raise). */
static PyObject *
make_entry(PyObject *values[E_COUNT], uint64_t word)
{
    PyObject *entry = EntryType->tp_alloc(EntryType, 0);
    if (entry == NULL) return NULL;
    for (int k = 0; k < E_COUNT; k++) {
        PyObject **slot = (PyObject **)((char *)entry + entry_offsets[k]);
        if (k == E_SOURCE && word != 0) {
            WORD_OF(entry) = word;
            continue;
        }
        Py_XSETREF(*slot, Py_NewRef(values[k]));
    }
    return entry;
}

static PyObject *
loaded_pending_new(PyObject *cls, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *values[E_COUNT];
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "pending(entry_id, parent_id, timestamp, source, shape)");
        return NULL;
    }
    if (cls != (PyObject *)LoadedType || EntryType != LoadedType) {
        PyErr_SetString(PyExc_TypeError, "pending: the scanner's entries() was not set up");
        return NULL;
    }
    values[E_ID] = args[0];
    values[E_PARENT] = args[1];
    values[E_TIME] = args[2];
    values[E_EXTRA] = entry_extra;
    values[E_SOURCE] = args[3];
    values[E_SHAPE] = args[4];
    return make_entry(values, 0);
}

#define ENTRY_SLOT(entry, k) (*(PyObject **)((char *)(entry) + entry_offsets[k]))

/* in_order(records, start, limit, by_id, taken) -> parents: the reader's common case
 * in one call (ptree/pi/reader.py, entries_of).  From records[start], the longest run
 * (of at most limit: its index of ids is transient memory) of entries of the scanner's class that can be added in file order, and their parents
 * (None for a root): each id new (not a key of by_id or taken, nor an id earlier in
 * the run), each parentId None or the id of an entry in by_id or earlier in the run.
 * The reader adds them; whatever ends the run (another record, a duplicate, a parent
 * missing so far) takes the reader's general path. */
static PyObject *
in_order(PyObject *module, PyObject *args)
{
    PyObject *records, *by_id, *taken, *parents, *run = NULL;
    Py_ssize_t start, limit, stop;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!nnO!O!", &PyList_Type, &records, &start, &limit, &PyDict_Type,
                          &by_id, &PyDict_Type, &taken)) {
        return NULL;
    }
    if (EntryType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree.pi._scan.entries was not called");
        return NULL;
    }
    parents = PyList_New(0);
    if (parents == NULL) return NULL;
    run = PyDict_New(); /* the run's ids so far */
    if (run == NULL) goto fail;
    if (start < 0) start = 0;
    stop = limit < PyList_GET_SIZE(records) - start ? start + limit : PyList_GET_SIZE(records);
    for (Py_ssize_t k = start; k < stop && k < PyList_GET_SIZE(records); k++) {
        PyObject *entry = PyList_GET_ITEM(records, k), *id, *pid, *parent;
        int known;
        if (!Py_IS_TYPE(entry, EntryType)) break;
        id = ENTRY_SLOT(entry, E_ID);
        pid = ENTRY_SLOT(entry, E_PARENT);
        if (id == NULL || pid == NULL || !PyUnicode_CheckExact(id)) break;
        known = PyDict_Contains(by_id, id);
        if (known == 0) known = PyDict_Contains(taken, id);
        if (known == 0) known = PyDict_Contains(run, id);
        if (known < 0) goto fail;
        if (known) break;
        if (pid == Py_None) {
            parent = Py_None;
        }
        else {
            if (!PyUnicode_CheckExact(pid)) break;
            parent = PyDict_GetItemWithError(run, pid);
            if (parent == NULL && !PyErr_Occurred()) parent = PyDict_GetItemWithError(by_id, pid);
            if (parent == NULL) {
                if (PyErr_Occurred()) goto fail;
                break;
            }
        }
        if (PyDict_SetItem(run, id, entry) < 0 || PyList_Append(parents, parent) < 0) goto fail;
    }
    Py_DECREF(run);
    return parents;
fail:
    Py_XDECREF(run);
    Py_DECREF(parents);
    return NULL;
}

static PyObject *
line_item(PyObject *owner, ptr base, ptr p, ptr end, Previous *previous, int as_entry,
          Py_ssize_t *owner_at)
{
    ptr spans[K_COUNT][2];
    PyObject *id = NULL, *parent = NULL, *time = NULL, *source = NULL, *item;
    int shape = 0;
    uint64_t span = 0;
    if (!envelope(p, end, spans, &shape)) {
        return PyLong_FromSsize_t(p - base);
    }
    if (spans[K_PARENT][0] == NULL) {
        parent = Py_NewRef(Py_None);
    }
    else if (previous->id != NULL && same(spans[K_PARENT], previous->id_span)) {
        parent = Py_NewRef(previous->id);
    }
    else {
        parent = text(spans[K_PARENT]);
        if (parent == NULL) goto fail;
    }
    id = text(spans[K_ID]);
    if (id == NULL) goto fail;
    if (previous->time != NULL && same(spans[K_TIME], previous->time_span)) {
        time = Py_NewRef(previous->time);
    }
    else {
        time = text(spans[K_TIME]);
        if (time == NULL) goto fail;
    }
    {
        uint64_t offset = (uint64_t)(spans[K_MESSAGE][0] - base);
        uint64_t length = (uint64_t)(spans[K_MESSAGE][1] - spans[K_MESSAGE][0]);
        if (as_entry && *owner_at > 0 && offset <= OFFSET_MAX && length <= LENGTH_MAX) {
            /* the file's bytes and the message's place: no Span object (LoadedType) */
            span = 1 | length << 1 | offset << (1 + LENGTH_BITS)
                   | (uint64_t)*owner_at << (64 - OWNER_BITS);
            source = Py_NewRef(Py_None); /* (not kept) */
        }
        else {
            source = new_span(owner, (const char *)spans[K_MESSAGE][0], (Py_ssize_t)length);
            if (source == NULL) goto fail;
        }
    }
    {
        PyObject *kind = PyLong_FromLong(shape); /* a cached small int: no allocation */
        if (kind == NULL) goto fail;
        if (as_entry) {
            PyObject *values[E_COUNT] = {id, parent, time, entry_extra, source, kind};
            item = make_entry(values, span);
        }
        else {
            item = PyTuple_Pack(5, id, parent, time, source, kind);
        }
        Py_DECREF(kind);
    }
    if (item != NULL && span != 0) owners[*owner_at].count++;
    if (item != NULL) {
        previous->id = id;
        previous->time = time;
        memcpy(previous->id_span, spans[K_ID], sizeof(previous->id_span));
        memcpy(previous->time_span, spans[K_TIME], sizeof(previous->time_span));
    }
    Py_DECREF(id);
    Py_DECREF(parent);
    Py_DECREF(time);
    Py_DECREF(source);
    return item;
fail:
    Py_XDECREF(id);
    Py_XDECREF(parent);
    Py_XDECREF(time);
    Py_XDECREF(source);
    return NULL;
}

static PyObject *
scan(PyObject *module, PyObject *args)
{
    PyObject *data, *items = NULL, *result = NULL;
    Py_ssize_t start, limit;
    int as_entries = 0;
    Py_ssize_t owner_at = 0;
    Previous previous = {NULL, NULL, {NULL, NULL}, {NULL, NULL}};
    (void)module;
    /* bytes only: a span keeps a pointer into the buffer, which a bytes object never
     * moves or changes */
    if (!PyArg_ParseTuple(args, "O!nn|p", &PyBytes_Type, &data, &start, &limit, &as_entries)) {
        return NULL;
    }
    if (as_entries && EntryType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree.pi._scan.entries was not called");
        return NULL;
    }
    if (start < 0 || start > PyBytes_GET_SIZE(data) || limit < 0) {
        PyErr_SetString(PyExc_ValueError, "start or limit out of range");
        return NULL;
    }
    if (as_entries && EntryType == LoadedType && PyBytes_CheckExact(data)) {
        /* packed spans into data (0: Spans, the table of owners being full) */
        owner_at = owner_index(data);
        if (owner_at == 0 && PyErr_Occurred()) return NULL;
    }
    items = PyList_New(0);
    if (items == NULL) goto done;
    {
        ptr base = (ptr)PyBytes_AS_STRING(data), end = base + PyBytes_GET_SIZE(data);
        ptr p = base + start;
        Py_ssize_t count = 0;
        while (p < end && count < limit) {
            ptr stop = memchr(p, '\n', (size_t)(end - p));
            PyObject *item;
            if (stop == NULL) stop = end;
            item = line_item(data, base, p, stop, &previous, as_entries, &owner_at);
            if (item == NULL || PyList_Append(items, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
            count++;
            p = stop < end ? stop + 1 : end;
        }
        result = Py_BuildValue("(On)", items, (Py_ssize_t)(p - base));
    }
done:
    /* an owner no entry took (every line another kind): let it go */
    if (owner_at > 0 && owners[owner_at].count == 0) Py_CLEAR(owners[owner_at].owner);
    Py_XDECREF(items);
    return result;
}

/* ------------------------------------------------------------------ decoding */

/* The end of one valid value at p, nested inside one container (the message inside
 * its line), or NULL: what decode checks before it builds anything. */
static ptr
value_checked(ptr p, ptr end)
{
    return value(p, end, 1);
}

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

static Py_UCS4
escape_u(ptr p) /* p at the 'u' of a checked \uXXXX */
{
    return (Py_UCS4)((hex_value(p[1]) << 12) | (hex_value(p[2]) << 8) |
                     (hex_value(p[3]) << 4) | hex_value(p[4]));
}

/* The next character of a checked JSON string at *pp (not its closing quote), as
 * Python's json module reads it: an escape undone, an escaped surrogate pair joined,
 * a lone escaped surrogate kept; *pp moves past it. */
static Py_UCS4
next_char(ptr *pp, ptr end)
{
    ptr p = *pp;
    unsigned char c = *p;
    Py_UCS4 u;
    if (c < 0x80 && c != '\\') {
        *pp = p + 1;
        return c;
    }
    if (c == '\\') {
        c = p[1];
        if (c != 'u') {
            *pp = p + 2;
            switch (c) {
            case 'b': return '\b';
            case 'f': return '\f';
            case 'n': return '\n';
            case 'r': return '\r';
            case 't': return '\t';
            default: return c; /* " \ / */
            }
        }
        u = escape_u(p + 1);
        p += 6;
        if (u >= 0xD800 && u <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            Py_UCS4 low = escape_u(p + 1);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                u = 0x10000 + (((u - 0xD800) << 10) | (low - 0xDC00));
                p += 6;
            }
        }
        *pp = p;
        return u;
    }
    if (c < 0xE0) {
        *pp = p + 2;
        return ((Py_UCS4)(c & 0x1F) << 6) | (p[1] & 0x3F);
    }
    if (c < 0xF0) {
        *pp = p + 3;
        return ((Py_UCS4)(c & 0x0F) << 12) | ((Py_UCS4)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    }
    *pp = p + 4;
    return ((Py_UCS4)(c & 0x07) << 18) | ((Py_UCS4)(p[1] & 0x3F) << 12) |
           ((Py_UCS4)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}

/* The str of the checked JSON string whose opening quote is at p; *after is set past
 * its closing quote.  One pass finds the end, the length and the widest character; an
 * escaped string then has its characters written straight into the new str. */
static PyObject *
decode_string(ptr p, ptr end, ptr *after)
{
    PyObject *result;
    ptr q = p + 1;
    Py_ssize_t length = 0, i = 0;
    Py_UCS4 widest = 0;
    int escaped = 0;
    for (;;) {
        ptr run = q;
        while (plain[*q]) q++;
        length += q - run;
        if (*q == '"') break;
        escaped |= *q == '\\';
        {
            Py_UCS4 c = next_char(&q, end);
            if (c > widest) widest = c;
        }
        length++;
    }
    *after = q + 1;
    if (!escaped) return PyUnicode_DecodeUTF8((const char *)p + 1, q - p - 1, "strict");
    result = PyUnicode_New(length, widest > 0x7F ? widest : 0x7F);
    if (result == NULL) return NULL;
    {
        int kind = PyUnicode_KIND(result);
        void *data = PyUnicode_DATA(result);
        ptr stop = q;
        q = p + 1;
        for (;;) {
            /* a run of plain bytes (it ends at the closing quote at the latest), then
             * one escape or multi-byte character */
            ptr run = q;
            while (plain[*q]) q++;
            if (kind == PyUnicode_1BYTE_KIND) {
                memcpy((Py_UCS1 *)data + i, run, (size_t)(q - run));
                i += q - run;
            }
            else {
                for (; run < q; run++) PyUnicode_WRITE(kind, data, i++, *run);
            }
            if (q >= stop) break;
            PyUnicode_WRITE(kind, data, i++, next_char(&q, stop));
        }
    }
    return result;
}

/* The int or float of the checked JSON number [p, after). */
static PyObject *
decode_number(ptr p, ptr after)
{
    char small[MAX_NUMBER + 1], *text = small;
    PyObject *result;
    Py_ssize_t n = after - p;
    int is_float = 0;
    for (ptr q = p; q < after; q++) {
        if (*q == '.' || *q == 'e' || *q == 'E') is_float = 1;
    }
    if (n > MAX_NUMBER) {
        text = PyMem_Malloc((size_t)n + 1);
        if (text == NULL) return PyErr_NoMemory();
    }
    memcpy(text, p, (size_t)n);
    text[n] = '\0';
    if (is_float) {
        double value = PyOS_string_to_double(text, NULL, NULL);
        result = (value == -1.0 && PyErr_Occurred()) ? NULL : PyFloat_FromDouble(value);
    }
    else {
        result = PyLong_FromString(text, NULL, 10);
    }
    if (text != small) PyMem_Free(text);
    return result;
}

/* A container being filled: its FrozenDict, or a list of the items of its FrozenList,
 * the key waiting for its value, and whether it holds a value the garbage collector
 * tracks.  One that does not (strings, numbers, ... and containers like itself) can
 * never be part of a reference cycle, so it is untracked once made, as CPython does
 * for its own dicts and tuples of such values: the collector never walks a decoded
 * message at all.  (A FrozenDict changed through dict's own methods, against its
 * promise, is tracked again by dict itself.) */
typedef struct {
    PyObject *container, *key;
    int is_object, tracked;
} Open;

static PyObject *
close_container(Open *open)
{
    PyObject *done;
    if (open->is_object) {
        if (!open->tracked) PyObject_GC_UnTrack(open->container);
        return open->container;
    }
    {
        Py_ssize_t n = PyList_GET_SIZE(open->container);
        done = FrozenListType->tp_alloc(FrozenListType, n);
        if (done != NULL) {
            for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *item = PyList_GET_ITEM(open->container, i);
                PyTuple_SET_ITEM(done, i, Py_NewRef(item));
            }
            if (!open->tracked) PyObject_GC_UnTrack(done);
        }
        Py_DECREF(open->container);
        return done;
    }
}

/* Add ``value`` (a new reference, taken) to the innermost open container. */
static int
add_value(Open *open, PyObject *value)
{
    int failed;
    if (PyObject_IS_GC(value) && PyObject_GC_IsTracked(value)) open->tracked = 1;
    if (open->is_object) {
        failed = PyDict_SetItem(open->container, open->key, value) < 0;
        Py_CLEAR(open->key);
    }
    else {
        failed = PyList_Append(open->container, value) < 0;
    }
    Py_DECREF(value);
    return failed ? -1 : 0;
}

/* decode(text) -> the frozen value of one JSON value (an object or array nested at
 * most MAX_NESTING levels, as the scanner checks), exactly as the ordinary reader's
 * parse_line has it.  Iterative.  ValueError for text that is not such a value. */
static PyObject *
decode(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    Open stack[MAX_NESTING + 1];
    int depth = 0;
    PyObject *memo = NULL, *result = NULL, *value;
    ptr p, end, after;
    (void)module;
    if (FrozenDictType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ptree.pi._scan.setup was not called");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    p = (ptr)view.buf;
    end = p + view.len;
    /* A span was checked by the scanner (only the scanner makes spans); anything
     * else is checked first. */
    after = Py_IS_TYPE(arg, &SpanType) ? end : value_checked(p, end);
    if (after == NULL || skip_ws(after, end) != end) {
        PyErr_SetString(PyExc_ValueError, "not one JSON value ptree's scanner takes");
        goto done;
    }
    memo = PyDict_New();
    if (memo == NULL) goto done;
    for (;;) {
        p = skip_ws(p, end);
        if (*p == '{' || *p == '[') {
            Open *open = &stack[depth++];
            open->is_object = *p == '{';
            open->key = NULL;
            open->tracked = 0;
            open->container = open->is_object
                ? PyDict_Type.tp_new(FrozenDictType, empty_tuple, NULL)
                : PyList_New(0);
            if (open->container == NULL) {
                depth--;
                goto done;
            }
            p = skip_ws(p + 1, end);
            if (*p == '}' || *p == ']') {
                p++;
                value = close_container(&stack[--depth]);
                goto have_value;
            }
            if (open->is_object) goto key;
            continue;
        }
        if (*p == '"') {
            value = decode_string(p, end, &p);
        }
        else if (*p == 't') {
            value = Py_NewRef(Py_True);
            p += 4;
        }
        else if (*p == 'f') {
            value = Py_NewRef(Py_False);
            p += 5;
        }
        else if (*p == 'n') {
            value = Py_NewRef(Py_None);
            p += 4;
        }
        else {
            after = number(p, end);
            value = decode_number(p, after);
            p = after;
        }
    have_value:
        for (;;) {
            if (value == NULL) goto done;
            if (depth == 0) {
                result = value;
                goto done;
            }
            if (add_value(&stack[depth - 1], value) < 0) goto done;
            p = skip_ws(p, end);
            if (*p == ',') {
                p = skip_ws(p + 1, end);
                if (stack[depth - 1].is_object) goto key;
                break;
            }
            p++; /* } or ] */
            value = close_container(&stack[--depth]);
        }
        continue;
    key:
        {
            PyObject *key, *known;
            key = decode_string(p, end, &after);
            if (key == NULL) goto done;
            known = PyDict_SetDefault(memo, key, key);
            Py_XINCREF(known);
            Py_DECREF(key);
            if (known == NULL) goto done;
            stack[depth - 1].key = known;
            p = skip_ws(after, end);
            p++; /* : */
        }
    }
done:
    while (depth > 0) {
        Open *open = &stack[--depth];
        Py_XDECREF(open->container);
        Py_XDECREF(open->key);
    }
    Py_XDECREF(memo);
    PyBuffer_Release(&view);
    return result;
}

/* setup(FrozenDict, FrozenList): the types decode makes. */
static PyObject *
setup(PyObject *module, PyObject *args)
{
    PyTypeObject *dict_type, *list_type;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &dict_type, &PyType_Type, &list_type)) {
        return NULL;
    }
    if (set_frozen_types(dict_type, list_type) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_O,
     "decode(text) -> the frozen value of checked JSON text, as the ordinary reader has it."},
    {"setup", setup, METH_VARARGS, "setup(FrozenDict, FrozenList): the types decode makes."},
    {"scan", scan, METH_VARARGS,
     "scan(data, start, limit, entries=False) -> (items, next): the next lines, checked in C."},
    {"in_order", in_order, METH_VARARGS,
     "in_order(records, start, limit, by_id, taken) -> the parents of the run from start."},
    {"loaded_type", loaded_type, METH_O,
     "loaded_type(base) -> LoadedMessage in C: base's subclass the scanner makes."},
    {"entries", entries, METH_VARARGS,
     "entries(cls, descriptors, extra): the class of the entries scan makes, and its slots."},
    {NULL, NULL, 0, NULL},
};

/* The module is made in two phases (PEP 489): its one type, Span, is added when it is
   executed.  The frozen types and the scanner's tables are C statics shared by the
   process, so the module says it cannot be loaded in a second interpreter. */
static int
exec_module(PyObject *m)
{
    init_plain();
    if (init_frozen_types() < 0) return -1;
    return PyModule_AddType(m, &SpanType);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "ptree.pi._scan",
    .m_doc = "The Pi reader's line scanner in C (see ptree/pi/fast.py).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModuleDef_Init(&module);
}
