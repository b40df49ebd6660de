/*
 * Fuzz target: the MPI_Allreduce fast-path/fallback decision (coll/st_coll.c,
 * st_coll_decide), after a singleton MPI_Init.
 *
 * Input: 8 bytes (zeros past the end).
 *   0     datatype: one of st_fuzz_types (predefined, Fortran, pairs, and derived or
 *         duplicated types built at start-up)
 *   1     op: one of st_fuzz_ops (predefined, MPI_REPLACE, MPI_NO_OP, a user op)
 *   2-5   count, as a signed 32-bit integer
 *   6     buffers: bits 0-1 the send buffer (A, B, MPI_IN_PLACE, NULL), bits 2-3 the
 *         receive buffer (A, B, MPI_IN_PLACE, NULL)
 *   7     communicator: bit 0 intercommunicator, bits 1-3 the size (st_fuzz_sizes)
 *
 * Checked: the answer is a fallback reason or the fast path, the same when asked
 * twice; the fast path only for an intracommunicator of two or more ranks, a count
 * >= 0, a receive buffer that is not MPI_IN_PLACE nor (with elements) the send
 * buffer, and a (type, op) pair valid in the MPI standard (MPI-4.0, 6.9.2) by the
 * table below, written from the standard and not from Strata's own tables; the
 * engine op is the one the MPI op names and the engine type has the MPI type's extent.
 */
#include "config.h"

#include "st_fuzz.h"
#include "st_coll.h"

#include <mpi.h>

/* the MPI standard's groups of predefined types for the reduction ops */
enum {
    ST_FUZZ_NONE = 0,   /* no predefined op applies (MPI_CHAR, derived types, ...) */
    ST_FUZZ_CINT,       /* C integer */
    ST_FUZZ_FINT,       /* Fortran integer */
    ST_FUZZ_FLOAT,      /* floating point */
    ST_FUZZ_LOGICAL,    /* logical */
    ST_FUZZ_COMPLEX,    /* complex */
    ST_FUZZ_BYTE,       /* byte */
    ST_FUZZ_MULTI,      /* multi-language types: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    ST_FUZZ_PAIR        /* the MAXLOC/MINLOC pair types */
};

/* bit g: the op applies to group g */
#define G(_g) (1u << ST_FUZZ_##_g)
static const struct {
    const char *name;
    int         st_op;  /* the engine's id it must map to */
    unsigned    groups;
} st_fuzz_op_rules[] = {
    {"MPI_SUM",    ST_OP_SUM,    G(CINT) | G(FINT) | G(FLOAT) | G(COMPLEX) | G(MULTI)},
    {"MPI_PROD",   ST_OP_PROD,   G(CINT) | G(FINT) | G(FLOAT) | G(COMPLEX) | G(MULTI)},
    {"MPI_MIN",    ST_OP_MIN,    G(CINT) | G(FINT) | G(FLOAT) | G(MULTI)},
    {"MPI_MAX",    ST_OP_MAX,    G(CINT) | G(FINT) | G(FLOAT) | G(MULTI)},
    {"MPI_LAND",   ST_OP_LAND,   G(CINT) | G(LOGICAL)},
    {"MPI_LOR",    ST_OP_LOR,    G(CINT) | G(LOGICAL)},
    {"MPI_LXOR",   ST_OP_LXOR,   G(CINT) | G(LOGICAL)},
    {"MPI_BAND",   ST_OP_BAND,   G(CINT) | G(FINT) | G(BYTE) | G(MULTI)},
    {"MPI_BOR",    ST_OP_BOR,    G(CINT) | G(FINT) | G(BYTE) | G(MULTI)},
    {"MPI_BXOR",   ST_OP_BXOR,   G(CINT) | G(FINT) | G(BYTE) | G(MULTI)},
    {"MPI_MAXLOC", ST_OP_MAXLOC, G(PAIR)},
    {"MPI_MINLOC", ST_OP_MINLOC, G(PAIR)},
    {"MPI_REPLACE", -1, 0},
    {"MPI_NO_OP",   -1, 0},
    {"user op",     -1, 0},
};
#undef G

