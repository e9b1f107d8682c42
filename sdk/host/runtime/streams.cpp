/* streams.cpp - the stream accessors (their TCM buffers, close(), the
 * multicore rule) and the coherence of a tensor's accessors.
 *
 * The rule, as run-custom-op(1) documents it: a stream accessor is active
 * from read_stream_accessor()/write_stream_accessor() to its close() or its
 * destruction.  Potentially incoherent, because a write stream holds
 * unflushed elements in its TCM buffer and a read stream reads ahead:
 *   - opening a read stream on memory that an active write stream covers;
 *   - opening a write stream on memory that any active stream covers;
 *   - an element access (accessor<T,N>()) to an element that an active
 *     write stream covers, or a write to one that an active read stream
 *     covers (the accessor of a non-const tensor can write, so each of its
 *     uses counts as a write).
 * Memory, not the tensor object, decides: two tensors over the same bytes
 * (an argument passed twice, get_dst_tensor() called twice) are one.  The
 * tensor accessed decides the policy.  TCM accessors, element-wise ops and
 * fill_ are not checked, as the device documents no checks for them. */
#include <stdint.h>
#include <string>
#include <vector>

#include "neuron/host/accessors.h"
#include "neuron/host/violation.h"
#include "elements.h"
#include "ledger.h"
#include "runtime.h"

