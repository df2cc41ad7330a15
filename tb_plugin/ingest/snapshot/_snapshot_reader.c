/* The plain-data pickle machine of reader.py, in C, with columns.py's conversion of trace entries.
 *
 * A memory snapshot is read without pickle.load: only the opcodes that build dicts, lists, tuples, strings, bytes,
 * integers, floats, booleans and None are implemented (with their memo); every other opcode (globals, classes,
 * reductions, persistent ids, extensions, sets, buffers, protocol-0 text opcodes) is refused before anything is
 * built from it. Entries of device_traces[d] and of external_annotations go into columns as soon as their dict is
 * complete and are dropped, and the objects memoized for them are replaced by tokens (StackRef, FrameRef, None):
 * memory follows the columns, not the file.
 *
 * reader.py is the reference: this file follows it step by step (same ids in the same order, same messages);
 * tests/test_snapshot_reader.py holds both to equal results on the test snapshots, hostile files and random damage.
 *
 * read(buffer, stackref_class, frameref_class, read_error, refused_error)
 *   -> (document, columns: dict name -> bytes, strings: list, skipped: dict, bad_fields: dict, other_actions: dict)
 * (the columns of columns.LAYOUT, each as the bytes of its array).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_MARKS 64
#define OTHER_ACTION 255
#define OOM_ACTION 8
#define NO_DEVICE_SINK (-1) /* the sink of external_annotations */

/* --- growable buffers ------------------------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    char *data = PyMem_Realloc(b->data, cap);
    if (!data) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int buf_push(Buf *b, const void *p, size_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

#define PUSH(buf, type, value)                  \
    do {                                        \
        type v_ = (type)(value);                \
        if (buf_push(&(buf), &v_, sizeof v_) < 0) \
            return -1;                          \
    } while (0)

static void buf_free(Buf *b) {
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* --- pointer -> int32 maps (object identity) ---------------------------------------------------------- */

typedef struct {
    uintptr_t *keys; /* 0: empty */
    int32_t *vals;
    size_t cap, count;
    Buf used; /* slots filled, for a cheap clear */
} PtrMap;

static size_t ptr_hash(uintptr_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
}

static int ptrmap_grow(PtrMap *m);

static int32_t ptrmap_get(const PtrMap *m, const void *key) {
    if (!m->cap) return -1;
    uintptr_t k = (uintptr_t)key;
    size_t i = ptr_hash(k) & (m->cap - 1);
    while (m->keys[i]) {
        if (m->keys[i] == k) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

static int ptrmap_put(PtrMap *m, const void *key, int32_t value) {
    if ((m->count + 1) * 2 > m->cap && ptrmap_grow(m) < 0) return -1;
    uintptr_t k = (uintptr_t)key;
    size_t i = ptr_hash(k) & (m->cap - 1);
    while (m->keys[i]) {
        if (m->keys[i] == k) {
            m->vals[i] = value;
            return 0;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = k;
    m->vals[i] = value;
    m->count++;
    uint64_t slot = i;
    return buf_push(&m->used, &slot, sizeof slot);
}

static int ptrmap_grow(PtrMap *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    uintptr_t *keys = PyMem_Calloc(cap, sizeof *keys);
    int32_t *vals = PyMem_Calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        PyMem_Free(keys);
        PyMem_Free(vals);
        PyErr_NoMemory();
        return -1;
    }
    uintptr_t *old_keys = m->keys;
    int32_t *old_vals = m->vals;
    size_t old_cap = m->cap;
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    m->count = 0;
    m->used.len = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old_keys[i] && ptrmap_put(m, (void *)old_keys[i], old_vals[i]) < 0) return -1;
    PyMem_Free(old_keys);
    PyMem_Free(old_vals);
    return 0;
}

static void ptrmap_clear(PtrMap *m) {
    const uint64_t *slots = (const uint64_t *)m->used.data;
    size_t n = m->used.len / sizeof(uint64_t);
    for (size_t i = 0; i < n; i++) m->keys[slots[i]] = 0;
    m->used.len = 0;
    m->count = 0;
}

static void ptrmap_free(PtrMap *m) {
    PyMem_Free(m->keys);
    PyMem_Free(m->vals);
    buf_free(&m->used);
    memset(m, 0, sizeof *m);
}

/* --- id tables: frames by content, stacks by their frame sequence ------------------------------------ */

typedef struct {
    int32_t *ids; /* -1: empty */
    size_t cap, count;
} IdTable;

static int idtable_grow(IdTable *t, size_t (*hash_of)(void *, int32_t), void *ctx) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    int32_t *ids = PyMem_Malloc(cap * sizeof *ids);
    if (!ids) {
        PyErr_NoMemory();
        return -1;
    }
    memset(ids, 0xff, cap * sizeof *ids);
    for (size_t i = 0; i < t->cap; i++) {
        int32_t id = t->ids[i];
        if (id < 0) continue;
        size_t j = hash_of(ctx, id) & (cap - 1);
        while (ids[j] >= 0) j = (j + 1) & (cap - 1);
        ids[j] = id;
    }
    PyMem_Free(t->ids);
    t->ids = ids;
    t->cap = cap;
    return 0;
}

/* --- the reader's state ------------------------------------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    Py_ssize_t n;
    PyObject **stack;
    Py_ssize_t sp, stack_cap;
    Py_ssize_t marks[MAX_MARKS];
    int nmarks;
    PyObject **memo;
    Py_ssize_t memo_len, memo_cap;
    PtrMap sinks;       /* list -> device index, or NO_DEVICE_SINK */
    PyObject *holds;    /* references to sink lists, the device_traces list and kept containers */
    const void *traces_list;
    Py_ssize_t batch_start; /* -1: no entry list opened yet */
    PtrMap kept;        /* containers memoized before the first entry list */
    /* columns */
    Buf device, action, addr, size, stream, time_us, stack_col, compile_context, user_metadata, category;
    Buf ann_device, ann_time, ann_stage, ann_name;
    /* tables */
    PyObject *strings, *string_ids;
    Buf frame_file, frame_line, frame_name;
    IdTable frame_table;
    Buf stack_offsets, stack_frames;
    IdTable stack_table;
    Buf scratch; /* the frame ids of the stack being read */
    PtrMap frame_by_id, stack_by_id, batch_frames, batch_stacks;
    PyObject *skipped, *bad_fields, *other_actions;
    PyObject *stackref, *frameref, *read_error, *refused_error;
} Reader;

static PyObject *converted;  /* an entry's place on the stack once it went into the columns */
static PyObject *action_codes; /* action name -> code */
static PyObject *k_action, *k_addr, *k_size, *k_stream, *k_time_us, *k_frames, *k_device_free, *k_compile_context,
    *k_user_metadata, *k_category, *k_filename, *k_line, *k_name, *k_device, *k_stage, *k_stack_attr,
    *k_frame_attr;