#define ST_FUZZ_NOPS ST_ARRAY_SIZE(st_fuzz_op_rules)
static MPI_Op st_fuzz_ops[ST_FUZZ_NOPS];

#define ST_FUZZ_MAX_TYPES 96
static struct {
    const char  *name;
    MPI_Datatype type;
    int          group;
} st_fuzz_types[ST_FUZZ_MAX_TYPES];
static int st_fuzz_ntypes;

/* Open MPI keeps what MPI_Init allocated to the end: no leak report at exit (under
 * LeakSanitizer, libFuzzer's or the replay's) */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

static const int st_fuzz_sizes[8] = {1, 2, 3, 4, 8, 64, 4096, 1 << 30};

static void st_fuzz_add(const char *name, MPI_Datatype type, int group)
{
    /* a type this MPI lacks stays, as MPI_DATATYPE_NULL: inputs mean the same everywhere */
    if (st_fuzz_ntypes < ST_FUZZ_MAX_TYPES) {
        st_fuzz_types[st_fuzz_ntypes].name  = name;
        st_fuzz_types[st_fuzz_ntypes].type  = type;
        st_fuzz_types[st_fuzz_ntypes].group = group;
        st_fuzz_ntypes++;
    }
}

static void st_fuzz_user_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
}

/* Add a derived type made by @a rc (MPI's answer) into @a t, once committed. */
static void st_fuzz_add_derived(const char *name, int rc, MPI_Datatype t)
{
    if (rc == MPI_SUCCESS && PMPI_Type_commit(&t) == MPI_SUCCESS) {
        st_fuzz_add(name, t, ST_FUZZ_NONE);
    }
}

