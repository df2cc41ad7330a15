/*
 * Columns straight from a chunk of Chrome-trace JSON: the decoder's fast path (see columnar.py).
 *
 * ``Scanner.scan(chunk)`` reads one chunk, a JSON array of event objects, and writes each field that
 * decode.py reads into a column: times and numeric arguments as float64 / int64, texts as ids of an
 * intern table that lives as long as the scanner. It accepts only a plain subset of JSON:
 *   - each value in the array is an object; known fields have the type the msgspec structs of
 *     decode.py expect (a number for a time, an integer for an id, text without escapes for a name);
 *   - text is UTF-8 and has no escape where it is kept as text; numbers follow the JSON grammar;
 *   - no known field twice in one object, nesting at most 64 deep.
 * Anything else makes ``scan`` return None, before anything is published, and decode.py reads the chunk
 * through msgspec as before. So for every chunk this accepts, the columns are the ones the msgspec path
 * gives (tests/test_columnar_decoder.py checks that on real and generated traces), and every error,
 * repair or unusual type stays that path's job.
 *
 * The scanner never reads outside the buffer it was given: every read checks the end first.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- fields ------------------------------------------------------------------------------------ */

enum Kind {
    K_TEXT,      /* text without escapes: interned with tag 's' */
    K_SCALAR,    /* an integer or a text (pid, tid, flow id): interned as 'i' + digits or 's' + text */
    K_FLOAT,     /* a number: float64 */
    K_INT,       /* an integer: int64 */
    K_OPT_INT,   /* an integer or null (null reads as -1) */
    K_RAW,       /* any JSON value, kept verbatim: interned with tag 'r' */
    K_ARGS,      /* the args object */
    K_UNHANDLED  /* a field the msgspec path reads that this scanner does not: the chunk goes there */
};

typedef struct {
    const char *scope; /* "event" or "args" */
    const char *key;   /* as spelled in the JSON */
    int kind;
    int column;        /* -1: no column */
    Py_ssize_t length; /* of key, set at import: 0 here */
} Field;

/* Column numbers: float64 and int64 columns first (8 bytes a row), then int32 ids (4 bytes a row). */
enum {
    C_TS, C_DUR, C_BLOCKS_PER_SM, C_WARPS_PER_SM, C_OCCUPANCY,
    C_EXTERNAL_ID, C_EXTERNAL_ID_2021, C_CORRELATION, C_SEQUENCE, C_PYTHON_ID, C_PYTHON_PARENT_ID,
    C_DEVICE, C_STREAM, C_NBYTES, C_ADDR, C_MEM_BYTES, C_TOTAL_ALLOCATED, C_TOTAL_RESERVED,
    C_DEVICE_TYPE, C_DEVICE_ID, C_IN_MSG_NELEMS, C_OUT_MSG_NELEMS, C_GROUP_SIZE, C_COLLECTIVE_SEQ,
    C_PH, C_NAME, C_CAT, C_PID, C_TID, C_ID, C_BP,
    C_INPUT_DIMS, C_INPUT_TYPE, C_CONCRETE_INPUTS, C_CALL_STACK, C_GRID, C_BLOCK, C_COLLECTIVE, C_DTYPE,
    C_PROCESS_GROUP,
    N_COLUMNS
};
#define FIRST_ID_COLUMN C_PH

static Field EVENT_FIELDS[] = {
    {"event", "ph", K_TEXT, C_PH, 0},
    {"event", "name", K_TEXT, C_NAME, 0},
    {"event", "cat", K_TEXT, C_CAT, 0},
    {"event", "ts", K_FLOAT, C_TS, 0},
    {"event", "dur", K_FLOAT, C_DUR, 0},
    {"event", "pid", K_SCALAR, C_PID, 0},
    {"event", "tid", K_SCALAR, C_TID, 0},
    {"event", "id", K_SCALAR, C_ID, 0},
    {"event", "bp", K_TEXT, C_BP, 0},
    {"event", "args", K_ARGS, -1, 0},
};

