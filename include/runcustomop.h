/* runcustomop.h - the C API of run-custom-op: run host-built custom ops.
 *
 * A build made by build-custom-op --target host is BUILD_DIR/NAME.so (one
 * core) or BUILD_DIR/NAME_cpu0.so .. NAME_cpu7.so (eight), beside the record
 * BUILD_DIR/NAME.ops of its ops' schemas.  rco_open loads it once; rco_run
 * runs one op on every core at once, on tensors in the caller's memory, and
 * returns when all cores have finished.  Each core library is loaded as its
 * own copy (a second rco_open of the same build gets copies of its own), so
 * each core has its own runtime state, as on the device; each core has a
 * thread of its own, started by rco_open and reused by every call.
 *
 * Errors are values.  The library never prints and never exits, and a
 * kernel cannot end the process: a violated device rule, a fault
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL), abort(), a C++ exception that escapes
 * the kernel, and exit(), _exit(), _Exit(), quick_exit(), fork() or vfork()
 * called by it become an error naming the core, the op and what happened.
 * (Not guarded: what runs while rco_open loads a library, such as a
 * kernel's static constructors, and a kernel that makes the exit system
 * call itself or sends the process a signal that ends it.)  The
 * messages are those run-custom-op prints after "run-custom-op: "; where
 * one names an option, it is run-custom-op's (--cores N is
 * rco_options.cores).
 *
 * Threads.
 *   - rco_run may be called from any thread.  Calls on one library run one
 *     at a time: a second caller waits until the first call returns.  Calls
 *     on different libraries run at the same time.
 *   - rco_open may be called from any thread, at any time.
 *   - The rco_op_* queries may be called at any time between rco_open and
 *     rco_close, from any thread.
 *   - rco_close must not overlap another call on the same library.
 *   - The callbacks (print, warn) are called by rco_run, on the thread that
 *     called it, before it returns, never two at a time for one library.  A
 *     callback must not call rco_run or rco_close on its own library.
 *   - A library belongs to the process that opened it.  In a child of
 *     fork(), which has none of its core threads, rco_run returns
 *     RCO_ERROR_UNUSABLE (open the build again there), and rco_close frees
 *     nothing that the parent's threads use.
 *
 * Signals.  While an rco_run call is in progress, the library's handlers
 * are the process's handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and
 * SIGABRT, and, while it stops cores at a time limit, of SIGURG.  A signal
 * that is not about a core of a call in progress (a fault in another
 * thread of the program, a kill(1)) goes on to the handler the process had
 * before, as if the library's had not been there.  When the last call in
 * progress returns, the process's own handlers are put back, whatever they
 * were.  Do not change these dispositions while a call runs: the change
 * would be undone.  Each core thread has an alternate signal stack of its
 * own; the caller's threads are left as they are.
 *
 * Per call, rco_run reads no file, loads nothing, and allocates nothing
 * that grows with the number of calls.  When a build has fewer cores than
 * the machine has CPUs (a single-core build, on most machines), a core's
 * thread keeps looking for the next call for 50 microseconds after each
 * call before it sleeps, and the caller for the op's end for 20, since a
 * thread woken from sleep takes longer than a short op: that time is spent
 * on a CPU.
 *
 * After a failed call.  A violation, an escaped exception and a forbidden
 * exit unwind the kernel cleanly.  A fault or abort() abandons the kernel
 * where it was: what it allocated on the heap is lost, what it wrote stays
 * written, and the runtime takes back its stacks and its TCM blocks at the
 * next call on that core.  The library stays usable: the next call works.
 * One caveat: a fault inside a C library function that held a lock (malloc
 * after a heap overrun, say) leaves that lock held, and a later call may
 * then hang; give a time limit where that matters.
 *
 * After a time limit.  rco_run returns RCO_ERROR_TIMEOUT, naming the cores
 * that were still running.  Each of them is sent SIGURG, which abandons its
 * kernel where it was, as a fault does (a kernel blocked in a system call
 * is interrupted too).  From then on the library runs no more ops: rco_run
 * returns RCO_ERROR_UNUSABLE, and the library must be closed (open the build
 * again to go on).  A core that has not stopped a second after SIGURG (it
 * blocked the signal) is lost: it runs on, its library stays loaded and the
 * memory it uses is never freed, and it may still read and write the
 * tensors of the call that timed out, so those must outlive the process or
 * the process must end.  The error says so when that happens.
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

/* A tensor in the caller's memory: sizes and strides in elements (strides
 * >= 0).  The kernel reads and writes data in place. */
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
	RCO_ERROR_TIMEOUT,   /* the time limit passed (see above): the library runs no more ops */
	RCO_ERROR_UNUSABLE,  /* a call timed out earlier, or the process forked since: close it */
	RCO_ERROR_SYSTEM,    /* the system refused: memory, threads, a file that cannot be read */
	RCO_ERROR_INTERRUPTED /* SIGINT (stop_on_interrupt) or rco_stop stopped the op: close it */
};

