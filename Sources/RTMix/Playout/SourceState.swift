import Synchronization

/// Everything one source needs, allocated by `addSource` and freed by the
/// control thread once neither the renderer nor the producer can touch it.
///
/// Ownership by field:
/// - producer thread: the write side of `ring`, `framesPushed`,
///   `framesRejected`, `nonfinitePushed`;
/// - render thread: the read side of `ring`, `scratch`, `gainCurve`,
///   everything in `render` (including the resampler) and the render
///   counters;
/// - control threads (under the engine's control lock): `targetGain`,
///   `requestedGain`, `muted` (read by the renderer).
struct SourceState: ~Copyable {
    let domain: Domain
    /// `domain == .call`, precomputed: the renderer avoids enum comparisons.
    let isCall: Bool
    let sampleRate: Int
    let channels: Int
    let ring: SPSCRing
    /// The ring capacity the host configured (and sees in stats). A
    /// drop-oldest ring is allocated twice this size: the producer only
    /// ever writes free space (never audio the renderer may be reading),
    /// and the renderer drops the oldest audio once more than 3/4 of this
    /// is buffered (consumer-side dropping: the SPSC rule holds).
    let capacityFrames: Int
    /// Resampler parameters, kept to rebuild it when the output format changes.
    let resamplerQuality: ResamplerQuality
    let driftCompensation: Bool
    /// Drift compensation target in source frames (0 = off).
    let driftTargetFrames: Double
    /// Frames the source must hold to start or restart (0: any audio).
    let startThresholdFrames: Int
    /// Overrun policy: drop the oldest audio (call default) instead of
    /// refusing the push (media default).
    let dropOldest: Bool
    /// Pull source: the render thread asks this callback for audio.
    let pull: PullCallback?
    let pullContext: UnsafeMutableRawPointer?
    /// Zero samples for draining a resampler (Resampler.drainInputFrames × channels).
    let zeros: UnsafeMutablePointer<Float>
    /// maxFrames × channels floats: resampler output.
    let scratch: UnsafeMutablePointer<Float>
    /// maxFrames floats: per-frame gain of the current block.
    let gainCurve: UnsafeMutablePointer<Float>

    /// Render-thread-only state, in its own allocation so that its writes
    /// never share an access with fields other threads read.
    let render: UnsafeMutablePointer<SourceRenderState>
    /// The drift stage (render thread only), for sources with drift
    /// control (`driftCompensation`); nil otherwise.
    let stage: UnsafeMutablePointer<DriftStage>?

    // control → render
    let targetGain: AtomicFloat
    let requestedGain: AtomicFloat
    /// Mute flag (control threads; the renderer only sees `targetGain`).
    let muted = Atomic<Bool>(false)
    // host commands (control or producer thread → render)
    let paused = Atomic<Bool>(false)
    let endRequested = Atomic<Bool>(false)
    /// Incremented by each flush; `flushUpTo` (stored first) is the write
    /// count at the flush: audio before it is dropped.
    let flushRequests = Atomic<UInt32>(0)
    let flushUpTo = Atomic<Int>(0)
    /// Frames a drop-oldest push larger than the whole ring dropped itself
    /// (its oldest part never entered the ring; producer's count).
    let framesSkippedAtPush = Counter()
    /// Frames of the latest push (producer), to keep one push's worth above
    /// the target when stale audio is dropped.
    let lastPushFrames = Counter()
    /// A push is in progress (a second concurrent pusher gets badState).
    let producerBusy = Atomic<Bool>(false)

    // producer counters
    let framesPushed = Counter()
    let framesRejected = Counter()
    let nonfinitePushed = Counter()
    // render counters
    let framesConsumed = Counter()
    let framesRendered = Counter()
    let underrunFrames = Counter()
    let underrunEvents = Counter()
    /// Current drift correction in ppm (positive: consuming faster).
    let driftPpm = AtomicFloat(0)
    /// The drift controller's estimate of the producer's drift, ppm.
    let driftEstimatePpm = AtomicFloat(0)
    /// Last window's low-water mark of the buffer, ms (-1 before the first).
    let lowWaterMs = AtomicFloat(-1)
    /// The effective drift target (DriftController, rule 5), ms; 0 when off.
    let effectiveTargetMs: AtomicFloat
    let driftSaturated = Atomic<Bool>(false)
    /// Frames the renderer dropped (stale or overwritten audio, flushes).
    let framesDropped = Counter()
    let framesFlushed = Counter()
    /// `PlaybackPhase` raw value, for statistics.
    let phase = Atomic<Int32>(PlaybackPhase.priming.rawValue)
    let position = PositionPublisher()

