import CRTMixSupport
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
    /// A source's drift controller hit its ±2000 ppm limit
    /// (`DriftController.limit`). value: ppm.
    case driftSaturated = 18
    /// The limiter reduced the gain by more than 6 dB. value: lowest gain
    /// of the block in millibels.
    case limiterHeavy = 19
}

/// One event. `source` is nil for engine-wide events; `frameTime` is the
/// engine's output frame count at the start of the block it happened in
/// (capture events: capture frames processed before the call).
public struct EngineEvent: Sendable, Equatable {
    public var kind: EngineEventKind
    public var source: SourceID?
    public var frameTime: UInt64
    public var value: Int64
    /// When it was posted, ns on the engine's clock: CLOCK_MONOTONIC, or the
    /// host clock given to `Engine.setClock`.
    public var timeNs: UInt64
    /// The source's domain; nil for engine-wide events (or a source already
    /// removed when the event was read).
    public var domain: Domain?
    /// Events of the same kind and source suppressed by the rate limiter
    /// since the last one delivered (see `EventRateLimiter`).
    public var suppressed: UInt32

    public init(kind: EngineEventKind, source: SourceID?, frameTime: UInt64, value: Int64,
                timeNs: UInt64 = 0, domain: Domain? = nil, suppressed: UInt32 = 0) {
        self.kind = kind
        self.source = source
        self.frameTime = frameTime
        self.value = value
        self.timeNs = timeNs
        self.domain = domain
        self.suppressed = suppressed
    }
}

/// The fixed-size form an event takes in the queue.
struct RawEvent {
    var kind: Int32
    var source: UInt32
    var frameTime: UInt64
    var value: Int64
    var timeNs: UInt64
    /// `Domain` raw value, or -1 (engine-wide, or not known when posted).
    var domain: Int32
    var suppressed: UInt32
    init(kind: Int32, source: UInt32, frameTime: UInt64, value: Int64,
                           timeNs: UInt64 = 0, domain: Int32 = -1, suppressed: UInt32 = 0) {
        self.kind = kind
        self.source = source
        self.frameTime = frameTime
        self.value = value
        self.timeNs = timeNs
        self.domain = domain
        self.suppressed = suppressed
    }
}

/// SPSC queue of events from the render (or capture) thread (producer) to
/// control threads (consumer, serialised by the control lock). Fixed
/// capacity; when full the producer counts the loss (`droppedTotal`) and
/// the consumer reports it as one `eventsDropped` event once it has read
/// everything queued: the host's next drain ends with the notice, whether
/// or not another event is posted. Events pass a rate limiter
/// first (`EventRateLimiter`), so a storm cannot fill it. Never blocks,
/// never allocates after `init`. The index pair is `SPSCIndices`, the same
/// as `SPSCRing`'s.
struct EventQueue: ~Copyable {
    static var capacity: Int { @_noLocks get { 256 } }
    let storage: UnsafeMutablePointer<RawEvent>
    let indices: SPSCIndices
    /// Events lost while full, in total (producer writes; stats read).
    let droppedTotal = Counter()
    /// The frame time of the latest loss (producer writes).
    let droppedFrameTime = Counter()
    /// Of `droppedTotal`, the part already reported by an `eventsDropped`
    /// event (consumer only).
    let droppedReported = Counter()
    /// Events the rate limiter held back, in total (producer writes).
    let suppressedTotal = Counter()
    /// The producer's clock: the engine's (shared, not owned) or, for a
    /// queue on its own (tests), one of its own; changed only while the
    /// producer is idle. And its rate limiter (producer only).
    let clock: UnsafeMutablePointer<EngineClock>
    let ownsClock: Bool
    let limiter: EventRateLimiter?

    /// `clock`: the engine's (it must outlive the queue); nil: a clock of
    /// its own (CLOCK_MONOTONIC). `startIndex` (tests only) starts both
    /// counters near the wrap; `rateLimited: false` (tests only) turns the
    /// limiter off.
    init(clock shared: UnsafeMutablePointer<EngineClock>? = nil, startIndex: Int = 0, rateLimited: Bool = true) {
        // From the system allocator, like the queue's storage: the queue is
        // not failable yet (docs/memory.md).
        indices = SPSCIndices(uncounted: startIndex)
        storage = .allocate(capacity: EventQueue.capacity)
        storage.initialize(repeating: RawEvent(kind: 0, source: 0, frameTime: 0, value: 0), count: EventQueue.capacity)
        if let c = shared {
            clock = c
            ownsClock = false
        } else {
            clock = .allocate(capacity: 1)
            clock.initialize(to: EngineClock())
            ownsClock = true
        }
        limiter = rateLimited ? EventRateLimiter() : nil
    }

    deinit {
        storage.deallocate()
        if ownsClock { clock.deallocate() }
        limiter?.deallocate()
    }

    /// The producer's clock (also read by control threads: a host clock
    /// must be callable from any thread).
    @_noLocks
    func now() -> UInt64 { clock.pointee.now() }

    /// Producer thread only. `domain`: the source's `Domain` raw value, or
    /// -1 (engine-wide; for a source event the reader fills it in while the
    /// source exists). The event is stamped with `now()`.
    @_noLocks
    func post(_ kind: EngineEventKind, source: UInt32, frameTime: UInt64, value: Int64, domain: Int32 = -1) {
        let type = code(kind)
        let t = now()
        var suppressed: UInt32 = 0
        if let l = limiter {
            guard let held = l.admit(type: type, source: source, now: t) else {
                suppressedTotal.add(1)
                return
            }
            suppressed = held
        }
        if !append(RawEvent(kind: type, source: source, frameTime: frameTime, value: value, timeNs: t,
                            domain: domain, suppressed: suppressed)) {
            droppedFrameTime.set(frameTime)
            droppedTotal.add(1)  // reported by the consumer (`next`)
        }
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
        let (w, free) = indices.producerView(capacity: EventQueue.capacity, wanted: 1)
        guard free > 0 else { return false }
        storage[w & (EventQueue.capacity - 1)] = event
        indices.commitWrite(1)
        return true
    }

    /// Consumer (control lock held). The oldest queued event; when none is
    /// left, an `eventsDropped` event for the losses not yet reported
    /// (value: their count; frame time: that of the latest loss).
    func next() -> RawEvent? {
        let (r, available) = indices.consumerView(capacity: EventQueue.capacity, wanted: 1)
        guard available > 0 else {
            let total = droppedTotal.read()
            let lost = total &- droppedReported.read()
            guard lost > 0 else { return nil }
            droppedReported.set(total)
            return RawEvent(kind: 7, source: 0, frameTime: droppedFrameTime.read(),
                            value: Int64(truncatingIfNeeded: min(lost, UInt64(Int64.max))), timeNs: now())
        }
        let event = storage[r & (EventQueue.capacity - 1)]
        indices.commitRead(1)
        return event
    }
}
