/*
 * AddressSanitizer builds only (configure --enable-sanitizers=address,...): a
 * dlclose() that keeps the object loaded. Open MPI unloads its plugins at
 * MPI_Finalize, after which a LeakSanitizer report of memory they allocated shows
 * "<unknown module>" frames that no suppression can match, and the reports of
 * Strata's own leaks drown in them. Open MPI 5 has mca_base_component_disable_dlclose
 * for this; 4.1 has not. Being in libstrata and libstrata_glm, this definition
 * comes before libc's in the lookup order of every process that loads them. Not
 * with ThreadSanitizer: UCX's memory hooks, kept loaded, then run in exiting
 * threads that ThreadSanitizer no longer tracks. Never in a normal build.
 */
#include "st_common.h"

int dlclose(void *handle) __attribute__((visibility("default")));

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
