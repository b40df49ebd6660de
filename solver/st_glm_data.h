/*
 * The GLM solver's data layer: the rows this rank holds, in CSR, read collectively
 * from svmlight/libsvm text or from Strata's binary CSR format, and written back in
 * the binary format. Layout and rules of both formats: solver/README.md ("Data").
 *
 * Distribution: the ranks of a communicator hold contiguous blocks of rows in rank
 * order (rank 0 the first block). A text file is split by bytes, so the blocks are
 * about equal in bytes; a binary file is split by rows, so they are equal in rows
 * (within one).
 *
 * Collectives: every function taking an MPI_Comm is collective over it and returns
 * the same status on every rank. MPI_COMM_NULL, or a communicator of one rank,
 * means serial: no MPI function is called then, and MPI need not be initialized.
 *
 * Errors: a function that can fail on bad input takes a message buffer (msg,
 * msg_len). On failure it holds one line, the same on every rank, naming the file
 * and, for text, the line ("data.svm:12: index 0 (indices are 1-based)"); on
 * success it is left untouched. The data layer never prints: callers decide.
 * Status codes: ST_ERR_INVALID_PARAM for malformed content or bad arguments,
 * ST_ERR_IO for a file that cannot be read or written, a truncated or corrupted
 * binary file, ST_ERR_NOT_FOUND for a missing file, ST_ERR_NO_MEMORY, ST_ERR_MPI.
 *
 * Ownership: a st_glm_data_t and every array in it are malloc'ed and owned by the
 * structure; st_glm_data_free() releases them. Whoever fills one by hand (strata-gen
 * does) must allocate with malloc for the same reason.
 */
#ifndef ST_GLM_DATA_H
#define ST_GLM_DATA_H

#include "st_common.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/** Size of a message buffer that never truncates a data-layer message. */
#define ST_GLM_DATA_MSG_LEN   512

/** Largest 1-based column index either format can hold (columns are uint32 inside). */
#define ST_GLM_DATA_MAX_INDEX UINT32_MAX
/* the binary format's first bytes (solver/README.md): how the loaders tell it from text */
#define ST_GLM_BIN_MAGIC      "STGLMCSR"
#define ST_GLM_BIN_MAGIC_LEN  8

/** What the labels are. */
typedef enum {
    ST_GLM_LABEL_CLASS = 0,  /**< binary classification: y is +1 or -1 */
    ST_GLM_LABEL_REAL  = 1,  /**< regression: y is any finite real */
    ST_GLM_LABEL_MULTI = 2   /**< classes named by integers of magnitude below 2^31 (any
                                  number of them, LIBLINEAR's labels), kept as given;
                                  written to the binary format as regression targets */
} st_glm_label_kind_t;

/** The file format a dataset was read from. */
typedef enum {
    ST_GLM_FORMAT_SVM = 0,   /**< svmlight/libsvm text */
    ST_GLM_FORMAT_BIN = 1    /**< Strata binary CSR */
} st_glm_format_t;

/** How to read a file. Start from st_glm_data_opts_init(). */
typedef struct st_glm_data_opts {
    st_glm_label_kind_t label_kind; /**< default ST_GLM_LABEL_CLASS */
    int      prec;              /**< values in 32 or 64 bits; 0 (default): 64 for text,
                                     the file's precision for binary */
    int      allow_nonfinite;   /**< 1: accept nan/inf feature values (never labels) */
    int64_t  n_features;        /**< 0 (default): infer; else n_cols is at least this */
    uint64_t max_index;         /**< largest accepted 1-based index; 0 (default): 2^32-1 */
} st_glm_data_opts_t;

/** A rank's block of rows, in CSR. */
typedef struct st_glm_data {
    int64_t   n_rows;         /**< rows on this rank */
    int64_t   n_rows_global;  /**< rows over all ranks of the communicator */
    int64_t   row_offset;     /**< global index of this rank's row 0 */
    int64_t   n_cols;         /**< columns: max index over all ranks, or n_features if larger */
    int64_t   n_cols_line;    /**< the text's first line holding the index n_cols (0: none
                                   known: binary, built in memory, or n_features larger) */
    int64_t   nnz;            /**< stored entries on this rank (explicit zeros included) */
    int64_t   nnz_global;     /**< stored entries over all ranks */
    int64_t  *indptr;         /**< n_rows + 1 entries, indptr[0] = 0 */
    uint32_t *indices;        /**< nnz entries, 0-based, strictly increasing in each row
                                   (as read; a relabelled copy, st_glm_order.h, keeps each
                                   row's order of entries, so not there) */
    int       prec;           /**< 32 or 64: exactly one of val32/val64 is non-NULL */
    float    *val32;          /**< nnz values when prec is 32 */
    double   *val64;          /**< nnz values when prec is 64 */
    double   *y;              /**< n_rows labels: +1/-1 (0/1 are mapped), real targets, or
                                   integer class names (ST_GLM_LABEL_MULTI) */
    int       zero_one;       /**< classification whose classes were named 1 and 0 (0/1
                                   labels in the text, or a binary file's 0/1 flag; every
                                   rank alike) */
    st_glm_label_kind_t label_kind;
    st_glm_format_t     format;  /**< format it was read from (SVM for data built in memory) */
    char     *source;         /**< file it was read from, or NULL */
} st_glm_data_t;

