/* torch_bridge.cpp - host-target custom ops as PyTorch's own operators.
 *
 * A shape library (torchneuron/register.h) defines each op ns::op in
 * PyTorch's dispatcher with its shape function as the op's
 * CompositeExplicitAutograd kernel.  For each op of a loaded host bundle,
 * this library adds kernels so that every dispatch key but one reaches a
 * kernel of its own, and no tracer can replace the op by its shape
 * function:
 *   - CPU: checks the tensors, asks the shape function for the output's
 *     sizes and dtype, and runs the op's compute function on the emulated
 *     cores through libruncustomop's rco_run_named (its messages
 *     name the op ns::op, as the caller called it);
 *   - Meta: the shape function's sizes and dtype, as a new contiguous meta
 *     tensor, whatever device the shape function made its result on; with
 *     symbolic sizes (make_fx's symbolic tracing, torch.compile(dynamic=
 *     True)) a shape function that calls sizes() gets the sizes of this
 *     call (they are specialised), one that keeps sym_sizes() keeps them
 *     symbolic.  FakeTensorMode, make_fx, functionalize, torch.compile and
 *     torch.export run it;
 *   - every other backend (CUDA, XLA, sparse, quantized...): a refusal that
 *     names the argument the host emulator cannot take;
 *   - BackendSelect, for an op without a tensor argument: sends the call
 *     to the CPU kernel (PyTorch would find no backend in its arguments);
 *   - Autograd: the op has no derivative: a call on an input that has a
 *     forward-mode tangent is refused, and an input that requires grad
 *     while grad mode is on gives the output a grad_fn whose backward
 *     raises (a trace that runs no backward, torch.export's, goes on);
 *     ADInplaceOrView refuses a tangent too, for when another Autograd
 *     kernel replaces this one (torch.library.register_autograd gives no
 *     forward-mode derivative).
 * So eager calls, TorchScript (scripted, saved and loaded), tracing, the
 * tracers of torch.fx and C++ callers all run the kernel.  The only key
 * left to the shape function is Undefined (a call that reaches no backend
 * at all), and torch-neuronx's own load_library() calls it on XLA tensors
 * of a device bundle, where this library plays no part.
 *
 * One copy of this library serves a process; build_custom_op compiles it
 * against the process's PyTorch once per version (a content-keyed cache,
 * as shape libraries) and drives it through the C functions at the end of
 * this file.  It calls libruncustomop through the functions it is given,
 * so it links against no copy of that library of its own.
 *
 * Errors.  The tensor checks of this file raise c10::ValueError (Python's
 * ValueError); a call of an op on an input that has a tangent raises
 * c10::Error, and a backward through an op std::runtime_error (both
 * RuntimeError in Python).  What the runner reports (an argument out of
 * range, a fault, a broken device rule, a time limit) is raised, on a
 * thread that has a Python thread state, as the exception the Python error
 * hook makes of it (build_custom_op.runner.RunError, a RuntimeError), and
 * what a kernel printed reaches the Python print hook before the call
 * returns.  A thread that has none (a C++ caller's own thread) never takes
 * the GIL, which the thread waiting for it may hold: the runner's message
 * is a c10::Error and the output goes to the standard streams, as in a
 * process without Python.  The builds are opened with stop_on_interrupt: a
 * call that Ctrl-C stops raises what Python's SIGINT handler raises
 * (KeyboardInterrupt).  After a time limit or Ctrl-C the call's tensors are
 * kept for ever (a core that did not stop may still use them) and the next
 * call opens the build again.  In a child of fork() (a DataLoader worker,
 * say) the locks are made anew, and the first call opens the build again
 * there: the library the parent opened has its cores in the parent only. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>
#include <torch/version.h>

#include "runcustomop.h"

#define BRIDGE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/* libruncustomop's functions, as the caller found them. */
struct Runner {
    int (*open)(const char *, const struct rco_options *, rco_library **, struct rco_error *);
    void (*close)(rco_library *);
    int (*op_index)(const rco_library *, const char *);
    const char *(*op_kinds)(const rco_library *, int);
    const char *(*op_signature)(const rco_library *, int);
    int (*run_named)(rco_library *, int, const char *, const struct rco_argument *, int,
                     const struct rco_tensor *, double, struct rco_error *);
    const struct rco_dtype_info *(*device_dtype)(int);
    int (*fill_unwritten)(int, void *, size_t);
    size_t (*describe_argument)(const rco_library *, int, const char *, int, char *, size_t);
    int (*accept_tensor)(const rco_library *, int, const char *, int,
                         const struct rco_tensor_description *, int *, struct rco_error *);
    int (*output_checks_default)(int *, struct rco_error *);
};

Runner runner;
/* Python callables: print(printed, warned) and error(status, core, signal,
 * op, message) -> an exception; NULL outside Python. */
PyObject *print_hook;
PyObject *error_hook;

// PyTorch numbers the device's dtypes as enum rco_dtype does.
static_assert(static_cast<int>(at::kByte) == RCO_UINT8, "kByte");
static_assert(static_cast<int>(at::kChar) == RCO_INT8, "kChar");
static_assert(static_cast<int>(at::kShort) == RCO_INT16, "kShort");
static_assert(static_cast<int>(at::kInt) == RCO_INT32, "kInt");
static_assert(static_cast<int>(at::kLong) == RCO_INT64, "kLong");
static_assert(static_cast<int>(at::kHalf) == RCO_FLOAT16, "kHalf");
static_assert(static_cast<int>(at::kFloat) == RCO_FLOAT32, "kFloat");
static_assert(static_cast<int>(at::kBFloat16) == RCO_BFLOAT16, "kBFloat16");

