#!/usr/bin/env python3
"""bench.py - the benchmarks of build-custom-op (make bench; see bench/README.md).

Every case reports a ratio between two timings taken in this one run on this
one machine, so the numbers compare like with like:

  1. parallel build: a multicore build of 8 sources with fake tools of fixed
     cost, at several -j, against the same commands run one after another
     (as the original front-end runs them) and against the best schedule
     any executor could reach with that many jobs;
  2. no-op rebuild: its time, and that it spawns no process;
  3. real compiles: the host target building the examples, against ninja
     running the very same commands at the same -j;
  4. header change: the rebuild after touching one header, against a full one;
  5. codegen at scale: --emit-wrapper for 1,000 to 32,767 ops, per op, and
     against the original's generator (bench/original_codegen.py);
  6. word splitting: compile()'s cflags split into words, 1 MB against
     100 KB, per byte;
  7-9. the runner: per-call overhead through Python, throughput, and
     run-custom-op's fixed cost (bench/runner_cases.py);
  10-12. the core ledger: what the output checks and the TCM checks cost,
     and the profile of the official sample's three kernels
     (bench/ledger_cases.py).
  13. the sanitizers: a sanitized build's run time against a plain one's
     (bench/sanitize_cases.py).
  14. the runner library's own cost, in C (bench/runner_overhead.c,
     bench/runner_cases.py).

Usage: python3 bench/bench.py [--quick] [--record]
  --quick   fewer repetitions (a smoke run)
  --record  also replace the results section of bench/README.md
"""
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time

import ledger_cases  # cases 10-12: the output checks, the TCM checks, the profile
import runner_cases  # cases 7-9: the runner library, its Python binding and run-custom-op
import sanitize_cases  # case 13: what each sanitizer costs

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(TOP, "build-custom-op")
WORK = os.path.join(TOP, "obj", "bench")
FAKE_TOOLS = os.path.join(TOP, "bench", "fake")
README = os.path.join(TOP, "bench", "README.md")

COMPILE_SECONDS, LINK_SECONDS, PACK_SECONDS = 0.3, 0.2, 0.1
SOURCE_COUNT = 8
SCHEMA = "my_ops::relu(Tensor x) -> Tensor"
QUICK = "--quick" in sys.argv


def repetitions(full, quick=1):
    return quick if QUICK else full


def now():
    return time.perf_counter()


def timed(argv, env=None, cwd=None, check=True, **kwargs):
    """Runs argv (no shell) and returns its wall time in seconds."""
    start = now()
    process = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, **kwargs)
    elapsed = now() - start
    if check and process.returncode != 0:
        sys.exit("bench: %s failed (%d):\n%s" % (shlex.join(argv), process.returncode,
                                               process.stderr.decode(errors="replace")))
    return elapsed


