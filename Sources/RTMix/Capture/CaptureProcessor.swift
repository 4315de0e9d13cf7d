import CRTMixSupport

/// Everything the capture thread owns: the reference history, the drift
/// follower, the delay estimator, the canceller, and the re-blocking
/// queues. One `process` call per device input callback:
///
///   ring (render → capture) → DriftResampler → reference history ──┐
///   mic → downmix → mic queue → [10 ms frame] → EchoCanceller ◄─────┘ (aligned)
///        → + media × publish gain → output queue → out
///
/// ## Indices and alignment
/// Two sample clocks meet here: `h` counts reference samples appended to
/// the history (render clock, converted to the capture rate and steered by
/// the drift follower) and `n` counts microphone samples (capture clock).
/// `c = h − n` after each call's appends is steady while both clocks run
/// at the same speed. The echo in mic sample `i` comes from history sample
/// `i + k_echo`; the physical playout-to-capture delay in samples is
/// `D = c̄ − k_echo` (c̄: the locked value of c). The canceller is fed
/// history sample `i + kFeed` with `kFeed = c̄ − D + lead`: the reference
/// leads the echo by `lead` (speexdsp cancels well when the reference
/// leads a little and not at all when it lags).
///
/// ## Drift
/// A PI controller keeps the smoothed `c` at its locked value by steering
/// the drift follower's step (render/capture clock ratio); its integral is
/// the drift estimate. Holding `c` holds the alignment: both move together.
/// A jump of `c` beyond the jitter bound (render or capture stalled, ring
/// overflow) re-locks and shifts `kFeed` by the same amount, so the
/// adapted echo filter stays valid.
///
/// ## Delay
/// `D` comes from the host's hint (`setStreamDelay`) or from the
/// `DelayEstimator`; an estimate that disagrees with `D` by more than 4 ms
/// in two consecutive hops replaces it (hosts often get the hint wrong, and
/// Bluetooth route changes move it). Moving `kFeed` keeps the canceller's
/// filter valid (the room did not change, only the bulk delay did).
@usableFromInline
struct CaptureProcessor: ~Copyable {
    @usableFromInline let rate: Int
    @usableFromInline let channels: Int
    @usableFromInline let frameSize: Int
    @usableFromInline let maxFrames: Int
    @usableFromInline let canceller: EchoCanceller
    /// The per-bin residual-echo suppressor after the canceller and its
    /// preprocessor (which suppresses residual echo too, from speexdsp's
    /// own estimate); used when `suppressing`.
    var suppressor: ResidualEchoSuppressor
    let suppressing: Bool
    /// [previous frame's linear echo estimate | this frame's | the
    /// preprocessor's output plus the previous estimate (the microphone
    /// as the suppressor sees it, one frame late like the preprocessor)].
    let frameEcho: UnsafeMutablePointer<Float>
    var follower: DriftResampler
    var estimator: DelayEstimator

    /// Reference channels (1, or 2 for a two-loudspeaker canceller); the
    /// media channel follows them in the ring, follower and history.
    @usableFromInline let referenceChannels: Int
    // reference history: planar, referenceChannels + 1 channels of
    // `historyCapacity` each (the last one is the media to publish)
    @usableFromInline let historyCapacity: Int
    @usableFromInline let history: UnsafeMutablePointer<Float>
    @usableFromInline var h: Int64 = 0
    // ring drain scratch: planar, the same channels, `2 × chunk` each,
    // plus the mono sum of the reference for the delay estimator
    @usableFromInline let chunk: Int
    @usableFromInline let drained: UnsafeMutablePointer<Float>
    @usableFromInline let drainedMono: UnsafeMutablePointer<Float>
    // microphone
    @usableFromInline var n: Int64 = 0
    @usableFromInline var processed: Int64 = 0
    @usableFromInline let micQueue: UnsafeMutablePointer<Float>
    @usableFromInline var micQueued = 0
    // output
    @usableFromInline let outQueue: UnsafeMutablePointer<Float>
    @usableFromInline var outQueued = 0
    @usableFromInline var latency = 0
    @usableFromInline let scratchIn: UnsafeMutablePointer<Float>
    @usableFromInline let scratchOut: UnsafeMutablePointer<Float>
    // one frame
    @usableFromInline let frameRef: UnsafeMutablePointer<Float>
    @usableFromInline let frameMedia: UnsafeMutablePointer<Float>
    @usableFromInline let frameOut: UnsafeMutablePointer<Float>