static Field ARG_FIELDS[] = {
    {"args", "External id", K_INT, C_EXTERNAL_ID, 0},
    {"args", "external id", K_INT, C_EXTERNAL_ID_2021, 0},
    {"args", "correlation", K_INT, C_CORRELATION, 0},
    {"args", "Input Dims", K_RAW, C_INPUT_DIMS, 0},
    {"args", "Input type", K_RAW, C_INPUT_TYPE, 0},
    {"args", "Concrete Inputs", K_RAW, C_CONCRETE_INPUTS, 0},
    {"args", "Call stack", K_RAW, C_CALL_STACK, 0},
    {"args", "Sequence number", K_INT, C_SEQUENCE, 0},
    {"args", "Python id", K_OPT_INT, C_PYTHON_ID, 0},
    {"args", "Python parent id", K_OPT_INT, C_PYTHON_PARENT_ID, 0},
    {"args", "device", K_INT, C_DEVICE, 0},
    {"args", "stream", K_INT, C_STREAM, 0},
    {"args", "grid", K_RAW, C_GRID, 0},
    {"args", "block", K_RAW, C_BLOCK, 0},
    {"args", "blocks per SM", K_FLOAT, C_BLOCKS_PER_SM, 0},
    {"args", "warps per SM", K_FLOAT, C_WARPS_PER_SM, 0},
    {"args", "est. achieved occupancy %", K_FLOAT, C_OCCUPANCY, 0},
    {"args", "bytes", K_INT, C_NBYTES, 0},
    {"args", "Addr", K_INT, C_ADDR, 0},
    {"args", "Bytes", K_INT, C_MEM_BYTES, 0},
    {"args", "Total Allocated", K_INT, C_TOTAL_ALLOCATED, 0},
    {"args", "Total Reserved", K_INT, C_TOTAL_RESERVED, 0},
    {"args", "Device Type", K_INT, C_DEVICE_TYPE, 0},
    {"args", "Device Id", K_INT, C_DEVICE_ID, 0},
    {"args", "Collective name", K_TEXT, C_COLLECTIVE, 0},
    {"args", "In msg nelems", K_INT, C_IN_MSG_NELEMS, 0},
    {"args", "Out msg nelems", K_INT, C_OUT_MSG_NELEMS, 0},
    {"args", "dtype", K_TEXT, C_DTYPE, 0},
    {"args", "Group size", K_INT, C_GROUP_SIZE, 0},
    {"args", "Process Group Name", K_TEXT, C_PROCESS_GROUP, 0},
    {"args", "Seq", K_INT, C_COLLECTIVE_SEQ, 0},
    /* PaddlePaddle's and metadata events' arguments: those chunks take the msgspec path. */
    {"args", "addr", K_UNHANDLED, -1, 0},
    {"args", "increase_bytes", K_UNHANDLED, -1, 0},
    {"args", "current_allocated", K_UNHANDLED, -1, 0},
    {"args", "current_reserved", K_UNHANDLED, -1, 0},
    {"args", "place", K_UNHANDLED, -1, 0},
    {"args", "start_time", K_UNHANDLED, -1, 0},
    {"args", "name", K_UNHANDLED, -1, 0},
    {"args", "labels", K_UNHANDLED, -1, 0},
    {"args", "sort_index", K_UNHANDLED, -1, 0},
};

#define N_EVENT_FIELDS ((int)(sizeof(EVENT_FIELDS) / sizeof(EVENT_FIELDS[0])))
#define N_ARG_FIELDS ((int)(sizeof(ARG_FIELDS) / sizeof(ARG_FIELDS[0])))

static int column_width(int column) { return column < FIRST_ID_COLUMN ? 8 : 4; }

/* ---- the intern table: tagged byte strings -> ids in first-seen order ---------------------------- */

typedef struct {
    uint64_t hash;
    Py_ssize_t offset; /* in the arena */
    Py_ssize_t length;
    int32_t id;        /* -1: empty slot */
} Slot;

typedef struct {
    Slot *slots;
    Py_ssize_t capacity; /* a power of two */
    Py_ssize_t count;
    char *arena;
    Py_ssize_t arena_used, arena_capacity;
    Py_ssize_t *entry_offset; /* by id */
    Py_ssize_t *entry_length;
    Py_ssize_t entry_capacity;
} Interner;

static uint64_t hash_bytes(char tag, const char *data, Py_ssize_t length) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(unsigned char)tag ^ ((uint64_t)length << 8);
    Py_ssize_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    for (; i < length; i++) {
        h = (h ^ (unsigned char)data[i]) * 0xC4CEB9FE1A85EC53ULL;
    }
    h ^= h >> 29;
    return h;
}