/** Label statistics over all ranks (st_glm_data_label_stats). */
typedef struct st_glm_label_stats {
    int64_t n;                /**< labels (= n_rows_global) */
    int64_t n_pos;            /**< labels > 0 */
    int64_t n_neg;            /**< labels < 0 */
    double  mean;             /**< mean label */
    double  var;              /**< population variance of the labels */
    double  min, max;         /**< smallest and largest label (0 when n is 0) */
} st_glm_label_stats_t;

/** Fill @a opts with the defaults: classification, precision 0 (see above), strict. */
void st_glm_data_opts_init(st_glm_data_opts_t *opts);

/**
 * Read @a path, in either format: a binary CSR file is recognized by its magic
 * number, anything else is read as svmlight text. Collective over @a comm.
 *
 * @param [in]  opts    how to read; NULL for the defaults.
 * @param [out] data_p  this rank's rows on success, to be freed with st_glm_data_free().
 * @return ST_OK or an error status, the same on every rank (message in @a msg).
 */
st_status_t st_glm_data_load(const char *path, const st_glm_data_opts_t *opts, MPI_Comm comm,
                             char *msg, size_t msg_len, st_glm_data_t **data_p);

/**
 * Read svmlight/libsvm text. Each rank maps the file and parses the lines that
 * start in its share of the bytes; the ranks then agree on line numbers, row
 * offsets, the column count and the first error (lowest line number). Accepted
 * and rejected input: solver/README.md. Arguments and result as st_glm_data_load().
 */
st_status_t st_glm_data_read_svm(const char *path, const st_glm_data_opts_t *opts,
                                 MPI_Comm comm, char *msg, size_t msg_len,
                                 st_glm_data_t **data_p);

/**
 * Read the binary CSR format (versions 1 and 2): each rank reads its block of rows
 * (rows split evenly by count), checksums are verified over all ranks, contents
 * validated. Arguments and result as st_glm_data_load(); opts->prec converts the
 * values when it differs from the file's, opts->label_kind re-validates the labels
 * for that kind. A file of 0/1 classes (version 2's flag) sets zero_one when read
 * for classification; read as regression targets its labels are 1 and 0, as the
 * text's would be. A file of regression targets read for classification is read as
 * the text reader reads labels: -1/+1 or 0/1 (0 becomes -1, zero_one set), not both.
 */
st_status_t st_glm_data_read_bin(const char *path, const st_glm_data_opts_t *opts,
                                 MPI_Comm comm, char *msg, size_t msg_len,
                                 st_glm_data_t **data_p);

/**
 * Write the rows of all ranks of @a comm to @a path in the binary CSR format, in
 * rank order. Rank 0 creates the file at its final size; every rank then writes
 * its own rows at their offsets with pwrite (so all ranks must see the same file
 * system); rank 0 writes the header, checksums included, last. n_cols is the
 * largest over the ranks; precision, label kind and zero_one must agree. Classes
 * named 1 and 0 (zero_one, classification only) are written as +1/-1 with a flag,
 * in format version 2; anything else in version 1. The rows are checked (indptr,
 * sorted in-range indices) before anything is written.
 *
 * @return ST_OK or an error status, the same on every rank (message in @a msg).
 */
st_status_t st_glm_data_write_bin(const st_glm_data_t *data, const char *path, MPI_Comm comm,
                                  char *msg, size_t msg_len);

/**
 * Allocate a dataset of @a n_rows rows and @a nnz entries in precision @a prec (32
 * or 64), arrays uninitialized except indptr[0] = 0; n_rows_global = n_rows,
 * row_offset = 0, n_cols = 0, label kind classification, format SVM, no source.
 *
 * @return ST_OK, ST_ERR_INVALID_PARAM, or ST_ERR_NO_MEMORY.
 */
st_status_t st_glm_data_alloc(int64_t n_rows, int64_t nnz, int prec, st_glm_data_t **data_p);

