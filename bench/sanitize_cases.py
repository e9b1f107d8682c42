"""sanitize_cases.py - case 13 of bench/README.md: what each sanitizer costs.

examples/relu_multicore built four ways (plain, --sanitize=address,
--sanitize=undefined, --sanitize=address,undefined), each run by
run-custom-op on 8 cores over 2^23 float32 values and over 4 values, median
of 7 runs each.  The 4-value run is the fixed cost (for ASan, run-custom-op
runs itself again with the runtime preloaded, and the runtime starts); the
difference between the two is the kernel's and the runner's work on the
data, which is what the sanitizers' checks slow down.  bench.py imports
run() and markdown().
"""
import array
import os
import random
import statistics
import struct
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(TOP, "obj", "bench", "sanitize")
QUICK = "--quick" in sys.argv
RELU = "my_ops::relu(Tensor x) -> Tensor"
VARIANTS = (("plain", None), ("address", "address"), ("undefined", "undefined"),
            ("address,undefined", "address,undefined"))
BIG = 1 << 23


def write_npy(path, values):
    """A 1-D little-endian float32 .npy file (format 1.0)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as stream:
        stream.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        data = array.array("f", values)
        if sys.byteorder != "little":
            data.byteswap()
        stream.write(data.tobytes())


def build(name, sanitize):
    directory = os.path.join(WORK, name.replace(",", "_"))
    argv = [os.path.join(TOP, "build-custom-op"), "--target", "host", "--multicore", "--name",
            "relu", "-B", directory, "--op", RELU,
            os.path.join(TOP, "examples", "relu_multicore", "relu.cpp")]
    if sanitize:
        argv.append("--sanitize=" + sanitize)
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("bench: building relu with %s failed:\n%s" % (name, done.stderr))
    return os.path.join(directory, "relu")


def median_run(argv, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0 or done.stderr:
            sys.exit("bench: %s: exit %d\n%s" % (" ".join(argv), done.returncode, done.stderr))
    return statistics.median(times)


def run(results):
    os.makedirs(WORK, exist_ok=True)
    big = os.path.join(WORK, "big.npy")
    small = os.path.join(WORK, "small.npy")
    generator = random.Random(1)
    write_npy(big, [generator.uniform(-1.0, 1.0) for _ in range(BIG)])
    write_npy(small, [-1.0, 2.0, -3.0, 4.0])
    runner = os.path.join(TOP, "run-custom-op")
    runs = 3 if QUICK else 7
    rows = []
    for name, sanitize in VARIANTS:
        library = build(name, sanitize)
        fixed = median_run([runner, "--in", small, library], runs)
        whole = median_run([runner, "--in", big, library], runs)
        rows.append((name, fixed, whole))
        print("13. relu on 2^23 float32, %s: %.1f ms (4 values: %.1f ms)"
              % (name, whole * 1e3, fixed * 1e3))
    results["sanitize"] = dict(rows=rows, runs=runs, elements=BIG)


def markdown(results):
    s = results["sanitize"]
    plain_fixed, plain_whole = s["rows"][0][1], s["rows"][0][2]
    plain_work = plain_whole - plain_fixed
    out = ["", "**13. Sanitizers** (examples/relu_multicore on 8 cores through run-custom-op, "
           "median of %d runs; the data's part is the 2^23-value run less the 4-value run):"
           % s["runs"], "",
           "| build | 2^23 values | 4 values | the data's part | / plain's |",
           "|---|---:|---:|---:|---:|"]
    for name, fixed, whole in s["rows"]:
        out.append("| %s | %.1f ms | %.1f ms | %.1f ms | %.2f |"
                   % (name, whole * 1e3, fixed * 1e3, (whole - fixed) * 1e3,
                      (whole - fixed) / plain_work))
    return out
