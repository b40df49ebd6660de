/*
 * MPI handles -> reduction engine ids, and which (type, op) pairs the MPI
 * library itself accepts: a pair Strata implements but MPI rejects (MPI_CHAR
 * with MPI_SUM in some libraries, for example) must reach PMPI_Allreduce so the
 * user sees MPI's own error, never a result. The reverse holds too: a pair the MPI
 * standard does not define (MPI-4.0, section 6.9.2) goes to PMPI_Allreduce even when
 * the library takes it (Open MPI 4.1 reduces MPI_CHAR with every integer op, and the
 * multi-language types and MPI_INTEGER8 with the logical ops): what an erroneous
 * program gets is the library's business, not Strata's.
 */
#include "config.h"

#include "st_coll.h"

#include <string.h>

typedef struct {
    MPI_Datatype mpi;
    st_type_t    type;
    unsigned     std;   /* bit o: the standard defines op o on it */
    unsigned     ops;   /* bit o: that, Strata implements the pair and MPI accepts it */
} st_mpi_type_entry_t;

/* The ops the standard defines on each group of predefined types. */
#define ST_OPB(_o) (1u << ST_OP_##_o)
#define ST_STD_ARITH   (ST_OPB(SUM) | ST_OPB(PROD) | ST_OPB(MIN) | ST_OPB(MAX))
#define ST_STD_LOGICAL (ST_OPB(LAND) | ST_OPB(LOR) | ST_OPB(LXOR))
#define ST_STD_BITS    (ST_OPB(BAND) | ST_OPB(BOR) | ST_OPB(BXOR))
#define ST_STD_C_INT   (ST_STD_ARITH | ST_STD_LOGICAL | ST_STD_BITS)
#define ST_STD_F_INT   (ST_STD_ARITH | ST_STD_BITS)   /* no logical ops */
#define ST_STD_MULTI   (ST_STD_ARITH | ST_STD_BITS)   /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
#define ST_STD_FLOAT   ST_STD_ARITH
#define ST_STD_COMPLEX (ST_OPB(SUM) | ST_OPB(PROD))
#define ST_STD_BYTE    ST_STD_BITS
#define ST_STD_PAIR    (ST_OPB(MAXLOC) | ST_OPB(MINLOC))
#define ST_STD_NONE    0u                             /* MPI_CHAR: characters, no ops */

static st_mpi_type_entry_t st_mpi_types[ST_TYPE_LAST + 16];
static int st_mpi_ntypes;
static MPI_Op st_mpi_ops[ST_OP_LAST];

static void st_mpi_map_add(MPI_Datatype mpi, st_type_t type, unsigned std)
{
    MPI_Aint lb, extent;
    int size;

    if (mpi == MPI_DATATYPE_NULL || st_mpi_ntypes == (int)ST_ARRAY_SIZE(st_mpi_types)) {
        return;
    }
    /* the engine's C layout must be the MPI layout: contiguous, same extent */
    if (PMPI_Type_get_extent(mpi, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size(mpi, &size) != MPI_SUCCESS || lb != 0 ||
        (size_t)extent != st_type_size(type)) {
        st_debug("type %s: MPI extent %ld differs from C size %zu; not handled",
                 st_type_name(type), (long)extent, st_type_size(type));
        return;
    }
    st_mpi_types[st_mpi_ntypes].mpi  = mpi;
    st_mpi_types[st_mpi_ntypes].type = type;
    st_mpi_types[st_mpi_ntypes].std  = std;
    st_mpi_types[st_mpi_ntypes].ops  = 0;  /* set by the probe */
    st_mpi_ntypes++;
}

/* A Fortran type: the engine type of its size in @a by_size (indexed by log2 of
 * the size, 1 to 16 bytes), if any; Fortran's sizes depend on compiler flags. */
static void st_mpi_map_add_sized(MPI_Datatype mpi, const int by_size[5], unsigned std)
{
    int size, lg;

    if (mpi == MPI_DATATYPE_NULL || PMPI_Type_size(mpi, &size) != MPI_SUCCESS) {
        return;
    }
    for (lg = 0; lg < 5; lg++) {
        if (size == (1 << lg) && by_size[lg] >= 0) {
            st_mpi_map_add(mpi, (st_type_t)by_size[lg], std);
        }
    }
}

int st_mpi_map_type(MPI_Datatype mpi, unsigned *ops_p)
{
    int i;

    for (i = 0; i < st_mpi_ntypes; i++) {
        if (st_mpi_types[i].mpi == mpi) {
            *ops_p = st_mpi_types[i].ops;
            return (int)st_mpi_types[i].type;
        }
    }
    return -1;
}

int st_mpi_map_op(MPI_Op op)
{
    int i;

    for (i = 0; i < ST_OP_LAST; i++) {
        if (st_mpi_ops[i] == op) {
            return i;
        }
    }
    return -1;
}

/*
 * Ask MPI_Reduce_local about every pair Strata implements, with errors returned
 * rather than fatal on the handles it may report through (MPI_COMM_WORLD in Open
 * MPI 4, MPI_COMM_SELF in MPI-4 libraries); the handlers are restored after.
 */
static void st_mpi_map_probe(void)
{
    MPI_Errhandler world_eh, self_eh;
    long double a[8], b[8];  /* 128 bytes: one element of any type, aligned */
    int t, o, i;

    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &self_eh);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    for (i = 0; i < st_mpi_ntypes; i++) {
        t = st_mpi_types[i].type;
        for (o = 0; o < ST_OP_LAST; o++) {
            if (!(st_mpi_types[i].std & (1u << o)) || st_reduce_kernel(t, o) == NULL) {
                continue;
            }
            if (PMPI_Reduce_local(a, b, 1, st_mpi_types[i].mpi, st_mpi_ops[o]) == MPI_SUCCESS) {
                st_mpi_types[i].ops |= 1u << o;
            }
        }
    }

    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh);
    PMPI_Errhandler_free(&world_eh);
    PMPI_Errhandler_free(&self_eh);
}