    // clock follower
    @usableFromInline var locked = false
    @usableFromInline var cTarget = 0
    /// The locked value of c corrected for the callback phase.
    @usableFromInline var cTargetExact: Double = 0
    /// Ring frames read so far; the render side's stamp counts written.
    @usableFromInline var ringRead: UInt64 = 0
    /// Clock time of the previous capture call and its frames; the ratio
    /// of clock time to audio time between calls (smoothed).
    @usableFromInline var lastCallNs: UInt64 = 0
    @usableFromInline var lastCallFrames = 0
    @usableFromInline var realTimeRatio: Double = 0
    /// This call's callback phase in capture samples (nil: unknown).
    @usableFromInline var phaseSamples: Double? = nil
    @usableFromInline var cSmoothed: Double = 0
    @usableFromInline var integral: Double = 0
    /// Variance of the measured `c` around its smoothed value (samples²):
    /// how much the host's callback timing jitters. Starts at (1 ms)².
    @usableFromInline var jitterVariance: Double
    @usableFromInline var correction: Double = 0
    @usableFromInline var largestArrival = 0
    @usableFromInline var driftAlarm = false
    // alignment
    @usableFromInline var delay: Double = 0
    /// CaptureStats.DelaySource raw value.
    @usableFromInline var delaySource: Int32 = 0
    @usableFromInline var kFeed = 0
    @usableFromInline var appliedHintMs: Int32 = -1
    @usableFromInline var estimatorBaseH: Int64 = 0
    @usableFromInline var estimatorBaseN: Int64 = 0
    @usableFromInline var candidate: Double = 0
    @usableFromInline var candidateHits = 0
    @usableFromInline let leadSamples: Int
    // publish
    @usableFromInline var publishRamp: GainRamp
    // statistics
    @usableFromInline var windowMic: Float = 0
    @usableFromInline var windowOut: Float = 0
    @usableFromInline var windowFrames = 0
    @usableFromInline var windowUsed = 0
    @usableFromInline var erleDb: Float = 0
    @usableFromInline var divergentFrames = 0
    @usableFromInline var doubleTalkHangover = 0
    @usableFromInline var missingEpisode = false
    /// Capture frames before the current call (events' frame time).
    @usableFromInline var eventTime: UInt64 = 0
    /// The render side's overflow count last seen.
    @usableFromInline var overflowSeen: UInt64 = 0

    /// Lead of the reference over the echo.
    static var leadMs: Int { @_noLocks get { 8 } }
    /// Time constant of the clock follower's proportional path, seconds.
    static var followerSeconds: Double { @_noLocks get { 2 } }
    /// Integral time of the clock follower, seconds.
    static var integralSeconds: Double { @_noLocks get { 8 } }
    /// The follower does not steer while the smoothed alignment error is
    /// within this many standard deviations of its own noise (the measured
    /// timing jitter after smoothing; at least `minDeadBandSamples`): on one clock it must say 0 and
    /// leave the alignment still (issue 16).
    static var deadBandSigmas: Double { @_noLocks get { 4 } }
    static var minDeadBandSamples: Double { @_noLocks get { 1.5 } }
    /// Samples the reference history runs ahead of the ring.
    static var followerLag: Int { @_noLocks get { DriftResampler.taps / 2 - 1 } }
    /// Largest drift the follower corrects (and beyond which it alarms).
    static var maxDriftPpm: Double { @_noLocks get { 1000 } }

