/* torchneuron/register.h - the shape functions of GPSIMD custom ops, for
 * the host.
 *
 * A shape source defines, per op, a shape function: the op's arguments
 * (torch::Tensor, torch::Scalar, double, int64_t) in, a tensor of the
 * output's sizes and dtype out, without reading any data.  It registers
 * them in a NEURON_LIBRARY block:
 *
 *     NEURON_LIBRARY(my_ops, m) {
 *         m.def("relu_forward", &relu_forward_shape, "relu_forward");
 *     }
 *
 * m.def(OP, SHAPE_FN, COMPUTE_FN) defines the PyTorch op my_ops::OP, whose
 * schema PyTorch infers from SHAPE_FN's C++ signature and whose
 * CompositeExplicitAutograd kernel is SHAPE_FN (so it serves the tensors of
 * every backend, Meta and XLA among them, and no tracer replaces the op by
 * it, as they do CompositeImplicitAutograd kernels), and records that the
 * compute function COMPUTE_FN implements it on the device.  A shape
 * function that reads sizes with sym_sizes() and makes its result with
 * at::empty_symint keeps sizes symbolic in make_fx's symbolic tracing and
 * torch.compile(dynamic=True); one that calls sizes() gets the sizes of
 * each call there (they are specialised: a graph per size).
 * build_custom_op.custom_op.load() builds the shape sources into one shared
 * library and reads the records through the C functions at the end of this
 * file.
 *
 * Every shape source of a library may include this header and hold
 * NEURON_LIBRARY blocks, for several namespaces or for one namespace (the
 * first block defines it, later blocks add to it).  Each shared library
 * keeps its own records: two shape libraries loaded into one process each
 * report only their own ops.  A registration that PyTorch refuses (a
 * namespace another library of the process already defines, an op defined
 * twice) throws nothing out of the library's loading: the library records
 * the first such error and getNeuronRegistrationError() returns it.
 */
#ifndef TORCHNEURON_REGISTER_H
#define TORCHNEURON_REGISTER_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

/* Everything of the registry is private to the shared library that holds
 * it.  A static inside a default-visibility inline function becomes one
 * object for the whole process (GNU unique), so every library loaded with
 * RTLD_GLOBAL would share it; hidden visibility keeps one per library. */
#define TORCHNEURON_PRIVATE __attribute__((visibility("hidden")))
/* The C functions: exported even under -fvisibility=hidden, and emitted by
 * every source that includes this header (inline and used: no duplicate
 * symbols, whichever sources include it). */
#define TORCHNEURON_EXPORT extern "C" __attribute__((visibility("default"), used)) inline

namespace torchneuron {
namespace detail {

struct OpRecord {
    std::string op;       // the PyTorch op name, without the namespace
    std::string function; // the compute function that implements it
    std::string source;   // "FILE:LINE" of the m.def call
};

struct NamespaceRecord {
    std::string name;
    std::vector<OpRecord> ops;
};

struct Registry {
    std::vector<NamespaceRecord> namespaces;
    std::string error; // the first registration error, "" when none
};

TORCHNEURON_PRIVATE inline Registry &registry()
{
    static Registry the_registry;
    return the_registry;
}

TORCHNEURON_PRIVATE inline void record_error(const std::string &where, const char *what)
{
    Registry &r = registry();
    if (!r.error.empty())
        return;
    // PyTorch's messages end with a C++ backtrace after the first line.
    std::string message = what ? what : "unknown error";
    std::size_t newline = message.find('\n');
    if (newline != std::string::npos)
        message.resize(newline);
    r.error = where + ": " + message;
}

TORCHNEURON_PRIVATE inline std::string location(const char *file, std::uint32_t line)
{
    return std::string(file ? file : "?") + ":" + std::to_string(line);
}

// Copies text into the caller's buffer; NULL when it does not fit.
TORCHNEURON_PRIVATE inline const char *copy_out(const std::string &text, char *buffer,
                                                std::size_t size)
{
    if (!buffer || text.size() >= size)
        return nullptr;
    std::memcpy(buffer, text.c_str(), text.size() + 1);
    return buffer;
}

TORCHNEURON_PRIVATE inline const NamespaceRecord *find_namespace(int i)
{
    const Registry &r = registry();
    if (i < 0 || static_cast<std::size_t>(i) >= r.namespaces.size())
        return nullptr;
    return &r.namespaces[static_cast<std::size_t>(i)];
}

TORCHNEURON_PRIVATE inline const OpRecord *find_op(int i, int j)
{
    const NamespaceRecord *ns = find_namespace(i);
    if (!ns || j < 0 || static_cast<std::size_t>(j) >= ns->ops.size())
        return nullptr;
    return &ns->ops[static_cast<std::size_t>(j)];
}

} // namespace detail

/* The m of a NEURON_LIBRARY block: one namespace of this library. */
class TORCHNEURON_PRIVATE NeuronNamespace {
public:
    NeuronNamespace(const char *ns, const char *file, std::uint32_t line) : index_(0)
    {
        detail::Registry &r = detail::registry();
        torch::Library::Kind kind = torch::Library::DEF;
        index_ = r.namespaces.size();
        for (std::size_t i = 0; i < r.namespaces.size(); i++) {
            if (r.namespaces[i].name == ns) {
                // Another block of this library defined it: add to it.
                index_ = i;
                kind = torch::Library::FRAGMENT;
            }
        }
        if (index_ == r.namespaces.size())
            r.namespaces.push_back(detail::NamespaceRecord{ns, {}});
        try {
            library_.reset(new torch::Library(kind, ns, c10::nullopt, file, line));
        } catch (const std::exception &e) {
            detail::record_error(detail::location(file, line) + ": namespace " + ns, e.what());
        }
    }

