#!/usr/bin/env python3
"""runner_cases.py - the runner's benchmarks (cases 7 to 9 and 14 of bench/README.md).

bench.py imports this module (run() and markdown()); run() builds the
examples for the host and runs this file as a script under an interpreter
that can import torch, which times:

  7. per-call overhead: relu on a 4x4 float32 tensor through
     build_custom_op.runner, on 8 cores and on 1, against torch.relu on the
     same tensor; and, to tell the binding's part from the library's, the
     bare rco_run call through ctypes with the arguments already in place;
  8. throughput: the multicore TCM relu (examples/relu_multicore) on 2**24
     float32 elements against torch.relu;
and, from bench.py's interpreter:
  9. the CLI's fixed cost: run-custom-op on a 4-element input, start to
     exit, against starting /bin/true;
 14. the library's own cost, in C (obj/bench/runner_overhead, built from
     bench/runner_overhead.c by make bench): rco_run of relu on 16 values
     with other work between calls and back to back, against a plain C
     relu loop, and on 2^24 values against the C loop; and the same calls
     of the tests' fake core library (tests/run/fake_core.c, no runtime):
     the runner's cost alone.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(TOP, "obj", "bench", "runner")
QUICK = "--quick" in sys.argv
TORCH_INTERPRETERS = ("/usr/bin/python3", "python3")
RELU = "my_ops::relu(Tensor x) -> Tensor"


def build(name, source, multicore):
    directory = os.path.join(WORK, name)
    argv = [os.path.join(TOP, "build-custom-op"), "--target", "host", "--name", "relu", "-B",
            directory, "--op", RELU, os.path.join(TOP, source)]
    if multicore:
        argv.insert(3, "--multicore")
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("bench: building %s failed:\n%s" % (source, done.stderr))
    return os.path.join(directory, "relu")


def torch_python():
    for candidate in TORCH_INTERPRETERS:
        path = shutil.which(candidate)
        if path and subprocess.run([path, "-c", "import torch"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL).returncode == 0:
            return path
    return None


# ---- in bench.py's interpreter ----

def run(results):
    os.makedirs(WORK, exist_ok=True)
    multi = build("multi", "examples/relu_multicore/relu.cpp", True)
    single = build("single", "examples/relu/relu.cpp", False)
    python = torch_python()
    if python is None:
        print("7-8. skipped: no interpreter here can import torch "
              "(apt-get install python3-torch)")
    else:
        done = subprocess.run([python, os.path.abspath(__file__), "--measure", multi, single]
                              + (["--quick"] if QUICK else []),
                              check=True, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "python")))
        results["runner"] = json.loads(done.stdout.splitlines()[-1])
        r = results["runner"]
        for cores in ("8", "1"):
            c = r["overhead"][cores]
            print("7. relu 4x4 on %s core(s): %.1f µs per call (rco_run alone %.1f µs, %.1f "
                  "context switches), torch.relu %.2f µs, ratio %.0f"
                  % (cores, c["binding"], c["library"], c["switches"], r["torch_small"],
                     c["binding"] / r["torch_small"]))
        t = r["throughput"]
        print("8. relu on 2^24 float32: runner %.1f ms, torch.relu %.1f ms, ratio %.2f"
              % (t["runner"] * 1e3, t["torch"] * 1e3, t["runner"] / t["torch"]))
    results["cli"] = cli_cost(multi, single)
    c_program = os.path.join(TOP, "obj", "bench", "runner_overhead")
    if os.access(c_program, os.X_OK):
        fakes = fake_builds()
        done = subprocess.run([c_program, single, multi] + fakes + (["--quick"] if QUICK else []),
                              check=True, stdout=subprocess.PIPE, text=True)
        results["runner_c"] = json.loads(done.stdout)
        r = results["runner_c"]
        for name, op in (("single", "relu"), ("multi", "relu"), ("fake_single", "the fake op"),
                         ("fake_multi", "the fake op")):
            c = r[name]
            print("14. rco_run of %s on 16 values, %d core(s): %.1f µs between other work, "
                  "%.1f µs back to back; a C loop %.3f µs" % (op, c["cores"], c["between"] * 1e6,
                                                              c["back_to_back"] * 1e6,
                                                              c["c_between"] * 1e6))
        t = r["throughput"]
        print("14. relu on 2^24 float32: rco_run %.1f ms, a C loop %.1f ms, ratio %.2f"
              % (t["runner"] * 1e3, t["c_loop"] * 1e3, t["runner"] / t["c_loop"]))
    else:
        print("14. skipped: obj/bench/runner_overhead is missing (make bench builds it)")
    c = results["cli"]
    print("9. run-custom-op on 4 elements: %.2f ms (8 cores), %.2f ms (1 core); /bin/true %.2f ms"
          % (c["multi"] * 1e3, c["single"] * 1e3, c["true"] * 1e3))


def fake_builds():
    """The tests' fake core library as a single-core and a multicore build
    (make bench builds its files), with the record a build writes."""
    sys.path.insert(0, os.path.join(TOP, "tests", "run"))
    import record
    paths = []
    for name, cores, files in (("fake_single", 1, ["fake.so"]),
                               ("fake_multi", 8, ["fake_cpu%d.so" % i for i in range(8)])):
        directory = os.path.join(WORK, name)
        os.makedirs(directory, exist_ok=True)
        for file in files:
            shutil.copyfile(os.path.join(TOP, "tests", "run", "fake", file),
                            os.path.join(directory, file))
        record.write(os.path.join(directory, "fake"), cores, record.FAKE_OPS)
        paths.append(os.path.join(directory, "fake"))
    return paths


def cli_cost(multi, single):
    sys.path.insert(0, os.path.join(TOP, "tests", "run"))
    import npy
    x = os.path.join(WORK, "x.npy")
    npy.make(x, "<f4", "4", [-1.0, 2.0, -3.0, 4.0])
    runs = 5 if QUICK else 41

    def median_of(argv):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    runner = os.path.join(TOP, "run-custom-op")
    return dict(multi=median_of([runner, "--in", x, multi]),
                single=median_of([runner, "--in", x, single]),
                true=median_of(["/bin/true"]), runs=runs)


def markdown(results):
    out = []
    if "runner" in results:
        r = results["runner"]
        out += ["", "**7. Per-call overhead** (relu on a 4×4 float32 tensor through "
                "`build_custom_op.runner`, best of %d batches of %d calls; torch.relu on the "
                "same tensor: %.2f µs):" % (r["batches"], r["calls"], r["torch_small"]), "",
                "| cores | µs per call | rco_run alone | the binding's part | / torch.relu |"
                " context switches per call | aim |", "|---:|---:|---:|---:|---:|---:|---:|"]
        for cores, aim in (("1", 20), ("8", 60)):
            c = r["overhead"][cores]
            out.append("| %s | %.1f | %.1f | %.1f | %.0f | %.1f | < %d µs |"
                       % (cores, c["binding"], c["library"], c["binding"] - c["library"],
                          c["binding"] / r["torch_small"], c["switches"], aim))
        t = r["throughput"]
        out += ["", "**8. Throughput** (examples/relu_multicore on 8 cores, 2^24 float32 "
                "elements, median of %d): runner %.1f ms, torch.relu %.1f ms (%d threads), "
                "ratio **%.2f** (aim: at most 2)." % (t["runs"], t["runner"] * 1e3,
                                                       t["torch"] * 1e3, t["torch_threads"],
                                                       t["runner"] / t["torch"])]
    c = results["cli"]
    out += ["", "**9. The CLI's fixed cost** (run-custom-op on a 4-element input, start to exit, "
            "median of %d): 8 cores %.2f ms, 1 core %.2f ms; starting /bin/true takes %.2f ms "
            "(ratios %.1f and %.1f)." % (c["runs"], c["multi"] * 1e3, c["single"] * 1e3,
                                         c["true"] * 1e3, c["multi"] / c["true"],
                                         c["single"] / c["true"])]
    if "runner_c" in results:
        r = results["runner_c"]
        out += ["", "**14. The library's own cost, in C** (rco_run on 16 float32 values of relu, "
                "and of the tests' fake core library, which doubles them without the runtime: "
                "the runner alone; the median of %d calls with about 1 ms of other work before "
                "each, and the best of 5 batches back to back; the same relu as a C loop, timed "
                "the same ways):" % r["single"]["calls"], "",
                "| op | cores | between work | C loop | ratio | back to back | C loop | ratio "
                "| context switches per call |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, op in (("single", "relu"), ("multi", "relu"), ("fake_single", "fake"),
                         ("fake_multi", "fake")):
            c = r[name]
            out.append("| %s | %d | %.1f µs | %.3f µs | %.0f | %.1f µs | %.3f µs | %.0f | %.2f |"
                       % (op, c["cores"], c["between"] * 1e6, c["c_between"] * 1e6,
                          c["between"] / c["c_between"], c["back_to_back"] * 1e6,
                          c["c_back_to_back"] * 1e6, c["back_to_back"] / c["c_back_to_back"],
                          c["switches"]))
        t = r["throughput"]
        out += ["", "Relu over 2^24 float32 values on 8 cores (median of %d): rco_run %.1f ms, "
                "a C loop on one thread %.1f ms, ratio **%.2f**."
                % (t["runs"], t["runner"] * 1e3, t["c_loop"] * 1e3, t["runner"] / t["c_loop"])]
    return out


# ---- under the interpreter that can import torch ----

def best_per_call(function, calls, batches):
    best = float("inf")
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def switches_per_call(function, calls):
    """Context switches of every thread of this process, per call."""
    import resource

    def switches():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_nvcsw + usage.ru_nivcsw

    before = switches()
    for _ in range(calls):
        function()
    return (switches() - before) / calls


def measure(multi, single):
    import torch
    from build_custom_op import runner
    calls, batches = (200, 3) if QUICK else (2000, 7)
    x = torch.randn(4, 4)
    flat = x.reshape(16)  # examples/relu is 1-D: the same 16 values, in place
    result = dict(calls=calls, batches=batches, overhead={})
    result["torch_small"] = best_per_call(lambda: torch.relu(x), calls, batches) * 1e6
    for cores, path, tensor in (("8", multi, x), ("1", single, flat)):
        with runner.open(path, on_print=lambda core, text: None) as library:
            expected = torch.relu(tensor)
            if not torch.equal(library.run("relu", tensor), expected):
                sys.exit("bench: the %s-core relu is wrong" % cores)
            binding = best_per_call(lambda: library.run("relu", tensor), calls, batches)
            switches = switches_per_call(lambda: library.run("relu", tensor), calls)
            # The library alone: rco_run with the structures the last call left.
            output = library.run("relu", tensor)
            raw, handle = library._run, library._handle
            arguments, out_pointer, error = (library._arguments_pointer, library._output_pointer,
                                             library._error_pointer)
            bare = best_per_call(lambda: raw(handle, 0, arguments, 1, out_pointer, 0.0, error),
                                 calls, batches)
            del output
            result["overhead"][cores] = dict(binding=binding * 1e6, library=bare * 1e6,
                                             switches=switches)
    big = torch.randn(2 ** 24)
    runs = 3 if QUICK else 9
    with runner.open(multi) as library:
        if not torch.equal(library.run("relu", big), torch.relu(big)):
            sys.exit("bench: the multicore relu is wrong on 2^24 elements")
        mine, theirs = [], []
        for _ in range(runs):
            start = time.perf_counter()
            library.run("relu", big)
            mine.append(time.perf_counter() - start)
            start = time.perf_counter()
            torch.relu(big)
            theirs.append(time.perf_counter() - start)
    result["throughput"] = dict(runner=statistics.median(mine), torch=statistics.median(theirs),
                                runs=runs, torch_threads=torch.get_num_threads())
    print(json.dumps(result))


if __name__ == "__main__" and "--measure" in sys.argv:
    position = sys.argv.index("--measure")
    measure(sys.argv[position + 1], sys.argv[position + 2])