st_status_t st_mpi_map_init(void)
{
    st_mpi_ntypes = 0;
    /* most frequent first: the lookup is a linear scan */
    st_mpi_map_add(MPI_DOUBLE, ST_TYPE_DOUBLE, ST_STD_FLOAT);
    st_mpi_map_add(MPI_FLOAT, ST_TYPE_FLOAT, ST_STD_FLOAT);
    st_mpi_map_add(MPI_INT, ST_TYPE_INT, ST_STD_C_INT);
    st_mpi_map_add(MPI_LONG, ST_TYPE_LONG, ST_STD_C_INT);
    st_mpi_map_add(MPI_UNSIGNED_LONG, ST_TYPE_ULONG, ST_STD_C_INT);
    st_mpi_map_add(MPI_LONG_LONG_INT, ST_TYPE_LLONG, ST_STD_C_INT);
    st_mpi_map_add(MPI_UNSIGNED_LONG_LONG, ST_TYPE_ULLONG, ST_STD_C_INT);
    st_mpi_map_add(MPI_UNSIGNED, ST_TYPE_UINT, ST_STD_C_INT);
    st_mpi_map_add(MPI_INT64_T, ST_TYPE_INT64, ST_STD_C_INT);
    st_mpi_map_add(MPI_UINT64_T, ST_TYPE_UINT64, ST_STD_C_INT);
    st_mpi_map_add(MPI_INT32_T, ST_TYPE_INT32, ST_STD_C_INT);
    st_mpi_map_add(MPI_UINT32_T, ST_TYPE_UINT32, ST_STD_C_INT);
    st_mpi_map_add(MPI_C_BOOL, ST_TYPE_BOOL, ST_STD_LOGICAL);
    st_mpi_map_add(MPI_CHAR, ST_TYPE_CHAR, ST_STD_NONE);
    st_mpi_map_add(MPI_SIGNED_CHAR, ST_TYPE_SCHAR, ST_STD_C_INT);
    st_mpi_map_add(MPI_UNSIGNED_CHAR, ST_TYPE_UCHAR, ST_STD_C_INT);
    st_mpi_map_add(MPI_SHORT, ST_TYPE_SHORT, ST_STD_C_INT);
    st_mpi_map_add(MPI_UNSIGNED_SHORT, ST_TYPE_USHORT, ST_STD_C_INT);
    st_mpi_map_add(MPI_INT8_T, ST_TYPE_INT8, ST_STD_C_INT);
    st_mpi_map_add(MPI_INT16_T, ST_TYPE_INT16, ST_STD_C_INT);
    st_mpi_map_add(MPI_UINT8_T, ST_TYPE_UINT8, ST_STD_C_INT);
    st_mpi_map_add(MPI_UINT16_T, ST_TYPE_UINT16, ST_STD_C_INT);
    st_mpi_map_add(MPI_AINT, ST_TYPE_AINT, ST_STD_MULTI);
    st_mpi_map_add(MPI_OFFSET, ST_TYPE_OFFSET, ST_STD_MULTI);
    st_mpi_map_add(MPI_COUNT, ST_TYPE_COUNT, ST_STD_MULTI);
    st_mpi_map_add(MPI_LONG_DOUBLE, ST_TYPE_LDOUBLE, ST_STD_FLOAT);
    st_mpi_map_add(MPI_C_FLOAT_COMPLEX, ST_TYPE_CFLOAT, ST_STD_COMPLEX);
    st_mpi_map_add(MPI_C_DOUBLE_COMPLEX, ST_TYPE_CDOUBLE, ST_STD_COMPLEX);
    st_mpi_map_add(MPI_C_LONG_DOUBLE_COMPLEX, ST_TYPE_CLDOUBLE, ST_STD_COMPLEX);
    st_mpi_map_add(MPI_BYTE, ST_TYPE_BYTE, ST_STD_BYTE);
    st_mpi_map_add(MPI_DOUBLE_INT, ST_TYPE_DOUBLE_INT, ST_STD_PAIR);
    st_mpi_map_add(MPI_FLOAT_INT, ST_TYPE_FLOAT_INT, ST_STD_PAIR);
    st_mpi_map_add(MPI_LONG_INT, ST_TYPE_LONG_INT, ST_STD_PAIR);
    st_mpi_map_add(MPI_2INT, ST_TYPE_TWO_INT, ST_STD_PAIR);
    st_mpi_map_add(MPI_SHORT_INT, ST_TYPE_SHORT_INT, ST_STD_PAIR);
    st_mpi_map_add(MPI_LONG_DOUBLE_INT, ST_TYPE_LDOUBLE_INT, ST_STD_PAIR);

    /* Fortran types callers use from C and Fortran alike (REAL*16 is not a long
     * double, LOGICAL's truth is the compiler's: both left to MPI) */
    {
        static const int f_int[5]  = {ST_TYPE_INT8, ST_TYPE_INT16, ST_TYPE_INT32,
                                      ST_TYPE_INT64, -1};
        static const int f_real[5] = {-1, -1, ST_TYPE_FLOAT, ST_TYPE_DOUBLE, -1};
        static const int f_cplx[5] = {-1, -1, -1, ST_TYPE_CFLOAT, ST_TYPE_CDOUBLE};

        st_mpi_map_add_sized(MPI_INTEGER, f_int, ST_STD_F_INT);
        st_mpi_map_add_sized(MPI_INTEGER1, f_int, ST_STD_F_INT);
        st_mpi_map_add_sized(MPI_INTEGER2, f_int, ST_STD_F_INT);
        st_mpi_map_add_sized(MPI_INTEGER4, f_int, ST_STD_F_INT);
        st_mpi_map_add_sized(MPI_INTEGER8, f_int, ST_STD_F_INT);
        st_mpi_map_add_sized(MPI_REAL, f_real, ST_STD_FLOAT);
        st_mpi_map_add_sized(MPI_DOUBLE_PRECISION, f_real, ST_STD_FLOAT);
        st_mpi_map_add_sized(MPI_REAL4, f_real, ST_STD_FLOAT);
        st_mpi_map_add_sized(MPI_REAL8, f_real, ST_STD_FLOAT);
        st_mpi_map_add_sized(MPI_COMPLEX, f_cplx, ST_STD_COMPLEX);
        st_mpi_map_add_sized(MPI_DOUBLE_COMPLEX, f_cplx, ST_STD_COMPLEX);
    }

    st_mpi_ops[ST_OP_SUM]    = MPI_SUM;
    st_mpi_ops[ST_OP_PROD]   = MPI_PROD;
    st_mpi_ops[ST_OP_MIN]    = MPI_MIN;
    st_mpi_ops[ST_OP_MAX]    = MPI_MAX;
    st_mpi_ops[ST_OP_LAND]   = MPI_LAND;
    st_mpi_ops[ST_OP_LOR]    = MPI_LOR;
    st_mpi_ops[ST_OP_LXOR]   = MPI_LXOR;
    st_mpi_ops[ST_OP_BAND]   = MPI_BAND;
    st_mpi_ops[ST_OP_BOR]    = MPI_BOR;
    st_mpi_ops[ST_OP_BXOR]   = MPI_BXOR;
    st_mpi_ops[ST_OP_MAXLOC] = MPI_MAXLOC;
    st_mpi_ops[ST_OP_MINLOC] = MPI_MINLOC;

    st_mpi_map_probe();
    return ST_OK;
}
