/*
 * Train a regularized logistic regression through libstrata_glm's C API, the
 * way LIBLINEAR's linear.h is used: read the data, set the parameters, check
 * them, train, evaluate, save.
 *
 *   mpirun -np 2 ./train_logreg train.svm test.svm [lambda]
 *   strata-run mpirun -np 2 ./train_logreg train.svm test.svm 1e-6
 *
 * Build: mpicc train_logreg.c $(pkg-config --cflags --libs strata_glm) -o train_logreg
 * (libstrata_glm without libstrata: under strata-run, Strata's allreduce; without
 * it, Open MPI's)
 */
#include <strata_glm.h>

#include <stdio.h>
#include <stdlib.h>

/* Progress lines arrive here instead of stdout. */
static void print_line(const char *line)
{
    fputs(line, stdout);
}

int main(int argc, char **argv)
{
    strata_glm_problem_t *train = NULL, *test = NULL;
    strata_glm_model_t *model = NULL;
    strata_glm_param_t param;
    strata_glm_metrics_t metrics;
    strata_glm_info_t info;
    const char *why;
    char msg[512];
    int rank, rc = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0) {
            fprintf(stderr, "usage: %s TRAIN_FILE TEST_FILE [LAMBDA]\n", argv[0]);
        }
        MPI_Finalize();
        return 2;
    }

    strata_glm_param_default(&param);
    param.solver  = "logistic";
    param.lambda  = (argc > 3) ? atof(argv[3]) : 1e-5;
    param.tol     = 1e-3;
    param.verbose = 1;
    if ((why = strata_glm_check_param(&param)) != NULL) {
        if (rank == 0) {
            fprintf(stderr, "bad parameters: %s\n", why);
        }
        MPI_Finalize();
        return 2;
    }
    strata_glm_set_print_function(print_line);

    /* each rank reads its own share of the rows */
    if (strata_glm_problem_read(argv[1], 0, MPI_COMM_WORLD, msg, sizeof(msg), &train) !=
            STRATA_OK ||
        strata_glm_problem_read(argv[2], 0, MPI_COMM_WORLD, msg, sizeof(msg), &test) !=
            STRATA_OK ||
        strata_glm_train(train, &param, MPI_COMM_WORLD, msg, sizeof(msg), &model) !=
            STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, "%s\n", msg);
        }
        goto out;
    }
    strata_glm_model_info(model, &info);
    if (strata_glm_evaluate(model, test, MPI_COMM_WORLD, &metrics) != STRATA_OK) {
        goto out;
    }
    if (rank == 0) {
        printf("%d rounds, gap %.2e, %.2f s; test accuracy %.4f, logloss %.5f, AUC %.5f\n",
               info.rounds, info.gap, info.seconds, metrics.accuracy, metrics.logloss,
               metrics.auc);
        if (strata_glm_model_save(model, "train_logreg.model", msg, sizeof(msg)) !=
            STRATA_OK) {
            fprintf(stderr, "%s\n", msg);
            goto out;
        }
    }
    rc = 0;
out:
    strata_glm_model_free(model);
    strata_glm_problem_free(train);
    strata_glm_problem_free(test);
    MPI_Finalize();
    return rc;
}
