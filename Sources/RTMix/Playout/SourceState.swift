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
@usableFromInline
struct SourceState: ~Copyable {
    @usableFromInline let domain: Domain
    /// `domain == .call`, precomputed: the renderer avoids enum comparisons.
    @usableFromInline let isCall: Bool
    @usableFromInline let sampleRate: Int
    @usableFromInline let channels: Int
    @usableFromInline let ring: SPSCRing
    /// Resampler parameters, kept to rebuild it when the output format changes.
    @usableFromInline let resamplerQuality: ResamplerQuality
    @usableFromInline let driftCompensation: Bool
    /// Drift compensation target in source frames (0 = off).
    @usableFromInline let driftTargetFrames: Double
    /// maxFrames × channels floats: resampler output.
    @usableFromInline let scratch: UnsafeMutablePointer<Float>
    /// maxFrames floats: per-frame gain of the current block.
    @usableFromInline let gainCurve: UnsafeMutablePointer<Float>

    /// Render-thread-only state, in its own allocation so that its writes
    /// never share an access with fields other threads read.
    @usableFromInline let render: UnsafeMutablePointer<SourceRenderState>

    // control → render
    @usableFromInline let targetGain: AtomicFloat
    @usableFromInline let requestedGain: AtomicFloat
    @usableFromInline let muted: AtomicFloat  // 1 = muted

    // producer counters
    @usableFromInline let framesPushed = Counter()
    @usableFromInline let framesRejected = Counter()
    @usableFromInline let nonfinitePushed = Counter()
    // render counters
    @usableFromInline let framesConsumed = Counter()
    @usableFromInline let framesRendered = Counter()
    @usableFromInline let underrunFrames = Counter()
    @usableFromInline let underrunEvents = Counter()
    /// Current drift correction in ppm (positive: consuming faster).
    @usableFromInline let driftPpm = AtomicFloat(0)

    /// Returns nil when an allocation fails. `outputRate` and `rampFrames`
    /// are the engine's current output format.
    init?(config: SourceConfig, engine: EngineConfig, outputRate: Int, rampFrames: Int) {
        domain = config.domain
        isCall = config.domain == .call
        sampleRate = config.sampleRate
        channels = config.channels
        resamplerQuality = engine.resamplerQuality
        driftCompensation = config.targetBufferMs > 0
        driftTargetFrames = Double(config.sampleRate) * Double(config.targetBufferMs) / 1000
        let resampler: Resampler?
        if SourceState.needsResampler(sourceRate: config.sampleRate, outputRate: outputRate,
                                      driftCompensation: driftCompensation) {
            // Backend (speexdsp or libsamplerate) chosen by the resampler
            // from quality, rates and drift compensation: see Resampler.
            resampler = Resampler(quality: engine.resamplerQuality, channels: config.channels,
                                  inputRate: config.sampleRate, outputRate: outputRate,
                                  driftCompensation: driftCompensation)
            switch resampler {
            case .none: return nil
            case .some: break
            }
        } else {
            resampler = nil
        }
        // Failable allocations (Allocation): on any failure free what this
        // init already has (the ring and resampler free themselves) and fail.
        guard let ring = SPSCRing(capacityFrames: config.ringCapacityFrames, channels: config.channels),
              let scratch = Allocation.allocate(repeating: Float(0), count: engine.maxFrames * config.channels)
        else { return nil }
        guard let gainCurve = Allocation.allocate(repeating: Float(0), count: engine.maxFrames) else {
            Allocation.free(scratch)
            return nil
        }
        guard let render = Allocation.make(SourceRenderState(
            gainRamp: GainRamp(initial: config.gain, rampFrames: rampFrames), resampler: resampler)) else {
            Allocation.free(scratch)
            Allocation.free(gainCurve)
            return nil
        }
        self.ring = ring
        self.scratch = scratch
        self.gainCurve = gainCurve
        self.render = render
        targetGain = AtomicFloat(config.gain)
        requestedGain = AtomicFloat(config.gain)
        muted = AtomicFloat(0)
    }

    /// Same rate and no drift compensation: the ring is read directly (bypass).
    static func needsResampler(sourceRate: Int, outputRate: Int, driftCompensation: Bool) -> Bool {
        sourceRate != outputRate || driftCompensation
    }

    deinit {
        Allocation.destroy(render)
        Allocation.free(scratch)
        Allocation.free(gainCurve)
    }

    /// Bytes RTMix allocates for a source (state, ring, scratch, gain curve,
    /// render state; resampler libraries' own state excluded), nil on
    /// overflow. The engine's memory cap counts this.
    static func memoryBytes(config: SourceConfig, engine: EngineConfig) -> Int? {
        guard let ring = SPSCRing.memoryBytes(capacityFrames: config.ringCapacityFrames, channels: config.channels)
        else { return nil }
        return memoryBytes(ringBytes: ring, channels: config.channels, engineMaxFrames: engine.maxFrames)
    }

    static func memoryBytes(ringBytes: Int, channels: Int, engineMaxFrames: Int) -> Int {
        MemoryLayout<SourceState>.stride + ringBytes + MemoryLayout<SourceRenderState>.stride
            + MemoryLayout<Float>.stride * engineMaxFrames * (channels + 1)
    }

    /// What this source holds (see `memoryBytes(config:engine:)`).
    func memoryBytes(engineMaxFrames: Int) -> Int {
        SourceState.memoryBytes(ringBytes: SPSCRing.memoryBytes(capacityFrames: ring.capacityFrames,
                                                                channels: channels) ?? 0,
                                channels: channels, engineMaxFrames: engineMaxFrames)
    }
}

/// The part of a source only the render thread reads and writes (and a
/// control thread while it holds the render role, see `setOutputFormat`).
@usableFromInline
struct SourceRenderState: ~Copyable {
    @usableFromInline var gainRamp: GainRamp
    /// nil: the source bypasses resampling (same rate, no drift compensation).
    var resampler: Resampler?
    /// Underrun fade level; starts at 1 so the first data plays unfaded
    /// (bit-exact), falls to 0 in an underrun, fades back in on resume.
    @usableFromInline var presence: Float = 1
    /// The source has produced data at least once (underruns count from then).
    @usableFromInline var started = false
    @usableFromInline var starving = false
    /// The renderer has processed this source at least once.
    @usableFromInline var rendered = false
    /// Output frames missed in the current underrun episode.
    @usableFromInline var episodeMissed = 0
    /// Producer counters already reported as events.
    @usableFromInline var reportedRejected: UInt64 = 0
    @usableFromInline var reportedNonfinite: UInt64 = 0
    /// Drift compensation: smoothed buffer level (source frames) and the
    /// current correction (fraction; +0.001 = consume 1000 ppm faster).
    @usableFromInline var smoothedLevel: Double = -1
    @usableFromInline var driftCorrection: Double = 0

    init(gainRamp: GainRamp, resampler: consuming Resampler?) {
        self.gainRamp = gainRamp
        self.resampler = resampler
    }
}