/* The runner's dtype of type (its ScalarType's number), or -1 when the
 * device does not have it. */
int rco_dtype_of(at::ScalarType type)
{
    int code = static_cast<int>(type);
    for (int i = 0; i < RCO_DTYPE_COUNT; i++)
        if (runner.device_dtype(i)->code == code)
            return code;
    return -1;
}

/* "float32, bfloat16, ...": the device's dtypes, for messages. */
std::string device_dtypes()
{
    std::string names;
    for (int i = 0; i < RCO_DTYPE_COUNT; i++)
        names += std::string(i ? ", " : "") + runner.device_dtype(i)->name;
    return names;
}

std::string dtype_name(at::ScalarType type)
{
    std::string name = c10::toString(type);
    // c10 names them Float, Long...; Python's names are the ones users write.
    static const std::pair<const char *, const char *> names[] = {
        {"Byte", "uint8"}, {"Char", "int8"}, {"Short", "int16"}, {"Int", "int32"},
        {"Long", "int64"}, {"Half", "float16"}, {"Float", "float32"}, {"Double", "float64"},
        {"BFloat16", "bfloat16"}, {"Bool", "bool"}, {"ComplexHalf", "complex32"},
        {"ComplexFloat", "complex64"}, {"ComplexDouble", "complex128"}, {"QInt8", "qint8"},
        {"QUInt8", "quint8"}, {"QInt32", "qint32"}, {"QUInt4x2", "quint4x2"},
        {"QUInt2x4", "quint2x4"}};
    for (const auto &entry : names)
        if (name == entry.first)
            return entry.second;
    return name;
}

/* A layout as Python names it. */
std::string layout_name(at::Layout layout)
{
    switch (layout) {
    case at::kSparse: return "torch.sparse_coo";
    case at::kSparseCsr: return "torch.sparse_csr";
    case at::kSparseCsc: return "torch.sparse_csc";
    case at::kSparseBsr: return "torch.sparse_bsr";
    case at::kSparseBsc: return "torch.sparse_bsc";
    case at::kMkldnn: return "torch._mkldnn";
    default: {
        std::ostringstream text;
        text << layout;
        return text.str();
    }
    }
}

/* What each kind of the runner's record is in an inferred schema. */
bool kind_fits(char kind, const c10::TypePtr &type)
{
    switch (kind) {
    case 'T': return type->kind() == c10::TypeKind::TensorType;
    case 'S': return type->kind() == c10::TypeKind::NumberType;
    case 'f': return type->kind() == c10::TypeKind::FloatType;
    case 'i': case 'l': return type->kind() == c10::TypeKind::IntType;
    default: return false;
    }
}

/* ---- what the kernels printed, kept per calling thread ---------------------------- */

struct Printed {
    std::vector<std::pair<int, std::string>> text;
    std::vector<std::string> warnings;
};

thread_local Printed printed;

void keep_print(void *, int core, const char *text, size_t length)
{
    printed.text.emplace_back(core, std::string(text, length));
}

void keep_warning(void *, int, const char *text)
{
    printed.warnings.emplace_back(text);
}

bool python_present()
{
    return print_hook && Py_IsInitialized();
}

/* Whether this thread may take the GIL to hand over output and errors: it
 * has a Python thread state (Python started it, or it runs Python code).
 * Another thread (a C++ library's worker, say) never waits for the GIL:
 * the thread that holds it may be the one waiting for this call to end. */
bool python_thread()
{
    return python_present() && PyGILState_GetThisThreadState() != nullptr;
}

/* Raises, as a C++ exception that PyTorch turns back into it, the Python
 * exception now set (the GIL is held). */
[[noreturn]] void throw_python_error()
{
    ::python_error error;
    error.persist();
    throw std::move(error);
}

/* Hands what the last call printed to the print hook (or the standard
 * streams) and forgets it. */
void hand_over_output()
{
    if (printed.text.empty() && printed.warnings.empty())
        return;
    Printed taken;
    std::swap(taken, printed);
    if (!python_thread()) {
        for (const auto &entry : taken.text)
            fwrite(entry.second.data(), 1, entry.second.size(), entry.first == 0 ? stdout : stderr);
        for (const auto &warning : taken.warnings)
            fprintf(stderr, "warning: %s\n", warning.c_str());
        fflush(stdout);
        return;
    }
    pybind11::gil_scoped_acquire gil;
    PyObject *text = PyList_New(0);
    PyObject *warnings = PyList_New(0);
    bool ok = text && warnings;
    for (size_t i = 0; ok && i < taken.text.size(); i++) {
        PyObject *core = PyLong_FromLong(taken.text[i].first);
        PyObject *bytes = PyBytes_FromStringAndSize(
            taken.text[i].second.data(), static_cast<Py_ssize_t>(taken.text[i].second.size()));
        PyObject *item = core && bytes ? PyTuple_Pack(2, core, bytes) : nullptr;
        ok = item && PyList_Append(text, item) == 0;
        Py_XDECREF(core);
        Py_XDECREF(bytes);
        Py_XDECREF(item);
    }
    for (size_t i = 0; ok && i < taken.warnings.size(); i++) {
        PyObject *item = PyBytes_FromString(taken.warnings[i].c_str());
        ok = item && PyList_Append(warnings, item) == 0;
        Py_XDECREF(item);
    }
    PyObject *result = ok ? PyObject_CallFunctionObjArgs(print_hook, text, warnings, nullptr)
                          : nullptr;
    Py_XDECREF(text);
    Py_XDECREF(warnings);
    if (!result)
        throw_python_error();
    Py_DECREF(result);
}