static int interner_init(Interner *t) {
    memset(t, 0, sizeof(*t));
    t->capacity = 1024;
    t->slots = PyMem_Malloc(sizeof(Slot) * t->capacity);
    t->arena_capacity = 1 << 16;
    t->arena = PyMem_Malloc(t->arena_capacity);
    t->entry_capacity = 512;
    t->entry_offset = PyMem_Malloc(sizeof(Py_ssize_t) * t->entry_capacity);
    t->entry_length = PyMem_Malloc(sizeof(Py_ssize_t) * t->entry_capacity);
    if (!t->slots || !t->arena || !t->entry_offset || !t->entry_length) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < t->capacity; i++) t->slots[i].id = -1;
    return 0;
}

static void interner_free(Interner *t) {
    PyMem_Free(t->slots);
    PyMem_Free(t->arena);
    PyMem_Free(t->entry_offset);
    PyMem_Free(t->entry_length);
    memset(t, 0, sizeof(*t));
}

static int interner_grow_slots(Interner *t) {
    Py_ssize_t capacity = t->capacity * 2;
    Slot *slots = PyMem_Malloc(sizeof(Slot) * capacity);
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < capacity; i++) slots[i].id = -1;
    for (Py_ssize_t i = 0; i < t->capacity; i++) {
        if (t->slots[i].id < 0) continue;
        Py_ssize_t j = (Py_ssize_t)(t->slots[i].hash & (uint64_t)(capacity - 1));
        while (slots[j].id >= 0) j = (j + 1) & (capacity - 1);
        slots[j] = t->slots[i];
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return 0;
}

/* The id of tag + data[0:length], added if new; -1 with an exception set when out of memory. */
static int32_t intern(Interner *t, char tag, const char *data, Py_ssize_t length) {
    uint64_t h = hash_bytes(tag, data, length);
    Py_ssize_t mask = t->capacity - 1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)mask);
    while (t->slots[j].id >= 0) {
        Slot *s = &t->slots[j];
        if (s->hash == h && s->length == length + 1 && t->arena[s->offset] == tag &&
            memcmp(t->arena + s->offset + 1, data, (size_t)length) == 0) {
            return s->id;
        }
        j = (j + 1) & mask;
    }
    if (t->count >= INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "too many distinct texts in one trace");
        return -1;
    }
    if (t->arena_used + length + 1 > t->arena_capacity) {
        Py_ssize_t capacity = t->arena_capacity;
        while (t->arena_used + length + 1 > capacity) capacity *= 2;
        char *arena = PyMem_Realloc(t->arena, capacity);
        if (!arena) {
            PyErr_NoMemory();
            return -1;
        }
        t->arena = arena;
        t->arena_capacity = capacity;
    }
    if (t->count == t->entry_capacity) {
        Py_ssize_t capacity = t->entry_capacity * 2;
        Py_ssize_t *offsets = PyMem_Realloc(t->entry_offset, sizeof(Py_ssize_t) * capacity);
        if (!offsets) {
            PyErr_NoMemory();
            return -1;
        }
        t->entry_offset = offsets;
        Py_ssize_t *lengths = PyMem_Realloc(t->entry_length, sizeof(Py_ssize_t) * capacity);
        if (!lengths) {
            PyErr_NoMemory();
            return -1;
        }
        t->entry_length = lengths;
        t->entry_capacity = capacity;
    }
    int32_t id = (int32_t)t->count;
    Slot *s = &t->slots[j];
    s->hash = h;
    s->offset = t->arena_used;
    s->length = length + 1;
    s->id = id;
    t->arena[t->arena_used] = tag;
    memcpy(t->arena + t->arena_used + 1, data, (size_t)length);
    t->entry_offset[id] = t->arena_used;
    t->entry_length[id] = length + 1;
    t->arena_used += length + 1;
    t->count++;
    if (t->count * 2 > t->capacity && interner_grow_slots(t) < 0) return -1;
    return id;
}

/* ---- the scanner object ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Interner strings;
    char *columns[N_COLUMNS];
    Py_ssize_t rows_capacity;
    int32_t empty_text, zero_scalar, minus_one_scalar; /* the msgspec structs' defaults */
} Scanner;

/* Why a scan stopped: FALLBACK leaves the chunk to the msgspec path, FAILED has an exception set. */
enum { OK = 0, FALLBACK = 1, FAILED = 2 };

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    Scanner *scanner;
    Py_ssize_t row;
} Cursor;

