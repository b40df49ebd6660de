/*
 * libstrata_glm internals shared by its files: the objects behind the opaque
 * handles of include/strata_glm.h.
 */
#ifndef ST_GLM_H
#define ST_GLM_H

#include "strata_glm.h"
#include "st_common.h"
#include "st_glm_data.h"
#include "st_glm_model.h"

struct strata_glm_problem {
    st_glm_data_t *data;        /* this rank's rows */
    int            regression;  /* labels are real targets */
};

struct strata_glm_model {
    const st_glm_model_t *loss;       /* the model's loss, regularizer and link */
    int64_t               n_features; /* weights for features 0 .. n_features-1 */
    double                bias;       /* > 0: value of the constant feature; else none */
    double               *w;          /* n_features entries, then the bias weight if any */
    double                lambda;     /* as trained (0 when loaded from a file) */
    double                eta;
    strata_glm_info_t     info;
};

/* A model of @a loss with zero weights; NULL without memory. */
strata_glm_model_t *st_glm_model_new(const st_glm_model_t *loss, int64_t n_features,
                                     double bias);

/* Progress output: through the user's print function, or to stdout. */
void st_glm_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* ST_GLM_H */