/** Free @a data and everything it owns; NULL is allowed. */
void st_glm_data_free(st_glm_data_t *data);

/**
 * Check the local invariants of @a data (indptr from 0 to nnz and non-decreasing,
 * indices strictly increasing in each row and below n_cols, exactly one value
 * array, labels +1/-1 for classification, n_rows <= n_rows_global).
 *
 * @return ST_OK, or ST_ERR_INVALID_PARAM with the first violation in @a msg.
 */
st_status_t st_glm_data_check(const st_glm_data_t *data, char *msg, size_t msg_len);

/** Is @a y a class name of ST_GLM_LABEL_MULTI: an integer of magnitude below 2^31? */
static inline int st_glm_data_class_name(double y)
{
    return y > -2147483648.0 && y < 2147483648.0 && y == (double)(int64_t)y;
}

/** Stored value @a k of @a data, in double, whichever precision holds it. */
static inline double st_glm_data_val(const st_glm_data_t *data, int64_t k)
{
    return (data->prec == 32) ? (double)data->val32[k] : data->val64[k];
}

/** The sum of the squared values of local row @a i, in double. */
double st_glm_data_row_sqnorm(const st_glm_data_t *data, int64_t i);

/** A block of rows built in memory (collective over @a comm; MPI_COMM_NULL: alone):
 *  n_rows_global and nnz_global summed over the ranks, row_offset the rows of the
 *  ranks before. */
void st_glm_data_set_global(st_glm_data_t *data, MPI_Comm comm);

/** sqnorm[i] = st_glm_data_row_sqnorm(data, i) for the n_rows local rows. */
void st_glm_data_row_sqnorms(const st_glm_data_t *data, double *sqnorm);

/**
 * Label statistics over all ranks of @a comm (collective). Whether a
 * classification set holding one class is usable is the solver's call: the
 * loader accepts it (a small held-out set may well be one-sided).
 *
 * @param [out] stats_p  filled on success.
 * @return ST_OK or ST_ERR_MPI.
 */
st_status_t st_glm_data_label_stats(const st_glm_data_t *data, MPI_Comm comm,
                                    st_glm_label_stats_t *stats_p);

/**
 * A 64-bit checksum of the rows of all ranks of @a comm (collective): row lengths,
 * column indices, values in the data's precision and labels, each at its global
 * position, so the same rows give the same sum whatever the rank count (the binary
 * format's per-element sums: solver/README.md). One pass over the rows.
 *
 * @param [out] sum_p  the same on every rank, set on success.
 * @return ST_OK, or ST_ERR_MPI / ST_ERR_NOT_INITIALIZED (the same on every rank).
 */
st_status_t st_glm_data_checksum(const st_glm_data_t *data, MPI_Comm comm, uint64_t *sum_p);

/** Result of st_glm_data_parse_real(). */
typedef enum {
    ST_GLM_NUM_OK = 0,       /**< a finite number */
    ST_GLM_NUM_SYNTAX,       /**< not a number */
    ST_GLM_NUM_RANGE,        /**< finite syntax whose value overflows the precision */
    ST_GLM_NUM_NONFINITE     /**< nan, inf or infinity (any case, optional sign) */
} st_glm_num_t;

/**
 * Parse the @a len characters at @a s (not NUL-terminated) as a decimal number:
 * [+-] digits [. digits] [(e|E) [+-] digits], at least one digit before the
 * exponent, or nan/inf/infinity. No spaces, no hexadecimal. The value is rounded
 * correctly (to nearest, ties to even) to @a prec bits (32 or 64), as strtof or
 * strtod would in the C locale, whatever the program's; underflow gives zero or a
 * subnormal, silently.
 *
 * @param [out] val_p  the value (a float's value when @a prec is 32), set on
 *                     ST_GLM_NUM_OK and ST_GLM_NUM_NONFINITE.
 */
st_glm_num_t st_glm_data_parse_real(const char *s, size_t len, int prec, double *val_p);

/** Room st_glm_data_real_text() needs at most (a sign, 17 digits, a point, an exponent). */
#define ST_GLM_REAL_TEXT_LEN 32

/**
 * @a v as the shortest decimal that st_glm_data_parse_real() (64 bits) reads back as
 * @a v, bit for bit: integers below 2^53 as such, -0 as "-0", else the fewest of 15,
 * 16 and 17 significant digits that do (printf's %g; nan and inf as it writes them).
 * At @a out, NUL-terminated, which has ST_GLM_REAL_TEXT_LEN bytes at least.
 * @return the end (the NUL).
 */
char *st_glm_data_real_text(char *out, double v);

