/*
 * A locale whose decimal point is a comma, for the tests of numbers read in a program
 * that set one (setlocale(LC_ALL, "de_DE.UTF-8")): made by localedef in a scratch
 * directory (LOCPATH), else an installed de_DE.UTF-8 or fr_FR.UTF-8.
 */
#ifndef ST_COMMA_LOCALE_H
#define ST_COMMA_LOCALE_H

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set LC_NUMERIC to such a locale, its definition written into directory @a dir.
 * @return the locale's name for messages, or NULL (none could be had: LC_NUMERIC is
 * "C" again). */
static inline const char *st_test_comma_locale(const char *dir)
{
    static const char *const installed[] = {"de_DE.UTF-8", "fr_FR.UTF-8"};
    static const char src[] = "LC_NUMERIC\ndecimal_point \",\"\nthousands_sep \".\"\n"
                              "grouping 3;3\nEND LC_NUMERIC\n";
    const char *name = NULL;
    char path[600], cmd[1400];
    FILE *f;
    size_t i;
    int ret;

    snprintf(path, sizeof(path), "%s/comma.src", dir);
    f = fopen(path, "w");
    if (f != NULL) {
        ret = (fwrite(src, 1, sizeof(src) - 1, f) == sizeof(src) - 1);
        ret = (fclose(f) == 0) && ret;
        snprintf(cmd, sizeof(cmd), "localedef -c -i '%s' -f UTF-8 '%s/st_comma.UTF-8' "
                 ">/dev/null 2>&1", path, dir);
        if (ret) {
            ret = system(cmd);   /* (-c: 1 for the categories it lacks, made all the same) */
            (void)ret;
        }
        setenv("LOCPATH", dir, 1);
        if (setlocale(LC_NUMERIC, "st_comma.UTF-8") != NULL) {
            name = "st_comma.UTF-8 (localedef)";
        }
        unsetenv("LOCPATH");
    }
    for (i = 0; name == NULL && i < sizeof(installed) / sizeof(installed[0]); i++) {
        if (setlocale(LC_NUMERIC, installed[i]) != NULL) {
            name = installed[i];
        }
    }
    if (name == NULL || strcmp(localeconv()->decimal_point, ",") != 0 ||
        strtod("1.5", NULL) != 1.0) {
        setlocale(LC_NUMERIC, "C");
        return NULL;
    }
    return name;
}

#endif
