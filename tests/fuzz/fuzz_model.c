/*
 * Fuzz target: the model-file reader (solver/st_glm_io.c, LIBLINEAR's text format).
 *
 * Input: the file. Checked: an error is one line naming the file and leaves the
 * result alone; a model has a known loss, a feature count in range, a bias that is
 * -1 or positive, finite weights equal (up to the sign "label -1 1" flips) to the
 * numbers after the file's "w" line (a weight per class on each line for more than
 * two classes), found here independently of the reader; and saving it and loading it
 * again gives the same model, bit for bit, classes included.
 */
#include "config.h"

#include "st_fuzz.h"
#include "st_glm.h"

#include <math.h>
#include <sys/stat.h>

static char st_fuzz_dir[256];

static void st_fuzz_cleanup(void)
{
    if (st_fuzz_dir[0] != '\0') {
        rmdir(st_fuzz_dir);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

    snprintf(st_fuzz_dir, sizeof(st_fuzz_dir), "%s/strata-fuzz-model.XXXXXX", base);
    if (mkdtemp(st_fuzz_dir) == NULL) {
        st_fuzz_dir[0] = '\0';
    }
    atexit(st_fuzz_cleanup);
    return 0;
}

/* The numbers after the first line that is just "w" (blank lines skipped, every
 * token of a line: a weight per class); -1 when there is no such line. */
static int64_t st_fuzz_weights(const uint8_t *data, size_t size, double *w, int64_t max)
{
    const char *p = (const char*)data, *end = p + size;
    int64_t n = -1;
    char tok[512], *t;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
        const char *a = p, *b;
        size_t len;

        for (;;) {
            while (a < e && (*a == ' ' || *a == '\t' || *a == '\r')) {
                a++;
            }
            for (b = a; b < e && *b != ' ' && *b != '\t' && *b != '\r'; b++) {
            }
            len = (size_t)(b - a);
            if (len == 0) {
                break;
            }
            /* a token of any length is a number here, as it is to the reader (before:
               one of 512 characters or more was counted and its weight left as the
               previous input's, a failed check the reader had not earned) */
            t = len < sizeof(tok) ? tok : malloc(len + 1);
            if (t == NULL) {
                abort();
            }
            memcpy(t, a, len);
            t[len] = '\0';
            if (n < 0 && !strcmp(t, "w")) {
                n = 0;
            } else if (n >= 0) {
                if (n < max) {
                    w[n] = strtod(t, NULL);
                }
                n++;
            }
            if (t != tok) {
                free(t);
            }
            if (n == 0) {
                break;   /* (the "w" line) */
            }
            if (n < 0) {
                break;   /* (a header line: its first token alone) */
            }
            a = b;
        }
        p = e + 1;
    }
    return n;
}

static void st_fuzz_roundtrip(const strata_glm_model_t *m)
{
    char path[300], msg[512];
    strata_glm_model_t *m2 = NULL;
    int64_t n_w = (m->n_features + (m->bias > 0 ? 1 : 0)) * st_glm_model_nr_w(m);

    if (st_fuzz_dir[0] == '\0') {
        return;
    }
    snprintf(path, sizeof(path), "%s/model", st_fuzz_dir);
    ST_FUZZ_CHECK(strata_glm_model_save(m, path, msg, sizeof(msg)) == ST_OK,
                  "saving a model just loaded failed: %s", msg);
    ST_FUZZ_CHECK(strata_glm_model_load(path, msg, sizeof(msg), &m2) == ST_OK,
                  "loading a model just saved failed: %s", msg);
    unlink(path);
    ST_FUZZ_CHECK(m2->loss == m->loss && m2->n_features == m->n_features &&
                  !memcmp(&m2->bias, &m->bias, sizeof(double)) &&
                  m2->nr_class == m->nr_class &&
                  (m->nr_class == 0 || !memcmp(m2->labels, m->labels,
                                               (size_t)m->nr_class * sizeof(double))) &&
                  !memcmp(m2->w, m->w, (size_t)n_w * sizeof(double)),
                  "save and load changed the model");
    strata_glm_model_free(m2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static strata_glm_model_t sentinel;
    static double ref[64];
    strata_glm_model_t *m = &sentinel;
    char path[64], msg[512];
    int64_t j, n_ref, n_w, nr_w;
    strata_status_t rc;
    double sign = 0;

    if (st_fuzz_file(data, size, path, sizeof(path)) != 0) {
        return 0;
    }
    msg[0] = '\0';
    rc = strata_glm_model_load(path, msg, sizeof(msg), &m);
    if (rc != ST_OK) {
        ST_FUZZ_CHECK(m == &sentinel, "the result was set on failure");
        ST_FUZZ_CHECK(st_fuzz_msg_ok(msg, path), "bad message '%s'", msg);
        ST_FUZZ_CHECK(rc == ST_ERR_INVALID_PARAM || rc == ST_ERR_IO, "status %d: %s", (int)rc,
                      msg);
        return 0;
    }
    ST_FUZZ_CHECK(m != NULL && m->loss != NULL && m->w != NULL, "incomplete model");
    ST_FUZZ_CHECK(m->n_features >= 0 && m->n_features <= (int64_t)UINT32_MAX,
                  "n_features %lld", (long long)m->n_features);
    ST_FUZZ_CHECK(m->bias == -1.0 || (m->bias > 0 && isfinite(m->bias)), "bias %g", m->bias);
    ST_FUZZ_CHECK(m->nr_class == 0 || (m->nr_class >= 1 && m->labels != NULL),
                  "nr_class %d", m->nr_class);
    nr_w  = st_glm_model_nr_w(m);
    n_w   = (m->n_features + (m->bias > 0 ? 1 : 0)) * nr_w;
    n_ref = st_fuzz_weights(data, size, ref, (int64_t)ST_ARRAY_SIZE(ref));
    /* a "bias 0" file holds one more weight a class, dropped */
    ST_FUZZ_CHECK(n_ref == n_w || n_ref == n_w + nr_w, "%lld weights in the file, %lld "
                  "loaded", (long long)n_ref, (long long)n_w);
    for (j = 0; j < n_w; j++) {
        ST_FUZZ_CHECK(isfinite(m->w[j]), "weight %lld is %g", (long long)j, m->w[j]);
        if (j < (int64_t)ST_ARRAY_SIZE(ref) && ref[j] != 0) {
            if (sign == 0) {
                sign = m->w[j] / ref[j];
            }
            ST_FUZZ_CHECK((sign == 1 || sign == -1) && m->w[j] == sign * ref[j],
                          "weight %lld: %.17g, the file says %.17g", (long long)j, m->w[j],
                          ref[j]);
        }
    }
    st_fuzz_roundtrip(m);
    strata_glm_model_free(m);
    return 0;
}
