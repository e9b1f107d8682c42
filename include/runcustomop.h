/* runcustomop.h - the C API of run-custom-op: run host-built custom ops.
 *
 * A build made by build-custom-op --target host is BUILD_DIR/NAME.so (one
 * core) or BUILD_DIR/NAME_cpu0.so .. NAME_cpu7.so (eight), beside the record
 * BUILD_DIR/NAME.ops of its ops' schemas.  rco_open loads it once; rco_run
 * runs one op on every core, on tensors in the caller's memory, and returns
 * when all cores have finished.  Each core library is loaded as its own
 * copy (a second rco_open of the same build gets copies of its own), so
 * each core has its own runtime state, as on the device; the read-only
 * pages the eight have in common (code, constants) are mapped once, from
 * core 0's library.
 *
 * Cores and threads.  The calling thread runs the cores of a call itself, one
 * after another; rco_open also starts worker threads, so that an op runs on
 * at most as many threads as the machine has CPUs (sysconf
 * _SC_NPROCESSORS_ONLN), the caller's included, and at most
 * rco_options.threads.  A single-core op runs on the caller alone.  The
 * caller lets the workers take cores only when the cores left would take
 * longer than waking a worker twice (200 microseconds, at the pace of the
 * caller's fastest core so far, or of the last call's while it has run fewer
 * than two): a short op runs on the caller with no hand-off.  Each core's
 * kernel runs on one thread at a time, but any thread may run any core, and
 * the cores run in any order, as on the device, where they share no memory
 * protocol and cannot wait for each other (a kernel that waits for another
 * core may wait for ever: give a time limit).  With no more threads than
 * CPUs, a worker looks for the next call for 50 microseconds after its last
 * core before it sleeps, and the caller for the workers' last cores for 50 to
 * 200 (twice a core's time): that time is spent on a CPU.  One more thread,
 * the monitor, runs while a library is open, with every signal blocked: it
 * stops calls at their time limit, on rco_stop and on SIGINT.
 *
 * Errors are values.  The library never prints and never exits, and a
 * kernel cannot end the process: a violated device rule, a fault (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL; a stack overflow too), abort(), a C++ exception
 * that escapes the kernel, and these calls in the kernel's code become an
 * error naming the core, the op and what happened:
 *   - exit(), _exit(), _Exit(), quick_exit(), fork(), vfork(): they would
 *     end or fork the process;
 *   - pthread_create(), pthread_exit(), pthread_cancel(), thrd_create(),
 *     thrd_exit(): they would start a thread that outlives the op, or end
 *     one of the program's (the caller's own, often);
 *   - sigaction() with a new action, signal(), sigset(), sigignore(),
 *     siginterrupt(), bsd_signal(), sysv_signal(): they would change how
 *     the whole program handles a signal;
 *   - sigprocmask(), pthread_sigmask(), sighold() and sigsuspend() that
 *     would block SIGURG, SIGINT or a fault signal, and sigwait(),
 *     sigwaitinfo() and sigtimedwait() that would take one: the library
 *     could not stop or report the kernel.  Blocking other signals is
 *     allowed (the mask goes back when the kernel returns), and so is
 *     reading a disposition or the mask.
 * What a kernel can still do to the process: it is code in the process.
 * Not guarded are what runs while rco_open loads a library (a kernel's
 * static constructors); the same effects reached without calling those
 * functions from the kernel's own code: a system call made directly
 * (syscall(2), inline assembly), or made inside the C library or another
 * library (threads of std::thread, std::async or OpenMP, processes of
 * posix_spawn(), system() or popen(), a signal mask set by setcontext(),
 * swapcontext(), pselect(), ppoll() or epoll_pwait()); signals it sends
 * (kill(), raise(), pthread_kill() of one that ends the process); and what
 * any code can do (write memory it does not own without faulting, close
 * descriptors, change the directory or the environment).  A kernel that
 * blocks SIGURG by a system call of its own cannot be stopped (see "After
 * a time limit").  The messages are those run-custom-op prints after
 * "run-custom-op: "; where one names an option, it is run-custom-op's
 * (--cores N is rco_options.cores).
 *
 * Threads of the program.
 *   - rco_run may be called from any thread (not from a signal handler that
 *     runs on the thread's alternate stack).  Calls on one library run one
 *     at a time: a second caller waits until the first call returns.  Calls
 *     on different libraries run at the same time.
 *   - rco_open may be called from any thread, at any time.
 *   - The rco_op_* queries may be called at any time between rco_open and
 *     rco_close, from any thread; rco_stop too, and from a signal handler.
 *   - rco_close must not overlap another call on the same library.
 *   - The callbacks (print, warn) are called by rco_run, on the thread that
 *     called it, before it returns, never two at a time for one library.  A
 *     callback must not call rco_run or rco_close on its own library.
 *   - In a child of fork(), which has none of the parent's threads, the
 *     first rco_run starts cores of the child's own, as after a stop (also
 *     when another thread of the parent was in a call at the fork); until
 *     then rco_close frees nothing that the parent's threads use (it gives
 *     back its hold on the signal handlers).
 *
 * Signals.  From the first rco_open to the last rco_close, the library's
 * handlers are the process's handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT and SIGURG (the signal that stops a core), and, while a library
 * opened with stop_on_interrupt is open, of SIGINT (unless the process
 * ignores SIGINT: it then stays ignored, and stops nothing).  A signal that
 * is not about a core of a call in progress (a fault in another thread of
 * the program, a kill(1), a SIGURG of the program's own) goes on to the
 * process's own disposition, as if the library's handler had not been
 * there: the process's handler is called, or the default action is taken,
 * or the signal is ignored; a system call it interrupts restarts as it
 * would have (SA_RESTART as the process's handler has it; always, for a
 * signal that had no handler).  A handler of the process's for a fault
 * signal or SIGABRT runs with its own disposition in place; one that ends
 * by putting back the disposition it found (the library's) and raising the
 * signal again, as Python's faulthandler does, is followed by the default
 * action.  The last rco_close puts back the process's own dispositions
 * wherever the library's handler is still installed (a library with a lost
 * core never gives its hold back: the core may still fault).
 * A handler the program installs while a library is open (Python's
 * faulthandler.enable(), say) replaces the library's until the next
 * rco_run: each call reads SIGSEGV's disposition (and SIGINT's, with
 * stop_on_interrupt), one system call each; when the program has replaced
 * it, the call installs the library's again over each of the signals above
 * whose handler was replaced, and remembers the program's new one as the
 * process's own, to pass signals on to and to put back at the last
 * rco_close.  A handler installed for another of these signals while
 * SIGSEGV's is left alone is noticed only with SIGSEGV's (or, for SIGURG,
 * before a call is stopped); until then it receives that signal when a
 * core raises it, and the op is not protected from it.
 * The library's handlers run on an alternate signal stack (a stack
 * overflow leaves no other): each worker has one, and the calling thread
 * is given one while rco_run runs cores on it; its own is put back before
 * rco_run returns.  While it runs cores the calling thread's signal mask
 * leaves the signals above unblocked (SIGINT too, with stop_on_interrupt);
 * its own mask is put back after.  A stop signal meant for a kernel that
 * ended at that moment may reach its thread just after, and goes on to the
 * process's SIGURG disposition (ignored by default).
 * A handler of the program's own (SIGALRM, say) that a signal calls while
 * a core runs on that thread runs on the core's stack (the device's 12 KiB
 * by default) unless it was installed with SA_ONSTACK: one that needs more
 * overflows it, and the call reports a stack overflow in the core stack.
 *
 * Per call, rco_run reads no file, loads nothing, allocates nothing that
 * grows with the number of calls (but for the profiles that an open
 * collection keeps, see rco_profile_collect_begin), and makes four system calls of its own
 * on the calling thread: it reads SIGSEGV's disposition, gives the thread
 * its alternate signal stack and puts its own back, and unblocks the
 * signals above (one more, SIGINT's disposition, with stop_on_interrupt),
 * and one per sleeping worker it wakes for an op long enough to share; the
 * runtime's switch to a core's stack and back adds two per core.  A
 * time limit costs nothing more while the monitor is awake or sleeps until
 * an earlier deadline (else one system call wakes it).
 *
 * After a failed call.  A violation, an escaped exception and a forbidden
 * call unwind the kernel cleanly.  A fault or abort() abandons the kernel
 * where it was: what it allocated on the heap is lost, what it wrote stays
 * written, and the runtime takes back its stacks and its TCM blocks at the
 * next call on that core, or when the library is closed.  The library stays
 * usable: the next call works.  One caveat: a fault inside a C library
 * function that held a lock (malloc after a heap overrun, say) leaves that
 * lock held, and a later call, or rco_close, may then hang; give a time
 * limit where that matters.
 *
 * Builds made with build-custom-op --sanitize.  rco_open refuses a build
 * with AddressSanitizer when the process was not started with ASan's
 * runtime first and the ASAN_OPTIONS it needs; the message is the exact
 * LD_PRELOAD=... ASAN_OPTIONS=... line to start it with.  An ASan report
 * lets the kernel run to its end (the access it reports was made), then
 * fails the call on that core with the report's first lines (stderr gets
 * each call's first report; the others go to a file the error names); a
 * UBSan check ends the op at once, as a violation.  Either way the library
 * stays usable: the next call works, and reports again.  Such a build's
 * core libraries stay loaded after rco_close, until the process ends (ASan
 * keeps pointers to their globals).  See run-custom-op(1), DEBUGGING A
 * KERNEL.
 *
 * A time limit counts the time the process ran since the call's start: time
 * it was stopped (SIGSTOP, Ctrl-Z) or the machine suspended is not counted.
 * The library measures it with CLOCK_MONOTONIC, looking every 100 ms while a
 * call with a limit is in progress; a look that comes more than 200 ms after
 * the one before means the process did not run, and all but 100 ms of that
 * gap is added to the limit.
 *
 * After a time limit.  rco_run returns RCO_ERROR_TIMEOUT, with a line for
 * each core that had not finished: still running, or not started (the
 * caller runs cores one after another: the cores after one that does not
 * return may never start).  Each running core is sent SIGURG, which abandons
 * its kernel where it was, as a fault does (a kernel blocked in a system
 * call is interrupted too).  The next rco_run starts new cores (see After
 * a stop below).  A core on a worker that has not stopped half
 * a second after SIGURG (it blocked the signal) is lost: it runs on, its
 * library stays loaded and the memory it and its thread use is never freed
 * (not by exit() either, which runs the static destructors of every
 * library still loaded: the runtime's state is kept, but the C++ static
 * objects of the kernel's own code are destroyed then, under the core),
 * and it may still read and write the tensors of the call that timed out,
 * so those must outlive the process or the process must end.  The error
 * says so when that happens.  A kernel that blocks SIGURG on the calling
 * thread cannot be left behind: the monitor sends it SIGURG again every
 * 100 ms, and rco_run returns when the kernel does, if ever.
 *
 * After a stop (a time limit, rco_stop, SIGINT) the next rco_run starts
 * new cores: it leaves the stopped ones (joins their threads and unloads
 * their libraries, or leaves a lost core running) and loads the build's
 * core libraries again, with the options given to rco_open; the kernels'
 * static state starts afresh.  When they cannot be loaded (the build was
 * removed or changed since), that call returns RCO_ERROR_UNUSABLE with the
 * reason, and the next one tries again.
 *
 * Interruption.  rco_stop(library) stops the call in progress on library
 * as a time limit does; rco_run then returns RCO_ERROR_INTERRUPTED, and the
 * next call starts new cores, as after a time limit.  With stop_on_interrupt, a
 * SIGINT (Ctrl-C) that comes while a call of such a library is in progress
 * does the same to every such call in progress: the library's handler
 * keeps the signal, the monitor stops the calls (within milliseconds, or
 * the half second given to a core that blocks SIGURG), each rco_run returns
 * RCO_ERROR_INTERRUPTED naming the cores stopped and not started, and the
 * next call starts new cores.  Before the first of these calls
 * returns, the kept SIGINT is delivered to the process's own disposition:
 * its handler runs (Python's then raises KeyboardInterrupt at its next
 * check), or the default action ends the process by SIGINT, or it is
 * ignored.  A call that finished before the monitor reached it returns as
 * the op did, and delivers the SIGINT the same way.  A SIGINT between
 * calls, and a second one while the first is kept (a second Ctrl-C, while
 * a kernel that cannot be stopped runs on), go to the process's
 * disposition at once.
 *
 * Output of printf.  As on the device, what a kernel prints is kept in a
 * buffer of its core during the op and handed over when the op has ended
 * (also when it failed): print is called once for each core that printed,
 * core 0 first, with all of it.  The environment variable
 * NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES, read by rco_open, sizes each
 * core's buffer as it sizes the device's: a power of two up to 131072; when
 * a core prints more, its oldest output is lost, and the text handed over
 * starts with one line saying how many bytes were lost.  0 means nothing is
 * printed.  Unset (which on the device means nothing is printed), the
 * output is kept whole, up to 16 MiB per core and call (beyond that the
 * oldest is lost, as above).  Any other value makes rco_open fail. */