static const char *TRACES_KEY = "device_traces", *ANNOTATIONS_KEY = "external_annotations";

static int fail(Reader *r, const char *message) {
    PyErr_SetString(r->read_error, message);
    return -1;
}

/* --- counters (the notes) ------------------------------------------------------------------------------ */

static int count(PyObject *dict, PyObject *key) {
    PyObject *old = PyDict_GetItemWithError(dict, key);
    if (!old && PyErr_Occurred()) return -1;
    long long n = old ? PyLong_AsLongLong(old) : 0;
    PyObject *value = PyLong_FromLongLong(n + 1);
    if (!value) return -1;
    int rc = PyDict_SetItem(dict, key, value);
    Py_DECREF(value);
    return rc;
}

static int count_text(PyObject *dict, const char *why) {
    PyObject *key = PyUnicode_FromString(why);
    if (!key) return -1;
    int rc = count(dict, key);
    Py_DECREF(key);
    return rc;
}

/* --- strings, frames, stacks ----------------------------------------------------------------------------- */

static int32_t string_id(Reader *r, PyObject *text) {
    PyObject *found = PyDict_GetItemWithError(r->string_ids, text);
    if (found) return (int32_t)PyLong_AsLong(found);
    if (PyErr_Occurred()) return -2;
    Py_ssize_t id = PyList_GET_SIZE(r->strings);
    PyObject *value = PyLong_FromSsize_t(id);
    if (!value) return -2;
    if (PyDict_SetItem(r->string_ids, text, value) < 0 || PyList_Append(r->strings, text) < 0) {
        Py_DECREF(value);
        return -2;
    }
    Py_DECREF(value);
    return (int32_t)id;
}

static size_t frame_hash_of(void *ctx, int32_t id) {
    Reader *r = ctx;
    int32_t file = ((int32_t *)r->frame_file.data)[id], name = ((int32_t *)r->frame_name.data)[id];
    int64_t line = ((int64_t *)r->frame_line.data)[id];
    return ptr_hash((uintptr_t)(((uint64_t)(uint32_t)file << 32) ^ (uint64_t)(uint32_t)name ^ ((uint64_t)line * 0x9E3779B97F4A7C15ULL)));
}

static int32_t frame_id(Reader *r, int32_t file, int64_t line, int32_t name) {
    IdTable *t = &r->frame_table;
    if ((t->count + 1) * 2 > t->cap && idtable_grow(t, frame_hash_of, r) < 0) return -2;
    size_t h = ptr_hash((uintptr_t)(((uint64_t)(uint32_t)file << 32) ^ (uint64_t)(uint32_t)name ^ ((uint64_t)line * 0x9E3779B97F4A7C15ULL)));
    size_t i = h & (t->cap - 1);
    const int32_t *files = (const int32_t *)r->frame_file.data, *names = (const int32_t *)r->frame_name.data;
    const int64_t *lines = (const int64_t *)r->frame_line.data;
    while (t->ids[i] >= 0) {
        int32_t id = t->ids[i];
        if (files[id] == file && names[id] == name && lines[id] == line) return id;
        i = (i + 1) & (t->cap - 1);
    }
    int32_t id = (int32_t)(r->frame_file.len / sizeof(int32_t));
    if (buf_push(&r->frame_file, &file, sizeof file) < 0 || buf_push(&r->frame_line, &line, sizeof line) < 0 ||
        buf_push(&r->frame_name, &name, sizeof name) < 0)
        return -2;
    t->ids[i] = id;
    t->count++;
    return id;
}

static size_t seq_hash(const int32_t *frames, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL ^ n;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint32_t)frames[i]) * 0x100000001b3ULL;
    return ptr_hash((uintptr_t)h);
}

static size_t stack_hash_of(void *ctx, int32_t id) {
    Reader *r = ctx;
    const int64_t *offsets = (const int64_t *)r->stack_offsets.data;
    return seq_hash((const int32_t *)r->stack_frames.data + offsets[id], (size_t)(offsets[id + 1] - offsets[id]));
}

static int32_t stack_id(Reader *r, const int32_t *frames, size_t n) {
    IdTable *t = &r->stack_table;
    if ((t->count + 1) * 2 > t->cap && idtable_grow(t, stack_hash_of, r) < 0) return -2;
    size_t i = seq_hash(frames, n) & (t->cap - 1);
    const int64_t *offsets = (const int64_t *)r->stack_offsets.data;
    const int32_t *all = (const int32_t *)r->stack_frames.data;
    while (t->ids[i] >= 0) {
        int32_t id = t->ids[i];
        size_t len = (size_t)(offsets[id + 1] - offsets[id]);
        if (len == n && memcmp(all + offsets[id], frames, n * sizeof *frames) == 0) return id;
        i = (i + 1) & (t->cap - 1);
    }
    int32_t id = (int32_t)(r->stack_offsets.len / sizeof(int64_t) - 1);
    if (buf_push(&r->stack_frames, frames, n * sizeof *frames) < 0) return -2;
    int64_t end = (int64_t)(r->stack_frames.len / sizeof(int32_t));
    if (buf_push(&r->stack_offsets, &end, sizeof end) < 0) return -2;
    t->ids[i] = id;
    t->count++;
    return id;
}

static int is_kept(Reader *r, const void *obj) { return ptrmap_get(&r->kept, obj) >= 0; }

/* A frame id from a frame dict (or its token); -1 for none, -2 on error. */
static int32_t frame_of(Reader *r, PyObject *value) {
    if (Py_TYPE(value) == (PyTypeObject *)r->frameref) {
        PyObject *id = PyObject_GetAttr(value, k_frame_attr);
        if (!id) return -2;
        long v = PyLong_AsLong(id);
        Py_DECREF(id);
        return (int32_t)v;
    }
    if (!PyDict_CheckExact(value)) return -1;
    int32_t found = ptrmap_get(&r->frame_by_id, value);
    if (found < 0) found = ptrmap_get(&r->batch_frames, value);
    if (found >= 0) return found;
    PyObject *filename = PyDict_GetItemWithError(value, k_filename);
    if (!filename && PyErr_Occurred()) return -2;
    PyObject *line = PyDict_GetItemWithError(value, k_line);
    if (!line && PyErr_Occurred()) return -2;
    PyObject *name = PyDict_GetItemWithError(value, k_name);
    if (!name && PyErr_Occurred()) return -2;
    int32_t file_id = -1, name_id = -1;
    int64_t line_no = -1;
    if (filename && PyUnicode_CheckExact(filename) && (file_id = string_id(r, filename)) == -2) return -2;
    if (line && PyLong_CheckExact(line)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(line, &overflow);
        if (!overflow && v >= 0 && v < (1LL << 31)) line_no = v;
        else if (PyErr_Occurred()) return -2;
    }
    if (name && PyUnicode_CheckExact(name) && (name_id = string_id(r, name)) == -2) return -2;
    found = frame_id(r, file_id, line_no, name_id);
    if (found == -2) return -2;
    if (ptrmap_put(is_kept(r, value) ? &r->frame_by_id : &r->batch_frames, value, found) < 0) return -2;
    return found;
}

