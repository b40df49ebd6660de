/*
 * sdca_check: textbook SDCA for L2 logistic regression (Shalev-Shwartz & Zhang 2013),
 * one rank, one thread, an exact 1-D dual step (safeguarded Newton), no intercept:
 * an independent check of how many epochs SDCA itself needs on a data set.
 *
 *   sdca_check TRAIN.svm LAMBDA EPOCHS             a fresh random permutation per epoch
 *   BUCKET=256 sdca_check TRAIN.svm LAMBDA EPOCHS  Strata's order: the buckets of 256
 *                                                  consecutive rows in a fresh random
 *                                                  order, each bucket's rows shuffled
 *
 * Prints P(w) and D(alpha) (solver/MODELS.md's conventions) after epochs 1-5 and every
 * 10th. Build: cc -O2 -o sdca_check sdca_check.c -lm. Not a timed competitor: a
 * diagnostic for bench/GLM.md's finding that Strata's bucketed order costs epochs.
 * Lines up to 64 KiB.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long long rs = 88172645463325252ULL;
static unsigned long long rnd(void){ rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: sdca_check TRAIN.svm LAMBDA EPOCHS\n"); return 2; }
    double lam = atof(argv[2]); int epochs = atoi(argv[3]);
    FILE *f = fopen(argv[1], "r"); char line[1<<16];
    int n = 0, cap = 1<<20; long nnz = 0, ncap = 1<<24;
    long *ptr = malloc(sizeof(long)*(cap+1)); int *idx = malloc(sizeof(int)*ncap); double *val = malloc(sizeof(double)*ncap);
    double *y = malloc(sizeof(double)*cap); int d = 0;
    ptr[0] = 0;
    if (!f) { perror(argv[1]); return 1; }
    while (fgets(line, sizeof line, f)) {
        char *p = line, *q;
        if (n + 1 >= cap) { cap *= 2; ptr = realloc(ptr, sizeof(long)*(cap+1)); y = realloc(y, sizeof(double)*cap); }
        y[n] = strtod(p, &q) > 0 ? 1 : -1; p = q;
        for (;;) { while (*p == ' ') p++; if (*p < '0' || *p > '9') break;
            if (nnz >= ncap) { ncap *= 2; idx = realloc(idx, sizeof(int)*ncap); val = realloc(val, sizeof(double)*ncap); }
            long j = strtol(p, &q, 10); double v = strtod(q+1, &p);
            idx[nnz] = (int)j - 1; val[nnz++] = v; if (j > d) d = (int)j; }
        ptr[++n] = nnz;
    }
    double *w = calloc(d, sizeof(double)), *b = calloc(n, sizeof(double)), *sq = calloc(n, sizeof(double));
    int *perm = malloc(sizeof(int)*n);
    for (int i = 0; i < n; i++) { perm[i] = i; for (long k = ptr[i]; k < ptr[i+1]; k++) sq[i] += val[k]*val[k]; }
    double ln = lam * n;
    for (int ep = 1; ep <= epochs; ep++) {
        if (getenv("BUCKET")) { int B = atoi(getenv("BUCKET")), nb = (n + B - 1)/B; int *bp = malloc(sizeof(int)*nb);
            for (int j = 0; j < nb; j++) bp[j] = j;
            for (int j = nb-1; j > 0; j--) { int k = rnd() % (j+1); int t = bp[j]; bp[j] = bp[k]; bp[k] = t; }
            int o = 0; for (int bb = 0; bb < nb; bb++) { int first = bp[bb]*B, len = n - first < B ? n - first : B;
                for (int r = 0; r < len; r++) perm[o+r] = first + r;
                for (int r = len-1; r > 0; r--) { int k = rnd() % (r+1); int t = perm[o+r]; perm[o+r] = perm[o+k]; perm[o+k] = t; }
                o += len; }
            free(bp);
        } else
        for (int i = n-1; i > 0; i--) { int j = rnd() % (i+1); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
        for (int t = 0; t < n; t++) {
            int i = perm[t]; double z = 0;
            for (long k = ptr[i]; k < ptr[i+1]; k++) z += w[idx[k]]*val[k];
            double m = y[i]*z, q = sq[i]/ln, beta = b[i];
            /* g(x) = log((1-x)/x) - m - q (x - beta), decreasing on (0,1): bisection+Newton */
            double lo = 0, hi = 1, x = beta > 1e-12 && beta < 1-1e-12 ? beta : 0.5;
            for (int it = 0; it < 100; it++) {
                double g = log((1-x)/x) - m - q*(x-beta);
                if (g > 0) lo = x; else hi = x;
                double gp = -1/x - 1/(1-x) - q, xn = x - g/gp;
                if (!(xn > lo && xn < hi)) xn = 0.5*(lo+hi);
                if (fabs(xn - x) < 1e-15) { x = xn; break; }
                x = xn;
            }
            double da = y[i]*(x - beta); b[i] = x;
            for (long k = ptr[i]; k < ptr[i+1]; k++) w[idx[k]] += da*val[k]/ln;
        }
        double loss = 0, ent = 0, ww = 0;
        for (int i = 0; i < n; i++) { double z = 0; for (long k = ptr[i]; k < ptr[i+1]; k++) z += w[idx[k]]*val[k];
            double mm = -y[i]*z; loss += mm > 0 ? mm + log1p(exp(-mm)) : log1p(exp(mm));
            double x = b[i]; ent += (x > 0 ? -x*log(x) : 0) + (x < 1 ? -(1-x)*log(1-x) : 0); }
        for (int j = 0; j < d; j++) ww += w[j]*w[j];
        double P = loss/n + 0.5*lam*ww, D = ent/n - 0.5*lam*ww;
        if (ep <= 5 || ep % 10 == 0) printf("epoch %d P %.10e D %.10e\n", ep, P, D);
    }
    return 0;
}
