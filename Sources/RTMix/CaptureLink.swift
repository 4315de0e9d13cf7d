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
@usableFromInline
struct CaptureLink: ~Copyable {
    /// [reference, media] frames at the capture rate, render → capture.
    @usableFromInline let ring: SPSCRing
    @usableFromInline let tap: UnsafeMutablePointer<ReferenceTap>
    @usableFromInline let processor: UnsafeMutablePointer<CaptureProcessor>
    /// Capture role: one capture call at a time.
    @usableFromInline let capturing = Atomic<Bool>(false)
    /// Host delay hint in ms; −1 = none.
    @usableFromInline let delayHintMs = Atomic<Int32>(-1)
    /// Media publish gain (linear).
    @usableFromInline let publishGain = AtomicFloat(0)
    /// Capture → control: canceller events (see EngineEventKind).
    @usableFromInline let events = EventQueue()

    // statistics, written by the capture thread
    @usableFromInline let calls = Counter()
    @usableFromInline let frames = Counter()
    @usableFromInline let latencyFrames = Counter()
    @usableFromInline let callsWithoutReference = Counter()
    @usableFromInline let doubleTalkFrames = Counter()
    @usableFromInline let resets = Counter()
    @usableFromInline let delayChanges = Counter()
    @usableFromInline let nonfinite = Counter()
    @usableFromInline let captureNsMax = Counter()
    @usableFromInline let doubleTalk = Counter()
    @usableFromInline let diverged = Counter()
    @usableFromInline let delaySource = Counter()
    @usableFromInline let erleDb = AtomicFloat(0)
    @usableFromInline let delayMs = AtomicFloat(0)
    @usableFromInline let estimatedDelayMs = AtomicFloat(0)
    @usableFromInline let estimateConfidence = AtomicFloat(0)
    @usableFromInline let driftPpm = AtomicFloat(0)
    // written by the render thread
    @usableFromInline let referenceOverflow = Counter()

    /// nil when an allocation fails.
    init?(config: EngineConfig) {
        guard let t = ReferenceTap(maxFrames: config.maxFrames, outputRate: config.sampleRate,
                                   captureRate: config.captureRate),
              let p = CaptureProcessor(config: config)
        else { return nil }
        // One second of reference plus two blocks at the capture rate.
        var capacity = 1
        while capacity < config.captureRate + 2 * config.maxFrames * 6 { capacity <<= 1 }
        ring = SPSCRing(capacityFrames: capacity, channels: 2)
        tap = .allocate(capacity: 1)
        tap.initialize(to: t)
        processor = .allocate(capacity: 1)
        processor.initialize(to: p)
    }

    deinit {
        tap.deinitialize(count: 1)
        tap.deallocate()
        processor.deinitialize(count: 1)
        processor.deallocate()
    }
}