/* ---- inside the data layer (st_glm_data*.c) only ---- */

/** A communicator as the data layer sees it: serial when comm is MPI_COMM_NULL. */
typedef struct st_glm_comm {
    MPI_Comm comm;
    int      rank;
    int      size;
} st_glm_comm_t;

/** A pending error: the lowest key over the ranks wins (ties: the lowest rank). */
typedef struct st_glm_err {
    st_status_t status;
    int64_t     key;
    char        msg[ST_GLM_DATA_MSG_LEN];
} st_glm_err_t;

#define ST_GLM_ERR_KEY_FIRST 0          /* errors with no line number: reported first */
#define ST_GLM_ERR_KEY_NONE  INT64_MAX  /* no error */

/* The options with their defaults resolved into @a o_p (a precision of 0 becomes
 * @a prec0, which may itself be 0: "the file's"), and a message in @a err (key
 * FIRST, naming @a path) when they are invalid. */
void st_glm_data_opts_resolve(const st_glm_data_opts_t *opts, const char *path, int prec0,
                              st_glm_data_opts_t *o_p, st_glm_err_t *err);
/* @a comm as the data layer sees it: ST_ERR_NOT_INITIALIZED outside MPI_Init ...
 * MPI_Finalize, ST_ERR_UNSUPPORTED for an intercommunicator, ST_ERR_MPI where MPI
 * refused the handle (under a handler that returns). */
st_status_t st_glm_comm_init(MPI_Comm comm, st_glm_comm_t *comm_p);
void st_glm_err_init(st_glm_err_t *err);
void st_glm_err_set(st_glm_err_t *err, st_status_t status, int64_t key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
st_status_t st_glm_err_agree(const st_glm_comm_t *comm, st_glm_err_t *err);
void st_glm_err_report(const st_glm_err_t *err, char *msg, size_t msg_len);
st_status_t st_glm_allgather_i64(const st_glm_comm_t *comm, const int64_t *mine, int count,
                                 int64_t *all);
void st_glm_block_range(int64_t n, int parts, int part, int64_t *lo_p, int64_t *hi_p);
void st_glm_token_quote(const char *s, size_t len, char *out, size_t out_len);

/* The binary format's checksum (a sum of mixed per-element terms, so slices add up):
 * the part of @a n elements of @a esize (4 or 8) bytes at @a buf, the first being
 * element @a first of its array; @a salt tells arrays apart. Also used by the
 * trainer's checkpoints. */
uint64_t st_glm_sum64(const void *buf, size_t esize, int64_t n, int64_t first, uint64_t salt);

/* pwrite/pread all of @a len bytes at @a off: 0, an errno, or (reading) -1 when the
 * file ends first. */
int st_glm_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int st_glm_pread_all(int fd, void *buf, size_t len, uint64_t off);

/*
 * MPI calls that fail (a communicator whose error handler returns: MPI_ERRORS_RETURN).
 * The first failure of a public collective call is kept (per thread: the call's MPI
 * calls are made by its calling thread); from then on the library's further MPI calls
 * of that call are skipped (their buffers keep this rank's values), the solvers' loops
 * end at their next round, nothing is written, and the call returns STRATA_ERR_MPI
 * (st_glm_mpi_leave). Every rank that saw the failure so returns promptly; under
 * MPI_ERRORS_ARE_FATAL no call returns an error and nothing changes.
 */
/* Record @a rc, an MPI call's result; returns it. */
int st_glm_mpi_note(int rc);

/* Has an MPI call of this thread's public call failed? */
int st_glm_mpi_failed(void);

/* An MPI call, skipped once one failed, its result recorded; and as ST_MPI_CALL and
 * ST_MPI_CALL_GOTO (a skipped call: ST_ERR_MPI). */
#define ST_GLM_MPI(_call) ((void)(st_glm_mpi_failed() || st_glm_mpi_note(_call)))
#define ST_GLM_MPI_CALL(_call) \
    ST_MPI_CALL(st_glm_mpi_failed() ? MPI_ERR_OTHER : st_glm_mpi_note(_call))
#define ST_GLM_MPI_CALL_GOTO(_call, _label, _status) \
    ST_MPI_CALL_GOTO(st_glm_mpi_failed() ? MPI_ERR_OTHER : st_glm_mpi_note(_call), _label, \
                     _status)

/* At the start of a public collective function (calls nest: the outermost clears). */
void st_glm_mpi_enter(void);

/* At its end (st_glm_mpi_leave, st_glm.h): the MPI error it saw (MPI_SUCCESS: none). */
int st_glm_mpi_exit(void);

#endif /* ST_GLM_DATA_H */