/* A stack id from a frame list (or its token); -1 for none, -2 on error. */
static int32_t stack_of(Reader *r, PyObject *frames) {
    if (Py_TYPE(frames) == (PyTypeObject *)r->stackref) {
        PyObject *id = PyObject_GetAttr(frames, k_stack_attr);
        if (!id) return -2;
        long v = PyLong_AsLong(id);
        Py_DECREF(id);
        return (int32_t)v;
    }
    if (!PyList_CheckExact(frames) || PyList_GET_SIZE(frames) == 0) return -1;
    int32_t found = ptrmap_get(&r->stack_by_id, frames);
    if (found < 0) found = ptrmap_get(&r->batch_stacks, frames);
    if (found >= 0) return found;
    Py_ssize_t n = PyList_GET_SIZE(frames);
    r->scratch.len = 0;
    if (buf_reserve(&r->scratch, (size_t)n * sizeof(int32_t)) < 0) return -2;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t f = frame_of(r, PyList_GET_ITEM(frames, i));
        if (f == -2) return -2;
        ((int32_t *)r->scratch.data)[i] = f;
    }
    found = stack_id(r, (const int32_t *)r->scratch.data, (size_t)n);
    if (found == -2) return -2;
    if (ptrmap_put(is_kept(r, frames) ? &r->stack_by_id : &r->batch_stacks, frames, found) < 0) return -2;
    return found;
}

/* --- entries ----------------------------------------------------------------------------------------------- */

/* An int64 from a pickled int (not a bool); returns 1 and sets *out, 0 when it is none, -1 on error. */
static int int64_of(PyObject *value, int64_t *out) {
    if (!value || !PyLong_CheckExact(value)) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow) return 0;
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = v;
    return 1;
}

static int32_t text_field(Reader *r, PyObject *entry, PyObject *key, const char *name) {
    PyObject *value = PyDict_GetItemWithError(entry, key);
    if (!value) return PyErr_Occurred() ? -2 : -1;
    if (value == Py_None) return -1;
    if (PyUnicode_CheckExact(value)) return string_id(r, value);
    return count_text(r->bad_fields, name) < 0 ? -2 : -1;
}

static PyObject *get(PyObject *dict, PyObject *key, int *error) {
    PyObject *value = PyDict_GetItemWithError(dict, key);
    if (!value && PyErr_Occurred()) *error = 1;
    return value;
}

static int add_entry(Reader *r, int32_t device, PyObject *entry) {
    if (!PyDict_CheckExact(entry)) return count_text(r->skipped, "not a dict");
    int error = 0;
    PyObject *name = get(entry, k_action, &error);
    if (error) return -1;
    if (!name || !PyUnicode_CheckExact(name)) return count_text(r->skipped, "no action");
    PyObject *code_obj = PyDict_GetItemWithError(action_codes, name);
    if (!code_obj && PyErr_Occurred()) return -1;
    long code = code_obj ? PyLong_AsLong(code_obj) : OTHER_ACTION;
    if (!code_obj) {
        PyObject *seen = PyDict_GetItemWithError(r->other_actions, name);
        if (!seen && PyErr_Occurred()) return -1;
        if ((PyDict_GET_SIZE(r->other_actions) < 64 || seen) && count(r->other_actions, name) < 0) return -1;
    }
    int64_t addr = 0, size = 0, stream = 0, time_us = INT64_MIN;
    PyObject *addr_obj = get(entry, code == OOM_ACTION ? k_device_free : k_addr, &error);
    PyObject *size_obj = get(entry, k_size, &error);
    if (error) return -1;
    int ok_addr = addr_obj ? int64_of(addr_obj, &addr) : 1, ok_size = size_obj ? int64_of(size_obj, &size) : 1;
    if (ok_addr < 0 || ok_size < 0) return -1;
    if (!ok_addr || !ok_size) return count_text(r->skipped, "address or size not an integer");
    PyObject *stream_obj = get(entry, k_stream, &error);
    if (error) return -1;
    if (stream_obj) {
        int ok = int64_of(stream_obj, &stream);
        if (ok < 0) return -1;
        if (!ok) {
            stream = 0;
            if (count_text(r->bad_fields, "stream") < 0) return -1;
        }
    }
    PyObject *time_obj = get(entry, k_time_us, &error);
    if (error) return -1;
    if (time_obj && time_obj != Py_None) {
        int ok = int64_of(time_obj, &time_us);
        if (ok < 0) return -1;
        if (!ok) {
            time_us = INT64_MIN;
            if (count_text(r->bad_fields, "time_us") < 0) return -1;
        }
    }
    PUSH(r->device, int32_t, device);
    PUSH(r->action, uint8_t, code);
    PUSH(r->addr, int64_t, addr);
    PUSH(r->size, int64_t, size);
    PUSH(r->stream, int64_t, stream);
    PUSH(r->time_us, int64_t, time_us);
    PyObject *frames = get(entry, k_frames, &error);
    if (error) return -1;
    int32_t stack = frames ? stack_of(r, frames) : -1;
    if (stack == -2) return -1;
    PUSH(r->stack_col, int32_t, stack);
    int32_t cc = text_field(r, entry, k_compile_context, "compile_context");
    if (cc == -2) return -1;
    PUSH(r->compile_context, int32_t, cc);
    int32_t um = text_field(r, entry, k_user_metadata, "user_metadata");
    if (um == -2) return -1;
    PUSH(r->user_metadata, int32_t, um);
    int32_t cat = text_field(r, entry, k_category, "category");
    if (cat == -2) return -1;
    PUSH(r->category, int32_t, cat);
    return 0;
}