    /// Returns nil when an allocation fails. `outputRate` and `rampFrames`
    /// are the engine's current output format.
    init?(config: SourceConfig, engine: EngineConfig, outputRate: Int, rampFrames: Int,
          pull: PullCallback? = nil, pullContext: UnsafeMutableRawPointer? = nil) {
        domain = config.domain
        isCall = config.domain == .call
        sampleRate = config.sampleRate
        channels = config.channels
        resamplerQuality = engine.resamplerQuality
        // A pull source runs on the render clock: nothing to compensate.
        let target = pull == nil ? config.targetBufferMs : 0
        driftCompensation = target > 0
        driftTargetFrames = Double(config.sampleRate) * Double(target) / 1000
        effectiveTargetMs = AtomicFloat(target)
        startThresholdFrames = pull == nil ? config.startThresholdFrames : 0
        dropOldest = config.effectiveOverrunPolicy == .dropOldest
        capacityFrames = config.ringCapacityFrames
        self.pull = pull
        self.pullContext = pullContext
        let resampler: Resampler?
        if SourceState.needsResampler(sourceRate: config.sampleRate, outputRate: outputRate) {
            // Backend (speexdsp or libsamplerate) chosen by the resampler
            // from quality and rates, at the fixed nominal ratio: drift is
            // the drift stage's (see Resampler, DriftStage).
            resampler = Resampler(quality: engine.resamplerQuality, channels: config.channels,
                                  inputRate: config.sampleRate, outputRate: outputRate,
                                  driftCompensation: false)
            switch resampler {
            case .none: return nil
            case .some: break
            }
        } else {
            resampler = nil
        }
        // Failable allocations (Allocation): on any failure free what this
        // init already has (the ring, resampler and fade tail free
        // themselves) and fail.
        guard let ring = SPSCRing(capacityFrames: config.physicalRingFrames, channels: config.channels),
              let scratch = Allocation.allocate(repeating: Float(0), count: engine.maxFrames * config.channels)
        else { return nil }
        guard let gainCurve = Allocation.allocate(repeating: Float(0), count: engine.maxFrames) else {
            Allocation.free(scratch)
            return nil
        }
        guard let zeros = Allocation.allocate(repeating: Float(0), count: Resampler.drainInputFrames * config.channels)
        else {
            Allocation.free(scratch)
            Allocation.free(gainCurve)
            return nil
        }
        guard let tail = FadeTail(channels: config.channels) else {
            Allocation.free(scratch)
            Allocation.free(gainCurve)
            Allocation.free(zeros)
            return nil
        }
        guard let render = Allocation.make(SourceRenderState(
            gainRamp: GainRamp(initial: config.gain, rampFrames: rampFrames), resampler: resampler,
            tail: tail, drift: DriftController(targetFrames: driftTargetFrames, sampleRate: config.sampleRate,
                                               maxTargetFrames: Double(config.ringCapacityFrames / 2)))) else {
            Allocation.free(scratch)
            Allocation.free(gainCurve)
            Allocation.free(zeros)
            return nil
        }
        let stage = driftCompensation ? DriftStage.make(channels: config.channels, maxFrames: engine.maxFrames) : nil
        if driftCompensation && stage == nil {
            Allocation.destroy(render)
            Allocation.free(scratch)
            Allocation.free(gainCurve)
            Allocation.free(zeros)
            return nil
        }
        self.stage = stage
        self.ring = ring
        self.scratch = scratch
        self.gainCurve = gainCurve
        self.zeros = zeros
        self.render = render
        targetGain = AtomicFloat(config.gain)
        requestedGain = AtomicFloat(config.gain)
    }