#define MAX_DEPTH 64

/* Byte classes, filled once at import: JSON white space, and bytes that need no look inside a string. */
static unsigned char IS_SPACE[256], IS_PLAIN[256];

static void init_classes(void) {
    IS_SPACE[' '] = IS_SPACE['\n'] = IS_SPACE['\r'] = IS_SPACE['\t'] = 1;
    for (int ch = 0x20; ch < 0x80; ch++) IS_PLAIN[ch] = ch != '"' && ch != '\\';
}

static inline void skip_space(Cursor *c) {
    while (c->p < c->end && IS_SPACE[*c->p]) c->p++;
}

/* One UTF-8 sequence that starts with a byte >= 0x80 at c->p: OK and past it, or FALLBACK. */
static int skip_utf8(Cursor *c) {
    const unsigned char *p = c->p;
    unsigned char b = p[0];
    Py_ssize_t left = c->end - p;
    int extra;
    unsigned char low = 0x80, high = 0xBF; /* the allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) extra = 1;
    else if (b == 0xE0) { extra = 2; low = 0xA0; }
    else if (b >= 0xE1 && b <= 0xEC) extra = 2;
    else if (b == 0xED) { extra = 2; high = 0x9F; } /* no UTF-16 surrogates */
    else if (b >= 0xEE && b <= 0xEF) extra = 2;
    else if (b == 0xF0) { extra = 3; low = 0x90; }
    else if (b >= 0xF1 && b <= 0xF3) extra = 3;
    else if (b == 0xF4) { extra = 3; high = 0x8F; }
    else return FALLBACK;
    if (left < extra + 1) return FALLBACK;
    if (p[1] < low || p[1] > high) return FALLBACK;
    for (int i = 2; i <= extra; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) return FALLBACK;
    }
    c->p += extra + 1;
    return OK;
}

static int hex_value(unsigned char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* A string at c->p (its opening quote); sets [*start, *stop) to its content. Escapes are allowed only
 * when ``escapes`` (the content is then kept verbatim or skipped, never read as text). */
static int scan_string(Cursor *c, const unsigned char **start, const unsigned char **stop, int escapes) {
    if (c->p >= c->end || *c->p != '"') return FALLBACK;
    c->p++;
    *start = c->p;
    for (;;) {
        /* The common bytes in a tight loop: printable ASCII other than the quote and the backslash. */
#if defined(__SSE2__)
        /* 16 at a time: a signed compare below 0x20 also catches every byte from 0x80 (negative). */
        while (c->end - c->p >= 16) {
            __m128i block = _mm_loadu_si128((const __m128i *)c->p);
            __m128i stop = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(block, _mm_set1_epi8('"')), _mm_cmpeq_epi8(block, _mm_set1_epi8('\\'))),
                _mm_cmplt_epi8(block, _mm_set1_epi8(0x20)));
            int mask = _mm_movemask_epi8(stop);
            if (mask) {
                c->p += __builtin_ctz((unsigned)mask);
                break;
            }
            c->p += 16;
        }
#endif
        while (c->p < c->end && IS_PLAIN[*c->p]) c->p++;
        if (c->p >= c->end) return FALLBACK;
        unsigned char ch = *c->p;
        if (ch == '"') {
            *stop = c->p;
            c->p++;
            return OK;
        }
        if (ch < 0x20) return FALLBACK; /* a control character: not JSON */
        if (ch >= 0x80) {
            if (skip_utf8(c) != OK) return FALLBACK;
            continue;
        }
        /* a backslash */
        if (!escapes || c->end - c->p < 2) return FALLBACK;
        unsigned char e = c->p[1];
        if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
            c->p += 2;
            continue;
        }
        if (e != 'u' || c->end - c->p < 6) return FALLBACK;
        int code = 0;
        for (int i = 2; i < 6; i++) {
            int v = hex_value(c->p[i]);
            if (v < 0) return FALLBACK;
            code = code * 16 + v;
        }
        if (code >= 0xD800 && code <= 0xDFFF) return FALLBACK; /* surrogates: the msgspec path decides */
        c->p += 6;
    }
}