static int add_annotation(Reader *r, PyObject *annotation) {
    if (!PyDict_CheckExact(annotation)) return count_text(r->skipped, "annotation not a dict");
    int error = 0;
    PyObject *device_obj = get(annotation, k_device, &error), *time_obj = get(annotation, k_time_us, &error);
    if (error) return -1;
    int64_t device = 0, time_us = 0;
    int ok_device = device_obj ? int64_of(device_obj, &device) : 1, ok_time = time_obj ? int64_of(time_obj, &time_us) : 0;
    if (ok_device < 0 || ok_time < 0) return -1;
    if (!ok_device || !ok_time || device < INT32_MIN || device > INT32_MAX)
        return count_text(r->skipped, "annotation without device or time");
    PUSH(r->ann_device, int32_t, device);
    PUSH(r->ann_time, int64_t, time_us);
    int32_t stage = text_field(r, annotation, k_stage, "stage");
    if (stage == -2) return -1;
    PUSH(r->ann_stage, int32_t, stage);
    int32_t name = text_field(r, annotation, k_name, "name");
    if (name == -2) return -1;
    PUSH(r->ann_name, int32_t, name);
    return 0;
}

/* columns.end_batch: tokens for the memo slots of the objects just dropped, then the batch maps are forgotten. */
static int end_batch(Reader *r, Py_ssize_t start) {
    for (Py_ssize_t i = start; i < r->memo_len; i++) {
        PyObject *value = r->memo[i];
        if (!value) continue;
        PyObject *token = NULL;
        if (PyList_CheckExact(value)) {
            int32_t stack = ptrmap_get(&r->batch_stacks, value);
            token = stack >= 0 ? PyObject_CallFunction(r->stackref, "i", stack) : Py_NewRef(Py_None);
        } else if (PyDict_CheckExact(value)) {
            int32_t frame = ptrmap_get(&r->batch_frames, value);
            token = frame >= 0 ? PyObject_CallFunction(r->frameref, "i", frame) : Py_NewRef(Py_None);
        } else {
            continue;
        }
        if (!token) return -1;
        r->memo[i] = token;
        Py_DECREF(value);
    }
    ptrmap_clear(&r->batch_frames);
    ptrmap_clear(&r->batch_stacks);
    return 0;
}

static int convert(Reader *r, int32_t sink, PyObject *item) {
    if ((sink == NO_DEVICE_SINK ? add_annotation(r, item) : add_entry(r, sink, item)) < 0) return -1;
    Py_ssize_t start = r->batch_start >= 0 ? r->batch_start : r->memo_len;
    if (end_batch(r, start) < 0) return -1;
    r->batch_start = r->memo_len;
    return 0;
}

/* --- the machine ----------------------------------------------------------------------------------------- */

static int push(Reader *r, PyObject *value) { /* steals the reference */
    if (!value) return -1;
    if (r->sp == r->stack_cap) {
        Py_ssize_t cap = r->stack_cap ? r->stack_cap * 2 : 1024;
        PyObject **stack = PyMem_Realloc(r->stack, (size_t)cap * sizeof *stack);
        if (!stack) {
            Py_DECREF(value);
            PyErr_NoMemory();
            return -1;
        }
        r->stack = stack;
        r->stack_cap = cap;
    }
    r->stack[r->sp++] = value;
    return 0;
}

static int is_str(PyObject *value, const char *text) {
    return PyUnicode_CheckExact(value) && PyUnicode_CompareWithASCIIString(value, text) == 0;
}

/* The key just pushed when the stack builds the top-level dict's next value, else NULL (borrowed). */
static PyObject *top_key(Reader *r) {
    if (r->sp < 2 || !PyDict_CheckExact(r->stack[0])) return NULL;
    if ((r->nmarks == 1 && r->marks[0] == 1 && (r->sp - 1) % 2 == 1) || (r->nmarks == 0 && r->sp == 2))
        return PyUnicode_CheckExact(r->stack[r->sp - 1]) ? r->stack[r->sp - 1] : NULL;
    return NULL;
}

static int open_sink(Reader *r, PyObject *list, int32_t sink) {
    if (ptrmap_put(&r->sinks, list, sink) < 0 || PyList_Append(r->holds, list) < 0) return -1;
    if (r->batch_start < 0) r->batch_start = r->memo_len;
    return 0;
}

static int new_list(Reader *r, PyObject *list) {
    PyObject *key = top_key(r);
    if (key && is_str(key, TRACES_KEY)) {
        r->traces_list = list;
        return PyList_Append(r->holds, list);
    }
    if (key && is_str(key, ANNOTATIONS_KEY)) return open_sink(r, list, NO_DEVICE_SINK);
    if (r->traces_list) {
        Py_ssize_t top_mark = r->nmarks ? r->marks[r->nmarks - 1] : 0;
        if (r->sp && r->stack[r->sp - 1] == r->traces_list && top_mark <= r->sp - 1)
            return open_sink(r, list, (int32_t)PyList_GET_SIZE(r->stack[r->sp - 1]));
        if (top_mark > 0 && r->stack[top_mark - 1] == r->traces_list)
            return open_sink(r, list, (int32_t)(PyList_GET_SIZE(r->stack[top_mark - 1]) + r->sp - top_mark));
    }
    return 0;
}

static int sink_of(Reader *r, PyObject *list, int32_t *sink) {
    /* ptrmap_get answers -1 for "absent", which is also NO_DEVICE_SINK: tell them apart by a second map lookup. */
    if (!r->sinks.cap) return 0;
    uintptr_t k = (uintptr_t)list;
    size_t i = ptr_hash(k) & (r->sinks.cap - 1);
    while (r->sinks.keys[i]) {
        if (r->sinks.keys[i] == k) {
            *sink = r->sinks.vals[i];
            return 1;
        }
        i = (i + 1) & (r->sinks.cap - 1);
    }
    return 0;
}

static int dict_done(Reader *r, Py_ssize_t position) {
    if (!r->nmarks) return 0;
    Py_ssize_t mark = r->marks[r->nmarks - 1];
    int32_t sink;
    if (mark <= 0 || !sink_of(r, r->stack[mark - 1], &sink)) return 0;
    if (position != r->sp - 1) return 0;
    if (!(position == mark || (position > mark && r->stack[position - 1] == converted))) return 0;
    PyObject *item = r->stack[position];
    r->stack[position] = Py_NewRef(converted);
    int rc = convert(r, sink, item);
    Py_DECREF(item);
    return rc;
}

static int append_items(Reader *r, PyObject *target, PyObject **items, Py_ssize_t n) {
    if (!PyList_CheckExact(target)) return fail(r, "the file appends to something that is not a list");
    int32_t sink;
    if (!sink_of(r, target, &sink)) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (PyList_Append(target, items[i]) < 0) return -1;
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (items[i] != converted && convert(r, sink, items[i]) < 0) return -1;
    return 0;
}

