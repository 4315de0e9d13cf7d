/// Engine statistics (see `rtmix_engine_stats` for field meanings).
public struct EngineStats: Sendable, Equatable {
    public var activeSources = 0
    public var renderCalls: UInt64 = 0
    public var framesRendered: UInt64 = 0
    public var underrunFrames: UInt64 = 0
    public var rejectedFrames: UInt64 = 0
    public var nonfiniteSamples: UInt64 = 0
    public var limiterActiveFrames: UInt64 = 0
    public var limiterGainDb: Float = 0
    public var limiterMinGainDb: Float = 0
    public var renderNsLast: UInt64 = 0
    public var renderNsMax: UInt64 = 0
    public var renderNsP50: UInt64 = 0
    public var renderNsP99: UInt64 = 0
    public var sourcesAdded: UInt64 = 0
    public var sourcesRemoved: UInt64 = 0
    /// The configured capture rate (0: capture off).
    public var captureRate = 0
    /// The capture path (all zero when capture is off).
    public var capture = CaptureStats()
    /// Media duck gain at the end of the last render, dB (0: not ducked).
    public var duckGainDb: Float = 0
    /// Output frames rendered with the media ducked.
    public var duckedFrames: UInt64 = 0
    /// Events held back by the rate limiter (render and capture queues).
    public var eventsSuppressed: UInt64 = 0
    /// Events lost because a queue was full (render and capture queues);
    /// each loss is also reported by an `eventsDropped` event.
    public var eventsDropped: UInt64 = 0
    /// Bytes RTMix holds for the engine and its sources, as counted against
    /// `EngineConfig.maxMemoryBytes`.
    public var memoryBytes = 0
    public init() {}
}

/// Capture-path statistics (see the `capture_*`/`aec_*` fields of
/// `rtmix_engine_stats`).
public struct CaptureStats: Sendable, Equatable {
    /// Where the echo delay in use came from.
    public enum DelaySource: Int32, Sendable {
        case none = 0
        case hint = 1
        case estimator = 2
    }
    /// Successful capture calls and the mic frames they processed.
    public var calls: UInt64 = 0
    public var frames: UInt64 = 0
    /// Frames the output lags the microphone (re-blocking to the
    /// canceller's 10 ms frame, plus the preprocessor's frame when on).
    public var latencyFrames = 0
    /// Echo return loss enhancement (mic power over output power while
    /// only the far end plays), last 1 s window, dB; 0 until measured.
    public var erleDb: Float = 0
    /// Playout-to-capture delay the reference is aligned for, ms.
    public var delayMs: Float = 0
    public var delaySource: DelaySource = .none
    /// The estimator's latest raw estimate (ms) and its peak-to-RMS ratio.
    public var estimatedDelayMs: Float = 0
    public var estimateConfidence: Float = 0
    /// Render clock relative to capture clock, ppm (> 0: render faster).
    public var driftPpm: Float = 0
    /// Near-end talk during far-end playback, now and in total (frames).
    public var doubleTalk = false
    public var doubleTalkFrames: UInt64 = 0
    /// The canceller's output is louder than its input (now), and how
    /// often it was reset for that.
    public var diverged = false
    public var resets: UInt64 = 0
    /// Capture calls that found no reference (render not running).
    public var callsWithoutReference: UInt64 = 0
    /// Times the echo delay in use changed (estimator or new hint).
    public var delayChanges: UInt64 = 0
    /// Reference frames the render thread could not hand over (capture
    /// not running while render is).
    public var referenceOverflowFrames: UInt64 = 0
    /// NaN/Inf microphone samples replaced by 0.
    public var nonfiniteSamples: UInt64 = 0
    public var captureNsMax: UInt64 = 0
    public init() {}
}

/// Per-source statistics (see `rtmix_source_stats`).
public struct SourceStats: Sendable, Equatable {
    public var domain: Domain = .call
    public var sampleRate = 0
    public var channels = 0
    public var framesPushed: UInt64 = 0
    public var framesRejected: UInt64 = 0
    public var framesConsumed: UInt64 = 0
    public var framesRendered: UInt64 = 0
    public var underrunFrames: UInt64 = 0
    public var underrunEvents: UInt64 = 0
    public var nonfiniteSamples: UInt64 = 0
    public var bufferedFrames = 0
    public var capacityFrames = 0
    public var bufferedMs: Float = 0
    public var gain: Float = 1
    public var muted = false
    /// Current clock-drift correction in ppm (0 when compensation is off).
    public var driftPpm: Float = 0
    /// The drift controller's estimate of the producer's clock drift, ppm
    /// (> 0: the producer runs fast against the output clock).
    public var driftEstimatePpm: Float = 0
    /// The buffer's low-water mark over the last 0.5 s window, ms (what
    /// drift control holds at `targetMs`); -1 before the first window.
    public var lowWaterMs: Float = -1
    /// The drift target, ms (0: drift compensation off).
    public var targetMs: Float = 0
    /// The correction is at its ±2000 ppm limit (for a second or more).
    public var driftSaturated = false
    /// Frames dropped to bound latency (drop-oldest policy: stale audio
    /// after a stall, a ring about to be lapped, a burst far above target).
    public var framesDropped: UInt64 = 0
    /// Frames dropped by `flush`.
    public var framesFlushed: UInt64 = 0
    public var phase: PlaybackPhase = .priming
    public var paused = false
    /// `end` was called.
    public var ended = false
    /// A pull source.
    public var pull = false
    /// Frames a push could add now without dropping or refusing audio.
    public var writableFrames = 0
    /// The target drift control holds now, ms: `targetMs` raised to cover
    /// the producer's delivery jitter (holds, late packets, underruns), at
    /// most half the ring; it decays back once the jitter is gone. 0: off.
    public var effectiveTargetMs: Float = 0
    public init() {}
}
