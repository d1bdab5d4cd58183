/* auditor.records._fieldsc: the fields view's walk (auditor/records/fields.py) in C.
 *
 * One function, doing exactly what fields.fields_view's Python path does (the tests compare them on
 * generated objects and on every record of the real files); fields.py imports this module when the
 * package was built with a C compiler and walks in Python otherwise:
 *
 *   fields_view(raw, texts, known, decoded) -> str | None
 *       the strings of raw (fields.texts: in record order, a dict's text keys before their values,
 *       a token list joined, a string that decoded(s) turns into an object walked in its place
 *       unless it is searched already) that fields._Seen keeps (one with a line in none of texts,
 *       not in known and in no earlier string kept), joined by newlines; None for an object of a
 *       subclass of str, dict, list or tuple (left to the Python path, whose isinstance tests and
 *       methods such a class may change).
 *
 * texts: the record's other views' texts (non-empty); known: strings searched already (the id);
 * decoded: fields._decoded (a JSON-shaped string's object, or None). Nothing here keeps state.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* a str whose characters can be read (legacy strings of Python < 3.12 made canonical first) */
static int ready(PyObject *s) {
#if PY_VERSION_HEX < 0x030C0000
    return PyUnicode_READY(s);
#else
    (void)s;
    return 0;
#endif
}

/* the first characters of a string that may be JSON (fields._OPEN) */
static int opens_json(Py_UCS4 c) { return c == '{' || c == '[' || c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* every character whitespace (str.isspace of a non-empty string) */
static int all_space(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) return 0;
    return n > 0;
}

/* fields._TEXT_KEY: whitespace between two other characters (\S\s+\S) */
static int text_key(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    int seen_other = 0, gap = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) {
            gap = seen_other;
        } else {
            if (gap) return 1;
            seen_other = 1;
        }
    }
    return 0;
}

/* fields._is_token_list: two or more strings, each of at most 40 characters and one word at most
   (str.split() gives one piece or none); -1 for a str subclass (left to Python), -2 on error */
static int token_list(PyObject *seq) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 2) return 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *v = items[j];
        if (!PyUnicode_Check(v)) return 0;
        if (!PyUnicode_CheckExact(v)) return -1;
        if (ready(v) < 0) return -2;
        Py_ssize_t len = PyUnicode_GET_LENGTH(v);
        if (len > 40) return 0;
        int kind = PyUnicode_KIND(v);
        const void *data = PyUnicode_DATA(v);
        Py_ssize_t i = 0;
        while (i < len && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        while (i < len && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        while (i < len && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        if (i < len) return 0; /* a second word */
    }
    return 1;
}

/* fields._joined: the non-blank strings stripped, joined by spaces */
static PyObject *joined(PyObject *seq) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *parts = PyList_New(0);
    if (parts == NULL) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *v = items[j];
        if (PyUnicode_GET_LENGTH(v) == 0 || all_space(v)) continue;
        PyObject *stripped = PyObject_CallMethod(v, "strip", NULL);
        if (stripped == NULL || PyList_Append(parts, stripped) < 0) {
            Py_XDECREF(stripped);
            Py_DECREF(parts);
            return NULL;
        }
        Py_DECREF(stripped);
    }
    PyObject *space = PyUnicode_FromString(" ");
    PyObject *out = space == NULL ? NULL : PyUnicode_Join(space, parts);
    Py_XDECREF(space);
    Py_DECREF(parts);
    return out;
}

/* fields._Seen */
typedef struct {
    PyObject *texts; /* list of str (borrowed) */
    PyObject *whole; /* set */
    PyObject *lines; /* set, or NULL until needed */
    PyObject *kept;  /* list: kept strings whose lines are not in lines yet */
    PyObject *newline;
} Seen;

static int add_lines(PyObject *set, PyObject *text, PyObject *newline) {
    PyObject *parts = PyUnicode_Split(text, newline, -1);
    if (parts == NULL) return -1;
    Py_ssize_t n = PyList_GET_SIZE(parts);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PySet_Add(set, PyList_GET_ITEM(parts, i)) < 0) {
            Py_DECREF(parts);
            return -1;
        }
    }
    Py_DECREF(parts);
    return 0;
}