/* A JSON number at c->p: its extent, and whether it is an integer (no fraction, no exponent). */
static int scan_number(Cursor *c, const unsigned char **start, int *is_integer) {
    const unsigned char *p = c->p, *end = c->end;
    *start = p;
    *is_integer = 1;
    if (p < end && *p == '-') p++;
    if (p >= end) return FALLBACK;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    } else {
        return FALLBACK;
    }
    if (p < end && *p == '.') {
        *is_integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9') return FALLBACK;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        *is_integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return FALLBACK;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    c->p = p;
    return OK;
}

static int scan_literal(Cursor *c, const char *word, Py_ssize_t length) {
    if (c->end - c->p < length || memcmp(c->p, word, (size_t)length) != 0) return FALLBACK;
    c->p += length;
    return OK;
}

/* Any JSON value, validated and skipped. */
static int skip_value(Cursor *c, int depth) {
    const unsigned char *a, *b;
    int is_integer;
    if (c->p >= c->end) return FALLBACK;
    switch (*c->p) {
    case '"':
        return scan_string(c, &a, &b, 1);
    case 't':
        return scan_literal(c, "true", 4);
    case 'f':
        return scan_literal(c, "false", 5);
    case 'n':
        return scan_literal(c, "null", 4);
    case '[':
    case '{': {
        unsigned char close = *c->p == '[' ? ']' : '}';
        int object = close == '}';
        if (depth >= MAX_DEPTH) return FALLBACK;
        c->p++;
        skip_space(c);
        if (c->p < c->end && *c->p == close) {
            c->p++;
            return OK;
        }
        for (;;) {
            if (object) {
                if (scan_string(c, &a, &b, 1) != OK) return FALLBACK;
                skip_space(c);
                if (c->p >= c->end || *c->p != ':') return FALLBACK;
                c->p++;
                skip_space(c);
            }
            if (skip_value(c, depth + 1) != OK) return FALLBACK;
            skip_space(c);
            if (c->p >= c->end) return FALLBACK;
            if (*c->p == ',') {
                c->p++;
                skip_space(c);
                continue;
            }
            if (*c->p == close) {
                c->p++;
                return OK;
            }
            return FALLBACK;
        }
    }
    default:
        return scan_number(c, &a, &is_integer);
    }
}

static inline void put_f8(Cursor *c, int column, double value) { ((double *)c->scanner->columns[column])[c->row] = value; }
static inline void put_i8(Cursor *c, int column, int64_t value) { ((int64_t *)c->scanner->columns[column])[c->row] = value; }
static inline void put_i4(Cursor *c, int column, int32_t value) { ((int32_t *)c->scanner->columns[column])[c->row] = value; }

/* An integer token of at most 18 digits (beyond, the msgspec path decides): always fits an int64. */
static int integer_value(const unsigned char *a, const unsigned char *b, int64_t *out) {
    int negative = *a == '-';
    if (negative) a++;
    if (b - a > 18) return FALLBACK;
    int64_t v = 0;
    for (; a < b; a++) v = v * 10 + (*a - '0');
    *out = negative ? -v : v;
    return OK;
}

static const double POWERS_OF_TEN[] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Clinger's exact case: digits[.digits] whose digits, read as one integer, are at most 2**53, with at most 22
 * decimals. Both the integer and the power of ten are exact doubles, so one division is correctly rounded. */
static int exact_decimal(const unsigned char *a, const unsigned char *b, double *out) {
    int negative = *a == '-';
    if (negative) a++;
    uint64_t mantissa = 0;
    int digits = 0, decimals = -1;
    for (; a < b; a++) {
        if (*a == '.') {
            decimals = 0;
            continue;
        }
        if (*a < '0' || *a > '9' || ++digits > 16) return 0; /* an exponent, or too many digits */
        mantissa = mantissa * 10 + (uint64_t)(*a - '0');
        if (decimals >= 0) decimals++;
    }
    if (mantissa > ((uint64_t)1 << 53) || decimals > 22) return 0;
    double value = (double)mantissa;
    if (decimals > 0) value /= POWERS_OF_TEN[decimals];
    *out = negative ? -value : value;
    return 1;
}