static int memoize(Reader *r, Py_ssize_t index, PyObject *value) {
    if (index > r->memo_len) return fail(r, "the file numbers its pickle memo out of order; it was not read");
    if (index == r->memo_len) {
        if (r->memo_len == r->memo_cap) {
            Py_ssize_t cap = r->memo_cap ? r->memo_cap * 2 : 1024;
            PyObject **memo = PyMem_Realloc(r->memo, (size_t)cap * sizeof *memo);
            if (!memo) {
                PyErr_NoMemory();
                return -1;
            }
            r->memo = memo;
            r->memo_cap = cap;
        }
        r->memo[r->memo_len++] = Py_NewRef(value);
    } else {
        PyObject *old = r->memo[index];
        r->memo[index] = Py_NewRef(value);
        Py_XDECREF(old);
    }
    if (r->batch_start < 0 && (PyDict_CheckExact(value) || PyList_CheckExact(value)) && !is_kept(r, value)) {
        if (ptrmap_put(&r->kept, value, 1) < 0 || PyList_Append(r->holds, value) < 0) return -1;
    }
    return 0;
}

static int check_hashable_key(Reader *r, PyObject *key) {
    if (PyList_CheckExact(key) || PyDict_CheckExact(key) || key == converted)
        return fail(r, "the file uses a list or a dict as a dict key");
    if (PyObject_Hash(key) == -1) {
        PyErr_Clear();
        return fail(r, "the file uses a value that cannot be a dict key as one");
    }
    return 0;
}

static const char *opcode_name(uint8_t op) {
    switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'V': return "UNICODE";
    case 'p': return "PUT";
    case 'g': return "GET";
    default: return NULL;
    }
}

static int refuse(Reader *r, uint8_t op, Py_ssize_t offset) {
    char hex[8];
    const char *name = opcode_name(op);
    if (!name) {
        snprintf(hex, sizeof hex, "0x%02x", op);
        name = hex;
    }
    if (op == 'c') {
        /* As reader.py: the module and name of GLOBAL, when both lines lie within 256 bytes. */
        Py_ssize_t start = offset + 1, end = offset + 257 < r->n ? offset + 257 : r->n;
        const uint8_t *first = start < end ? memchr(r->p + start, '\n', (size_t)(end - start)) : NULL;
        const uint8_t *second = first ? memchr(first + 1, '\n', (size_t)(r->p + end - (first + 1))) : NULL;
        if (second) {
            PyObject *module = PyUnicode_DecodeUTF8((const char *)r->p + start, first - (r->p + start), "replace");
            PyObject *qual = PyUnicode_DecodeUTF8((const char *)first + 1, second - (first + 1), "replace");
            PyObject *target = module && qual ? PyUnicode_FromFormat("%U.%U", module, qual) : NULL;
            Py_XDECREF(module);
            Py_XDECREF(qual);
            if (!target) return -1;
            PyObject *message = PyUnicode_FromFormat(
                "the file is a pickle that imports %R (byte %zd); a memory snapshot holds plain data only, so it was "
                "refused and nothing in it was run", target, offset);
            Py_DECREF(target);
            if (!message) return -1;
            PyErr_SetObject(r->refused_error, message);
            Py_DECREF(message);
            return -1;
        }
    }
    int code = op == 'c' || op == 'i' || op == 'o' || op == 'b' || op == 'R' || op == 'P' || op == 'Q' ||
               op == 0x93 || op == 0x81 || op == 0x92 || op == 0x82 || op == 0x83 || op == 0x84;
    if (code)
        PyErr_Format(r->refused_error,
                     "the file is a pickle that asks to import or build objects (%s at byte %zd); a memory snapshot "
                     "holds plain data only, so it was refused and nothing in it was run", name, offset);
    else
        PyErr_Format(r->read_error,
                     "the file holds a pickle instruction a memory snapshot never has (%s at byte %zd); it was not read",
                     name, offset);
    return -1;
}

static int truncated(Reader *r) {
    return fail(r, "the file ends in the middle of its pickle, or refers to a value it never defined (truncated or "
                   "damaged?)");
}

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static PyObject *text(Reader *r, const uint8_t *p, Py_ssize_t n) {
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, n, "strict");
    if (!s && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        PyObject *reason = value ? PyObject_GetAttrString(value, "reason") : NULL;
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        if (!reason) return NULL;
        PyErr_Format(r->read_error, "the file holds a text that is not UTF-8 (%U)", reason);
        Py_DECREF(reason);
    }
    return s;
}

static PyObject *signed_int(const uint8_t *p, Py_ssize_t n) {
    if (n == 0) return PyLong_FromLong(0);
    if (n <= 8) {
        uint64_t v = le(p, (int)n);
        if (n < 8 && (p[n - 1] & 0x80)) v |= ~0ULL << (8 * n);
        return PyLong_FromLongLong((long long)v);
    }
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)p, n);
    if (!bytes) return NULL;
    PyObject *value = PyObject_CallMethod((PyObject *)&PyLong_Type, "from_bytes", "Os", bytes, "little");
    Py_DECREF(bytes);
    if (!value) return NULL;
    if (p[n - 1] & 0x80) { /* two's complement: value - 2 ** (8 n) */
        PyObject *shift = PyLong_FromSsize_t(8 * n), *one = PyLong_FromLong(1);
        PyObject *power = shift && one ? PyNumber_Lshift(one, shift) : NULL;
        PyObject *negative = power ? PyNumber_Subtract(value, power) : NULL;
        Py_XDECREF(shift);
        Py_XDECREF(one);
        Py_XDECREF(power);
        Py_DECREF(value);
        return negative;
    }
    return value;
}

#define NEED(k)                                   \
    do {                                          \
        if (i + (Py_ssize_t)(k) > n) return truncated(r); \
    } while (0)
#define POP_MARK_TO(var)                          \
    do {                                          \
        if (!r->nmarks) return truncated(r);      \
        var = r->marks[--r->nmarks];              \
        if (var > r->sp) return truncated(r);     \
    } while (0)

static void drop_from(Reader *r, Py_ssize_t from) {
    while (r->sp > from) {
        PyObject *v = r->stack[--r->sp];
        Py_DECREF(v);
    }
}