/* Raises what the runner reported.  A call stopped by Ctrl-C raises what
 * the process's SIGINT handler raises, which the runner has run before the
 * call returned (Python's: KeyboardInterrupt) when the call came from
 * Python's main thread; else RunError of kind 'interrupted'. */
[[noreturn]] void throw_run_error(const struct rco_error &error)
{
    if (!python_thread())
        TORCH_CHECK(false, error.message);
    pybind11::gil_scoped_acquire gil;
    if (error.status == RCO_ERROR_INTERRUPTED && PyErr_CheckSignals() != 0)
        throw_python_error();
    PyObject *exception = PyObject_CallFunction(error_hook, "iiiyy", static_cast<int>(error.status),
                                                error.core, error.signal, error.op, error.message);
    if (exception) {
        PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exception)), exception);
        Py_DECREF(exception);
    }
    throw_python_error();
}

/* ---- the libraries ------------------------------------------------------------ */

/* A host build opened through the runner.  The runner's library takes
 * its calls in turn, and after a stop (a time limit, Ctrl-C) or a fork
 * starts new cores itself (runcustomop(3), AFTER A STOP). */
class HostLibrary {
public:
    explicit HostLibrary(bool fill_outputs) : handle_(nullptr), fill_outputs_(fill_outputs) {}

    ~HostLibrary()
    {
        if (handle_)
            runner.close(handle_);
    }

    HostLibrary(const HostLibrary &) = delete;
    HostLibrary &operator=(const HostLibrary &) = delete;

    /* Opens the build at path; 0, or the runner's status with error filled in. */
    int open(const char *path, const struct rco_options &options, struct rco_error *error)
    {
        return runner.open(path, &options, &handle_, error);
    }

    rco_library *handle() const { return handle_; }

    /* Whether a new output is filled before the kernel runs: when the
     * output checks do not fail a call that leaves elements unwritten. */
    bool fills_outputs() const { return fill_outputs_; }

    /* Runs op index, named name in its messages ("ns::op"). */
    int run(int index, const char *name, const struct rco_argument *arguments, int count,
            const struct rco_tensor *output, struct rco_error *error)
    {
        return runner.run_named(handle_, index, name, arguments, count, output,
                                RCO_DEFAULT_TIMEOUT, error);
    }

    /* How messages name argument (0-based) of op index, called name
     * ("ns::op argument 1 (Tensor x)"). */
    std::string describe(int index, const char *name, int argument)
    {
        char text[RCO_LABEL_SIZE + 320];
        runner.describe_argument(handle_, index, name, argument, text, sizeof text);
        return text[0] ? text : std::string(name) + " argument " + std::to_string(argument + 1);
    }

    /* rco_accept_tensor of argument (0-based; -1: the output) of op index,
     * called name. */
    int accept(int index, const char *name, int argument,
               const struct rco_tensor_description *tensor, int *copy, struct rco_error *error)
    {
        return runner.accept_tensor(handle_, index, name, argument, tensor, copy, error);
    }

private:
    rco_library *handle_;
    bool fill_outputs_;
};

/* What an op runs: a compute function of an open library. */
struct Binding {
    std::shared_ptr<HostLibrary> library;
    int index;
    std::string kinds;
};

/* An op this library registered kernels for; its binding changes when
 * another bundle with the op is loaded. */
struct OpEntry {
    std::string qualified;
    std::shared_ptr<const Binding> binding;
};

pthread_mutex_t bindings_lock = PTHREAD_MUTEX_INITIALIZER;

std::shared_ptr<const Binding> binding_of(const OpEntry &entry)
{
    pthread_mutex_lock(&bindings_lock);
    std::shared_ptr<const Binding> binding = entry.binding;
    pthread_mutex_unlock(&bindings_lock);
    return binding;
}

void reset_locks_in_child()
{
    pthread_mutex_init(&bindings_lock, nullptr);
}

/* Tensors a lost core may still use: kept for ever. */
void keep_for_ever(const at::Tensor *tensors, size_t count)
{
    static std::mutex lock;
    static std::vector<at::Tensor> *kept = new std::vector<at::Tensor>();
    std::lock_guard<std::mutex> guard(lock);
    for (size_t i = 0; i < count; i++)
        if (tensors[i].defined())
            kept->push_back(tensors[i]);
}

/* ---- the checks of the arguments -------------------------------------------- */

/* "ns::op argument 2 (Scalar a)": the argument as the runner's messages
 * name it (called on a refusal only). */
std::string describe(const OpEntry &entry, size_t index)
{
    std::shared_ptr<const Binding> binding = binding_of(entry);
    return binding->library->describe(binding->index, entry.qualified.c_str(),
                                      static_cast<int>(index));
}

/* Refuses (c10::ValueError) a tensor argument the cores cannot take, as
 * the runner decides (rco_accept_tensor): undefined, not dense, of a dtype
 * the device does not have, of more dimensions than a device tensor, and,
 * when on_cpu, not on the CPU.  Returns the runner's dtype of it, and sets
 * *copy when the cores must use a contiguous copy.  Nothing is formatted
 * for a tensor the runner accepts. */