#ifndef RUNCUSTOMOP_H
#define RUNCUSTOMOP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RCO_VERSION "0.1.0"
/* A device tensor has at most 8 dimensions; an op at most 10 arguments. */
#define RCO_MAX_RANK 8
#define RCO_MAX_ARGUMENTS 10
#define RCO_NAME_SIZE 64
/* The longest name messages give an op (rco_run_named), with its kernel's. */
#define RCO_LABEL_SIZE 512
/* Room for one line per failed core. */
#define RCO_MESSAGE_SIZE 12288
/* The environment variable that sizes the printf buffers. */
#define RCO_PRINT_BUFFER_VARIABLE "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES"
/* Its largest value, and the limit per core and call when it is unset. */
#define RCO_PRINT_BUFFER_MAX 131072
#define RCO_PRINT_UNSET_LIMIT (16L * 1024 * 1024)

/* The eight device dtypes, numbered as neuron/host_abi.h numbers them. */
enum rco_dtype {
	RCO_UINT8 = 0,
	RCO_INT8 = 1,
	RCO_INT16 = 2,
	RCO_INT32 = 3,
	RCO_INT64 = 4,
	RCO_FLOAT16 = 5,
	RCO_FLOAT32 = 6,
	RCO_BFLOAT16 = 15
};
#define RCO_DTYPE_COUNT 8