static int run(Reader *r) {
    const uint8_t *p = r->p;
    Py_ssize_t n = r->n, i = 0;
    if (n < 2 || p[0] != 0x80) return fail(r, "the file is not a pickle of protocol 2 or later (as torch writes snapshots)");
    for (;;) {
        if (i >= n) return fail(r, "the file ends in the middle of its pickle (truncated?)");
        Py_ssize_t offset = i;
        uint8_t op = p[i++];
        switch (op) {
        case 0x68: /* BINGET */
            NEED(1);
            if (p[i] >= r->memo_len || !r->memo[p[i]]) return truncated(r);
            if (push(r, Py_NewRef(r->memo[p[i]])) < 0) return -1;
            i += 1;
            break;
        case 0x6a: { /* LONG_BINGET */
            NEED(4);
            uint64_t k = le(p + i, 4);
            if ((Py_ssize_t)k >= r->memo_len || !r->memo[k]) return truncated(r);
            if (push(r, Py_NewRef(r->memo[k])) < 0) return -1;
            i += 4;
            break;
        }
        case 0x94: /* MEMOIZE */
            if (!r->sp) return truncated(r);
            if (memoize(r, r->memo_len, r->stack[r->sp - 1]) < 0) return -1;
            break;
        case 0x71: /* BINPUT */
            NEED(1);
            if (!r->sp) return truncated(r);
            if (memoize(r, p[i], r->stack[r->sp - 1]) < 0) return -1;
            i += 1;
            break;
        case 0x72: /* LONG_BINPUT */
            NEED(4);
            if (!r->sp) return truncated(r);
            if (memoize(r, (Py_ssize_t)le(p + i, 4), r->stack[r->sp - 1]) < 0) return -1;
            i += 4;
            break;
        case 0x28: /* MARK */
            if (r->nmarks >= MAX_MARKS) {
                PyErr_Format(r->read_error, "the file nests more than %d levels deep; it was not read", MAX_MARKS);
                return -1;
            }
            r->marks[r->nmarks++] = r->sp;
            break;
        case 0x75: { /* SETITEMS */
            Py_ssize_t mark;
            POP_MARK_TO(mark);
            if (mark < 1) return fail(r, "the file sets items with no dict to set them in");
            PyObject *target = r->stack[mark - 1];
            if (target == converted) {
                drop_from(r, mark);
                break;
            }
            if (!PyDict_CheckExact(target) || (r->sp - mark) % 2)
                return fail(r, "the file sets dict items on something that is not a dict");
            for (Py_ssize_t k = mark; k < r->sp; k += 2) {
                if (check_hashable_key(r, r->stack[k]) < 0) return -1;
                if (PyDict_SetItem(target, r->stack[k], r->stack[k + 1]) < 0) return -1;
            }
            drop_from(r, mark);
            if (dict_done(r, mark - 1) < 0) return -1;
            break;
        }
        case 0x65: { /* APPENDS */
            Py_ssize_t mark;
            POP_MARK_TO(mark);
            if (mark < 1) return fail(r, "the file appends with no list to append to");
            int rc = append_items(r, r->stack[mark - 1], r->stack + mark, r->sp - mark);
            drop_from(r, mark);
            if (rc < 0) return -1;
            break;
        }
        case 0x61: { /* APPEND */
            if (r->sp < 2) return truncated(r);
            PyObject *item = r->stack[--r->sp];
            int rc = append_items(r, r->stack[r->sp - 1], &item, 1);
            Py_DECREF(item);
            if (rc < 0) return -1;
            break;
        }
        case 0x73: { /* SETITEM */
            if (r->sp < 3) return truncated(r);
            PyObject *value = r->stack[--r->sp];
            PyObject *key = r->stack[--r->sp];
            PyObject *target = r->stack[r->sp - 1];
            int rc = 0;
            if (target != converted) {
                if (!PyDict_CheckExact(target))
                    rc = fail(r, "the file sets a dict item on something that is not a dict");
                else if ((rc = check_hashable_key(r, key)) == 0)
                    rc = PyDict_SetItem(target, key, value);
            }
            Py_DECREF(value);
            Py_DECREF(key);
            if (rc < 0) return -1;
            if (target != converted && dict_done(r, r->sp - 1) < 0) return -1;
            break;
        }
        case 0x7d: /* EMPTY_DICT */
            if (push(r, PyDict_New()) < 0) return -1;
            break;
        case 0x5d: { /* EMPTY_LIST */
            PyObject *list = PyList_New(0);
            if (!list) return -1;
            if (new_list(r, list) < 0) {
                Py_DECREF(list);
                return -1;
            }
            if (push(r, list) < 0) return -1;
            break;
        }
        case 0x8c: { /* SHORT_BINUNICODE */
            NEED(1);
            Py_ssize_t k = p[i];
            if (i + 1 + k > n) return truncated(r);
            if (push(r, text(r, p + i + 1, k)) < 0) return -1;
            i += 1 + k;
            break;
        }
        case 0x58: { /* BINUNICODE */
            NEED(4);
            uint64_t k = le(p + i, 4);
            if ((uint64_t)(n - i - 4) < k) return truncated(r);
            if (push(r, text(r, p + i + 4, (Py_ssize_t)k)) < 0) return -1;
            i += 4 + (Py_ssize_t)k;
            break;
        }
        case 0x8d: { /* BINUNICODE8 */
            NEED(8);
            uint64_t k = le(p + i, 8);
            if ((uint64_t)(n - i - 8) < k) return truncated(r);
            if (push(r, text(r, p + i + 8, (Py_ssize_t)k)) < 0) return -1;
            i += 8 + (Py_ssize_t)k;
            break;
        }
        case 0x4b: /* BININT1 */
            NEED(1);
            if (push(r, PyLong_FromLong(p[i])) < 0) return -1;
            i += 1;
            break;
        case 0x4d: /* BININT2 */
            NEED(2);
            if (push(r, PyLong_FromLong((long)le(p + i, 2))) < 0) return -1;
            i += 2;
            break;
        case 0x4a: /* BININT */
            NEED(4);
            if (push(r, PyLong_FromLong((long)(int32_t)le(p + i, 4))) < 0) return -1;
            i += 4;
            break;
        case 0x8a: { /* LONG1 */
            NEED(1);
            Py_ssize_t k = p[i];
            if (i + 1 + k > n) return truncated(r);
            if (push(r, signed_int(p + i + 1, k)) < 0) return -1;
            i += 1 + k;
            break;
        }
        case 0x8b: { /* LONG4 */
            NEED(4);
            int32_t k = (int32_t)le(p + i, 4);
            if (k < 0 || k > 64) return fail(r, "the file holds an integer of more than 512 bits; it was not read");
            if (i + 4 + k > n) return truncated(r);
            if (push(r, signed_int(p + i + 4, k)) < 0) return -1;
            i += 4 + k;
            break;
        }
        case 0x95: /* FRAME */
            i += 8;
            break;
        case 0x88: /* NEWTRUE */
            if (push(r, Py_NewRef(Py_True)) < 0) return -1;
            break;
        case 0x89: /* NEWFALSE */
            if (push(r, Py_NewRef(Py_False)) < 0) return -1;
            break;
        case 0x4e: /* NONE */
            if (push(r, Py_NewRef(Py_None)) < 0) return -1;
            break;
        case 0x47: { /* BINFLOAT */
            NEED(8);
            uint64_t bits = 0;
            for (int b = 0; b < 8; b++) bits = (bits << 8) | p[i + b];
            double d;
            memcpy(&d, &bits, sizeof d);
            if (push(r, PyFloat_FromDouble(d)) < 0) return -1;
            i += 8;
            break;
        }
        case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
            Py_ssize_t k = op - 0x84;
            if (r->sp < k) return truncated(r);
            PyObject *t = PyTuple_New(k);
            if (!t) return -1;
            for (Py_ssize_t j = 0; j < k; j++) PyTuple_SET_ITEM(t, j, r->stack[r->sp - k + j]);
            r->sp -= k;
            if (push(r, t) < 0) return -1;
            break;
        }
        case 0x29: /* EMPTY_TUPLE */
            if (push(r, PyTuple_New(0)) < 0) return -1;
            break;
        case 0x74: { /* TUPLE */
            Py_ssize_t mark;
            POP_MARK_TO(mark);
            PyObject *t = PyTuple_New(r->sp - mark);
            if (!t) return -1;
            for (Py_ssize_t j = mark; j < r->sp; j++) PyTuple_SET_ITEM(t, j - mark, r->stack[j]);
            r->sp = mark;
            if (push(r, t) < 0) return -1;
            break;
        }
        case 0x6c: { /* LIST */
            Py_ssize_t mark;
            POP_MARK_TO(mark);
            PyObject *l = PyList_New(r->sp - mark);
            if (!l) return -1;
            for (Py_ssize_t j = mark; j < r->sp; j++) PyList_SET_ITEM(l, j - mark, r->stack[j]);
            r->sp = mark;
            if (push(r, l) < 0) return -1;
            break;
        }
        case 0x64: { /* DICT */
            Py_ssize_t mark;
            POP_MARK_TO(mark);
            if ((r->sp - mark) % 2) return fail(r, "the file builds a dict from an odd number of items");
            PyObject *d = PyDict_New();
            if (!d) return -1;
            for (Py_ssize_t k = mark; k < r->sp; k += 2) {
                if (check_hashable_key(r, r->stack[k]) < 0 || PyDict_SetItem(d, r->stack[k], r->stack[k + 1]) < 0) {
                    Py_DECREF(d);
                    return -1;
                }
            }
            drop_from(r, mark);
            if (push(r, d) < 0) return -1;
            break;
        }
        case 0x43: { /* SHORT_BINBYTES */
            NEED(1);
            Py_ssize_t k = p[i];
            if (i + 1 + k > n) return truncated(r);
            if (push(r, PyBytes_FromStringAndSize((const char *)p + i + 1, k)) < 0) return -1;
            i += 1 + k;
            break;
        }
        case 0x42: { /* BINBYTES */
            NEED(4);
            uint64_t k = le(p + i, 4);
            if ((uint64_t)(n - i - 4) < k) return truncated(r);
            if (push(r, PyBytes_FromStringAndSize((const char *)p + i + 4, (Py_ssize_t)k)) < 0) return -1;
            i += 4 + (Py_ssize_t)k;
            break;
        }
        case 0x8e: { /* BINBYTES8 */
            NEED(8);
            uint64_t k = le(p + i, 8);
            if ((uint64_t)(n - i - 8) < k) return truncated(r);
            if (push(r, PyBytes_FromStringAndSize((const char *)p + i + 8, (Py_ssize_t)k)) < 0) return -1;
            i += 8 + (Py_ssize_t)k;
            break;
        }
        case 0x30: /* POP */
            if (r->nmarks && r->marks[r->nmarks - 1] == r->sp) {
                r->nmarks--;
            } else {
                if (!r->sp) return truncated(r);
                drop_from(r, r->sp - 1);
            }
            break;
        case 0x31: { /* POP_MARK */
            Py_ssize_t mark;
            POP_MARK_TO(mark);
            drop_from(r, mark);
            break;
        }
        case 0x32: /* DUP */
            if (!r->sp) return truncated(r);
            if (push(r, Py_NewRef(r->stack[r->sp - 1])) < 0) return -1;
            break;
        case 0x80: /* PROTO */
            NEED(1);
            if (p[i] < 2 || p[i] > 5) {
                PyErr_Format(r->read_error, "the file is a pickle of protocol %d, not one torch writes", p[i]);
                return -1;
            }
            i += 1;
            break;
        case 0x2e: /* STOP */
            if (r->sp != 1 || r->nmarks) return fail(r, "the file's pickle does not end with one value");
            if (!PyDict_CheckExact(r->stack[0]))
                return fail(r, "the file is a pickle, but not of a dict as a memory snapshot is");
            return 0;
        default:
            return refuse(r, op, offset);
        }
    }
}