int check_tensor(const at::Tensor &tensor, const OpEntry &entry, size_t index, bool on_cpu,
                 int *copy = nullptr)
{
    TORCH_CHECK_VALUE(tensor.defined(), describe(entry, index), " is an undefined tensor");
    struct rco_tensor_description description;
    description.on_host = !on_cpu || tensor.device().is_cpu();
    description.device = nullptr;
    description.strided = tensor.layout() == at::kStrided;
    description.layout = nullptr;
    description.dtype = rco_dtype_of(tensor.scalar_type());
    description.dtype_name = nullptr;
    description.rank = static_cast<int>(tensor.dim());
    // The layout matters to a call only (a Meta tensor may have symbolic sizes).
    bool with_layout = copy && description.strided;
    description.sizes = with_layout ? tensor.sizes().data() : nullptr;
    description.strides = with_layout ? tensor.strides().data() : nullptr;
    description.computed = tensor.is_neg();
    int ignored;
    std::shared_ptr<const Binding> binding = binding_of(entry);
    struct rco_error error;
    const char *name = entry.qualified.c_str();
    int argument = static_cast<int>(index);
    if (binding->library->accept(binding->index, name, argument, &description,
                                 copy ? copy : &ignored, &error) == 0)
        return description.dtype;
    // Refused: the names the message gives, and the runner's message.
    std::ostringstream device;
    device << tensor.device();
    std::string device_name = device.str(), layout = layout_name(tensor.layout()),
                dtype = dtype_name(tensor.scalar_type());
    description.device = device_name.c_str();
    description.layout = layout.c_str();
    description.dtype_name = dtype.c_str();
    binding->library->accept(binding->index, name, argument, &description, &ignored, &error);
    TORCH_CHECK_VALUE(false, error.message);
}

/* A tensor argument as the cores take it (see check_tensor); a negative
 * view resolved and other layouts copied to contiguous memory (a dtype is
 * never converted).  Returns the tensor whose memory the cores use. */
at::Tensor usable_tensor(const at::Tensor &tensor, const OpEntry &entry, size_t index,
                         struct rco_tensor *out)
{
    int copy = 0;
    int dtype = check_tensor(tensor, entry, index, true, &copy);
    at::Tensor used = tensor;
    if (copy) {
        used = tensor.is_neg() ? tensor.resolve_neg() : tensor;
        if (!used.is_contiguous())
            used = used.contiguous();
    }
    int rank = static_cast<int>(used.dim());
    out->dtype = dtype;
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        out->sizes[d] = used.size(d);
        out->strides[d] = used.stride(d);
    }
    out->data = used.data_ptr();
    return used;
}

/* A number argument: the runner converts it by the schema's kind. */
void number_argument(const c10::IValue &value, const OpEntry &entry, size_t index,
                     struct rco_argument *out)
{
    out->text = nullptr;
    if (value.isInt()) {
        out->type = RCO_ARGUMENT_INTEGER;
        out->integer = value.toInt();
    } else if (value.isBool()) {
        out->type = RCO_ARGUMENT_INTEGER;
        out->integer = value.toBool() ? 1 : 0;
    } else if (value.isDouble()) {
        out->type = RCO_ARGUMENT_REAL;
        out->real = value.toDouble();
    } else {
        TORCH_CHECK_TYPE(false, describe(entry, index), " must be a real number, not ",
                         value.isComplexDouble() ? "complex" : value.tagKind());
    }
}

/* ---- the shape function ------------------------------------------------------ */

/* Calls the op's shape function, its CompositeExplicitAutograd kernel (see
 * register.h), on the arguments. */
c10::IValue shape_function_result(const c10::OperatorHandle &op,
                                  c10::ArrayRef<c10::IValue> values)
{
    thread_local torch::jit::Stack shape_stack;
    shape_stack.clear();
    shape_stack.insert(shape_stack.end(), values.begin(), values.end());
    op.callBoxedForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd, shape_stack);
    c10::IValue result = std::move(shape_stack.back());
    shape_stack.clear(); // holds no reference to the result, nor to the arguments
    return result;
}

/* The tensor the shape function returned, refused unless it is a tensor
 * of a dtype the device has. */
at::Tensor shape_of(c10::IValue result, const OpEntry &entry)
{
    TORCH_CHECK_TYPE(result.isTensor(), "the shape function of ", entry.qualified, " returned ",
                     result.tagKind(), ", not a tensor");
    at::Tensor shape = std::move(result).toTensor();
    TORCH_CHECK_VALUE(rco_dtype_of(shape.scalar_type()) >= 0, "the shape function of ",
                      entry.qualified, " returned dtype ", dtype_name(shape.scalar_type()),
                      ", which the device does not have; its dtypes are ", device_dtypes());
    return shape;
}

bool has_symbolic_sizes(c10::ArrayRef<c10::IValue> values)
{
    for (const c10::IValue &value : values)
        if (value.isTensor() && value.toTensor().defined() &&
            value.toTensor().unsafeGetTensorImpl()->has_symbolic_sizes_strides())
            return true;
    return false;
}

/* The shape function on arguments some of whose tensors have symbolic
 * sizes: on them as they are when it works with symbolic sizes
 * (sym_sizes(), at::empty_symint); else, as a shape function that calls
 * sizes() throws on them, on meta tensors of the sizes and strides they
 * have in this call, which specialises those sizes (guard_int: a compiled
 * graph then serves these sizes, and other sizes compile again). */