static int read_number(Cursor *c, double *out) {
    const unsigned char *a;
    int is_integer;
    if (scan_number(c, &a, &is_integer) != OK) return FALLBACK;
    if (exact_decimal(a, c->p, out)) return OK;
    Py_ssize_t length = (Py_ssize_t)(c->p - a);
    char text[64];
    if (length >= (Py_ssize_t)sizeof(text)) return FALLBACK;
    memcpy(text, a, (size_t)length);
    text[length] = '\0';
    char *stop = NULL;
    /* Correctly rounded, like msgspec's reader; no exception on overflow (we check the result). */
    double value = PyOS_string_to_double(text, &stop, NULL);
    if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return FALLBACK;
    }
    if (stop != text + length || !isfinite(value)) return FALLBACK;
    *out = value;
    return OK;
}

static int read_field(Cursor *c, const Field *field, int depth);

static int read_object(Cursor *c, const Field *fields, int count, int depth) {
    uint64_t seen = 0;
    int expected = 0;
    const unsigned char *a, *b;
    if (c->p >= c->end || *c->p != '{') return FALLBACK;
    c->p++;
    skip_space(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return OK;
    }
    for (;;) {
        if (scan_string(c, &a, &b, 0) != OK) return FALLBACK; /* a key with an escape: msgspec path */
        skip_space(c);
        if (c->p >= c->end || *c->p != ':') return FALLBACK;
        c->p++;
        skip_space(c);
        Py_ssize_t length = (Py_ssize_t)(b - a);
        const Field *field = NULL;
        /* Writers keep their key order: try the field after the last one first, then all. */
        int index = expected < count ? expected : 0;
        if (!(fields[index].length == length && memcmp(fields[index].key, a, (size_t)length) == 0)) {
            for (index = 0; index < count; index++) {
                if (fields[index].length == length && memcmp(fields[index].key, a, (size_t)length) == 0) break;
            }
        }
        if (index < count) {
            field = &fields[index];
            expected = index + 1;
        }
        int status;
        if (field == NULL) {
            status = skip_value(c, depth + 1);
        } else {
            if (seen & ((uint64_t)1 << index)) return FALLBACK; /* a field twice */
            seen |= (uint64_t)1 << index;
            status = read_field(c, field, depth);
        }
        if (status != OK) return status;
        skip_space(c);
        if (c->p >= c->end) return FALLBACK;
        if (*c->p == ',') {
            c->p++;
            skip_space(c);
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            return OK;
        }
        return FALLBACK;
    }
}

static int read_field(Cursor *c, const Field *field, int depth) {
    const unsigned char *a, *b;
    int is_integer;
    int32_t id;
    double number;
    int64_t integer;
    Interner *strings = &c->scanner->strings;
    switch (field->kind) {
    case K_TEXT:
        if (scan_string(c, &a, &b, 0) != OK) return FALLBACK;
        id = intern(strings, 's', (const char *)a, (Py_ssize_t)(b - a));
        if (id < 0) return FAILED;
        put_i4(c, field->column, id);
        return OK;
    case K_SCALAR:
        if (c->p < c->end && *c->p == '"') {
            if (scan_string(c, &a, &b, 0) != OK) return FALLBACK;
            id = intern(strings, 's', (const char *)a, (Py_ssize_t)(b - a));
        } else {
            if (scan_number(c, &a, &is_integer) != OK || !is_integer) return FALLBACK;
            if (integer_value(a, c->p, &integer) != OK) return FALLBACK;
            id = intern(strings, 'i', (const char *)a, (Py_ssize_t)(c->p - a));
        }
        if (id < 0) return FAILED;
        put_i4(c, field->column, id);
        return OK;
    case K_FLOAT:
        if (read_number(c, &number) != OK) return FALLBACK;
        put_f8(c, field->column, number);
        return OK;
    case K_OPT_INT:
        if (c->p < c->end && *c->p == 'n') {
            if (scan_literal(c, "null", 4) != OK) return FALLBACK;
            put_i8(c, field->column, -1);
            return OK;
        }
        /* fall through */
    case K_INT:
        if (scan_number(c, &a, &is_integer) != OK || !is_integer) return FALLBACK;
        if (integer_value(a, c->p, &integer) != OK) return FALLBACK;
        put_i8(c, field->column, integer);
        return OK;
    case K_RAW:
        a = c->p;
        if (skip_value(c, depth + 1) != OK) return FALLBACK;
        id = intern(strings, 'r', (const char *)a, (Py_ssize_t)(c->p - a));
        if (id < 0) return FAILED;
        put_i4(c, field->column, id);
        return OK;
    case K_ARGS:
        return read_object(c, ARG_FIELDS, N_ARG_FIELDS, depth + 1);
    default:
        return FALLBACK;
    }
}