/* One device dtype, as the library's table describes it. */
struct rco_dtype_info {
	const char *name; /* as PyTorch and NumPy spell it: "float32", "bfloat16", ... */
	int code;         /* enum rco_dtype */
	int size;         /* bytes per element */
};

/* A tensor in the caller's memory: sizes and strides in elements.  The
 * kernel reads and writes data in place, its elements one after another,
 * so only a contiguous tensor runs: each stride is the product of the sizes
 * after it (a dimension of size 1 may have any stride).  Any other layout
 * is refused (RCO_ERROR_ARGUMENT, "... is not contiguous ...; pass a
 * contiguous tensor").  The output may be an input's memory itself, but an
 * output that shares only part of an input's memory is refused
 * (RCO_ERROR_ARGUMENT, "... share some of their memory ..."): the cores
 * would read elements they have already written. */
struct rco_tensor {
	int dtype;                        /* enum rco_dtype */
	int rank;                         /* 1 to RCO_MAX_RANK (an output may have 0) */
	int64_t sizes[RCO_MAX_RANK];
	int64_t strides[RCO_MAX_RANK];
	void *data;                       /* may be NULL only when an element count is 0 */
};

/* What an argument holds. */
enum rco_argument_type {
	RCO_ARGUMENT_TENSOR,        /* tensor */
	RCO_ARGUMENT_INTEGER,       /* integer */
	RCO_ARGUMENT_REAL,          /* real */
	RCO_ARGUMENT_LARGE_INTEGER  /* an integer beyond the int64 range, in real (rounded) */
};