c10::IValue symbolic_shape_function_result(const c10::OperatorHandle &op,
                                           c10::ArrayRef<c10::IValue> values)
{
    try {
        return shape_function_result(op, values);
    } catch (const std::exception &) {
        // sizes() of a symbolic tensor: specialise, below.
    }
    std::vector<c10::IValue> concrete(values.begin(), values.end());
    for (c10::IValue &value : concrete) {
        if (!value.isTensor() || !value.toTensor().defined())
            continue;
        const at::Tensor &tensor = value.toTensor();
        std::vector<int64_t> sizes;
        std::vector<int64_t> strides;
        for (const c10::SymInt &size : tensor.sym_sizes())
            sizes.push_back(size.guard_int(__FILE__, __LINE__));
        for (const c10::SymInt &stride : tensor.sym_strides())
            strides.push_back(stride.guard_int(__FILE__, __LINE__));
        value = at::empty_strided(sizes, strides, tensor.options().device(at::kMeta));
    }
    return shape_function_result(op, concrete);
}

/* ---- the kernels ------------------------------------------------------------ */

/* The output the shape function's result stands for: that tensor itself
 * when it is one the kernel may write (new, contiguous, of its own), else
 * a new one of its sizes and dtype. */
at::Tensor output_of(c10::IValue result, const OpEntry &entry)
{
    at::Tensor shape = shape_of(std::move(result), entry);
    c10::TensorImpl *impl = shape.unsafeGetTensorImpl();
    bool own = shape.device().is_cpu() && shape.layout() == at::kStrided &&
               shape.is_contiguous() && !shape.is_neg() && !shape.requires_grad() &&
               !shape.is_inference() && impl->has_storage() && shape.storage_offset() == 0 &&
               shape.use_count() == 1 && impl->storage().use_count() == 1 &&
               impl->storage().nbytes() == shape.nbytes();
    if (own)
        return shape;
    return at::empty(shape.sizes(), at::TensorOptions().dtype(shape.scalar_type()));
}

/* CPU: runs the op's compute function on the emulated cores. */
class RunKernel final : public c10::OperatorKernel {
public:
    explicit RunKernel(std::shared_ptr<OpEntry> entry) : entry_(std::move(entry)) {}

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet, torch::jit::Stack *stack)
    {
        const OpEntry &entry = *entry_;
        std::shared_ptr<const Binding> binding = binding_of(entry);
        size_t count = op.schema().arguments().size();
        auto values = torch::jit::last(*stack, count);
        struct rco_argument arguments[RCO_MAX_ARGUMENTS];
        at::Tensor used[RCO_MAX_ARGUMENTS + 1];
        TORCH_CHECK(count <= RCO_MAX_ARGUMENTS && count == binding->kinds.size(),
                    entry.qualified, " takes ", binding->kinds.size(), " arguments");
        for (size_t i = 0; i < count; i++) {
            char kind = binding->kinds[i];
            if (kind == 'T') {
                arguments[i].type = RCO_ARGUMENT_TENSOR;
                used[i] = usable_tensor(values[i].toTensor(), entry, i, &arguments[i].tensor);
            } else {
                number_argument(values[i], entry, i, &arguments[i]);
            }
        }
        at::Tensor output = output_of(shape_function_result(op, values), entry);
        struct rco_tensor out;
        out.dtype = rco_dtype_of(output.scalar_type());
        if (binding->library->fills_outputs())
            runner.fill_unwritten(out.dtype, output.data_ptr(), static_cast<size_t>(output.numel()));
        out.rank = static_cast<int>(output.dim());
        int shown = out.rank < RCO_MAX_RANK ? out.rank : RCO_MAX_RANK;
        for (int d = 0; d < shown; d++) {
            out.sizes[d] = output.size(d);
            out.strides[d] = output.stride(d);
        }
        out.data = output.data_ptr();
        used[count] = output;
        struct rco_error error;
        int status = binding->library->run(binding->index, entry.qualified.c_str(), arguments,
                                           static_cast<int>(count), &out, &error);
        if (status == RCO_ERROR_TIMEOUT || status == RCO_ERROR_INTERRUPTED)
            keep_for_ever(used, count + 1);
        hand_over_output();
        if (status != 0)
            throw_run_error(error);
        torch::autograd::impl::bump_version(output);
        torch::jit::drop(*stack, count);
        torch::jit::push(*stack, std::move(output));
    }

private:
    std::shared_ptr<OpEntry> entry_;
};

/* Meta: a new contiguous meta tensor of the sizes and dtype of the shape
 * function's result.  The arguments are checked as the CPU kernel checks
 * them, but for their device, so that a trace refuses what a call would. */
class MetaKernel final : public c10::OperatorKernel {
public:
    explicit MetaKernel(std::shared_ptr<OpEntry> entry) : entry_(std::move(entry)) {}

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet, torch::jit::Stack *stack)
    {
        size_t count = op.schema().arguments().size();
        auto values = torch::jit::last(*stack, count);
        for (size_t i = 0; i < count; i++) {
            if (values[i].isTensor())
                check_tensor(values[i].toTensor(), *entry_, i, false);
            else
                TORCH_CHECK_TYPE(!values[i].isComplexDouble(), describe(*entry_, i),
                                 " must be a real number, not complex");
        }
        at::Tensor shape = shape_of(has_symbolic_sizes(values)
                                        ? symbolic_shape_function_result(op, values)
                                        : shape_function_result(op, values),
                                    *entry_);
        at::Tensor output = at::empty_symint(
            shape.sym_sizes(), at::TensorOptions().dtype(shape.scalar_type()).device(at::kMeta));
        torch::jit::drop(*stack, count);
        torch::jit::push(*stack, std::move(output));
    }

