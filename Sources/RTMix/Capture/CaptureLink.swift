import CRTMixSupport
import Synchronization

/// What the render, capture and control threads share for the capture
/// path; allocated at engine creation when `captureRate != 0`.
///
/// - render thread: writes `ring` through `tap` (the ReferenceTap it owns),
///   counts `referenceOverflow`;
/// - capture thread (one at a time, `capturing`): reads `ring`, owns
///   `processor`, posts `events`, writes the statistics below;
/// - control threads: `delayHintMs`, `publishGain`, read statistics and
///   events (the latter under the control lock).
struct CaptureLink: ~Copyable {
    /// [reference (1 or 2 channels), media] frames at the capture rate,
    /// render → capture.
    let ring: SPSCRing
    let tap: UnsafeMutablePointer<ReferenceTap>
    let processor: UnsafeMutablePointer<CaptureProcessor>
    /// Capture role: one capture call at a time.
    let capturing = Atomic<Bool>(false)
    /// Host delay hint in ms; −1 = none.
    let delayHintMs = Atomic<Int32>(-1)
    /// Media publish gain (linear).
    let publishGain = AtomicFloat(0)
    /// Capture → control: canceller events (see EngineEventKind), stamped
    /// with the engine clock.
    let events: EventQueue

    // statistics, written by the capture thread
    let calls = Counter()
    let frames = Counter()
    let latencyFrames = Counter()
    let callsWithoutReference = Counter()
    let doubleTalkFrames = Counter()
    let resets = Counter()
    let delayChanges = Counter()
    let nonfinite = Counter()
    let captureNsMax = Counter()
    let doubleTalk = Counter()
    let diverged = Counter()
    let delaySource = Counter()
    let erleDb = AtomicFloat(0)
    let delayMs = AtomicFloat(0)
    let estimatedDelayMs = AtomicFloat(0)
    let estimateConfidence = AtomicFloat(0)
    let driftPpm = AtomicFloat(0)
    // written by the render thread
    let referenceOverflow = Counter()
    /// Render → capture timing: after each block, the total frames written
    /// to `ring` and the time it happened, published as a sequence lock
    /// (`stampSequence` odd while they change; every access acquire/release
    /// so a reader that sees a new value also sees the odd sequence).
    let stampSequence = Atomic<UInt64>(0)
    let stampNs = Atomic<UInt64>(0)
    let stampFrames = Atomic<UInt64>(0)
    /// The engine's clock (`EngineCore.clock`, which owns it): render and
    /// capture time their calls with the same clock as everything else.
    let clock: UnsafeMutablePointer<EngineClock>

    /// Reads the engine clock (real-time safe: see `EngineClock.now`).
    @_noLocks
    func now() -> UInt64 { clock.pointee.now() }

    /// A host clock is in use (its time is trusted even when calls come
    /// faster than real time).
    var hostClock: Bool { @_noLocks get { clock.pointee.host } }

    /// Render thread, after writing a block: publishes the timing stamp.
    @_noLocks
    func publishStamp(framesWritten total: UInt64, ns: UInt64) {
        let s = stampSequence.load(ordering: .relaxed)  // own variable
        stampSequence.store(s &+ 1, ordering: .releasing)
        stampNs.store(ns, ordering: .releasing)
        stampFrames.store(total, ordering: .releasing)
        stampSequence.store(s &+ 2, ordering: .releasing)
    }

    /// Capture thread: the latest consistent stamp, or nil when the render
    /// thread was publishing (twice in a row; then skip timing this call).
    @_noLocks
    func readStamp() -> (ns: UInt64, frames: UInt64)? {
        for _ in 0..<2 {
            let s1 = stampSequence.load(ordering: .acquiring)
            let ns = stampNs.load(ordering: .acquiring)
            let frames = stampFrames.load(ordering: .acquiring)
            let s2 = stampSequence.load(ordering: .acquiring)
            if s1 == s2 && s1 & 1 == 0 { return (ns, frames) }
        }
        return nil
    }

    /// nil when an allocation fails. `clock`: the engine's, which outlives
    /// the link.
    init?(config: EngineConfig, clock: UnsafeMutablePointer<EngineClock>) {
        guard let t = ReferenceTap(maxFrames: config.maxFrames, outputRate: config.sampleRate,
                                   captureRate: config.captureRate,
                                   referenceChannels: config.captureReferenceChannels),
              let p = CaptureProcessor(config: config)
        else { return nil }
        // One second of reference plus two blocks at the capture rate.
        var capacity = 1
        while capacity < config.captureRate + 2 * config.maxFrames * 6 { capacity <<= 1 }
        let channels = config.captureReferenceChannels + 1
        let bytes = t.allocatedBytes + p.allocatedBytes + MemoryLayout<ReferenceTap>.stride
            + MemoryLayout<CaptureProcessor>.stride
            + (SPSCRing.memoryBytes(capacityFrames: capacity, channels: channels) ?? 0)
        // On failure the values already made (t, p, the ring) free themselves.
        guard let r = SPSCRing(capacityFrames: capacity, channels: channels),
              let tp = Allocation.make(t) else { return nil }
        guard let pp = Allocation.make(p) else {
            Allocation.destroy(tp)
            return nil
        }
        self.clock = clock
        events = EventQueue(clock: clock)
        ring = r
        tap = tp
        processor = pp
        allocatedBytes = bytes
    }

    /// Bytes RTMix allocated for the capture path (speexdsp's and the
    /// resampler libraries' own state not counted).
    let allocatedBytes: Int

    deinit {
        Allocation.destroy(tap)
        Allocation.destroy(processor)
    }
}