/* One argument of an op.  A number is converted by the kind the op's schema
 * gives the argument, as run-custom-op --scalar converts it: Scalar to int64
 * (an integer in range) or float32 (a real in range); int to int32 and long
 * long to int64 (an integer in range; a real is refused); float to float32
 * (any number in range). */
struct rco_argument {
	enum rco_argument_type type;
	struct rco_tensor tensor;
	long long integer;
	double real;
	/* How the caller wrote the number, for messages ("--scalar 2.5"); NULL:
	 * the number itself. */
	const char *text;
};

/* What went wrong, coarsely; the message says the rest. */
enum rco_status {
	RCO_OK = 0,
	RCO_ERROR_USAGE,     /* a bad call: NULL where a value is needed, an op index out of range */
	RCO_ERROR_ARGUMENT,  /* the arguments or the output do not fit the op's schema */
	RCO_ERROR_BUILD,     /* the build cannot be used: missing, stale, not a host build, damaged */
	RCO_ERROR_OP,        /* the op failed on at least one core */
	RCO_ERROR_TIMEOUT,   /* the time limit passed (see above): the next call starts new cores */
	RCO_ERROR_UNUSABLE,  /* stopped earlier, or forked since, and new cores could not start */
	RCO_ERROR_SYSTEM,    /* the system refused: memory, threads, a file that cannot be read */
	RCO_ERROR_INTERRUPTED /* SIGINT (stop_on_interrupt) or rco_stop stopped the op (see above) */
};