private:
    std::shared_ptr<OpEntry> entry_;
};

/* Every other backend: refuses the tensor argument that brought the call
 * here (on another device, sparse, quantized...). */
class RefusalKernel final : public c10::OperatorKernel {
public:
    explicit RefusalKernel(std::shared_ptr<OpEntry> entry) : entry_(std::move(entry)) {}

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                    torch::jit::Stack *stack)
    {
        size_t count = op.schema().arguments().size();
        auto values = torch::jit::last(*stack, count);
        for (size_t i = 0; i < count; i++)
            if (values[i].isTensor())
                check_tensor(values[i].toTensor(), *entry_, i, true);
        TORCH_CHECK_VALUE(false, entry_->qualified, " was called for dispatch key ",
                          keys.highestPriorityTypeId(), "; the host emulator runs on dense CPU "
                          "tensors");
    }

private:
    std::shared_ptr<OpEntry> entry_;
};

/* BackendSelect, for an op without a tensor argument: the call goes to the
 * backend the caller asked for (Meta under FakeTensorMode), else to the
 * CPU kernel. */
class BackendSelectKernel final : public c10::OperatorKernel {
public:
    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                    torch::jit::Stack *stack)
    {
        c10::DispatchKeySet below = keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER,
                                                               c10::DispatchKey::BackendSelect);
        if (below.highestPriorityTypeId() == c10::DispatchKey::Undefined)
            below = below | c10::DispatchKeySet(c10::DispatchKey::CPU);
        op.redispatchBoxed(below, stack);
    }
};

/* ---- autograd ------------------------------------------------------------------ */

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define WHAT_GIVES_A_DERIVATIVE                                                               \
    "give it a derivative with torch.library.register_autograd, call it in the forward of "   \
    "a torch.autograd.Function whose backward computes the gradient, or call it under "       \
    "torch.no_grad() when no gradient is needed"
#else
#define WHAT_GIVES_A_DERIVATIVE                                                               \
    "call it in the forward of a torch.autograd.Function whose backward computes the "        \
    "gradient, or under torch.no_grad() when no gradient is needed"
#endif

/* Refuses a call that forward-mode AD would go through: a tensor argument
 * with a tangent (torch.autograd.forward_ad, jvp, jacfwd).  The tangent of
 * level 0 is the one PyTorch's own ops check; none is seen where forward
 * mode is off (the forward of a torch.autograd.Function). */
void refuse_forward_mode(const OpEntry &entry, c10::ArrayRef<c10::IValue> values)
{
    for (size_t i = 0; i < values.size(); i++) {
        TORCH_CHECK(!(values[i].isTensor() && values[i].toTensor().defined() &&
                      values[i].toTensor()._fw_grad(0).defined()),
                    entry.qualified, ": argument ", i + 1, " has a forward-mode tangent (a dual "
                    "tensor of torch.autograd.forward_ad, or an input of jvp or jacfwd), and ",
                    entry.qualified, " has no forward-mode derivative, so forward-mode AD "
                    "cannot go through it: call it in a torch.autograd.Function whose jvp "
                    "computes the tangent, or pass the primal alone "
                    "(torch.autograd.forward_ad.unpack_dual(x).primal) when no tangent is "
                    "needed");
    }
}

/* The backward of an op's output whose input required grad: there is
 * none, so a backward that reaches it raises (Error's apply throws msg). */
class NoDerivative final : public torch::autograd::Error {
public:
    NoDerivative(const std::string &op, std::string message, torch::autograd::edge_list &&edges)
        : Error(std::move(message), std::move(edges)), name_(op + " (no derivative)")
    {
    }

    std::string name() const override { return name_; }

private:
    std::string name_;
};

/* A new autograd node, owned as this PyTorch's graph owns them: through a
 * std::shared_ptr, or a c10::intrusive_ptr in later versions (the type of
 * Edge::function picks the overload). */
using NodePointer = decltype(torch::autograd::Edge::function);

template <typename T, typename... Arguments>
std::shared_ptr<torch::autograd::Node> new_node(std::shared_ptr<torch::autograd::Node> *,
                                                Arguments &&...arguments)
{
    return std::make_shared<T>(std::forward<Arguments>(arguments)...);
}

template <typename T, typename... Arguments>
c10::intrusive_ptr<torch::autograd::Node> new_node(c10::intrusive_ptr<torch::autograd::Node> *,
                                                   Arguments &&...arguments)
{
    return c10::make_intrusive<T>(std::forward<Arguments>(arguments)...);
}

/* Autograd: the op has no derivative, in either mode.  A tangent is
 * refused at the call (forward mode computes it there).  An input that
 * requires grad, with grad mode on, gives the output a NoDerivative
 * grad_fn, so that a backward through the op raises, while a call whose
 * output no backward reaches (torch.export's trace of a model whose
 * parameters require grad, inference without torch.no_grad()) runs. */
