/* coherence.cpp - accessors of one tensor that may see each other's data
 * stale, for test_coherence.sh: accessors(x, which, policy) runs case
 * `which` on the output under policy 0 (COHERENT, the default, not set),
 * 1 (INCOHERENT_VERBOSE) or 2 (INCOHERENT_QUIET), and returns the output. */
#include <stdio.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

at::Tensor accessors(const at::Tensor &x, int which, int policy)
{
    at::Tensor out = get_dst_tensor();
    const at::Tensor &reading = out; // its element accessor is read-only
    if (policy == 1)
        out.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_VERBOSE);
    if (policy == 2)
        out.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_QUIET);
    int64_t n = out.numel();
    switch (which) {
    case 0: { // a read stream opened while a write stream is active
        auto writer = out.write_stream_accessor<float>();
        auto reader = out.read_stream_accessor<float>();
        writer.write(reader.read() + 1);
        break;
    }
    case 1: { // a write stream opened while a read stream is active
        auto reader = out.read_stream_accessor<float>();
        auto writer = out.write_stream_accessor<float>();
        writer.write(reader.read() + 1);
        break;
    }
    case 2: { // two write streams
        auto first = out.write_stream_accessor<float>();
        auto second = out.write_stream_accessor<float>();
        first.write(1);
        second.write(2);
        break;
    }
    case 3: { // element reads while a write stream is active, in a loop
        auto writer = out.write_stream_accessor<float>();
        auto element = reading.accessor<float, 1>();
        float sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += element[i];
        writer.write(sum);
        break;
    }
    case 4: { // an element write while a read stream is active
        auto reader = out.read_stream_accessor<float>();
        auto element = out.accessor<float, 1>();
        element[0] = reader.read() + 1;
        break;
    }
    case 5: { // element reads while a read stream is active: coherent
        auto reader = out.read_stream_accessor<float>();
        auto element = reading.accessor<float, 1>();
        printf("read %g and %g\n", static_cast<double>(reader.read()), static_cast<double>(element[1]));
        break;
    }
    case 6: { // a write stream closed before the read stream opens: coherent
        auto writer = out.write_stream_accessor<float>();
        for (int64_t i = 0; i < n; i++)
            writer.write(static_cast<float>(i * 10));
        printf("close() returns %d\n", writer.close());
        auto reader = out.read_stream_accessor<float>();
        printf("read back %g\n", static_cast<double>(reader.read() + reader.read()));
        break;
    }
    case 7: { // the TCM accessor is not checked
        auto writer = out.write_stream_accessor<float>();
        auto tcm = out.tcm_accessor();
        float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * n));
        tcm.tensor_to_tcm<float>(block, 0, n);
        tcm.tcm_to_tensor<float>(block, 0, n);
        torch::neuron::tcm_free(block);
        writer.write(5);
        break;
    }
    case 8: { // two tensors over the same memory are one
        at::Tensor again = get_dst_tensor();
        auto writer = out.write_stream_accessor<float>();
        auto reader = again.read_stream_accessor<float>();
        writer.write(reader.read());
        break;
    }
    case 9: { // a read after close()
        auto reader = x.read_stream_accessor<float>();
        reader.close();
        printf("not reached %g\n", static_cast<double>(reader.read()));
        break;
    }
    case 10: { // close() twice
        auto writer = out.write_stream_accessor<float>();
        writer.close();
        writer.close();
        break;
    }
    case 11: { // a read stream on an argument while the output is written: different memory
        auto reader = x.read_stream_accessor<float>();
        auto writer = out.write_stream_accessor<float>();
        for (int64_t i = 0; i < n; i++)
            writer.write(reader.read() * 2);
        break;
    }
    }
    return out;
}