namespace neuron_host {

int open_stream_count;

namespace {

const size_t stream_buffer_size = 4096;

enum { stream_open_state, stream_closed_state, stream_moved_state };

struct Stream {
    bool open;
    bool writes;
    c10::ScalarType type;
    const char *begin; // the tensor's bytes
    const char *end;
    const TensorImpl *tensor; // kept alive by the accessor while open
    void *buffer;             // NULL when the pool had no 4 KiB to give
    uint32_t serial;
    uint32_t run;
    // The tensor whose element reads and writes were last reported, so a
    // loop under INCOHERENT_VERBOSE formats its warning once.
    const TensorImpl *reported[2];
};

struct StreamTable {
    std::vector<Stream> streams;
    uint32_t serial;
    uint32_t run;
    bool run_in_progress;
};

FreedWhenIdle<StreamTable> table_state;
StreamTable &table = table_state.value;

const char *stream_kind(bool writes)
{
    return writes ? "write_stream_accessor" : "read_stream_accessor";
}

std::string stream_name(bool writes, c10::ScalarType type)
{
    return std::string(stream_kind(writes)) + "<" + cpp_type_name(type) + ">()";
}

// "while it has" or "while argument 1, which shares its memory, has".
std::string holder(const TensorImpl &accessed, const Stream &stream)
{
    if (stream.tensor == &accessed || describe_tensor(*stream.tensor) == describe_tensor(accessed))
        return "while it has";
    return "while " + describe_tensor(*stream.tensor) + ", which shares its memory, has";
}

// A potentially incoherent access, under the accessed tensor's policy.
void incoherent(const TensorImpl &accessed, const std::string &text)
{
    switch (accessed.coherence_policy) {
    case torch::CoherencyEnforcer::COHERENT:
        violation("coherence: %s; close() the stream first, or allow this with "
                  "set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_VERBOSE)",
                  text.c_str());
    case torch::CoherencyEnforcer::INCOHERENT_VERBOSE:
        warning("coherence: %s (allowed by INCOHERENT_VERBOSE)", text.c_str());
        return;
    case torch::CoherencyEnforcer::INCOHERENT_QUIET:
        return;
    }
}

bool overlaps(const Stream &stream, const char *begin, const char *end)
{
    return stream.open && stream.begin < end && begin < stream.end;
}

void check_open(const TensorImpl &tensor, bool writes, c10::ScalarType type)
{
    const char *begin = static_cast<const char *>(tensor.data);
    const char *end = begin + tensor.byte_size();
    for (const Stream &other : table.streams) {
        if (!overlaps(other, begin, end) || (!writes && !other.writes))
            continue;
        const char *consequence =
            !writes ? "the read stream may miss elements the write stream still holds in its TCM buffer"
            : other.writes ? "the two write streams' buffers may reach memory in either order"
                           : "the read stream may already have read ahead the elements the write stream changes";
        incoherent(tensor, stream_name(writes, type) + " opened on " + describe_tensor(tensor) + " " +
                               holder(tensor, other) + " an active " + stream_name(other.writes, other.type) + ": " +
                               consequence);
    }
}

Stream *find(int slot, uint32_t serial)
{
    if (slot < 0 || static_cast<size_t>(slot) >= table.streams.size())
        return nullptr;
    Stream &stream = table.streams[static_cast<size_t>(slot)];
    return stream.open && stream.serial == serial ? &stream : nullptr;
}

void close_slot(Stream &stream, const char *found_at)
{
    stream.open = false;
    open_stream_count--;
    if (stream.buffer)
        tcm_give_back(stream.buffer, found_at);
}

} // namespace

void streams_begin_run()
{
    // A run that a violation or a fault ended never destroyed its streams.
    if (table.run_in_progress) {
        for (Stream &stream : table.streams) {
            if (stream.open && stream.run == table.run) {
                stream.open = false;
                open_stream_count--;
            }
        }
    }
    table.run++;
    table.run_in_progress = true;
}

void streams_end_run()
{
    table.run_in_progress = false;
}

void element_access_check(const TensorImpl &tensor, const void *element, bool writes, c10::ScalarType type,
                          size_t dims)
{
    const char *at = static_cast<const char *>(element);
    for (Stream &stream : table.streams) {
        if (!overlaps(stream, at, at + 1) || (!writes && !stream.writes))
            continue;
        if (tensor.coherence_policy != torch::CoherencyEnforcer::COHERENT && stream.reported[writes] == &tensor)
            continue;
        stream.reported[writes] = &tensor;
        std::string accessor = std::string(writes ? "the writable " : "") + "accessor<" + cpp_type_name(type) + "," +
                               std::to_string(dims) + ">()";
        const char *consequence = stream.writes
                                      ? "the element access may miss what the write stream still holds in its TCM buffer"
                                      : "the read stream may already have read ahead the element written";
        incoherent(tensor, "element access through " + accessor + " on " + describe_tensor(tensor) + " " +
                               holder(tensor, stream) + " an active " + stream_name(stream.writes, stream.type) + ": " +
                               consequence);
    }
}

StreamAccessorBase::StreamAccessorBase(std::shared_ptr<const TensorImpl> tensor, bool writes, c10::ScalarType type)
    : tensor_(std::move(tensor)), next_(static_cast<char *>(tensor_->data)),
      end_(next_ + tensor_->byte_size() / c10::elementSize(type) * c10::elementSize(type)),
      element_size_(c10::elementSize(type)), type_(type), writes_(writes), state_(stream_open_state), slot_(-1),
      serial_(0)
{
    std::string name = stream_name(writes, type);
    if (multicore_build())
        violation("%s: a multicore build supports only the TCM accessor (tcm_accessor()); element and stream "
                  "accessors are undefined behaviour on the device's cores in SPMD mode", name.c_str());
    check_open(*tensor_, writes, type);
    warn_element_type(*tensor_, stream_kind(writes), type);
    void *buffer = tcm_allocate(stream_buffer_size, writes ? "write_stream_accessor() for its buffer"
                                                           : "read_stream_accessor() for its buffer");
    if (!buffer)
        warning("%s: the TCM pool has no %zu bytes free for the stream's buffer (%zu of %zu bytes free): the stream "
                "works, but on the device at the speed of the element accessor", name.c_str(), stream_buffer_size,
                tcm_free_bytes(), tcm_pool_size());
    size_t slot = 0;
    while (slot < table.streams.size() && table.streams[slot].open)
        slot++;
    if (slot == table.streams.size())
        table.streams.push_back(Stream());
    const char *begin = static_cast<const char *>(tensor_->data);
    table.streams[slot] = Stream{true, writes, type, begin, begin + tensor_->byte_size(), tensor_.get(), buffer,
                                 ++table.serial, table.run, {nullptr, nullptr}};
    open_stream_count++;
    slot_ = static_cast<int>(slot);
    serial_ = table.serial;
}

StreamAccessorBase::StreamAccessorBase(StreamAccessorBase &&other)
    : tensor_(std::move(other.tensor_)), next_(other.next_), end_(other.end_), element_size_(other.element_size_),
      type_(other.type_), writes_(other.writes_), state_(other.state_), slot_(other.slot_), serial_(other.serial_)
{
    other.state_ = stream_moved_state;
    other.next_ = other.end_;
}

StreamAccessorBase::~StreamAccessorBase()
{
    if (state_ != stream_open_state)
        return;
    // After a violation or a fault ended the run, the slot is gone.
    if (Stream *stream = find(slot_, serial_)) {
        ledger_stream(*tensor_, next_, element_size_, writes_, stream->buffer != nullptr);
        close_slot(*stream, "the destruction of the stream accessor");
    }
}

void StreamAccessorBase::stop(const char *operation) const
{
    if (state_ != stream_open_state)
        violation("%s: %s %s", stream_name(writes_, type_).c_str(), operation,
                  state_ == stream_closed_state ? "after close()" : "on a stream accessor that was moved from");
    violation("%s: %s past the end of the tensor (%zu elements)", stream_name(writes_, type_).c_str(), operation,
              tensor_->byte_size() / element_size_);
}

int StreamAccessorBase::close_stream()
{
    if (state_ != stream_open_state)
        violation("%s: close() %s", stream_name(writes_, type_).c_str(),
                  state_ == stream_closed_state ? "on a stream that is closed already"
                                                : "on a stream accessor that was moved from");
    state_ = stream_closed_state;
    if (Stream *stream = find(slot_, serial_)) {
        ledger_stream(*tensor_, next_, element_size_, writes_, stream->buffer != nullptr);
        close_slot(*stream, "close()");
    }
    next_ = end_;
    return 0;
}

} // namespace neuron_host