/* Seen.lines: built on demand, the kept strings' lines added */
static PyObject *seen_lines(Seen *seen) {
    if (seen->lines == NULL) {
        seen->lines = PySet_New(seen->whole);
        if (seen->lines == NULL) return NULL;
        Py_ssize_t n = PyList_GET_SIZE(seen->texts);
        for (Py_ssize_t i = 0; i < n; i++)
            if (add_lines(seen->lines, PyList_GET_ITEM(seen->texts, i), seen->newline) < 0) return NULL;
    }
    Py_ssize_t k = PyList_GET_SIZE(seen->kept);
    for (Py_ssize_t i = 0; i < k; i++)
        if (add_lines(seen->lines, PyList_GET_ITEM(seen->kept, i), seen->newline) < 0) return NULL;
    if (k && PyList_SetSlice(seen->kept, 0, k, NULL) < 0) return NULL;
    return seen->lines;
}

/* Seen.searched: 1 when every line of s is searched already, 0 when not, -1 on error */
static int seen_searched(Seen *seen, PyObject *s) {
    int r = PySet_Contains(seen->whole, s);
    if (r != 0) return r;
    PyObject *lines = seen_lines(seen);
    if (lines == NULL) return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    Py_ssize_t cut = PyUnicode_FindChar(s, '\n', 0, n, 1);
    if (cut == -2) return -1;
    if (cut < 0) return PySet_Contains(lines, s);
    PyObject *first = PyUnicode_Substring(s, 0, cut);
    if (first == NULL) return -1;
    r = PySet_Contains(lines, first);
    Py_DECREF(first);
    if (r != 1) return r;
    PyObject *parts = PyUnicode_Split(s, seen->newline, -1);
    if (parts == NULL) return -1;
    Py_ssize_t m = PyList_GET_SIZE(parts);
    for (Py_ssize_t i = 0; i < m && r == 1; i++) r = PySet_Contains(lines, PyList_GET_ITEM(parts, i));
    Py_DECREF(parts);
    return r;
}

/* Seen.keep: 1 (and s remembered) when s has a line not searched yet, 0 when not, -1 on error */
static int seen_keep(Seen *seen, PyObject *s) {
    int r = PySet_Contains(seen->whole, s);
    if (r != 0) return r < 0 ? -1 : 0;
    if (PySet_GET_SIZE(seen->whole) == 0 && (seen->lines == NULL || PySet_GET_SIZE(seen->lines) == 0) &&
        PyList_GET_SIZE(seen->kept) == 0)
        return PyList_Append(seen->kept, s) < 0 ? -1 : 1;
    r = seen_searched(seen, s);
    if (r != 0) return r < 0 ? -1 : 0;
    return PyList_Append(seen->kept, s) < 0 ? -1 : 1;
}

/* the walk's stack: owned references; a key (a dict key holding text) is emitted, never decoded */
typedef struct {
    PyObject **items;
    char *is_key;
    Py_ssize_t size, cap;
} Stack;

