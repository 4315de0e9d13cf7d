/// Everything the capture thread owns: a pipeline of stages, one type and
/// file each, called in the order the audio flows. One `process` call per
/// device input callback:
///
///   ring (render → capture) → ReferenceHistory (DriftResampler) ──────────┐
///   mic → CaptureFramer → [10 ms frame] → EchoCanceller ◄─ DelayTracker ◄─┘
///       → ResidualEchoSuppressor → CapturePublisher (+ media × gain)
///       → CaptureFramer → out
///
/// 0. `ReferenceHistory`: the ring through the drift resampler into the
///    reference history (counts `h`);
/// 1. `CaptureFramer`: the microphone call into 10 ms mono frames (counts
///    `n`), and the processed frames back into calls;
/// 2. `CaptureClockFollower`: holds `c = h − n` by steering the resampler
///    (the drift estimate);
/// 3. `DelayTracker`: the hint or the `DelayEstimator`'s delay, and which
///    reference sample each microphone sample is cancelled with (`kFeed`);
/// 4. `EchoCanceller`: speexdsp's linear canceller and preprocessor;
///    `EchoFilterCheck`: whether its echo estimate is still the echo (a
///    moved echo path, seen in the first frames after the move; the
///    suppressor then also takes in the reference already played ahead of
///    the aligned frame, `startLookingAhead`, where a shorter path's echo comes
///    from);
///    `EchoSlideTracker`: the echo's slide (drift) from the signal;
/// 5. `ResidualEchoSuppressor`: per-bin residual-echo suppression;
/// 6. `CapturePublisher`: the voice plus the media at the publish gain;
/// 7. `CaptureMetrics`: the one writer of the link's statistics and
///    events, fed what the other stages return.
///
/// The stages take no `CaptureLink`; this pipeline reads the link (ring,
/// stamp, hint, publish gain) and hands outcomes from one stage to the next.
struct CaptureProcessor: ~Copyable {
    let rate: Int
    let frameSize: Int
    var reference: ReferenceHistory
    var framer: CaptureFramer
    var clock: CaptureClockFollower
    var delay: DelayTracker
    let canceller: EchoCanceller
    var check = EchoFilterCheck()
    var absence: EchoAbsence
    var slide: EchoSlideTracker
    /// The per-bin residual-echo suppressor after the canceller and its
    /// preprocessor (which suppresses residual echo too, from speexdsp's
    /// own estimate); used when `suppressing`.
    var suppressor: ResidualEchoSuppressor
    /// How far the talker stands over the echo (after the suppressor).
    var balance: TalkerOverEcho
    let suppressing: Bool
    var publisher: CapturePublisher
    var metrics: CaptureMetrics
    /// The canceller's (then the suppressor's) output frame.
    let frameOut: UnsafeMutablePointer<Float>
    /// [previous frame's linear echo estimate | this frame's | the
    /// preprocessor's output plus the previous estimate (the microphone
    /// as the suppressor sees it, one frame late like the preprocessor)].
    let frameEcho: UnsafeMutablePointer<Float>
    /// Two frames of the reference ahead of the aligned one, for the
    /// suppressor's look-ahead (`startLookingAhead`).
    let aheadWindow: UnsafeMutablePointer<Float>
    /// Frames the suppressor still looks ahead (0: it does not).
    var aheadLeft = 0

    /// Bytes RTMix allocated for the capture processor (speexdsp's own
    /// state not counted).
    let allocatedBytes: Int

    /// nil when an allocation (ours or speexdsp's) fails; then everything
    /// already allocated is freed.
    init?(config: EngineConfig) {
        let rate = config.captureRate
        let frameSize = config.captureFrameSize
        var batch = AllocationBatch()
        guard let frameEcho = batch.allocate(repeating: Float(0), count: 3 * frameSize),
              let frameOut = batch.allocate(repeating: Float(0), count: frameSize),
              let aheadWindow = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let reference = ReferenceHistory(sampleRate: rate, channels: config.captureReferenceChannels,
                                               frameSize: frameSize, maxFrames: config.maxFrames),
              let framer = CaptureFramer(channels: config.captureChannels, frameSize: frameSize,
                                         maxFrames: config.maxFrames),
              let c = EchoCanceller(frameSize: frameSize, sampleRate: rate, tailMs: config.aecTailMs,
                                    speakers: config.captureReferenceChannels,
                                    noiseSuppression: config.noiseSuppression,
                                    echoSuppression: config.echoSuppression, agc: config.agc),
              let suppressor = ResidualEchoSuppressor(frameSize: frameSize, sampleRate: rate),
              let delay = DelayTracker(sampleRate: rate),
              let tracker = EchoSlideTracker(canceller: c, sampleRate: rate, frameSize: frameSize)
        else { return nil }
        allocatedBytes = batch.commit() + reference.allocatedBytes + framer.allocatedBytes + c.allocatedBytes + tracker.allocatedBytes
            + delay.estimator.allocatedBytes + suppressor.allocatedBytes
        self.rate = rate
        self.frameSize = frameSize
        self.reference = consume reference
        self.framer = consume framer
        clock = CaptureClockFollower(sampleRate: rate)
        absence = EchoAbsence(framesPerSecond: rate / frameSize, seconds: CaptureProcessor.absenceSeconds)
        self.delay = consume delay
        slide = consume tracker
        canceller = consume c
        self.suppressor = consume suppressor
        balance = TalkerOverEcho(framesPerSecond: rate / frameSize)
        suppressing = config.echoSuppression && config.aecTailMs > 0
        publisher = CapturePublisher(sampleRate: rate)
        metrics = CaptureMetrics(sampleRate: rate, frameSize: frameSize)
        self.frameOut = frameOut
        self.frameEcho = frameEcho
        self.aheadWindow = aheadWindow
    }

    deinit {
        Allocation.free(frameOut)
        Allocation.free(frameEcho)
        Allocation.free(aheadWindow)
    }
}