    /// Same rate: the ring is read directly (bypass). Drift correction is
    /// not a reason to resample: the drift stage does it, only when needed.
    static func needsResampler(sourceRate: Int, outputRate: Int) -> Bool {
        sourceRate != outputRate
    }

    deinit {
        Allocation.destroy(render)
        Allocation.destroy(stage)
        Allocation.free(scratch)
        Allocation.free(gainCurve)
        Allocation.free(zeros)
    }

    /// Bytes RTMix allocates for a source (state, ring, scratch, gain curve,
    /// render state; the fixed-ratio resampler's own state excluded: the C
    /// libraries', and the polyphase FIR's tables and buffer, at most
    /// ~0.5 MiB for a stereo source at the finest ratio it takes, 50 KiB
    /// at 44.1 → 48 kHz stereo), nil on overflow. The engine's memory cap
    /// counts this.
    static func memoryBytes(config: SourceConfig, engine: EngineConfig) -> Int? {
        guard let ring = SPSCRing.memoryBytes(capacityFrames: config.physicalRingFrames, channels: config.channels)
        else { return nil }
        return memoryBytes(ringBytes: ring, channels: config.channels, engineMaxFrames: engine.maxFrames,
                           driftStage: config.targetBufferMs > 0)
    }

    static func memoryBytes(ringBytes: Int, channels: Int, engineMaxFrames: Int, driftStage: Bool) -> Int {
        MemoryLayout<SourceState>.stride + ringBytes + MemoryLayout<SourceRenderState>.stride
            + MemoryLayout<Float>.stride * engineMaxFrames * (channels + 1)
            + MemoryLayout<Float>.stride * channels * (Resampler.drainInputFrames + 2 * FadeTail.maxFrames)
            + (driftStage ? MemoryLayout<DriftStage>.stride
                + DriftStage.memoryBytes(channels: channels, maxFrames: engineMaxFrames) : 0)
    }

    /// What this source holds (see `memoryBytes(config:engine:)`).
    func memoryBytes(engineMaxFrames: Int) -> Int {
        SourceState.memoryBytes(ringBytes: SPSCRing.memoryBytes(capacityFrames: ring.capacityFrames,
                                                                channels: channels) ?? 0,
                                channels: channels, engineMaxFrames: engineMaxFrames, driftStage: stage != nil)
    }
}

/// The part of a source only the render thread reads and writes (and a
/// control thread while it holds the render role, see `setOutputFormat`).
struct SourceRenderState: ~Copyable {
    var gainRamp: GainRamp
    /// nil: the source bypasses resampling (same rate, no drift compensation).
    var resampler: Resampler?
    var playback = SourcePlayback()
    var drift: DriftController
    var tail: FadeTail
    /// Fade-in level of the audio after a (re)start: 0 → 1 over the fade.
    var fadeIn: Float = 1
    /// The renderer has processed this source at least once.
    var rendered = false
    /// The last flush request handled.
    var flushSeen: UInt32 = 0
    /// Input frames that reached the output (fractional under resampling).
    var inputPlayed: Double = 0
    /// The resampler was drained at the end of the stream (reset before reuse).
    var resamplerDrained = false
    /// Producer counters already reported as events.
    var reportedRejected: UInt64 = 0
    var reportedNonfinite: UInt64 = 0
    /// `framesSkippedAtPush` already reported as dropped.
    var reportedSkippedAtPush: UInt64 = 0
    var reportedSaturated = false
    /// `framesRejected` as of the last block (a refused push means the
    /// producer paces itself on the ring).
    var rejectedSeen: UInt64 = 0

    init(gainRamp: GainRamp, resampler: consuming Resampler?, tail: consuming FadeTail, drift: DriftController) {
        self.gainRamp = gainRamp
        self.resampler = resampler
        self.drift = drift
        self.tail = tail
    }
}

/// A pull source's callback (C: `rtmix_pull_callback`): fill `out` with
/// `frames` interleaved frames of `channels` channels; return the frames
/// written (0...frames; fewer is an underrun), or a negative value at the
/// end of the stream (the source then drains). Runs on the render thread.
public typealias PullCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Float>?, Int32, Int32) -> Int32
