import Synchronization

/// Where a source's audio is, for A/V sync (C: `rtmix_source_position`).
public struct SourcePosition: Sendable, Equatable {
    /// Input frames of the source (at its own rate) that have reached the
    /// engine's output by the end of the last render block. Flushed and
    /// dropped frames never reach it.
    public var framesPlayed: UInt64 = 0
    /// Engine clock at the start of that render call (ns; the clock of
    /// `setClock`, CLOCK_MONOTONIC by default).
    public var renderTimeNs: UInt64 = 0
    /// From `renderTimeNs`, how long until a frame pushed right then leaves
    /// the engine: the rendered block, plus the audio queued ahead of it in
    /// the ring and the resampler, at the current drift correction.
    public var latencyNs: UInt64 = 0
    /// The host's output latency (`setOutputLatency`), to add for the time
    /// a frame is heard.
    public var outputLatencyNs: UInt64 = 0
    /// The source's sample rate.
    public var sampleRate = 0
    @_noLocks public init() {}

    /// The source frame being heard at `nowNs` (engine clock), for a video
    /// clock: the last rendered frame is heard at renderTime + block +
    /// outputLatency; earlier frames before it. Negative before any audio.
    public func framesHeard(atNs nowNs: UInt64, blockNs: UInt64) -> Double {
        let heardAt = Double(renderTimeNs) + Double(blockNs) + Double(outputLatencyNs)
        return Double(framesPlayed) - (heardAt - Double(nowNs)) * Double(sampleRate) / 1e9
    }
}

/// The render thread's publication of a source's position: a sequence lock
/// (the writer makes `sequence` odd, stores, makes it even; readers retry
/// while it is odd or changed). Every access is acquire/release so a reader
/// that sees a new value also sees the odd sequence. Lock-free for readers,
/// wait-free for the writer.
struct PositionPublisher: ~Copyable {
    let sequence = Atomic<UInt64>(0)
    let framesPlayed = Atomic<UInt64>(0)
    let renderTimeNs = Atomic<UInt64>(0)
    let latencyNs = Atomic<UInt64>(0)
    init() {}

    /// Render thread.
    @_noLocks
    func publish(framesPlayed f: UInt64, renderTimeNs t: UInt64, latencyNs l: UInt64) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .releasing)
        framesPlayed.store(f, ordering: .releasing)
        renderTimeNs.store(t, ordering: .releasing)
        latencyNs.store(l, ordering: .releasing)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// Any thread. nil if the writer kept it busy for every try (it
    /// publishes once per block, so two tries in a row practically never
    /// both collide).
    @_noLocks
    func read() -> (framesPlayed: UInt64, renderTimeNs: UInt64, latencyNs: UInt64)? {
        for _ in 0..<8 {
            let s1 = sequence.load(ordering: .acquiring)
            if s1 & 1 == 1 { continue }
            let f = framesPlayed.load(ordering: .acquiring)
            let t = renderTimeNs.load(ordering: .acquiring)
            let l = latencyNs.load(ordering: .acquiring)
            if sequence.load(ordering: .acquiring) == s1 { return (f, t, l) }
        }
        return nil
    }
}