/* An error; the caller provides it, the library fills it in. */
struct rco_error {
	enum rco_status status;
	int core;                 /* the first core the error is about (0..7), or -1 */
	int signal;               /* the signal that ended that core's kernel, or 0 */
	int argument;             /* the argument (0-based) it is about, or -1 */
	char op[RCO_NAME_SIZE];   /* the op (its compute function's name), or "" */
	/* One line per failure, without a final newline: cores that failed
	 * alike share one line, "cores 0-7: op NAME: ..." (else "core N: ..."). */
	char message[RCO_MESSAGE_SIZE];
};

/* Receives what core printed, length bytes (not NUL-terminated). */
typedef void (*rco_print_fn)(void *context, int core, const char *text, size_t length);
/* Receives a warning of the runtime, "core N: op NAME: ...", whole, or of
 * the output checks, "op NAME: output coverage: ..." (core -1).  A warning
 * that several cores gave in a call comes once, naming them all ("cores
 * 0-7: op NAME: ..."; core is the first of them). */
typedef void (*rco_warn_fn)(void *context, int core, const char *text);

/* What the output checks do with what they find.  After an op has run on
 * every core, the checks read the core ledger of each core (the output
 * elements it wrote and read, recorded by the runtime) and find:
 *   - elements of the output that no core wrote;
 *   - elements that two or more cores wrote;
 *   - elements that one core read while another core writes them.
 * Each finding is one line naming the rule, the elements and the cores:
 *   "op relu: output coverage: elements [4128, 4773) of the output (rows 32-36) were written by no core ..."
 * (see OUTPUT CHECKS in run-custom-op(1)). */
enum rco_output_checks {
	RCO_OUTPUT_CHECKS_DEFAULT = 0, /* the environment variable below, else ERROR */
	RCO_OUTPUT_CHECKS_ERROR,       /* a finding fails the call: RCO_ERROR_OP, one line each */
	RCO_OUTPUT_CHECKS_WARN,        /* each finding is a warning (core -1); the call succeeds */
	RCO_OUTPUT_CHECKS_OFF          /* nothing is recorded or checked */
};
/* Read by rco_open when rco_options.output_checks is 0: "error", "warn" or
 * "off"; any other value makes rco_open fail (RCO_ERROR_USAGE).  It lets
 * programs that open builds for the user (the Python binding, torch.ops)
 * be switched without a change to them. */
#define RCO_OUTPUT_CHECKS_VARIABLE "BUILD_CUSTOM_OP_OUTPUT_CHECKS"
/* The mode rco_open takes from RCO_OUTPUT_CHECKS_VARIABLE when
 * rco_options.output_checks is 0, read now: sets *mode (enum
 * rco_output_checks, RCO_OUTPUT_CHECKS_ERROR when it is unset) and returns
 * 0, or returns RCO_ERROR_USAGE with the message rco_open would give (when
 * error is not NULL) for a value that is none of the modes.  Programs that
 * act on the mode themselves (the Python binding's fill of new outputs,
 * its sweep's notes) ask here instead of reading the variable. */
int rco_output_checks_default(int *mode, struct rco_error *error);

/* How to open a build.  Zero-initialised: the defaults. */
struct rco_options {
	int cores;           /* 1 or 8; 0: as the build is (8 when NAME_cpu0.so exists) */
	size_t core_stack;   /* bytes of each emulated core stack; 0: 12 KiB */
	double timeout;      /* seconds each call may take; 0: no limit */
	rco_print_fn print;  /* NULL: printf output is dropped */
	rco_warn_fn warn;    /* NULL: warnings are dropped */
	void *context;       /* passed to print and warn */
	int output_checks;   /* enum rco_output_checks */
	int threads;         /* the most threads an op runs on, the caller's included (see
	                        above): 1 to 8; 0: as many as the machine has CPUs, at most 8 */
	int stop_on_interrupt; /* nonzero: SIGINT stops a call in progress (see Interruption) */
};

typedef struct rco_library rco_library;

/* Opens the build at path (BUILD_DIR/NAME, without a suffix): reads its
 * ops record, loads each core library, checks that it was linked for its
 * core and registers the record's ops, starts the workers (and the monitor,
 * for the first library open) and installs the signal handlers.
 * Returns 0 and sets *library, or the status with *error filled in (when
 * error is not NULL) and *library NULL. */
int rco_open(const char *path, const struct rco_options *options, rco_library **library,
             struct rco_error *error);
/* Ends the workers and unloads the core libraries; NULL is allowed.  A
 * core library whose kernel was abandoned has the runtime take back what it
 * left first, and is unloaded too (the kernel's C++ static destructors run
 * then).  After a time limit, a lost core is left running, in its library
 * (see above).  The last rco_close puts back the signal handlers. */
void rco_close(rco_library *library);