static int ensure_rows(Scanner *s, Py_ssize_t rows) {
    if (rows <= s->rows_capacity) return 0;
    Py_ssize_t capacity = s->rows_capacity ? s->rows_capacity : 4096;
    while (capacity < rows) capacity *= 2;
    for (int k = 0; k < N_COLUMNS; k++) {
        char *column = PyMem_Realloc(s->columns[k], (size_t)(capacity * column_width(k)));
        if (!column) {
            PyErr_NoMemory();
            return -1;
        }
        s->columns[k] = column;
    }
    s->rows_capacity = capacity;
    return 0;
}

static void put_defaults(Cursor *c) {
    Scanner *s = c->scanner;
    put_f8(c, C_TS, 0.0);
    put_f8(c, C_DUR, 0.0);
    put_f8(c, C_BLOCKS_PER_SM, NAN);
    put_f8(c, C_WARPS_PER_SM, NAN);
    put_f8(c, C_OCCUPANCY, NAN);
    for (int k = C_EXTERNAL_ID; k < FIRST_ID_COLUMN; k++) put_i8(c, k, -1);
    put_i8(c, C_MEM_BYTES, 0);
    put_i4(c, C_PH, s->empty_text);
    put_i4(c, C_NAME, s->empty_text);
    put_i4(c, C_CAT, s->empty_text);
    put_i4(c, C_PID, s->zero_scalar);
    put_i4(c, C_TID, s->zero_scalar);
    put_i4(c, C_ID, s->minus_one_scalar);
    put_i4(c, C_BP, s->empty_text);
    for (int k = C_INPUT_DIMS; k <= C_BLOCK; k++) put_i4(c, k, -1); /* absent raw value */
    put_i4(c, C_COLLECTIVE, s->empty_text);
    put_i4(c, C_DTYPE, s->empty_text);
    put_i4(c, C_PROCESS_GROUP, s->empty_text);
}

/* Scanner.scan(chunk) -> (rows, columns: bytes) or None (the chunk is for the msgspec path). */
static PyObject *Scanner_scan(Scanner *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Cursor c = {(const unsigned char *)view.buf, (const unsigned char *)view.buf + view.len, self, 0};
    int status = FALLBACK;
    skip_space(&c);
    if (c.p < c.end && *c.p == '[') {
        c.p++;
        skip_space(&c);
        if (c.p < c.end && *c.p == ']') {
            c.p++;
            status = OK;
        } else {
            for (;;) {
                if (ensure_rows(self, c.row + 1) < 0) {
                    status = FAILED;
                    break;
                }
                put_defaults(&c);
                status = read_object(&c, EVENT_FIELDS, N_EVENT_FIELDS, 0);
                if (status != OK) break;
                c.row++;
                skip_space(&c);
                if (c.p < c.end && *c.p == ',') {
                    c.p++;
                    skip_space(&c);
                    continue;
                }
                if (c.p < c.end && *c.p == ']') {
                    c.p++;
                    break;
                }
                status = FALLBACK;
                break;
            }
        }
        if (status == OK) {
            skip_space(&c);
            if (c.p != c.end) status = FALLBACK;
        }
    }
    PyBuffer_Release(&view);
    if (status == FAILED) return NULL;
    if (status == FALLBACK) {
        /* Texts interned by the abandoned scan stay (ids are only ever added); the caller maps new ids lazily. */
        Py_RETURN_NONE;
    }
    Py_ssize_t rows = c.row, total = 0;
    for (int k = 0; k < N_COLUMNS; k++) total += rows * column_width(k);
    PyObject *data = PyBytes_FromStringAndSize(NULL, total);
    if (!data) return NULL;
    char *out = PyBytes_AS_STRING(data);
    for (int k = 0; k < N_COLUMNS; k++) {
        size_t size = (size_t)(rows * column_width(k));
        if (size) memcpy(out, self->columns[k], size);
        out += size;
    }
    return Py_BuildValue("(nN)", rows, data);
}