/* The stacks of the segments and their blocks (columns.segment_stacks): segments first, each followed by its
 * blocks, in file order; an item that is no dict is passed over. A block of torch 2.0's format keeps its frames in
 * history[0]. */
static PyObject *k_segments, *k_blocks, *k_history;

static int segment_stacks(Reader *r, PyObject *document, Buf *segment_col, Buf *block_col) {
    PyObject *segments = PyDict_GetItemWithError(document, k_segments);
    if (!segments) return PyErr_Occurred() ? -1 : 0;
    if (!PyList_CheckExact(segments)) return 0;
    for (Py_ssize_t s = 0; s < PyList_GET_SIZE(segments); s++) {
        PyObject *seg = PyList_GET_ITEM(segments, s);
        if (!PyDict_CheckExact(seg)) continue;
        int error = 0;
        PyObject *frames = get(seg, k_frames, &error);
        if (error) return -1;
        int32_t stack = frames ? stack_of(r, frames) : -1;
        if (stack == -2) return -1;
        PUSH(*segment_col, int32_t, stack);
        PyObject *blocks = get(seg, k_blocks, &error);
        if (error) return -1;
        if (!blocks || !PyList_CheckExact(blocks)) continue;
        for (Py_ssize_t b = 0; b < PyList_GET_SIZE(blocks); b++) {
            PyObject *block = PyList_GET_ITEM(blocks, b);
            if (!PyDict_CheckExact(block)) continue;
            PyObject *block_frames = get(block, k_frames, &error);
            if (error) return -1;
            if (!block_frames) {
                PyObject *history = get(block, k_history, &error);
                if (error) return -1;
                if (history && PyList_CheckExact(history) && PyList_GET_SIZE(history) > 0 &&
                    PyDict_CheckExact(PyList_GET_ITEM(history, 0))) {
                    block_frames = get(PyList_GET_ITEM(history, 0), k_frames, &error);
                    if (error) return -1;
                }
            }
            int32_t block_stack = block_frames ? stack_of(r, block_frames) : -1;
            if (block_stack == -2) return -1;
            PUSH(*block_col, int32_t, block_stack);
        }
    }
    return 0;
}