def dry_run(argv, env, cwd):
    """The commands of a build, from build-custom-op -n, as argv lists."""
    out = subprocess.run(argv + ["-n"], env=env, cwd=cwd, check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    return [shlex.split(line) for line in out.decode().splitlines() if line.strip()]


def outputs_of(command):
    """The files a command writes: the values of -o and -s."""
    return [command[i + 1] for i, word in enumerate(command[:-1]) if word in ("-o", "-s")]


def graph(commands):
    """For each command, the earlier commands whose outputs it reads."""
    producer = {}
    needs = []
    for index, command in enumerate(commands):
        needs.append(sorted({producer[word] for word in command if word in producer}))
        for output in outputs_of(command):
            producer[output] = index
    return needs


def cost(command):
    if os.path.basename(command[0]) == "xt-pkg-loadlib":
        return PACK_SECONDS
    return COMPILE_SECONDS if "-c" in command else LINK_SECONDS


def list_schedule(commands, jobs):
    """The makespan of greedy list scheduling with zero overhead: whenever a
    job slot is free, start the first ready command in plan order.  For this
    graph (compiles, then links that need every object, then one pack per
    link) it is also the optimum for any number of jobs."""
    needs = graph(commands)
    finish = [None] * len(commands)
    running = []  # (end time, index)
    clock = 0.0
    started = set()
    while len(started) < len(commands) or running:
        ready = [i for i in range(len(commands)) if i not in started and
                 all(finish[d] is not None and finish[d] <= clock for d in needs[i])]
        while ready and len(running) < jobs:
            index = ready.pop(0)
            started.add(index)
            running.append((clock + cost(commands[index]), index))
        running.sort()
        end, index = running.pop(0)
        clock = end
        finish[index] = end
    return clock


def critical_path(commands):
    needs = graph(commands)
    finish = []
    for index, command in enumerate(commands):
        finish.append(max([finish[d] for d in needs[index]], default=0.0) + cost(command))
    return max(finish)


# --- the fake-tool project: 8 sources, each with its own header ------------

def fake_environment():
    env = dict(os.environ)
    for name in ("Q7_CORE", "Q7_TOOLS", "LM_LICENSE_FILE", "XTENSA_TOOLS", "CUSTOM_OP_LAUNCHER"):
        env.pop(name, None)
    env["PATH"] = FAKE_TOOLS + os.pathsep + env.get("PATH", "")
    env["NEURON_CUSTOM_OP"] = os.path.join(WORK, "fake", "sdk")
    env["BENCH_COMPILE_SECONDS"] = str(COMPILE_SECONDS)
    env["BENCH_LINK_SECONDS"] = str(LINK_SECONDS)
    env["BENCH_PACK_SECONDS"] = str(PACK_SECONDS)
    return env


def make_fake_project():
    """A fake SDK tree (as tests/fake/sdk.sh makes) and the sources."""
    root = os.path.join(WORK, "fake")
    shutil.rmtree(root, ignore_errors=True)
    sdk = os.path.join(root, "sdk")
    for directory in ("neuron", "c10/lib", "torch/include", "c10/include",
                      "lsp_fll_load_cpus/lsp_fll_load_cpu_single"):
        os.makedirs(os.path.join(sdk, directory))
    for core in range(8):
        os.makedirs(os.path.join(sdk, "lsp_fll_load_cpus", "lsp_fll_load_cpu%d" % core))
    for name in ("neuron/wrapper_api.h", "neuron/libneuroncustomop.a", "neuron/libcweak.a",
                 "c10/lib/libc10.a"):
        open(os.path.join(sdk, name), "w").close()
    sources = []
    for k in range(1, SOURCE_COUNT + 1):
        with open(os.path.join(root, "kernel%d.h" % k), "w") as header:
            header.write("#pragma once\n")
        with open(os.path.join(root, "kernel%d.cpp" % k), "w") as source:
            source.write('#include "kernel%d.h"\nint kernel%d;\n' % (k, k))
        sources.append("kernel%d.cpp" % k)
    return root, sources


def fake_build_argv(sources, build_dir, jobs=None):
    argv = [PROGRAM, "--multicore", "--name", "relu", "--op", SCHEMA, "-B", build_dir]
    if jobs:
        argv += ["-j", str(jobs)]
    return argv + sources


def run_sequentially(commands, env, cwd):
    for command in commands:
        subprocess.run(command, env=env, cwd=cwd, check=True)


def case_parallel(results):
    root, sources = make_fake_project()
    env = fake_environment()
    build = os.path.join(root, "build")
    commands = dry_run(fake_build_argv(sources, build), env, root)

    # The original's way: the wrapper written, then each command in turn.
    sequential = []
    for _ in range(repetitions(2)):
        shutil.rmtree(build, ignore_errors=True)
        start = now()
        os.makedirs(build)
        subprocess.run([PROGRAM, "--emit-wrapper", os.path.join(build, "wrapper.cpp"), "--op", SCHEMA],
                       check=True, stderr=subprocess.DEVNULL)
        run_sequentially(commands, env, root)
        sequential.append(now() - start)
    sequential_time = statistics.median(sequential)
    work = sum(cost(c) for c in commands)
    path = critical_path(commands)
    rows = []
    for jobs in (2, 4, 8, 16):
        times = []
        for _ in range(repetitions(3)):
            shutil.rmtree(build, ignore_errors=True)
            times.append(timed(fake_build_argv(sources, build, jobs), env=env, cwd=root))
        ours = statistics.median(times)
        bound = list_schedule(commands, jobs)
        rows.append((jobs, ours, bound, ours / bound, sequential_time / ours))
    results["parallel"] = dict(steps=len(commands), work=work, critical=path,
                               sequential=sequential_time, rows=rows)
    print("1. parallel build: %d steps, %.1f s of work, critical path %.1f s; "
          "sequential %.3f s" % (len(commands), work, path, sequential_time))
    for jobs, ours, bound, ratio, speedup in rows:
        print("   -j %-2d  %.3f s  bound %.2f s  ours/bound %.3f  sequential/ours %.2f"
              % (jobs, ours, bound, ratio, speedup))


def count_spawns(argv, env, cwd):
    """Processes a command starts besides itself, from strace; None without strace."""
    if not shutil.which("strace"):
        return None
    trace = os.path.join(WORK, "noop.strace")
    subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=execve,fork,vfork,clone,clone3"]
                   + argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(trace) as log:
        lines = log.read().splitlines()
    execs = sum(1 for line in lines if "execve(" in line)
    forks = sum(1 for line in lines if re.search(r"\b(clone3?|v?fork)\(", line))
    return execs - 1, forks


def case_noop(results):
    root, sources = make_fake_project()
    env = fake_environment()
    build = os.path.join(root, "build")
    argv = fake_build_argv(sources, build, 16)
    timed(argv, env=env, cwd=root)
    tool_log = os.path.join(root, "tools.log")
    env["BENCH_TOOL_LOG"] = tool_log
    open(tool_log, "w").close()
    times = [timed(argv, env=env, cwd=root) for _ in range(repetitions(50, 10))]
    with open(tool_log) as log:
        tool_runs = len(log.read().splitlines())
    spawns = count_spawns(argv, env, root)
    median = statistics.median(times)
    results["noop"] = dict(median=median, low=min(times), runs=len(times), tool_runs=tool_runs,
                           spawns=spawns)
    print("2. no-op rebuild: median %.2f ms, fastest %.2f ms over %d runs; tool runs %d; "
          "processes spawned (execve, fork/clone) %s"
          % (median * 1e3, min(times) * 1e3, len(times), tool_runs, spawns))


def case_header(results):
    root, sources = make_fake_project()
    env = fake_environment()
    build = os.path.join(root, "build")
    argv = fake_build_argv(sources, build, 4)
    tool_log = os.path.join(root, "tools.log")
    env["BENCH_TOOL_LOG"] = tool_log
    full, touched, steps = [], [], 0
    for _ in range(repetitions(3)):
        shutil.rmtree(build, ignore_errors=True)
        full.append(timed(argv, env=env, cwd=root))
        open(tool_log, "w").close()
        os.utime(os.path.join(root, "kernel1.h"))
        touched.append(timed(argv, env=env, cwd=root))
        with open(tool_log) as log:
            steps = len(log.read().splitlines())
    # -n prints the steps that would run: all of them, in an empty directory.
    shutil.rmtree(build, ignore_errors=True)
    total = len(dry_run(argv, env, root))
    results["header"] = dict(full=statistics.median(full), touched=statistics.median(touched),
                             steps=steps, total=total)
    print("4. header change (-j 4): %d of %d steps rerun, %.3f s against a full build's %.3f s "
          "(%.2f)" % (steps, total, results["header"]["touched"], results["header"]["full"],
                      results["header"]["touched"] / results["header"]["full"]))


# --- real compiles: the host target against ninja --------------------------

HOST_OPS = ["my_ops::relu(Tensor x) -> Tensor",
            "my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor"]
HOST_SOURCES = ["examples/relu/relu.cpp", "examples/axpby/axpby.cpp"]


def ninja_escape(path):
    return path.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def write_ninja(commands, path):
    """A build.ninja with one edge per command, the command verbatim; an
    edge's inputs are the outputs of earlier commands it names.  Its log
    goes beside it (builddir), not into the tree."""
    lines = ["builddir = %s" % ninja_escape(os.path.dirname(path)), "rule run", "  command = $cmd", ""]
    produced = set()
    for command in commands:
        outputs = outputs_of(command)
        inputs = [word for word in command[1:] if word in produced]
        escape = ninja_escape
        lines.append("build %s: run %s" % (" ".join(map(escape, outputs)),
                                            " ".join(map(escape, inputs))))
        lines.append("  cmd = %s" % shlex.join(command).replace("$", "$$"))
        produced.update(outputs)
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def case_ninja(results):
    if not shutil.which("ninja"):
        print("3. real compiles: skipped, ninja is not installed")
        return
    missing = [p for p in HOST_SOURCES + ["sdk/host/lib/libcustomop_host.a"]
               if not os.path.exists(os.path.join(TOP, p))]
    if missing:
        print("3. real compiles: skipped, missing %s" % ", ".join(missing))
        return
    jobs = os.cpu_count() or 2
    build = os.path.join(WORK, "host", "build")
    ninja_dir = os.path.join(WORK, "host", "ninja")
    os.makedirs(ninja_dir, exist_ok=True)
    argv = [PROGRAM, "--target", "host", "--multicore", "--name", "examples", "-B", build]
    for op in HOST_OPS:
        argv += ["--op", op]
    argv += HOST_SOURCES
    shutil.rmtree(build, ignore_errors=True)  # so that -n prints every step
    commands = dry_run(argv, None, TOP)
    ninja_file = os.path.join(ninja_dir, "build.ninja")
    write_ninja(commands, ninja_file)
    wrapper = os.path.join(build, "wrapper.cpp")
    emit = [PROGRAM, "--target", "host", "--emit-wrapper", wrapper]
    for op in HOST_OPS:
        emit += ["--op", op]
    ours, theirs = [], []
    for _ in range(repetitions(5, 1)):
        # Alternate, so that a slow spell of the machine hits both alike.
        shutil.rmtree(build, ignore_errors=True)
        ours.append(timed(argv + ["-j", str(jobs)], cwd=TOP))
        shutil.rmtree(build, ignore_errors=True)
        for name in (".ninja_log", ".ninja_deps"):
            if os.path.exists(os.path.join(ninja_dir, name)):
                os.remove(os.path.join(ninja_dir, name))
        start = now()
        os.makedirs(build)
        subprocess.run(emit, check=True, stderr=subprocess.DEVNULL)
        subprocess.run(["ninja", "-f", ninja_file, "-j", str(jobs)],
                       cwd=TOP, check=True, stdout=subprocess.DEVNULL)
        theirs.append(now() - start)
    mine, ninja = statistics.median(ours), statistics.median(theirs)
    results["ninja"] = dict(jobs=jobs, steps=len(commands), ours=mine, ninja=ninja,
                            all_ours=ours, all_ninja=theirs)
    print("3. real compiles (host, %d steps, -j %d): ours %.3f s, ninja %.3f s, ours/ninja %.3f"
          % (len(commands), jobs, mine, ninja, mine / ninja))
    print("   runs: ours %s; ninja %s" % (" ".join("%.3f" % t for t in ours),
                                          " ".join("%.3f" % t for t in theirs)))


# --- codegen at scale ------------------------------------------------------

def raise_stack_limit():
    # The kernel gives the argument list a quarter of the stack limit (at
    # most 6 MiB); 32,767 ops on the command line need about 1.5 MiB.
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = 64 << 20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_STACK, (want, hard))


