/* driver.cpp - runs an op on host-built core libraries, for the tests.
 *
 *   driver [--cores 1|8] [--core-stack BYTES] LIBRARY OP OUT ARG...
 *
 * LIBRARY is the build path without ".so" (with --cores 8, LIBRARY_cpuI.so
 * are loaded, one thread per core).  OUT and each ARG are TYPE:SHAPE[:VALUES]
 * with TYPE one of u8 i8 i16 i32 i64 f32, SHAPE like 3 or 2x3 (or "-" for
 * rank 0), VALUES a comma-separated list or @START for START, START+1, ...
 * Prints what each core printed ("print core N: TEXT"), then "out:" and the
 * output's elements, one a line,
 * or one "error: MESSAGE" line per failed core (exit status 1).  A fault in
 * an announced guard region prints "overflow on core N: DESCRIPTION" and
 * exits with status 3, as run-custom-op reports it. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <string>
#include <vector>

#include "neuron/host_abi.h"

namespace {

struct Guard {
    const char *start;
    size_t length;
    const char *description; // NULL: free slot
};

Guard guards[64];
pthread_mutex_t guards_lock = PTHREAD_MUTEX_INITIALIZER;
thread_local int thread_core = -1;

struct Tensor {
    customop_host_tensor tensor;
    std::vector<unsigned char> bytes;
};

struct Core {
    int index;
    int (*run)(customop_host_call *);
    customop_host_call call;
    std::string printed;
    int status;
};

[[noreturn]] void die(const std::string &message)
{
    fprintf(stderr, "driver: %s\n", message.c_str());
    exit(2);
}

size_t dtype_size(int dtype)
{
    switch (dtype) {
    case CUSTOMOP_HOST_UINT8: case CUSTOMOP_HOST_INT8: return 1;
    case CUSTOMOP_HOST_INT16: return 2;
    case CUSTOMOP_HOST_INT32: case CUSTOMOP_HOST_FLOAT32: return 4;
    default: return 8;
    }
}

int parse_dtype(const std::string &name)
{
    const char *names[] = {"u8", "i8", "i16", "i32", "i64", "f32"};
    const int dtypes[] = {CUSTOMOP_HOST_UINT8, CUSTOMOP_HOST_INT8, CUSTOMOP_HOST_INT16, CUSTOMOP_HOST_INT32,
                          CUSTOMOP_HOST_INT64, CUSTOMOP_HOST_FLOAT32};
    for (int i = 0; i < 6; i++)
        if (name == names[i])
            return dtypes[i];
    die("unknown dtype " + name);
}

void store(unsigned char *at, int dtype, double value)
{
    switch (dtype) {
    case CUSTOMOP_HOST_UINT8: { uint8_t v = static_cast<uint8_t>(value); memcpy(at, &v, 1); break; }
    case CUSTOMOP_HOST_INT8: { int8_t v = static_cast<int8_t>(value); memcpy(at, &v, 1); break; }
    case CUSTOMOP_HOST_INT16: { int16_t v = static_cast<int16_t>(value); memcpy(at, &v, 2); break; }
    case CUSTOMOP_HOST_INT32: { int32_t v = static_cast<int32_t>(value); memcpy(at, &v, 4); break; }
    case CUSTOMOP_HOST_INT64: { int64_t v = static_cast<int64_t>(value); memcpy(at, &v, 8); break; }
    default: { float v = static_cast<float>(value); memcpy(at, &v, 4); break; }
    }
}

std::string format(const unsigned char *at, int dtype)
{
    char text[64];
    switch (dtype) {
    case CUSTOMOP_HOST_UINT8: snprintf(text, sizeof text, "%u", at[0]); break;
    case CUSTOMOP_HOST_INT8: { int8_t v; memcpy(&v, at, 1); snprintf(text, sizeof text, "%d", v); break; }
    case CUSTOMOP_HOST_INT16: { int16_t v; memcpy(&v, at, 2); snprintf(text, sizeof text, "%d", v); break; }
    case CUSTOMOP_HOST_INT32: { int32_t v; memcpy(&v, at, 4); snprintf(text, sizeof text, "%d", v); break; }
    case CUSTOMOP_HOST_INT64: { long long v; memcpy(&v, at, 8); snprintf(text, sizeof text, "%lld", v); break; }
    default: { float v; memcpy(&v, at, 4); snprintf(text, sizeof text, "%g", static_cast<double>(v)); break; }
    }
    return text;
}

// TYPE:SHAPE[:VALUES]
Tensor parse_tensor(const std::string &text)
{
    Tensor result;
    memset(&result.tensor, 0, sizeof result.tensor);
    size_t colon = text.find(':');
    if (colon == std::string::npos)
        die("bad tensor " + text);
    result.tensor.dtype = parse_dtype(text.substr(0, colon));
    size_t values_colon = text.find(':', colon + 1);
    std::string shape = text.substr(colon + 1, values_colon == std::string::npos ? std::string::npos : values_colon - colon - 1);
    size_t count = 1;
    if (shape != "-") {
        for (const char *p = shape.c_str(); *p;) {
            char *end;
            result.tensor.sizes[result.tensor.rank++] = strtoll(p, &end, 10);
            count *= static_cast<size_t>(result.tensor.sizes[result.tensor.rank - 1]);
            p = *end == 'x' ? end + 1 : end;
            if (end == p && *p)
                die("bad shape " + shape);
        }
    }
    for (int d = result.tensor.rank; d-- > 0;)
        result.tensor.strides[d] = d + 1 == result.tensor.rank ? 1 : result.tensor.strides[d + 1] * result.tensor.sizes[d + 1];
    size_t size = dtype_size(result.tensor.dtype);
    result.bytes.assign(count * size + 1, 0);
    if (values_colon != std::string::npos) {
        std::string values = text.substr(values_colon + 1);
        if (values[0] == '@') {
            double start = atof(values.c_str() + 1);
            for (size_t i = 0; i < count; i++)
                store(&result.bytes[i * size], result.tensor.dtype, start + static_cast<double>(i));
        } else {
            const char *p = values.c_str();
            for (size_t i = 0; i < count; i++) {
                char *end;
                store(&result.bytes[i * size], result.tensor.dtype, strtod(p, &end));
                p = *end == ',' ? end + 1 : end;
            }
        }
    }
    return result;
}

// Warnings are kept with the printed text, one line each, in the order given.
void on_warn(void *context, int core, const char *text)
{
    Core *self = static_cast<Core *>(context);
    (void)core; // the text names it
    std::string &printed = self->printed;
    if (!printed.empty() && printed.back() != '\n')
        printed += '\n';
    printed += std::string("warning: ") + text + "\n";
}

void on_print(void *context, int core, const char *text, size_t length)
{
    Core *self = static_cast<Core *>(context);
    std::string &printed = self->printed;
    if (printed.empty() || printed.back() == '\n')
        printed += "print core " + std::to_string(core) + ": ";
    printed.append(text, length);
}

void on_guard(void *, const void *start, size_t length, const char *description)
{
    pthread_mutex_lock(&guards_lock);
    for (Guard &guard : guards) {
        if (description && !guard.description) {
            guard = Guard{static_cast<const char *>(start), length, description};
            break;
        }
        if (!description && guard.description && guard.start == start) {
            guard.description = nullptr;
            break;
        }
    }
    pthread_mutex_unlock(&guards_lock);
}

void write_text(const char *text)
{
    if (write(STDOUT_FILENO, text, strlen(text)) < 0)
        _exit(5);
}

void on_segfault(int, siginfo_t *info, void *)
{
    const char *address = static_cast<const char *>(info->si_addr);
    for (const Guard &guard : guards) {
        if (guard.description && address >= guard.start && address < guard.start + guard.length) {
            char core[16];
            snprintf(core, sizeof core, "%d", thread_core);
            write_text("overflow on core ");
            write_text(core);
            write_text(": ");
            write_text(guard.description);
            write_text("\n");
            _exit(3);
        }
    }
    write_text("segfault outside any guard region\n");
    _exit(4);
}

void *run_core(void *argument)
{
    Core *core = static_cast<Core *>(argument);
    thread_core = core->index;
    stack_t alternate;
    alternate.ss_size = 64 * 1024;
    alternate.ss_sp = malloc(alternate.ss_size);
    alternate.ss_flags = 0;
    sigaltstack(&alternate, nullptr);
    core->status = core->run(&core->call);
    return nullptr;
}

void on_register(void *context, int, const char *name)
{
    static_cast<std::vector<std::string> *>(context)->push_back(name);
}

} // namespace

int main(int argc, char **argv)
{
    int cores = 1;
    size_t core_stack = 0;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "--cores") == 0)
            cores = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--core-stack") == 0)
            core_stack = strtoul(argv[i + 1], nullptr, 10);
        else
            die(std::string("unknown option ") + argv[i]);
    }
    if (argc - i < 3)
        die("usage: driver [--cores 1|8] [--core-stack BYTES] LIBRARY OP OUT ARG...");
    std::string library = argv[i];
    const char *op = argv[i + 1];
    Tensor out = parse_tensor(argv[i + 2]);
    std::vector<Tensor> inputs;
    for (int a = i + 3; a < argc; a++)
        inputs.push_back(parse_tensor(argv[a]));
    std::vector<customop_host_tensor> args;
    for (Tensor &input : inputs) {
        input.tensor.data = input.bytes.data();
        args.push_back(input.tensor);
    }
    out.tensor.data = out.bytes.data();

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_segfault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &action, nullptr);

    std::vector<Core> all(static_cast<size_t>(cores));
    for (int c = 0; c < cores; c++) {
        std::string path = library + (cores == 8 ? "_cpu" + std::to_string(c) : "") + ".so";
        void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            die(dlerror());
        auto linked_core = reinterpret_cast<int (*)()>(dlsym(handle, "customop_host_linked_core"));
        auto register_ops = reinterpret_cast<int (*)(void (*)(void *, int, const char *), void *, char *)>(
            dlsym(handle, "customop_host_register"));
        Core &core = all[static_cast<size_t>(c)];
        core.run = reinterpret_cast<int (*)(customop_host_call *)>(dlsym(handle, "customop_host_run"));
        if (!linked_core || !register_ops || !core.run)
            die(path + " lacks the host ABI");
        if (linked_core() != (cores == 8 ? c : -1))
            die(path + " was linked for core " + std::to_string(linked_core()));
        std::vector<std::string> names;
        char error[CUSTOMOP_HOST_ERROR_SIZE];
        if (register_ops(on_register, &names, error) < 0)
            die(path + ": " + error);
        core.index = c;
        memset(&core.call, 0, sizeof core.call);
        core.call.abi_version = CUSTOMOP_HOST_ABI_VERSION;
        core.call.op = op;
        core.call.args = args.data();
        core.call.arg_count = static_cast<int>(args.size());
        core.call.output = &out.tensor;
        core.call.core_stack_size = core_stack;
        core.call.print = on_print;
        core.call.guard = on_guard;
        core.call.warn = on_warn;
        core.call.context = &core;
    }
    std::vector<pthread_t> threads(all.size());
    for (size_t c = 0; c < all.size(); c++)
        pthread_create(&threads[c], nullptr, run_core, &all[c]);
    int status = 0;
    for (size_t c = 0; c < all.size(); c++)
        pthread_join(threads[c], nullptr);
    for (Core &core : all) {
        fputs(core.printed.c_str(), stdout);
        if (!core.printed.empty() && core.printed.back() != '\n')
            putchar('\n');
    }
    for (Core &core : all) {
        if (core.status != 0) {
            printf("error: %s\n", core.call.error);
            status = 1;
        }
    }
    if (status == 0) {
        size_t size = dtype_size(out.tensor.dtype);
        puts("out:");
        for (size_t e = 0; e + 1 < out.bytes.size(); e += size)
            puts(format(&out.bytes[e], out.tensor.dtype).c_str());
    }
    return status;
}