class AutogradKernel final : public c10::OperatorKernel {
public:
    explicit AutogradKernel(std::shared_ptr<OpEntry> entry) : entry_(std::move(entry)) {}

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                    torch::jit::Stack *stack)
    {
        size_t count = op.schema().arguments().size();
        auto values = torch::jit::last(*stack, count);
        refuse_forward_mode(*entry_, values);
        size_t requiring = count;
        torch::autograd::edge_list edges;
        if (c10::GradMode::is_enabled()) {
            for (size_t i = 0; i < count; i++) {
                if (!values[i].isTensor() || !values[i].toTensor().defined())
                    continue;
                const at::Tensor &tensor = values[i].toTensor();
                if (tensor.requires_grad() && requiring == count)
                    requiring = i;
                edges.push_back(torch::autograd::impl::gradient_edge(tensor));
            }
        }
        {
            at::AutoDispatchBelowADInplaceOrView guard;
            op.redispatchBoxed(keys & c10::after_autograd_keyset, stack);
        }
        if (requiring == count)
            return;
        NodePointer backward = new_node<NoDerivative>(
            static_cast<NodePointer *>(nullptr), entry_->qualified,
            entry_->qualified + ": argument " + std::to_string(requiring + 1) +
                " requires grad, and " + entry_->qualified +
                " has no derivative, so autograd cannot go through it: " WHAT_GIVES_A_DERIVATIVE,
            std::move(edges));
        torch::autograd::set_history(stack->back().toTensor(), backward);
    }

private:
    std::shared_ptr<OpEntry> entry_;
};

/* ADInplaceOrView: reached only when an Autograd kernel other than this
 * library's ran (torch.library.register_autograd's, which gives a backward
 * and no forward-mode derivative), as AutogradKernel skips it. */
class ForwardModeKernel final : public c10::OperatorKernel {
public:
    explicit ForwardModeKernel(std::shared_ptr<OpEntry> entry) : entry_(std::move(entry)) {}

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                    torch::jit::Stack *stack)
    {
        refuse_forward_mode(*entry_, torch::jit::last(*stack, op.schema().arguments().size()));
        at::AutoDispatchBelowADInplaceOrView guard;
        op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
    }

private:
    std::shared_ptr<OpEntry> entry_;
};

/* ---- registration ------------------------------------------------------------ */

std::mutex registration_lock;

std::vector<std::unique_ptr<torch::Library>> &registrations()
{
    static std::vector<std::unique_ptr<torch::Library>> *libraries =
        new std::vector<std::unique_ptr<torch::Library>>();
    return *libraries;
}

std::vector<std::shared_ptr<OpEntry>> &entries()
{
    static std::vector<std::shared_ptr<OpEntry>> *known = new std::vector<std::shared_ptr<OpEntry>>();
    return *known;
}

void copy_message(const std::string &text, char *message, size_t size)
{
    if (message && size > 0) {
        size_t length = text.size() < size - 1 ? text.size() : size - 1;
        memcpy(message, text.data(), length);
        message[length] = '\0';
    }
}

std::string schema_arguments(const c10::FunctionSchema &schema)
{
    std::string text = "(";
    for (size_t i = 0; i < schema.arguments().size(); i++) {
        if (i)
            text += ", ";
        text += schema.arguments()[i].type()->str() + " " + schema.arguments()[i].name();
    }
    return text + ")";
}

template <typename Kernel>
torch::CppFunction kernel_of(c10::DispatchKey key, Kernel *kernel)
{
    return torch::dispatch(key, torch::CppFunction::makeFromBoxedFunctor(
                                    std::unique_ptr<Kernel>(kernel)));
}

/* Gives op name of namespace ns the kernels of this library (see the top
 * of this file); throws what PyTorch refuses. */
std::unique_ptr<torch::Library> kernels_for(const std::string &ns, const std::string &name,
                                            const std::shared_ptr<OpEntry> &entry,
                                            const c10::FunctionSchema &schema)
{
    using c10::DispatchKey;
    std::unique_ptr<torch::Library> registration(
        new torch::Library(torch::Library::IMPL, ns, c10::nullopt, __FILE__, __LINE__));
    const char *op = name.c_str();
    registration->impl(op, kernel_of(DispatchKey::CPU, new RunKernel(entry)));
    registration->impl(op, kernel_of(DispatchKey::Meta, new MetaKernel(entry)));
    for (DispatchKey key : c10::getRuntimeDispatchKeySet(DispatchKey::CompositeExplicitAutograd))
        if (key != DispatchKey::CPU && key != DispatchKey::Meta && key != DispatchKey::Undefined)
            registration->impl(op, kernel_of(key, new RefusalKernel(entry)));
    bool tensors = false;
    for (const c10::Argument &argument : schema.arguments())
        tensors = tensors || argument.type()->kind() == c10::TypeKind::TensorType;
    if (!tensors)
        registration->impl(op, kernel_of(DispatchKey::BackendSelect, new BackendSelectKernel()));
    registration->impl(op, kernel_of(DispatchKey::Autograd, new AutogradKernel(entry)));
    registration->impl(op, kernel_of(DispatchKey::ADInplaceOrView, new ForwardModeKernel(entry)));
    return registration;
}