/* --- the module --------------------------------------------------------------------------------------------- */

static void reader_free(Reader *r) {
    drop_from(r, 0);
    PyMem_Free(r->stack);
    for (Py_ssize_t i = 0; i < r->memo_len; i++) Py_XDECREF(r->memo[i]);
    PyMem_Free(r->memo);
    ptrmap_free(&r->sinks);
    ptrmap_free(&r->kept);
    ptrmap_free(&r->frame_by_id);
    ptrmap_free(&r->stack_by_id);
    ptrmap_free(&r->batch_frames);
    ptrmap_free(&r->batch_stacks);
    Buf *bufs[] = {&r->device, &r->action, &r->addr, &r->size, &r->stream, &r->time_us, &r->stack_col,
                   &r->compile_context, &r->user_metadata, &r->category, &r->ann_device, &r->ann_time,
                   &r->ann_stage, &r->ann_name, &r->frame_file, &r->frame_line, &r->frame_name,
                   &r->stack_offsets, &r->stack_frames, &r->scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) buf_free(bufs[i]);
    PyMem_Free(r->frame_table.ids);
    PyMem_Free(r->stack_table.ids);
    Py_XDECREF(r->holds);
    Py_XDECREF(r->strings);
    Py_XDECREF(r->string_ids);
    Py_XDECREF(r->skipped);
    Py_XDECREF(r->bad_fields);
    Py_XDECREF(r->other_actions);
}

static int put_column(PyObject *columns, const char *name, Buf *b) {
    PyObject *bytes = PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
    if (!bytes) return -1;
    buf_free(b);
    int rc = PyDict_SetItemString(columns, name, bytes);
    Py_DECREF(bytes);
    return rc;
}

static PyObject *read_snapshot(PyObject *self, PyObject *args) {
    PyObject *source;
    Reader r;
    memset(&r, 0, sizeof r);
    if (!PyArg_ParseTuple(args, "OOOOO", &source, &r.stackref, &r.frameref, &r.read_error, &r.refused_error))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE) < 0) return NULL;
    r.p = view.buf;
    r.n = view.len;
    r.batch_start = -1;
    r.holds = PyList_New(0);
    r.strings = PyList_New(0);
    r.string_ids = PyDict_New();
    r.skipped = PyDict_New();
    r.bad_fields = PyDict_New();
    r.other_actions = PyDict_New();
    int64_t zero = 0;
    PyObject *result = NULL;
    if (!r.holds || !r.strings || !r.string_ids || !r.skipped || !r.bad_fields || !r.other_actions ||
        buf_push(&r.stack_offsets, &zero, sizeof zero) < 0)
        goto done;
    if (run(&r) < 0) goto done;
    Buf segment_col = {0}, block_col = {0};
    if (segment_stacks(&r, r.stack[0], &segment_col, &block_col) < 0) {
        buf_free(&segment_col);
        buf_free(&block_col);
        goto done;
    }
    PyObject *columns = PyDict_New();
    if (!columns || put_column(columns, "segment_stack", &segment_col) < 0 ||
        put_column(columns, "block_stack", &block_col) < 0) {
        buf_free(&segment_col);
        buf_free(&block_col);
        Py_XDECREF(columns);
        goto done;
    }
    if (put_column(columns, "device", &r.device) < 0 || put_column(columns, "action", &r.action) < 0 ||
        put_column(columns, "addr", &r.addr) < 0 || put_column(columns, "size", &r.size) < 0 ||
        put_column(columns, "stream", &r.stream) < 0 || put_column(columns, "time_us", &r.time_us) < 0 ||
        put_column(columns, "stack", &r.stack_col) < 0 ||
        put_column(columns, "compile_context", &r.compile_context) < 0 ||
        put_column(columns, "user_metadata", &r.user_metadata) < 0 ||
        put_column(columns, "category", &r.category) < 0 ||
        put_column(columns, "annotation_device", &r.ann_device) < 0 ||
        put_column(columns, "annotation_time_us", &r.ann_time) < 0 ||
        put_column(columns, "annotation_stage", &r.ann_stage) < 0 ||
        put_column(columns, "annotation_name", &r.ann_name) < 0 ||
        put_column(columns, "frame_file", &r.frame_file) < 0 || put_column(columns, "frame_line", &r.frame_line) < 0 ||
        put_column(columns, "frame_name", &r.frame_name) < 0 ||
        put_column(columns, "stack_offsets", &r.stack_offsets) < 0 ||
        put_column(columns, "stack_frames", &r.stack_frames) < 0) {
        Py_DECREF(columns);
        goto done;
    }
    result = Py_BuildValue("(OOOOOO)", r.stack[0], columns, r.strings, r.skipped, r.bad_fields, r.other_actions);
    Py_DECREF(columns);
done:
    PyBuffer_Release(&view);
    reader_free(&r);
    return result;
}

static PyMethodDef methods[] = {
    {"read", read_snapshot, METH_VARARGS, "Read a memory snapshot's pickle as plain data, its entries as columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_snapshot_reader", NULL, -1, methods};

PyMODINIT_FUNC PyInit__snapshot_reader(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    converted = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    action_codes = PyDict_New();
    if (!converted || !action_codes) return NULL;
    const char *actions[] = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
                             "segment_map", "segment_unmap", "snapshot", "oom", "annotate"};
    for (long code = 0; code < (long)(sizeof actions / sizeof *actions); code++) {
        PyObject *value = PyLong_FromLong(code);
        if (!value || PyDict_SetItemString(action_codes, actions[code], value) < 0) return NULL;
        Py_DECREF(value);
    }
#define KEY(var, text)                          \
    if (!(var = PyUnicode_InternFromString(text))) \
        return NULL;
    KEY(k_action, "action") KEY(k_addr, "addr") KEY(k_size, "size") KEY(k_stream, "stream") KEY(k_time_us, "time_us")
    KEY(k_frames, "frames") KEY(k_device_free, "device_free") KEY(k_compile_context, "compile_context")
    KEY(k_user_metadata, "user_metadata") KEY(k_category, "category") KEY(k_filename, "filename") KEY(k_line, "line")
    KEY(k_name, "name") KEY(k_device, "device") KEY(k_stage, "stage") KEY(k_stack_attr, "stack")
    KEY(k_frame_attr, "frame") KEY(k_segments, "segments") KEY(k_blocks, "blocks") KEY(k_history, "history")
    if (PyModule_AddIntConstant(m, "MAX_MARKS", MAX_MARKS) < 0) return NULL;
    return m;
}