    /* Defines op (schema inferred from shape_function) and records that
     * compute_function implements it.  file and line default to the
     * caller's: the place the error messages of load() point at. */
    template <typename Function>
    NeuronNamespace &def(const char *op, Function &&shape_function, const char *compute_function,
                         const char *file = __builtin_FILE(), int line = __builtin_LINE())
    {
        std::string where = detail::location(file, static_cast<std::uint32_t>(line));
        detail::NamespaceRecord &ns = detail::registry().namespaces[index_];
        if (!library_)
            return *this; // the namespace itself failed; its error is recorded
        if (!op || !compute_function) {
            detail::record_error(where, "m.def needs an op name and a compute function name");
            return *this;
        }
        try {
            library_->def(op, torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd,
                                              std::forward<Function>(shape_function)));
        } catch (const std::exception &e) {
            detail::record_error(where + ": op " + ns.name + "::" + op, e.what());
            return *this;
        }
        ns.ops.push_back(detail::OpRecord{op, compute_function, where});
        return *this;
    }

private:
    std::size_t index_;
    std::unique_ptr<torch::Library> library_;
};

namespace detail {

/* What NEURON_LIBRARY creates: runs the block when the library loads. */
class TORCHNEURON_PRIVATE LibraryInit {
public:
    LibraryInit(const char *ns, void (*init)(NeuronNamespace &), const char *file,
                std::uint32_t line)
        : namespace_(ns, file, line)
    {
        try {
            init(namespace_);
        } catch (const std::exception &e) {
            record_error(location(file, line) + ": NEURON_LIBRARY(" + ns + ")", e.what());
        }
    }

private:
    NeuronNamespace namespace_;
};

} // namespace detail
} // namespace torchneuron

/* The names of the original header. */
typedef torchneuron::NeuronNamespace NeuronNamespace;
typedef void (*NeuronLibraryInit)(NeuronNamespace &);

#define NEURON_LIBRARY(ns, m)                                                                 \
    static void TORCHNEURON_LIBRARY_init_##ns(NeuronNamespace &);                             \
    static const torchneuron::detail::LibraryInit TORCHNEURON_LIBRARY_static_init_##ns(       \
        #ns, &TORCHNEURON_LIBRARY_init_##ns, __FILE__, __LINE__);                             \
    void TORCHNEURON_LIBRARY_init_##ns(NeuronNamespace &m)

/* The registry, through C linkage (what load() reads with ctypes).  The
 * name functions copy into buf and return it, or return NULL when i or j is
 * out of range or the name with its terminating NUL does not fit in max
 * bytes. */

/* The number of namespaces this library registers ops in. */
TORCHNEURON_EXPORT int getNumNamespaces()
{
    return static_cast<int>(torchneuron::detail::registry().namespaces.size());
}

/* The name of namespace i. */
TORCHNEURON_EXPORT const char *getNamespace(int i, char *buf, std::size_t max)
{
    const torchneuron::detail::NamespaceRecord *ns = torchneuron::detail::find_namespace(i);
    return ns ? torchneuron::detail::copy_out(ns->name, buf, max) : nullptr;
}

/* The number of ops of namespace i (0 when there is no namespace i). */
TORCHNEURON_EXPORT int getNumNeuronOps(int i)
{
    const torchneuron::detail::NamespaceRecord *ns = torchneuron::detail::find_namespace(i);
    return ns ? static_cast<int>(ns->ops.size()) : 0;
}

/* The PyTorch name of op j of namespace i, without the namespace. */
TORCHNEURON_EXPORT const char *getNeuronOpName(int i, int j, char *buf, std::size_t max)
{
    const torchneuron::detail::OpRecord *op = torchneuron::detail::find_op(i, j);
    return op ? torchneuron::detail::copy_out(op->op, buf, max) : nullptr;
}

/* The compute function of op j of namespace i. */
TORCHNEURON_EXPORT const char *getNeuronFnName(int i, int j, char *buf, std::size_t max)
{
    const torchneuron::detail::OpRecord *op = torchneuron::detail::find_op(i, j);
    return op ? torchneuron::detail::copy_out(op->function, buf, max) : nullptr;
}

/* Not in the original header: where op j of namespace i was registered,
 * "FILE:LINE" of its m.def. */
TORCHNEURON_EXPORT const char *getNeuronOpSource(int i, int j, char *buf, std::size_t max)
{
    const torchneuron::detail::OpRecord *op = torchneuron::detail::find_op(i, j);
    return op ? torchneuron::detail::copy_out(op->source, buf, max) : nullptr;
}

/* Not in the original header: the first registration PyTorch refused when
 * this library loaded, as "FILE:LINE: WHAT: MESSAGE", cut to fit max bytes;
 * NULL when every registration succeeded. */
TORCHNEURON_EXPORT const char *getNeuronRegistrationError(char *buf, std::size_t max)
{
    const std::string &error = torchneuron::detail::registry().error;
    if (error.empty() || !buf || max == 0)
        return nullptr;
    std::size_t length = error.size() < max - 1 ? error.size() : max - 1;
    std::memcpy(buf, error.data(), length);
    buf[length] = '\0';
    return buf;
}

#endif
