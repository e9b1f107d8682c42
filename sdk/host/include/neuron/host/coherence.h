/* neuron/host/coherence.h - torch::CoherencyEnforcer: what a tensor's
 * accessors do when one may see data another still holds in TCM (a write
 * stream's unflushed buffer, a read stream's read-ahead). */
#ifndef NEURON_HOST_COHERENCE_H
#define NEURON_HOST_COHERENCE_H

namespace torch {

// A class with an unscoped enum, so both CoherencyEnforcer::COHERENT and
// CoherencyEnforcer::Policy::COHERENT name a policy.
class CoherencyEnforcer {
public:
    enum Policy {
        COHERENT,           // a potentially incoherent access ends the op (the default)
        INCOHERENT_VERBOSE, // it is allowed, with a warning once per op call
        INCOHERENT_QUIET,   // it is allowed silently
    };
};

} // namespace torch

#endif
