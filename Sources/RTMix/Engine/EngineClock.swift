import CRTMixSupport

/// The engine's timeline in ns: CLOCK_MONOTONIC unless the host provides
/// its own (`setClock`: device timestamps, or a simulation running faster
/// than real time). Render, capture and control threads read it; it is
/// changed only while neither render nor capture runs.
struct EngineClock {
    var read: @convention(c) (UnsafeMutableRawPointer?) -> UInt64 = engineMonotonicNs
    var context: UnsafeMutableRawPointer? = nil
    /// The host's clock is in use (`setClock`): the capture path trusts its
    /// time even when calls come faster than real time.
    var host = false
    init() {}

    /// Real-time safe: CLOCK_MONOTONIC is a vDSO read; a host clock must be
    /// real-time safe by contract.
    @_noLocks
    func now() -> UInt64 {
        let f = read, c = context
        return _unsafePerformance { f(c) }
    }
}

/// The default clock.
@_noLocks
func engineMonotonicNs(_ context: UnsafeMutableRawPointer?) -> UInt64 {
    _unsafePerformance { rtmix_support_monotonic_ns() }
}
