/* element_set.cpp - ranges while they are few, a bitmap when they are many. */
#include "element_set.h"

#include <algorithm>

namespace neuron_host {
namespace {

const int64_t word_bits = 64;

size_t words_for(int64_t size)
{
    return static_cast<size_t>((size + word_bits - 1) / word_bits);
}

} // namespace

void ElementSet::reset(int64_t size)
{
    size_ = size < 0 ? 0 : size;
    ranges_.clear();
    bits_.clear();
    bitmap_ = false;
    sorted_ = true;
}

// A range takes 16 bytes and the bitmap size / 8: past size / 128 ranges
// (and a floor that keeps small sets in ranges) the bitmap is smaller.
size_t ElementSet::range_limit() const
{
    return std::max<size_t>(4096, static_cast<size_t>(size_ / 128));
}

void ElementSet::set_bits(int64_t begin, int64_t end)
{
    while (begin < end && begin % word_bits != 0) {
        bits_[static_cast<size_t>(begin / word_bits)] |= uint64_t(1) << (begin % word_bits);
        begin++;
    }
    while (end - begin >= word_bits) {
        bits_[static_cast<size_t>(begin / word_bits)] = ~uint64_t(0);
        begin += word_bits;
    }
    for (; begin < end; begin++)
        bits_[static_cast<size_t>(begin / word_bits)] |= uint64_t(1) << (begin % word_bits);
}

void ElementSet::make_bitmap()
{
    bits_.assign(words_for(size_), 0);
    bitmap_ = true;
    for (const customop_host_range &range : ranges_)
        set_bits(range.begin, range.end);
    ranges_.clear();
    sorted_ = true;
}

void ElementSet::add(int64_t begin, int64_t end)
{
    begin = std::max<int64_t>(begin, 0);
    end = std::min(end, size_);
    if (begin >= end)
        return;
    if (bitmap_) {
        set_bits(begin, end);
        return;
    }
    if (!ranges_.empty()) {
        customop_host_range &last = ranges_.back();
        if (begin <= last.end && end >= last.begin) { // touches or overlaps the last: the usual case
            last.begin = std::min(last.begin, begin);
            last.end = std::max(last.end, end);
            if (ranges_.size() > 1 && last.begin <= ranges_[ranges_.size() - 2].end)
                sorted_ = false;
            return;
        }
        if (begin < last.begin)
            sorted_ = false;
    }
    ranges_.push_back(customop_host_range{begin, end});
    if (ranges_.size() > range_limit()) {
        normalize();
        if (ranges_.size() > range_limit() / 2)
            make_bitmap();
    }
}

void ElementSet::add(const ElementSet &other)
{
    if (other.bitmap_) {
        if (!bitmap_)
            make_bitmap();
        for (size_t i = 0; i < bits_.size() && i < other.bits_.size(); i++)
            bits_[i] |= other.bits_[i];
        return;
    }
    for (const customop_host_range &range : other.ranges_)
        add(range.begin, range.end);
}

void ElementSet::normalize()
{
    if (bitmap_ || sorted_)
        return;
    std::sort(ranges_.begin(), ranges_.end(),
              [](const customop_host_range &a, const customop_host_range &b) { return a.begin < b.begin; });
    size_t kept = 0;
    for (size_t i = 1; i < ranges_.size(); i++) {
        if (ranges_[i].begin <= ranges_[kept].end)
            ranges_[kept].end = std::max(ranges_[kept].end, ranges_[i].end);
        else
            ranges_[++kept] = ranges_[i];
    }
    ranges_.resize(ranges_.empty() ? 0 : kept + 1);
    sorted_ = true;
}

int64_t ElementSet::count() const
{
    int64_t count = 0;
    if (bitmap_) {
        for (uint64_t word : bits_)
            count += __builtin_popcountll(word);
        return count;
    }
    for (const customop_host_range &range : ranges_)
        count += range.end - range.begin;
    return count;
}

customop_host_elements ElementSet::describe() const
{
    return customop_host_elements{ranges_.data(), ranges_.size(), bitmap_ ? bits_.data() : nullptr, count()};
}

} // namespace neuron_host
