/*
 * Training: stochastic dual coordinate ascent on each rank, CoCoA+ across ranks.
 *
 * (The trainer itself lands in the next commit; this file holds the shared
 * helpers the other parts of the library use.)
 */
#include "config.h"

#include "st_glm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*st_glm_print_fn)(const char *line);

void strata_glm_set_print_function(void (*fn)(const char *line))
{
    st_glm_print_fn = fn;
}

void st_glm_print(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (st_glm_print_fn != NULL) {
        st_glm_print_fn(line);
    } else {
        fputs(line, stdout);
        fflush(stdout);
    }
}

strata_glm_model_t *st_glm_model_new(const st_glm_model_t *loss, int64_t n_features,
                                     double bias)
{
    strata_glm_model_t *model = calloc(1, sizeof(*model));

    if (model == NULL) {
        return NULL;
    }
    model->w = calloc((size_t)n_features + 1, sizeof(double));
    if (model->w == NULL) {
        free(model);
        return NULL;
    }
    model->loss       = loss;
    model->n_features = n_features;
    model->bias       = bias;
    return model;
}