# The original generator's baseline (bench/original_codegen.py, a
# reimplementation for timing only) runs under the system's interpreter, as
# a torch-neuronx user runs the original; python3 on PATH when there is none.
ORIGINAL_CODEGEN = os.path.join(TOP, "bench", "original_codegen.py")
ORIGINAL_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def codegen_schema(i):
    # As torch-neuronx formats a schema for the original: returns in parentheses.
    return "my_ops::op%d(Tensor x, Scalar a, float b, int c) -> (Tensor out)" % i


def codegen_argv(count, output=None):
    argv = [PROGRAM, "--emit-wrapper", output or os.path.join(WORK, "scale.cpp")]
    for i in range(count):
        argv += ["--op", "op%d=%s" % (i, codegen_schema(i))]
    return argv


def original_codegen_argv(count, output=None):
    argv = [ORIGINAL_PYTHON, ORIGINAL_CODEGEN, output or os.path.join(WORK, "scale.original.cpp")]
    for i in range(count):
        argv += ["op%d" % i, codegen_schema(i)]
    return argv


def same_file(a, b):
    with open(a, "rb") as first, open(b, "rb") as second:
        return first.read() == second.read()


def case_codegen(results):
    # The time of one op is the fixed cost (starting the program, writing
    # the file); what each op adds is measured above it.  The original's
    # generator, interpreter start included, is timed on the same ops, and
    # its wrapper must be ours byte for byte.  The stack limit is raised
    # here, once, and inherited: a preexec_fn would make every run fork this
    # large process instead of spawning.
    raise_stack_limit()
    fixed = min(timed(codegen_argv(1)) for _ in range(repetitions(20, 3)))
    rows = []
    identical = True
    for count in (1000, 10000, 32767):
        argv = codegen_argv(count)
        original = original_codegen_argv(count)
        times, original_times = [], []
        for _ in range(repetitions(5)):
            times.append(timed(argv))
            original_times.append(timed(original))
        identical = identical and same_file(argv[2], original[2])
        best = min(times)
        rows.append((count, best, (best - fixed) / (count - 1), min(original_times)))
    base = rows[0][2]
    results["codegen_fixed"] = fixed
    results["codegen"] = [(count, t, per, per / base, original)
                          for count, t, per, original in rows]
    results["codegen_identical"] = identical
    results["codegen_python"] = ORIGINAL_PYTHON
    # Past the runtime's limit of 32,767 functions a library is refused.
    refused_argv = [PROGRAM, "--emit-wrapper", os.path.join(WORK, "refused.cpp")]
    for i in range(100000):
        refused_argv += ["--op", "n::o%d(Tensor x)->Tensor" % i]
    start = now()
    refused = subprocess.run(refused_argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results["refused"] = dict(time=now() - start, status=refused.returncode,
                              message=refused.stderr.decode().strip())
    print("5. codegen at scale (--emit-wrapper, fastest of %d; one op: %.2f ms; the original's "
          "generator under %s):" % (repetitions(5), fixed * 1e3, ORIGINAL_PYTHON))
    for count, t, per, ratio, original in results["codegen"]:
        print("   %6d ops  %.4f s  %.2f us per op beyond the first  per-op ratio to 1,000 ops %.2f"
              "  original %.4f s  ours / original %.3f"
              % (count, t, per * 1e6, ratio, original, t / original))
    print("   the wrappers are %s" % ("identical" if identical else "DIFFERENT"))
    print("   100000 ops: exit %d after %.3f s: %s" % (refused.returncode, results["refused"]["time"],
                                                    results["refused"]["message"]))


def case_words(results):
    """6. compile() splits its cflags into words (bco_split_words): the time
    per byte of 1 MB against that of 100 KB, fastest of 5 each, for many
    short words and for one long word (shlex.split was quadratic there)."""
    sys.path.insert(0, os.path.join(TOP, "python"))
    from build_custom_op import _compile
    unit = '-DA=1 "-DB=a b" '  # 16 bytes, 2 words
    shapes = [("many words", lambda size: unit * (size // len(unit)),
               lambda size: 2 * (size // len(unit))),
              ("one word", lambda size: "-DX=" + "a" * (size - 4), lambda size: 1)]
    results["words"] = []
    print("6. word splitting (compile()'s cflags, fastest of %d):" % repetitions(5))
    for shape, make, word_count in shapes:
        rows = []
        for size in (100 * 1000, 1000 * 1000):
            text = make(size)
            best = None
            for _ in range(repetitions(5)):
                start = now()
                words = _compile.split_cflags([text])
                elapsed = now() - start
                best = elapsed if best is None else min(best, elapsed)
            if len(words) != word_count(size):
                sys.exit("bench: the cflags split into %d words" % len(words))
            rows.append((len(text), best))
        (small, small_time), (large, large_time) = rows
        ratio = (large_time / large) / (small_time / small)
        results["words"].append((shape, rows, ratio))
        print("   %-10s  %d bytes %.4f s, %d bytes %.4f s; per byte, 1 MB / 100 KB: %.2f"
              % (shape, small, small_time, large, large_time, ratio))


# --- the report --------------------------------------------------------------

def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, nproc %d, %s" % (model, os.cpu_count() or 0, os.uname().release)


def markdown(results):
    out = ["Measured %s on: %s." % (time.strftime("%Y-%m-%d"), machine()), ""]
    p = results["parallel"]
    out += ["**1. Parallel build** (8 sources + wrapper, `--multicore`: %d steps, %.1f s of "
            "tool time; critical path %.1f s; the commands run one after another: %.3f s)"
            % (p["steps"], p["work"], p["critical"], p["sequential"]), "",
            "| -j | build-custom-op | best schedule | ours / best | sequential / ours |",
            "|---:|---:|---:|---:|---:|"]
    for jobs, ours, bound, ratio, speedup in p["rows"]:
        out.append("| %d | %.3f s | %.2f s | %.3f | %.2f |" % (jobs, ours, bound, ratio, speedup))
    n = results["noop"]
    out += ["", "**2. No-op rebuild**: median %.2f ms (fastest %.2f ms) over %d runs; the tools "
            "ran %d times; processes spawned (execve, fork/clone, from strace): %s."
            % (n["median"] * 1e3, n["low"] * 1e3, n["runs"], n["tool_runs"],
               "%d, %d" % n["spawns"] if n["spawns"] else "strace not installed")]
    if "ninja" in results:
        r = results["ninja"]
        out += ["", "**3. Real compiles against ninja** (host target, relu + axpby, `--multicore`: "
                "%d steps at -j %d; median of %d alternating runs): build-custom-op %.3f s, "
                "ninja %.3f s, ratio **%.3f**."
                % (r["steps"], r["jobs"], len(r["all_ours"]), r["ours"], r["ninja"],
                   r["ours"] / r["ninja"])]
    h = results["header"]
    out += ["", "**4. Header change** (-j 4): %d of %d steps rerun; %.3f s against a full "
            "build's %.3f s, ratio **%.2f**." % (h["steps"], h["total"], h["touched"], h["full"],
                                                 h["touched"] / h["full"])]
    out += ["", "**5. Codegen at scale** (`--emit-wrapper`, fastest of %d; one op takes %.2f ms, "
            "the fixed cost; per op = (time - that) / (ops - 1); the original's generator "
            "(`bench/original_codegen.py` under %s, interpreter start included) on the same "
            "ops, its wrapper %s ours byte for byte):"
            % (repetitions(5), results["codegen_fixed"] * 1e3, results["codegen_python"],
               "equal to" if results["codegen_identical"] else "NOT EQUAL to"), "",
            "| ops | time | per op | per op / per op at 1,000 | original | ours / original |",
            "|---:|---:|---:|---:|---:|---:|"]
    for count, t, per, ratio, original in results["codegen"]:
        out.append("| %d | %.4f s | %.2f µs | %.2f | %.4f s | %.3f |"
                   % (count, t, per * 1e6, ratio, original, t / original))
    r = results["refused"]
    out += ["", "100,000 ops: exit %d after %.3f s (%s)." % (r["status"], r["time"], r["message"])]
    out += ["", "**6. Word splitting** (compile()'s cflags, fastest of %d; linear: a ratio "
            "near 1):" % repetitions(5), "",
            "| cflags | 100 KB | 1 MB | per byte, 1 MB / 100 KB |", "|---|---:|---:|---:|"]
    for shape, ((_, small_time), (_, large_time)), ratio in results["words"]:
        out.append("| %s | %.4f s | %.4f s | %.2f |" % (shape, small_time, large_time, ratio))
    out += runner_cases.markdown(results)
    out += ledger_cases.markdown(results)
    out += sanitize_cases.markdown(results)
    return "\n".join(out) + "\n"


def record(text):
    with open(README) as f:
        readme = f.read()
    begin, end = "<!-- results: begin -->\n", "<!-- results: end -->"
    if begin not in readme or end not in readme:
        sys.exit("bench: %s has no results markers" % README)
    head, rest = readme.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(README, "w") as f:
        f.write(head + begin + text + end + tail)


def main():
    if not os.access(PROGRAM, os.X_OK):
        sys.exit("bench: build build-custom-op first (make)")
    os.makedirs(WORK, exist_ok=True)
    results = {}
    case_parallel(results)
    case_noop(results)
    case_ninja(results)
    case_header(results)
    case_codegen(results)
    case_words(results)
    runner_cases.run(results)
    ledger_cases.run(results)
    sanitize_cases.run(results)
    text = markdown(results)
    with open(os.path.join(WORK, "results.md"), "w") as f:
        f.write(text)
    print("\nresults in obj/bench/results.md")
    if "--record" in sys.argv:
        record(text)
        print("recorded in bench/README.md")


if __name__ == "__main__":
    main()