/* The number of cores: 1 or 8. */
int rco_core_count(const rco_library *library);
/* The number of ops, in the order of the record. */
int rco_op_count(const rco_library *library);
/* The index of the op named name, or -1. */
int rco_op_index(const rco_library *library, const char *name);
/* Op index's name, argument kinds (one letter per argument: T Tensor,
 * S Scalar, i int, f float, l long long) and argument list as the schema
 * writes it ("(Tensor x, float b)"); NULL for an index out of range.  Valid
 * until rco_close. */
const char *rco_op_name(const rco_library *library, int index);
const char *rco_op_kinds(const rco_library *library, int index);
const char *rco_op_signature(const rco_library *library, int index);
/* The printf buffer of each core, from NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES:
 * its size, 0 (nothing is printed), or -1 (unset: kept whole). */
long rco_print_buffer_size(const rco_library *library);

/* Checks that count arguments fit op (without running it); returns 0 or
 * RCO_ERROR_ARGUMENT with the message rco_run would give. */
int rco_check_argument_count(const rco_library *library, int op, int count,
                             struct rco_error *error);

/* Names argument (0-based) of op as the call's messages name it: "relu
 * argument 1 (Tensor x)", the argument as the op's schema writes it; -1:
 * "relu's output".  The op is called name, as rco_run_named names it (NULL:
 * its name in the build).  The one description of an argument that
 * run-custom-op, the Python binding and the PyTorch bridge give.  Writes
 * text (size bytes, NUL-terminated when size > 0) and returns the length of
 * the whole text, as snprintf does; 0 (and "") for an op out of range or an
 * argument below -1. */
size_t rco_describe_argument(const rco_library *library, int op, const char *name, int argument,
                             char *text, size_t size);
/* A tensor as a caller finds it (a torch tensor, say), before it becomes
 * a struct rco_tensor: what rco_accept_tensor decides on.  The names are
 * the caller's own, for the message. */
struct rco_tensor_description {
	int on_host;            /* nonzero: in host memory (a CPU tensor) */
	const char *device;     /* else where it is, as the caller names it ("cuda:0") */
	int strided;            /* nonzero: dense, its layout given by sizes and strides */
	const char *layout;     /* else its layout, as the caller names it ("torch.sparse_coo") */
	int dtype;              /* enum rco_dtype, or -1 for a dtype the device does not have */
	const char *dtype_name; /* the dtype, as the caller names it ("float64"), for -1 */
	int rank;
	const int64_t *sizes;   /* rank sizes, in elements; NULL: not known (rank 0) */
	const int64_t *strides; /* rank strides, in elements; NULL: contiguous */
	int computed;           /* nonzero: its values are computed on reading (a negated
	                           view, a tensor of zeros without memory) */
};
/* Accepts or refuses tensor as argument (0-based; -1: the output) of op,
 * called name as rco_run_named calls it (NULL: its name in the build).  A
 * tensor is refused (RCO_ERROR_ARGUMENT, the message naming the argument as
 * rco_describe_argument does and saying what to do: pass it with .cpu(),
 * .to_dense(), convert its dtype) when it is not in host memory, not
 * strided, of a dtype the device does not have, or of more than
 * RCO_MAX_RANK dimensions.  An accepted tensor is used in place, or, when
 * *copy is set, through a contiguous copy the caller makes (not contiguous,
 * or computed).  Returns 0, or the status with *error filled in (when error
 * is not NULL).  Formats nothing for a tensor it accepts.  The one decision
 * of run-custom-op's inputs, the Python binding's and the PyTorch bridge's
 * tensors. */
int rco_accept_tensor(const rco_library *library, int op, const char *name, int argument,
                      const struct rco_tensor_description *tensor, int *copy,
                      struct rco_error *error);
/* Checks the arguments and the output of a call as rco_run_named checks
 * them (their count, each argument's kind, a number's range, each tensor's
 * dtype, rank and layout, and an output that shares only part of an
 * input's memory: the overlap check), without running the op: for a caller
 * that must refuse a call before it changes anything.  Returns 0, or the
 * status with *error filled in (when error is not NULL) as rco_run_named
 * would fill it. */
int rco_check_arguments(const rco_library *library, int op, const char *name,
                        const struct rco_argument *arguments, int count,
                        const struct rco_tensor *output, struct rco_error *error);

/* The default time limit: the one rco_open was given. */
#define RCO_DEFAULT_TIMEOUT (-1.0)