/* Scanner.texts(start) -> the interned texts with ids start, start+1, ...: each is its tag byte and the text. */
static PyObject *Scanner_texts(Scanner *self, PyObject *arg) {
    Py_ssize_t start = PyLong_AsSsize_t(arg);
    if (start == -1 && PyErr_Occurred()) return NULL;
    if (start < 0) start = 0;
    Interner *t = &self->strings;
    Py_ssize_t count = t->count > start ? t->count - start : 0;
    PyObject *list = PyList_New(count);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyBytes_FromStringAndSize(t->arena + t->entry_offset[start + i], t->entry_length[start + i]);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *Scanner_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Scanner() takes no arguments");
        return NULL;
    }
    Scanner *self = (Scanner *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    if (interner_init(&self->strings) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->empty_text = intern(&self->strings, 's', "", 0);
    self->zero_scalar = intern(&self->strings, 'i', "0", 1);
    self->minus_one_scalar = intern(&self->strings, 'i', "-1", 2);
    if (self->empty_text < 0 || self->zero_scalar < 0 || self->minus_one_scalar < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void Scanner_dealloc(Scanner *self) {
    interner_free(&self->strings);
    for (int k = 0; k < N_COLUMNS; k++) PyMem_Free(self->columns[k]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Scanner_methods[] = {
    {"scan", (PyCFunction)Scanner_scan, METH_O,
     "scan(chunk) -> (rows, columns) or None: a JSON array of events as columns (see LAYOUT)."},
    {"texts", (PyCFunction)Scanner_texts, METH_O,
     "texts(start) -> the interned texts from id start on, each its tag byte (s, i, r) and its bytes."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "profscope.tb_plugin.ingest.chrome._columnar.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reads chunks of Chrome-trace events into columns; texts are interned across chunks.",
    .tp_new = Scanner_new,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

static const char *COLUMN_NAMES[N_COLUMNS] = {
    "ts", "dur", "blocks_per_sm", "warps_per_sm", "occupancy",
    "external_id", "external_id_2021", "correlation", "sequence", "python_id", "python_parent_id",
    "device", "stream", "nbytes", "addr", "mem_bytes", "total_allocated", "total_reserved",
    "device_type", "device_id", "in_msg_nelems", "out_msg_nelems", "group_size", "collective_seq",
    "ph", "name", "cat", "pid", "tid", "id", "bp",
    "input_dims", "input_type", "concrete_inputs", "call_stack", "grid", "block", "collective", "dtype",
    "process_group",
};

static const char *KIND_NAMES[] = {"text", "scalar", "float", "int", "optional int", "raw", "args", "unhandled"};

static PyObject *fields_tuple(void) {
    PyObject *out = PyTuple_New(N_EVENT_FIELDS + N_ARG_FIELDS);
    if (!out) return NULL;
    for (int i = 0; i < N_EVENT_FIELDS + N_ARG_FIELDS; i++) {
        const Field *f = i < N_EVENT_FIELDS ? &EVENT_FIELDS[i] : &ARG_FIELDS[i - N_EVENT_FIELDS];
        PyObject *item = Py_BuildValue("(sss)", f->scope, f->key, KIND_NAMES[f->kind]);
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

static PyObject *layout_tuple(void) {
    PyObject *out = PyTuple_New(N_COLUMNS);
    if (!out) return NULL;
    for (int k = 0; k < N_COLUMNS; k++) {
        const char *dtype = k < C_EXTERNAL_ID ? "float64" : k < FIRST_ID_COLUMN ? "int64" : "int32";
        PyObject *item = Py_BuildValue("(ss)", COLUMN_NAMES[k], dtype);
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, k, item);
    }
    return out;
}

static struct PyModuleDef columnar_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_columnar",
    .m_doc = "Columns straight from chunks of Chrome-trace JSON (the decoder's fast path; see columnar.py).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__columnar(void) {
    init_classes();
    for (int i = 0; i < N_EVENT_FIELDS; i++) EVENT_FIELDS[i].length = (Py_ssize_t)strlen(EVENT_FIELDS[i].key);
    for (int i = 0; i < N_ARG_FIELDS; i++) ARG_FIELDS[i].length = (Py_ssize_t)strlen(ARG_FIELDS[i].key);
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&columnar_module);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(m);
        return NULL;
    }
    PyObject *layout = layout_tuple();
    if (!layout || PyModule_AddObject(m, "LAYOUT", layout) < 0) {
        Py_XDECREF(layout);
        Py_DECREF(m);
        return NULL;
    }
    PyObject *fields = fields_tuple();
    if (!fields || PyModule_AddObject(m, "FIELDS", fields) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