int register_op(const std::shared_ptr<HostLibrary> &library, const std::string &qualified,
                const std::string &function, std::string &problem)
{
    size_t separator = qualified.find("::");
    if (separator == std::string::npos) {
        problem = qualified + " is not a qualified op name (namespace::op)";
        return -1;
    }
    auto handle = c10::Dispatcher::singleton().findSchema({qualified, ""});
    if (!handle) {
        problem = "PyTorch has no op " + qualified + ": its shape library is not loaded";
        return -1;
    }
    if (handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) ||
        !handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd)) {
        problem = "the shape function of " + qualified + " is not the op's "
                  "CompositeExplicitAutograd kernel, as torchneuron/register.h makes it (a "
                  "CompositeImplicitAutograd kernel would replace the op in PyTorch's tracers): "
                  "its shape library was built with an older register.h; build the bundle "
                  "again with custom_op.load()";
        return -1;
    }
    int index = runner.op_index(library->handle(), function.c_str());
    if (index < 0) {
        problem = "the compute library has no function " + function + " for op " + qualified;
        return -1;
    }
    auto binding = std::make_shared<Binding>();
    binding->library = library;
    binding->index = index;
    binding->kinds = runner.op_kinds(library->handle(), index);
    const c10::FunctionSchema &schema = handle->schema();
    bool fits = schema.arguments().size() == binding->kinds.size() &&
                schema.returns().size() == 1 &&
                schema.returns()[0].type()->kind() == c10::TypeKind::TensorType;
    for (size_t i = 0; fits && i < schema.arguments().size(); i++)
        fits = kind_fits(binding->kinds[i], schema.arguments()[i].type());
    if (!fits) {
        problem = "op " + qualified + " takes " + schema_arguments(schema) +
                  ", but its compute function " + function + " takes " +
                  runner.op_signature(library->handle(), index);
        return -1;
    }
    std::lock_guard<std::mutex> guard(registration_lock);
    for (auto &entry : entries()) {
        if (entry->qualified == qualified) {
            std::shared_ptr<const Binding> old;
            pthread_mutex_lock(&bindings_lock);
            old = std::move(entry->binding);
            entry->binding = binding;
            pthread_mutex_unlock(&bindings_lock);
            return 0; // old (and maybe its library) goes here, outside the lock
        }
    }
    auto entry = std::make_shared<OpEntry>();
    entry->qualified = qualified;
    entry->binding = binding;
    try {
        registrations().push_back(kernels_for(qualified.substr(0, separator),
                                              qualified.substr(separator + 2), entry, schema));
    } catch (const std::exception &e) {
        std::string what = e.what();
        problem = "PyTorch refused the kernels of " + qualified + ": " +
                  what.substr(0, what.find('\n'));
        return -1;
    }
    entries().push_back(entry);
    return 0;
}

} // namespace

/* ---- the C functions build_custom_op calls (through ctypes) ---------------- */

/* Sets libruncustomop's functions (runner: eleven function pointers in the
 * order of struct Runner) and the Python hooks (NULL: none); called once,
 * with the GIL held when hooks are given.  Returns 0. */
BRIDGE_EXPORT int torch_bridge_init(const void *functions, PyObject *print, PyObject *error)
{
    static std::once_flag once;
    memcpy(&runner, functions, sizeof runner);
    if (print && error) {
        Py_INCREF(print);
        Py_INCREF(error);
        print_hook = print;
        error_hook = error;
    }
    std::call_once(once, [] { pthread_atfork(nullptr, nullptr, reset_locks_in_child); });
    return 0;
}

/* Opens the host build at path (BUILD_DIR/NAME) with the runner; returns
 * a library for torch_bridge_register, or NULL with the runner's message
 * in message (size bytes) and its status in *status.  Each new output is
 * filled with NaN (bytes 0xA5 for integers) before the kernel runs, so
 * that elements it does not write stand out, unless the output checks the
 * build opens with (BUILD_CUSTOM_OP_OUTPUT_CHECKS) make them an error. */
BRIDGE_EXPORT void *torch_bridge_open(const char *path, int cores, double timeout, int *status,
                                      char *message, size_t size)
{
    /* A value the runner refuses fails the open below, saying so. */
    int checks = RCO_OUTPUT_CHECKS_ERROR;
    bool fill_outputs = runner.output_checks_default(&checks, nullptr) == 0 &&
                        checks != RCO_OUTPUT_CHECKS_ERROR;
    struct rco_options options;
    memset(&options, 0, sizeof options);
    options.cores = cores;
    options.timeout = timeout;
    options.stop_on_interrupt = 1;
    options.print = keep_print;
    options.warn = keep_warning;
    auto library = std::make_shared<HostLibrary>(fill_outputs);
    struct rco_error error;
    *status = library->open(path, options, &error);
    if (*status != 0) {
        copy_message(error.message, message, size);
        return nullptr;
    }
    return new std::shared_ptr<HostLibrary>(std::move(library));
}

/* Has op qualified ("ns::op", defined by a loaded shape library) run the
 * compute function of library; returns 0, or -1 with the reason in
 * message. */
BRIDGE_EXPORT int torch_bridge_register(void *library, const char *qualified,
                                        const char *function, char *message, size_t size)
{
    std::string problem;
    int status = register_op(*static_cast<std::shared_ptr<HostLibrary> *>(library), qualified,
                             function, problem);
    if (status != 0)
        copy_message(problem, message, size);
    return status;
}

/* Drops the caller's hold on library: it is closed when no op runs it. */
BRIDGE_EXPORT void torch_bridge_release(void *library)
{
    delete static_cast<std::shared_ptr<HostLibrary> *>(library);
}