/* Runs op (an index) with count arguments on every core (see Cores and
 * threads), all cores writing into output; returns when every core has
 * finished, or has been stopped after timeout seconds (0: no limit;
 * RCO_DEFAULT_TIMEOUT: the library's), by rco_stop or by SIGINT.  The
 * arguments and the output are checked against the op's schema first.
 * Returns 0, or the status with *error filled in (when error is not NULL).
 * printf output and warnings reach the callbacks before it returns, whether
 * the op succeeded or not. */
int rco_run(rco_library *library, int op, const struct rco_argument *arguments, int count,
            const struct rco_tensor *output, double timeout, struct rco_error *error);
/* rco_run, with the op named name in the call's messages and warnings
 * (NULL: by its name in the build, as rco_run names it): a program whose
 * users call the op by another name (torch.ops' "my_ops::softmax") passes
 * that one.  When name's last part (after "::") is not the op's name in the
 * build, that name, the kernel function's, is given beside it: "op
 * my_ops::softmax (kernel softmax_kernel): ...".  error->op stays the
 * op's name in the build. */
int rco_run_named(rco_library *library, int op, const char *name,
                  const struct rco_argument *arguments, int count,
                  const struct rco_tensor *output, double timeout, struct rco_error *error);

/* The profile of a call: what each core did, counted from its core
 * ledger, and what that would cost on the device by the cost model of
 * run-custom-op(1) (THE PROFILE, THE COST MODEL).  The times are an
 * estimate from documented figures, not a measurement. */
#define RCO_PROFILE_KINDS 5
/* The kinds of estimated device time, as a profile splits it; the JSON's
 * names are rco_profile_kind_name's. */
enum rco_profile_kind {
	RCO_PROFILE_HBM_ELEMENTS, /* "hbm_element": element accessors, streams without a TCM buffer */
	RCO_PROFILE_STREAM,       /* "stream": streams with a TCM buffer */
	RCO_PROFILE_TCM_COPIES,   /* "tcm_copy": tensor_to_tcm and tcm_to_tensor */
	RCO_PROFILE_COMPUTE,      /* "compute": element-wise ops and fills */
	RCO_PROFILE_RESULT_COPY   /* "result_copy": customop_return_tensor's copy of a tensor the
	                             kernel made into the output */
};
#define RCO_PROFILE_CORES 8
/* What a profile's hints suggest; the JSON's names are rco_hint_kind_name's
 * (see run-custom-op(1), THE PROFILE). */
enum rco_hint_kind {
	RCO_HINT_RESULT_COPY,     /* "result_copy": write into get_dst_tensor() */
	RCO_HINT_ELEMENT_ACCESS,  /* "element_access": TCM copies instead of element accessors */
	RCO_HINT_IMBALANCE,       /* "imbalance": the busiest core does more than its share */
	RCO_HINT_STREAM,          /* "stream": streams past the first four active ones */
	RCO_HINT_MULTICORE,       /* "multicore": a single-core op split over the 8 cores */
	RCO_HINT_KINDS
};
#define RCO_PROFILE_HINTS RCO_HINT_KINDS
#define RCO_HINT_TEXT_SIZE 512

struct rco_core_profile {
	int core;                         /* 0..7 */
	uint64_t element_reads;           /* uses of read-only element accessors */
	uint64_t element_writes;          /* uses of writable ones (each may write) */
	uint64_t stream_reads;            /* elements read through read stream accessors */
	uint64_t stream_writes;           /* elements written through write stream accessors */
	uint64_t buffered_stream_bytes;   /* the bytes of those through a TCM buffer */
	uint64_t unbuffered_stream_elements; /* those through streams without one */
	uint64_t tensor_to_tcm_calls;
	uint64_t tensor_to_tcm_bytes;
	uint64_t tcm_to_tensor_calls;
	uint64_t tcm_to_tensor_bytes;
	uint64_t tcm_peak_bytes;          /* of the 16 KiB pool, in 64-byte blocks */
	uint64_t elementwise_calls;       /* element-wise ops, fill_ and the filling factories */
	uint64_t elementwise_elements;
	uint64_t elementwise_bytes;       /* read and written by them */
	uint64_t result_copy_bytes;       /* read and written by customop_return_tensor */
	int64_t output_elements_written;  /* -1: not recorded (output checks off) */
	double host_us;                   /* the core's wall time on the host */
	double estimated_us[RCO_PROFILE_KINDS]; /* by kind, each to the nanosecond */
	double estimated_device_us;       /* their sum */
};