#define ST_FUZZ_ADD(_t, _g) st_fuzz_add(#_t, _t, ST_FUZZ_##_g)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int init = 0, rc;

    PMPI_Initialized(&init);
    if (!init && PMPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "fuzz_coll: MPI_Init failed\n");
        exit(1);
    }
    if (st_mpi_map_init() != ST_OK) {
        fprintf(stderr, "fuzz_coll: st_mpi_map_init failed\n");
        exit(1);
    }

    ST_FUZZ_ADD(MPI_INT, CINT);
    ST_FUZZ_ADD(MPI_LONG, CINT);
    ST_FUZZ_ADD(MPI_SHORT, CINT);
    ST_FUZZ_ADD(MPI_UNSIGNED_SHORT, CINT);
    ST_FUZZ_ADD(MPI_UNSIGNED, CINT);
    ST_FUZZ_ADD(MPI_UNSIGNED_LONG, CINT);
    ST_FUZZ_ADD(MPI_LONG_LONG_INT, CINT);
    ST_FUZZ_ADD(MPI_LONG_LONG, CINT);
    ST_FUZZ_ADD(MPI_UNSIGNED_LONG_LONG, CINT);
    ST_FUZZ_ADD(MPI_SIGNED_CHAR, CINT);
    ST_FUZZ_ADD(MPI_UNSIGNED_CHAR, CINT);
    ST_FUZZ_ADD(MPI_INT8_T, CINT);
    ST_FUZZ_ADD(MPI_INT16_T, CINT);
    ST_FUZZ_ADD(MPI_INT32_T, CINT);
    ST_FUZZ_ADD(MPI_INT64_T, CINT);
    ST_FUZZ_ADD(MPI_UINT8_T, CINT);
    ST_FUZZ_ADD(MPI_UINT16_T, CINT);
    ST_FUZZ_ADD(MPI_UINT32_T, CINT);
    ST_FUZZ_ADD(MPI_UINT64_T, CINT);
    ST_FUZZ_ADD(MPI_INTEGER, FINT);
    ST_FUZZ_ADD(MPI_INTEGER1, FINT);
    ST_FUZZ_ADD(MPI_INTEGER2, FINT);
    ST_FUZZ_ADD(MPI_INTEGER4, FINT);
    ST_FUZZ_ADD(MPI_INTEGER8, FINT);
    ST_FUZZ_ADD(MPI_FLOAT, FLOAT);
    ST_FUZZ_ADD(MPI_DOUBLE, FLOAT);
    ST_FUZZ_ADD(MPI_LONG_DOUBLE, FLOAT);
    ST_FUZZ_ADD(MPI_REAL, FLOAT);
    ST_FUZZ_ADD(MPI_DOUBLE_PRECISION, FLOAT);
    ST_FUZZ_ADD(MPI_REAL4, FLOAT);
    ST_FUZZ_ADD(MPI_REAL8, FLOAT);
    ST_FUZZ_ADD(MPI_REAL16, FLOAT);
    ST_FUZZ_ADD(MPI_LOGICAL, LOGICAL);
    ST_FUZZ_ADD(MPI_C_BOOL, LOGICAL);
    ST_FUZZ_ADD(MPI_C_COMPLEX, COMPLEX);
    ST_FUZZ_ADD(MPI_C_FLOAT_COMPLEX, COMPLEX);
    ST_FUZZ_ADD(MPI_C_DOUBLE_COMPLEX, COMPLEX);
    ST_FUZZ_ADD(MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX);
    ST_FUZZ_ADD(MPI_COMPLEX, COMPLEX);
    ST_FUZZ_ADD(MPI_DOUBLE_COMPLEX, COMPLEX);
    ST_FUZZ_ADD(MPI_COMPLEX8, COMPLEX);
    ST_FUZZ_ADD(MPI_COMPLEX16, COMPLEX);
    ST_FUZZ_ADD(MPI_BYTE, BYTE);
    ST_FUZZ_ADD(MPI_AINT, MULTI);
    ST_FUZZ_ADD(MPI_OFFSET, MULTI);
    ST_FUZZ_ADD(MPI_COUNT, MULTI);
    ST_FUZZ_ADD(MPI_FLOAT_INT, PAIR);
    ST_FUZZ_ADD(MPI_DOUBLE_INT, PAIR);
    ST_FUZZ_ADD(MPI_LONG_INT, PAIR);
    ST_FUZZ_ADD(MPI_2INT, PAIR);
    ST_FUZZ_ADD(MPI_SHORT_INT, PAIR);
    ST_FUZZ_ADD(MPI_LONG_DOUBLE_INT, PAIR);
    ST_FUZZ_ADD(MPI_2REAL, PAIR);
    ST_FUZZ_ADD(MPI_2DOUBLE_PRECISION, PAIR);
    ST_FUZZ_ADD(MPI_2INTEGER, PAIR);
    ST_FUZZ_ADD(MPI_CHAR, NONE);
    ST_FUZZ_ADD(MPI_WCHAR, NONE);
    ST_FUZZ_ADD(MPI_PACKED, NONE);
    ST_FUZZ_ADD(MPI_CHARACTER, NONE);
    ST_FUZZ_ADD(MPI_DATATYPE_NULL, NONE);
    /* derived and duplicated types: never predefined, whatever they look like */
    rc = PMPI_Type_dup(MPI_DOUBLE, &t);
    st_fuzz_add_derived("dup(MPI_DOUBLE)", rc, t);
    rc = PMPI_Type_dup(MPI_INT, &t);
    st_fuzz_add_derived("dup(MPI_INT)", rc, t);
    rc = PMPI_Type_contiguous(1, MPI_DOUBLE, &t);
    st_fuzz_add_derived("contiguous(1, MPI_DOUBLE)", rc, t);
    rc = PMPI_Type_contiguous(2, MPI_INT, &t);
    st_fuzz_add_derived("contiguous(2, MPI_INT)", rc, t);
    rc = PMPI_Type_vector(2, 1, 2, MPI_FLOAT, &t);
    st_fuzz_add_derived("vector(2, 1, 2, MPI_FLOAT)", rc, t);
    rc = PMPI_Type_create_resized(MPI_INT, 0, 8, &t);
    st_fuzz_add_derived("resized(MPI_INT, 0, 8)", rc, t);

    st_fuzz_ops[0]  = MPI_SUM;
    st_fuzz_ops[1]  = MPI_PROD;
    st_fuzz_ops[2]  = MPI_MIN;
    st_fuzz_ops[3]  = MPI_MAX;
    st_fuzz_ops[4]  = MPI_LAND;
    st_fuzz_ops[5]  = MPI_LOR;
    st_fuzz_ops[6]  = MPI_LXOR;
    st_fuzz_ops[7]  = MPI_BAND;
    st_fuzz_ops[8]  = MPI_BOR;
    st_fuzz_ops[9]  = MPI_BXOR;
    st_fuzz_ops[10] = MPI_MAXLOC;
    st_fuzz_ops[11] = MPI_MINLOC;
    st_fuzz_ops[12] = MPI_REPLACE;
    st_fuzz_ops[13] = MPI_NO_OP;
    if (PMPI_Op_create(st_fuzz_user_fn, 1, &st_fuzz_ops[14]) != MPI_SUCCESS) {
        st_fuzz_ops[14] = MPI_OP_NULL;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static long double buf_a[4], buf_b[4];
    uint8_t in[8] = {0};
    const void *sbufs[4] = {buf_a, buf_b, MPI_IN_PLACE, NULL};
    void *rbufs[4] = {buf_a, buf_b, MPI_IN_PLACE, NULL};
    const void *sbuf;
    void *rbuf;
    int ti, oi, count, is_inter, csize, reason, again, type = -7, op = -7, type2 = -7;
    int op2 = -7;
    MPI_Aint lb, extent;
    uint32_t c32;

    memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
    ti = in[0] % st_fuzz_ntypes;
    oi = in[1] % (int)ST_FUZZ_NOPS;
    memcpy(&c32, in + 2, 4);
    count    = (int)c32;
    sbuf     = sbufs[in[6] & 3];
    rbuf     = rbufs[(in[6] >> 2) & 3];
    is_inter = in[7] & 1;
    csize    = st_fuzz_sizes[(in[7] >> 1) & 7];

    reason = st_coll_decide(is_inter, csize, sbuf, rbuf, count, st_fuzz_types[ti].type,
                            st_fuzz_ops[oi], &type, &op);
    again  = st_coll_decide(is_inter, csize, sbuf, rbuf, count, st_fuzz_types[ti].type,
                            st_fuzz_ops[oi], &type2, &op2);
    ST_FUZZ_CHECK(reason == again && (reason >= 0 || (type == type2 && op == op2)),
                  "%s, %s: %d then %d", st_fuzz_types[ti].name, st_fuzz_op_rules[oi].name,
                  reason, again);
    ST_FUZZ_CHECK(reason == -1 || (reason >= 0 && reason < STRATA_FALLBACK_LAST),
                  "reason %d", reason);
    if (reason >= 0) {
        return 0;
    }
    /* the fast path: everything must allow it */
    ST_FUZZ_CHECK(st_fuzz_op_rules[oi].groups & (1u << st_fuzz_types[ti].group),
                  "fast path for %s on %s, which the MPI standard does not define",
                  st_fuzz_op_rules[oi].name, st_fuzz_types[ti].name);
    ST_FUZZ_CHECK(!is_inter && csize >= 2, "fast path on %s of %d ranks",
                  is_inter ? "an intercommunicator" : "a communicator", csize);
    ST_FUZZ_CHECK(count >= 0, "fast path for count %d", count);
    ST_FUZZ_CHECK(rbuf != MPI_IN_PLACE, "fast path with MPI_IN_PLACE as receive buffer");
    ST_FUZZ_CHECK(count <= 1 || sbuf != rbuf, "fast path with aliased buffers, count %d",
                  count);
    ST_FUZZ_CHECK(op == st_fuzz_op_rules[oi].st_op, "%s mapped to engine op %d",
                  st_fuzz_op_rules[oi].name, op);
    ST_FUZZ_CHECK(type >= 0 && type < ST_TYPE_LAST &&
                  PMPI_Type_get_extent(st_fuzz_types[ti].type, &lb, &extent) == MPI_SUCCESS &&
                  lb == 0 && (size_t)extent == st_type_size((st_type_t)type),
                  "%s mapped to engine type %d", st_fuzz_types[ti].name, type);
    return 0;
}
