import Synchronization

/// Why audio went missing or changed, as observed by the renderer.
/// Raw values are the C ABI's `RTMIX_EVENT_*` constants (never renumbered).
public enum EngineEventKind: Int32, Sendable {
    /// A source that was playing ran out of data. value: frames missing in
    /// that block.
    case underrunBegan = 1
    /// The source has data again. value: output frames missed in the episode.
    case underrunEnded = 2
    /// Pushes were refused because the source's ring was full. value: frames
    /// refused since the last such event.
    case bufferOverflow = 3
    /// NaN/Inf samples were pushed (and replaced by 0). value: samples since
    /// the last such event.
    case nonfiniteInput = 4
    /// The limiter started reducing gain. value: lowest gain of the block in
    /// millibels (hundredths of a dB, negative).
    case limiterEngaged = 5
    /// A render call took more than half of its block's duration. value: ns.
    case renderSlow = 6
    /// The event queue was full; this many events were lost. value: count.
    case eventsDropped = 7
    /// Capture: the echo delay in use changed (estimator or a new host
    /// hint). value: the new playout-to-capture delay in microseconds.
    case echoPathChanged = 8
    /// Capture: the echo canceller was reset. value: reason (1 = its
    /// output was louder than its input for 0.5 s: diverged).
    case cancellerReset = 9
    /// Capture: a capture call found no reference (render not running, or
    /// the delay in use reaches past the newest reference). value: the
    /// reference samples missing in that call.
    case referenceMissing = 10
    /// Capture: the render/capture clock drift reached the follower's limit
    /// (±1000 ppm); cancellation degrades. value: ppm.
    case driftOutOfRange = 11
    /// A source finished priming and started playing (fading in). value:
    /// frames it held when it started.
    case sourceStarted = 12
    /// A source ended with `endSource` played out everything, including the
    /// resampler's tail, and stopped. value: input frames played in total.
    case sourceDrained = 13
    /// A call source's oldest audio was dropped to keep its latency bounded
    /// (ring full, or stale audio after a stall). value: frames dropped.
    case audioDropped = 14
    /// The render callback stopped arriving (no call for several block
    /// periods) while sources exist. value: ns since the last render.
    case renderStalled = 15
    /// Rendering resumed after a stall or an interruption. value: ns the
    /// render callback was absent.
    case renderResumed = 16
    /// "No RTC sound": a call source produced nothing audible at the output
    /// for the alarm interval. value: cause (see `CallAudioMissingCause`).
    case callAudioMissing = 17
    /// A source's drift controller hit its ±1000 ppm limit. value: ppm.
    case driftSaturated = 18
    /// The limiter reduced the gain by more than 6 dB. value: lowest gain
    /// of the block in millibels.
    case limiterHeavy = 19
}

/// One event. `source` is nil for engine-wide events; `frameTime` is the
/// engine's output frame count at the start of the block it happened in.
public struct EngineEvent: Sendable, Equatable {
    public var kind: EngineEventKind
    public var source: SourceID?
    public var frameTime: UInt64
    public var value: Int64
}

/// The fixed-size form an event takes in the queue.
@usableFromInline
struct RawEvent {
    @usableFromInline var kind: Int32
    @usableFromInline var source: UInt32
    @usableFromInline var frameTime: UInt64
    @usableFromInline var value: Int64
    @usableFromInline init(kind: Int32, source: UInt32, frameTime: UInt64, value: Int64) {
        self.kind = kind
        self.source = source
        self.frameTime = frameTime
        self.value = value
    }
}

/// SPSC queue of events from the render (or capture) thread (producer) to control
/// threads (consumer, serialised by the control lock). Fixed capacity; when
/// full the renderer counts the loss and reports it as `eventsDropped` once
/// there is room again. Never blocks, never allocates after `init`.
@usableFromInline
struct EventQueue: ~Copyable {
    @usableFromInline static var capacity: Int { @_noLocks get { 256 } }
    @usableFromInline let storage: UnsafeMutablePointer<RawEvent>
    @usableFromInline let writeIndex: Atomic<Int>
    @usableFromInline let readIndex: Atomic<Int>
    /// Events lost while full (render thread only).
    @usableFromInline let dropped = Counter()

    /// `startIndex` (tests only) starts both counters near the wrap.
    init(startIndex: Int = 0) {
        writeIndex = Atomic(startIndex)
        readIndex = Atomic(startIndex)
        storage = .allocate(capacity: EventQueue.capacity)
        storage.initialize(repeating: RawEvent(kind: 0, source: 0, frameTime: 0, value: 0), count: EventQueue.capacity)
    }

    deinit { storage.deallocate() }

    /// Render thread only.
    @usableFromInline @_noLocks
    func post(_ kind: EngineEventKind, source: UInt32, frameTime: UInt64, value: Int64) {
        let lost = dropped.read()
        if lost > 0 {
            guard append(RawEvent(kind: 7, source: 0, frameTime: frameTime, value: Int64(truncatingIfNeeded: min(lost, UInt64(Int64.max))))) else {
                dropped.add(1)
                return
            }
            dropped.set(0)
        }
        if !append(RawEvent(kind: code(kind), source: source, frameTime: frameTime, value: value)) { dropped.add(1) }
    }

    @_noLocks
    func code(_ kind: EngineEventKind) -> Int32 {
        switch kind {
        case .underrunBegan: return 1
        case .underrunEnded: return 2
        case .bufferOverflow: return 3
        case .nonfiniteInput: return 4
        case .limiterEngaged: return 5
        case .renderSlow: return 6
        case .eventsDropped: return 7
        case .echoPathChanged: return 8
        case .cancellerReset: return 9
        case .referenceMissing: return 10
        case .driftOutOfRange: return 11
        case .sourceStarted: return 12
        case .sourceDrained: return 13
        case .audioDropped: return 14
        case .renderStalled: return 15
        case .renderResumed: return 16
        case .callAudioMissing: return 17
        case .driftSaturated: return 18
        case .limiterHeavy: return 19
        }
    }

    @_noLocks
    func append(_ event: RawEvent) -> Bool {
        let w = writeIndex.load(ordering: .relaxed)  // own index
        let r = readIndex.load(ordering: .acquiring)
        guard w &- r < EventQueue.capacity else { return false }  // wrap-safe difference
        storage[w & (EventQueue.capacity - 1)] = event
        writeIndex.store(w &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer (control lock held).
    func next() -> RawEvent? {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        guard w &- r > 0 else { return nil }  // wrap-safe (indices wrap, see SPSCRing)
        let event = storage[r & (EventQueue.capacity - 1)]
        readIndex.store(r &+ 1, ordering: .releasing)
        return event
    }
}