static int push(Stack *st, PyObject *o, char is_key) { /* steals o */
    if (st->size == st->cap) {
        Py_ssize_t cap = st->cap ? 2 * st->cap : 64;
        PyObject **items = PyMem_Realloc(st->items, cap * sizeof(PyObject *));
        if (items == NULL) {
            Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        st->items = items;
        char *keys = PyMem_Realloc(st->is_key, cap);
        if (keys == NULL) {
            Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        st->is_key = keys;
        st->cap = cap;
    }
    st->items[st->size] = o;
    st->is_key[st->size] = is_key;
    st->size++;
    return 0;
}

/* s kept (appended to out) or left out: 1; -1 on error */
static int emit(Seen *seen, PyObject *out, PyObject *s) {
    int r = seen_keep(seen, s);
    if (r < 0) return -1;
    if (r && PyList_Append(out, s) < 0) return -1;
    return 1;
}

/* one object off the stack (owned), walked as fields.texts walks it: 1 when done, 0 for an object of a
   subclass (the record is left to Python), -1 on error */
static int step(Seen *seen, Stack *st, PyObject *out, PyObject *value, char is_key, PyObject *decoded) {
    if (is_key) return emit(seen, out, value);
    if (PyUnicode_Check(value)) {
        if (!PyUnicode_CheckExact(value)) return 0;
        if (ready(value) < 0) return -1;
        if (PyUnicode_GET_LENGTH(value) == 0 || all_space(value)) return 1;
        if (opens_json(PyUnicode_READ_CHAR(value, 0))) {
            int r = seen_searched(seen, value);
            if (r < 0) return -1;
            if (!r) {
                PyObject *inner = PyObject_CallOneArg(decoded, value);
                if (inner == NULL) return -1;
                if (inner != Py_None) return push(st, inner, 0) < 0 ? -1 : 1;
                Py_DECREF(inner);
            }
        }
        return emit(seen, out, value);
    }
    if (PyDict_Check(value)) {
        if (!PyDict_CheckExact(value)) return 0;
        Py_ssize_t n = PyDict_GET_SIZE(value), pos = 0, i = 0;
        PyObject **keys = PyMem_Malloc((n ? n : 1) * 2 * sizeof(PyObject *));
        if (keys == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        PyObject *k, *v;
        while (i < n && PyDict_Next(value, &pos, &k, &v)) {
            keys[2 * i] = k;
            keys[2 * i + 1] = v;
            i++;
        }
        for (Py_ssize_t j = i - 1; j >= 0; j--) { /* reversed: the first item comes off the stack first */
            k = keys[2 * j];
            v = keys[2 * j + 1];
            Py_INCREF(v);
            if (push(st, v, 0) < 0) {
                PyMem_Free(keys);
                return -1;
            }
            if (PyUnicode_Check(k) && (ready(k) < 0 || text_key(k))) { /* before its value */
                if (PyErr_Occurred()) {
                    PyMem_Free(keys);
                    return -1;
                }
                if (!PyUnicode_CheckExact(k)) {
                    PyMem_Free(keys);
                    return 0;
                }
                Py_INCREF(k);
                if (push(st, k, 1) < 0) {
                    PyMem_Free(keys);
                    return -1;
                }
            }
        }
        PyMem_Free(keys);
        return 1;
    }
    if (PyList_Check(value) || PyTuple_Check(value)) {
        if (!PyList_CheckExact(value) && !PyTuple_CheckExact(value)) return 0;
        PyObject *seq = PySequence_Fast(value, "a list"); /* the list itself, a new reference */
        if (seq == NULL) return -1;
        int tokens = token_list(seq);
        if (tokens == -2) {
            Py_DECREF(seq);
            return -1;
        }
        if (tokens != 0) {
            if (tokens < 0) {
                Py_DECREF(seq);
                return 0;
            }
            PyObject *s = joined(seq);
            Py_DECREF(seq);
            if (s == NULL) return -1;
            int r = emit(seen, out, s);
            Py_DECREF(s);
            return r;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        PyObject **items = PySequence_Fast_ITEMS(seq);
        for (Py_ssize_t j = n - 1; j >= 0; j--) {
            Py_INCREF(items[j]);
            if (push(st, items[j], 0) < 0) {
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
        return 1;
    }
    return 1; /* a number, a boolean, None ...: no text */
}

static PyObject *fields_view(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *raw, *texts, *known, *decoded;
    if (!PyArg_ParseTuple(args, "OO!O!O:fields_view", &raw, &PyList_Type, &texts, &PyTuple_Type, &known, &decoded))
        return NULL;
    Seen seen = {texts, NULL, NULL, NULL, NULL};
    Stack st = {NULL, NULL, 0, 0};
    PyObject *out = NULL, *result = NULL;
    int status = 1;
    seen.whole = PySet_New(texts);
    seen.kept = PyList_New(0);
    seen.newline = PyUnicode_FromString("\n");
    out = PyList_New(0);
    if (seen.whole == NULL || seen.kept == NULL || seen.newline == NULL || out == NULL) goto done;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(known); i++)
        if (PySet_Add(seen.whole, PyTuple_GET_ITEM(known, i)) < 0) goto done;
    Py_INCREF(raw);
    if (push(&st, raw, 0) < 0) goto done;
    while (st.size && status == 1) {
        st.size--;
        PyObject *value = st.items[st.size];
        status = step(&seen, &st, out, value, st.is_key[st.size], decoded);
        Py_DECREF(value);
    }
    if (status < 0) goto done;
    if (status == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = PyUnicode_Join(seen.newline, out);
done:
    while (st.size) Py_DECREF(st.items[--st.size]);
    PyMem_Free(st.items);
    PyMem_Free(st.is_key);
    Py_XDECREF(seen.whole);
    Py_XDECREF(seen.lines);
    Py_XDECREF(seen.kept);
    Py_XDECREF(seen.newline);
    Py_XDECREF(out);
    return result;
}

static PyMethodDef methods[] = {
    {"fields_view", fields_view, METH_VARARGS, "The fields view of a raw object (see auditor.records.fields.fields_view)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fieldsc", "The fields view's walk in C.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fieldsc(void) { return PyModule_Create(&module); }