    /// Bytes RTMix allocated for the capture processor (speexdsp's own
    /// state not counted).
    let allocatedBytes: Int

    /// nil when an allocation (ours or speexdsp's) fails; then everything
    /// already allocated is freed.
    init?(config: EngineConfig) {
        let rate = config.captureRate
        let frameSize = config.captureFrameSize
        let maxFrames = config.maxFrames
        let chunk = 1024
        // History: the longest delay searched (~0.6 s) + two blocks + slack.
        var capacity = 1
        while capacity < rate + 2 * maxFrames + 2 * chunk { capacity <<= 1 }
        let planes = config.captureReferenceChannels + 1
        var batch = AllocationBatch()
        guard let frameEcho = batch.allocate(repeating: Float(0), count: 3 * frameSize),
              let history = batch.allocate(repeating: Float(0), count: capacity * planes),
              let drained = batch.allocate(repeating: Float(0), count: chunk * 2 * planes),
              let drainedMono = batch.allocate(repeating: Float(0), count: chunk * 2),
              // Up to 4 frames may wait for their reference, plus one call.
              let micQueue = batch.allocate(repeating: Float(0), count: maxFrames + 4 * frameSize),
              let outQueue = batch.allocate(repeating: Float(0), count: maxFrames + 8 * frameSize),
              let scratchIn = batch.allocate(repeating: Float(0), count: maxFrames * 2),
              let scratchOut = batch.allocate(repeating: Float(0), count: maxFrames * 2),
              let frameRef = batch.allocate(repeating: Float(0), count: frameSize * config.captureReferenceChannels),
              let frameMedia = batch.allocate(repeating: Float(0), count: frameSize),
              let frameOut = batch.allocate(repeating: Float(0), count: frameSize),
              let c = EchoCanceller(frameSize: frameSize, sampleRate: rate, tailMs: config.aecTailMs,
                                    speakers: config.captureReferenceChannels,
                                    noiseSuppression: config.noiseSuppression,
                                    echoSuppression: config.echoSuppression, agc: config.agc),
              let suppressor = ResidualEchoSuppressor(frameSize: frameSize, sampleRate: rate),
              let follower = DriftResampler(chunkFrames: chunk, channels: config.captureReferenceChannels + 1),
              let estimator = DelayEstimator(sampleRate: rate)
        else { return nil }
        allocatedBytes = batch.commit() + c.allocatedBytes + follower.allocatedBytes + estimator.allocatedBytes
            + suppressor.allocatedBytes
        self.rate = rate
        channels = config.captureChannels
        self.frameSize = frameSize
        self.maxFrames = maxFrames
        referenceChannels = config.captureReferenceChannels
        canceller = consume c
        suppressing = config.echoSuppression && config.aecTailMs > 0
        self.frameEcho = frameEcho
        self.suppressor = consume suppressor
        self.chunk = chunk
        self.follower = consume follower
        self.estimator = consume estimator
        historyCapacity = capacity
        self.history = history
        self.drained = drained
        self.drainedMono = drainedMono
        self.micQueue = micQueue
        self.outQueue = outQueue
        self.scratchIn = scratchIn
        self.scratchOut = scratchOut
        self.frameRef = frameRef
        self.frameMedia = frameMedia
        self.frameOut = frameOut
        leadSamples = rate * CaptureProcessor.leadMs / 1000
        jitterVariance = Double(rate / 1000) * Double(rate / 1000)
        publishRamp = GainRamp(initial: 0, rampFrames: max(1, rate / 100))
    }

    deinit {
        Allocation.free(history)
        Allocation.free(drained)
        Allocation.free(drainedMono)
        Allocation.free(micQueue)
        Allocation.free(outQueue)
        Allocation.free(scratchIn)
        Allocation.free(scratchOut)
        Allocation.free(frameRef)
        Allocation.free(frameMedia)
        Allocation.free(frameOut)
        Allocation.free(frameEcho)
    }
}