/* An error; the caller provides it, the library fills it in. */
struct rco_error {
	enum rco_status status;
	int core;                 /* the first core the error is about (0..7), or -1 */
	int signal;               /* the signal that ended that core's kernel, or 0 */
	int argument;             /* the argument (0-based) it is about, or -1 */
	char op[RCO_NAME_SIZE];   /* the op, or "" */
	/* One line per failed core (or one line), without a final newline. */
	char message[RCO_MESSAGE_SIZE];
};

/* Receives what core printed, length bytes (not NUL-terminated). */
typedef void (*rco_print_fn)(void *context, int core, const char *text, size_t length);
/* Receives a warning of the runtime, "core N: op NAME: ...", whole. */
typedef void (*rco_warn_fn)(void *context, int core, const char *text);

/* How to open a build.  Zero-initialised: the defaults. */
struct rco_options {
	int cores;           /* 1 or 8; 0: as the build is (8 when NAME_cpu0.so exists) */
	size_t core_stack;   /* bytes of each emulated core stack; 0: 12 KiB */
	double timeout;      /* seconds each call may take; 0: no limit */
	rco_print_fn print;  /* NULL: printf output is dropped */
	rco_warn_fn warn;    /* NULL: warnings are dropped */
	void *context;       /* passed to print and warn */
	int threads;         /* the most threads an op runs on, the caller's included: 1 to 8;
	                        0: as many as the machine has CPUs (at most 8) */
	int stop_on_interrupt; /* nonzero: SIGINT stops a call in progress (see above) */
};

typedef struct rco_library rco_library;

/* Opens the build at path (BUILD_DIR/NAME, without a suffix): reads its
 * ops record, loads each core library, checks that it was linked for its
 * core and registers the record's ops, and starts the core threads.
 * Returns 0 and sets *library, or the status with *error filled in (when
 * error is not NULL) and *library NULL. */
int rco_open(const char *path, const struct rco_options *options, rco_library **library,
             struct rco_error *error);
/* Stops the core threads and unloads the core libraries; NULL is allowed.
 * A core library whose kernel was abandoned and not cleaned up since stays
 * loaded (its state is not fit for its destructors).  After a time limit,
 * a lost core is left running (see above). */
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

/* The default time limit: the one rco_open was given. */
#define RCO_DEFAULT_TIMEOUT (-1.0)

/* Runs op (an index) with count arguments on every core at once, all cores
 * writing into output; returns when every core has finished, or when
 * timeout seconds have passed (0: no limit; RCO_DEFAULT_TIMEOUT: the
 * library's).  The arguments and the output are checked against the op's
 * schema first.  Returns 0, or the status with *error filled in (when error
 * is not NULL).  printf output and warnings reach the callbacks before it
 * returns, whether the op succeeded or not. */
int rco_run(rco_library *library, int op, const struct rco_argument *arguments, int count,
            const struct rco_tensor *output, double timeout, struct rco_error *error);

/* Stops the call in progress on library, if any, as a time limit does (see
 * above): rco_run returns RCO_ERROR_INTERRUPTED.  Async-signal-safe; may
 * be called from any thread, and from a signal handler. */
void rco_stop(rco_library *library);

/* The library's version, RCO_VERSION. */
const char *rco_version(void);

#ifdef __cplusplus
}
#endif
#endif
