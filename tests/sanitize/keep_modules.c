/* Linked into every executable of a PHEW_SANITIZE build (CMakeLists.txt): dlclose() does
 * nothing, so the shared objects Open MPI loads at MPI_Init (its components, and PMIx, hwloc
 * and libevent behind them) stay mapped after MPI_Finalize unloads them. LeakSanitizer then
 * still knows which library allocated what when it reports at exit, and the suppressions in
 * lsan.supp, which name those libraries, can apply; with the libraries unmapped the stacks end
 * in "<unknown module>" and nothing can tell Open MPI's leaks from phew's. The executable's
 * definition comes first in the dynamic symbol lookup (it is exported for that), before the
 * sanitizer runtime's and the C library's. Nothing else changes: keeping a library mapped is
 * what dlclose() does anyway while other references remain. */
int dlclose(void *handle);

int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