/* What to change, and what the cost model says it would save. */
struct rco_profile_hint {
	int kind;                         /* enum rco_hint_kind */
	double saves_us;                  /* off the op's estimate, as the op is now */
	char text[RCO_HINT_TEXT_SIZE];
};

struct rco_profile {
	char op[RCO_NAME_SIZE];
	int core_count;                   /* 1 or 8 */
	struct rco_core_profile cores[RCO_PROFILE_CORES];
	double fixed_us;                  /* the op's own cost, beyond its slowest core */
	double estimated_device_us;       /* the slowest core's estimate plus fixed_us */
	double imbalance;                 /* the busiest core's estimate / the mean over the cores */
	int hint_count;
	struct rco_profile_hint hints[RCO_PROFILE_HINTS]; /* by saves_us, the largest first */
};

/* The names of enum rco_profile_kind and enum rco_hint_kind, as the JSON
 * writes them ("hbm_element", "result_copy", ...); NULL out of range. */
const char *rco_profile_kind_name(int kind);
const char *rco_hint_kind_name(int kind);

/* The profile of library's last call that ran on every core to its end
 * (also when the output checks then failed it).  Returns 0, or
 * RCO_ERROR_USAGE when there is none (no call yet, or the last one failed
 * on a core). */
int rco_last_profile(rco_library *library, struct rco_profile *profile);

/* A profile as text, written into text (size bytes, NUL-terminated when
 * size > 0); each returns the length of the whole text, as snprintf does,
 * so a call with size 0 measures it.  json: {"op": ..., "cores": [...],
 * "estimated_device_us": F, "imbalance": F, "hints": [...]} as
 * run-custom-op --profile writes it; table: the lines run-custom-op
 * --profile shows (the estimate by kind and the hints included); svg: a
 * standalone SVG of per-core bars of estimated time by kind. */
size_t rco_profile_json(const struct rco_profile *profile, char *text, size_t size);
size_t rco_profile_table(const struct rco_profile *profile, char *text, size_t size);
size_t rco_profile_svg(const struct rco_profile *profile, char *text, size_t size);

/* Collecting the profiles of every call in the process.  While at least one
 * collection is open, each rco_run of any library that runs on every core
 * to its end appends its profile to one list (this grows with the calls:
 * about 4.3 KiB each).  rco_profile_collect_begin opens a collection and
 * sets *first to the index the next profile will have; the profiles it
 * collects are those from *first to rco_profile_collected(), read with
 * rco_profile_collected_get; rco_profile_collect_end closes it, and the
 * last to close frees the list.  Any thread may call these.  Returns 0, or
 * RCO_ERROR_USAGE (get: index out of range; end: none open). */
int rco_profile_collect_begin(size_t *first);
size_t rco_profile_collected(void);
int rco_profile_collected_get(size_t index, struct rco_profile *profile);
int rco_profile_collect_end(void);

/* One constant of the cost model, as run-custom-op(1) lists it. */
struct rco_cost_constant {
	const char *name;
	double value;
	const char *unit;
	const char *source;       /* where it comes from, or the assumption */
};
/* The cost model's constants; *count is set to their number. */
const struct rco_cost_constant *rco_cost_model(size_t *count);

/* Stops the call in progress on library, if any, as a time limit does (see
 * Interruption): that rco_run returns RCO_ERROR_INTERRUPTED.  With no call
 * in progress it does nothing; a call that begins while it runs may be
 * stopped or not.  Async-signal-safe: it may be called from any thread,
 * and from a signal handler. */
void rco_stop(rco_library *library);

/* The library's version, RCO_VERSION. */
const char *rco_version(void);
/* The index-th device dtype, for index 0 to RCO_DTYPE_COUNT - 1 in the
 * order messages list them (float32, bfloat16, float16, int32, int8,
 * int64, int16, uint8); NULL for any other index.  The one table of the
 * dtypes that the runner, its Python binding and the PyTorch bridge read. */
const struct rco_dtype_info *rco_device_dtype(int index);
/* Fills count elements of dtype (enum rco_dtype) at data so that the
 * elements no core writes stand out: a quiet NaN in the floating dtypes
 * (0x7fc00000, float16 0x7e00, bfloat16 0x7fc0), bytes 0xA5 in the integer
 * ones.  run-custom-op, the Python binding and the PyTorch bridge fill each
 * output they make with it before the kernel runs.  Returns 0, or
 * RCO_ERROR_USAGE for a dtype the device does not have (nothing written). */
int rco_fill_unwritten(int dtype, void *data, size_t count);

#ifdef __cplusplus
}
#endif
#endif
