import CRTMixSupport
import Synchronization

/// The engine's state, allocated once at a stable address. The C handle
/// (`rtmix_engine *`) and the Swift `Engine` both point at it.
///
/// Threads: render (one at a time, enforced by `rendering`), one producer
/// per source, control threads serialised by `controlLock`. See
/// `EngineCore+Render.swift`, `+Push.swift` and `+Control.swift`.
struct EngineCore: ~Copyable {
    let config: EngineConfig
    /// The current output format, for any thread (the renderer uses its own
    /// copy in `renderState`); changed only by `setOutputFormat`. One atomic
    /// holding rate and channels together (`packFormat`), so a reader never
    /// sees the new rate with the old channel count.
    let outputFormat: Atomic<UInt32>
    let slots: UnsafeMutablePointer<SourceSlot>
    let slotControl: UnsafeMutablePointer<SlotControl>
    /// The mix bus stage: the int16 render's mix buffer and the media bus
    /// (render thread only; own allocation, see `MixBus`).
    let mixBus: UnsafeMutablePointer<MixBus>
    /// 2 × maxFrames: per-frame domain gains of the current block.
    let domainCurves: UnsafeMutablePointer<Float>
    let controlLock: UnsafeMutableRawPointer

    // control → render
    let callGainTarget: AtomicFloat
    let mediaGainTarget: AtomicFloat

    /// Render-thread-only state (own allocation, see `EngineRenderState`).
    let renderState: UnsafeMutablePointer<EngineRenderState>
    /// The render role: true while a thread renders (or a format change
    /// holds it). A second concurrent render call gets badState.
    let renderRole = Atomic<Bool>(false)
    /// Render pass counter and pace (see SlotLifecycle for the reclamation rule).
    let passes = RenderPasses()
    /// The engine clock (`setClock`), own allocation: changed by control
    /// threads only while neither render nor capture runs.
    let clock: UnsafeMutablePointer<EngineClock>
    /// `setInterrupted(true)`: render plays silence (from the first block:
    /// no fade-out tail) and consumes nothing.
    let interrupted = Atomic<Bool>(false)
    /// Incremented when an interruption ends; the renderer treats its next
    /// block as a resume after a stall.
    let resumeRequests = Atomic<UInt32>(0)
    /// The host's output (device) latency, reported in source positions.
    let outputLatencyNs = Atomic<UInt64>(0)

    // render counters
    let renderCalls = Counter()
    let framesRendered = Counter()
    let underrunFrames = Counter()
    let limiterActiveFrames = Counter()
    let nonfiniteMixed = Counter()
    let renderNsLast = Counter()
    let renderNsMax = Counter()
    let limiterGain = AtomicFloat(1)
    let limiterMinGain = AtomicFloat(1)
    let renderTimes: LatencyHistogram
    /// Render → control: why audio went missing (see EngineEventKind).
    let events: EventQueue
    /// Render-gap and stall detection (render and control sides).
    let stall = StallDetector()
    /// Media ducking (render thread only) and its gain, for stats.
    let ducker: UnsafeMutablePointer<Ducker>
    let duckGain = AtomicFloat(1)
    let duckedFrames = Counter()
    /// The limiter is in a heavy (> 6 dB) episode (render thread only).
    let limiterHeavyEpisode = Atomic<Bool>(false)
    /// maxSources: the "no RTC sound" monitor of each slot (render thread).
    let callMonitors: UnsafeMutablePointer<CallMonitorSlot>

    /// Control-thread state, guarded by `controlLock` (own allocation).
    let controlState: UnsafeMutablePointer<EngineControlState>
    /// The capture path (reference tap, ring, canceller); nil when
    /// `config.captureRate == 0`.
    let capture: UnsafeMutablePointer<CaptureLink>?

    /// Bytes RTMix allocated for the engine itself, capture path included
    /// (sources are counted separately; speexdsp's and the resampler
    /// libraries' own state is not counted). See `memoryInUse`.
    let baseBytes: Int

    /// Returns nil when an allocation (or the lock) fails; then everything
    /// already allocated is freed. `config` must be valid.
    init?(config: EngineConfig) {
        var batch = AllocationBatch()
        var duckCurve: UnsafeMutablePointer<Float>? = nil
        if config.duckDepthDb < 0 {
            guard let c = batch.allocate(repeating: Float(1), count: config.maxFrames) else { return nil }
            duckCurve = c
        }
        guard let domainCurves = batch.allocate(repeating: Float(1), count: 2 * config.maxFrames),
              let slotControl = batch.allocate(repeating: SlotControl(), count: config.maxSources),
              let renderState = batch.allocate(
                  repeating: EngineRenderState(config: config, sampleRate: config.sampleRate,
                                               channels: config.channels, callGain: 1, mediaGain: 1), count: 1),
              let controlState = batch.allocate(repeating: EngineControlState(), count: 1),
              let clock = batch.allocate(repeating: EngineClock(), count: 1),
              let ducker = batch.allocate(repeating: Ducker(config: config, curve: duckCurve), count: 1),
              let callMonitors = batch.allocate(repeating: CallMonitorSlot(), count: config.maxSources),
              let histogram = LatencyHistogram(),
              let slots = Allocation.allocate(SourceSlot.self, count: config.maxSources)
        else { return nil }
        // Sized for stereo whatever the current format: the output format
        // may change later (setOutputFormat) without allocating here.
        guard let bus = MixBus(maxFrames: config.maxFrames, publishesMedia: config.captureRate != 0,
                               ducking: config.duckDepthDb < 0) else {
            Allocation.free(slots)
            return nil
        }
        let mixBusBytes = bus.allocatedBytes + MemoryLayout<MixBus>.stride
        guard let mixBus = Allocation.make(bus) else {
            Allocation.free(slots)
            return nil
        }
        var link: UnsafeMutablePointer<CaptureLink>? = nil
        var captureBytes = 0
        if config.captureRate != 0 {
            guard let l = CaptureLink(config: config, clock: clock) else {
                Allocation.destroy(mixBus)
                Allocation.free(slots)
                return nil
            }
            captureBytes = l.allocatedBytes + MemoryLayout<CaptureLink>.stride
            guard let p = Allocation.make(l) else {
                Allocation.destroy(mixBus)
                Allocation.free(slots)
                return nil
            }
            link = p
        }
        guard let lock = rtmix_support_mutex_create() else {
            Allocation.destroy(link)
            Allocation.destroy(mixBus)
            Allocation.free(slots)
            return nil
        }
        for i in 0..<config.maxSources { (slots + i).initialize(to: SourceSlot()) }
        baseBytes = batch.commit() + mixBusBytes + captureBytes + LatencyHistogram.allocatedBytes
            + MemoryLayout<SourceSlot>.stride * config.maxSources + MemoryLayout<EngineCore>.stride
        capture = link
        controlLock = lock
        self.config = config
        outputFormat = Atomic(EngineCore.packFormat(sampleRate: config.sampleRate, channels: config.channels))
        self.slots = slots
        self.slotControl = slotControl
        self.mixBus = mixBus
        self.domainCurves = domainCurves
        callGainTarget = AtomicFloat(1)
        mediaGainTarget = AtomicFloat(1)
        self.renderState = renderState
        self.controlState = controlState
        renderTimes = histogram
        self.clock = clock
        events = EventQueue(clock: clock)
        self.ducker = ducker
        self.callMonitors = callMonitors
    }

    /// A new engine at a stable address: `.limit` when its own memory
    /// exceeds `config.maxMemoryBytes`, `.noMemory` when an allocation
    /// fails (nothing is left allocated). `config` must be valid.
    static func create(_ config: EngineConfig) -> Result<UnsafeMutablePointer<EngineCore>, RTMixError> {
        guard let c = EngineCore(config: config) else { return .failure(.noMemory) }
        if config.maxMemoryBytes != 0 && c.baseBytes > config.maxMemoryBytes { return .failure(.limit) }
        guard let p = Allocation.make(c) else { return .failure(.noMemory) }
        return .success(p)
    }

    /// Frees an engine from `create` (its sources included).
    static func destroy(_ p: UnsafeMutablePointer<EngineCore>) {
        Allocation.destroy(p)
    }

    deinit {
        for i in 0..<config.maxSources {
            if let s = slots[i].source.load(ordering: .acquiring) {
                Allocation.destroy(s)
            }
        }
        Allocation.destroy(slots, count: config.maxSources)
        Allocation.free(slotControl)
        Allocation.destroy(mixBus)
        Allocation.free(domainCurves)
        Allocation.free(renderState)
        Allocation.free(controlState)
        Allocation.destroy(capture)
        Allocation.free(clock)
        Allocation.free(ducker.pointee.curve)
        Allocation.free(ducker)
        Allocation.free(callMonitors)
        rtmix_support_mutex_destroy(controlLock)
    }
}

extension EngineCore {
    /// rate << 4 | channels (rates ≤ 192 000 < 2^28, channels ≤ 2).
    @_noLocks
    static func packFormat(sampleRate: Int, channels: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: sampleRate) << 4 | UInt32(truncatingIfNeeded: channels)
    }

    /// The engine clock (real-time safe; see `EngineClock`).
    @_noLocks
    func now() -> UInt64 { clock.pointee.now() }

    /// The current output format, read in one atomic load.
    @_noLocks
    func currentFormat() -> (sampleRate: Int, channels: Int) {
        let f = outputFormat.load(ordering: .relaxed)
        return (Int(truncatingIfNeeded: f >> 4), Int(truncatingIfNeeded: f & 0xF))
    }
}

/// The engine state only the render thread reads and writes (and a control
/// thread while it holds the render role, see `setOutputFormat`).
struct EngineRenderState {
    /// Output format.
    var sampleRate: Int
    var channels: Int
    var rampFrames: Int
    /// Underrun fade length in output frames (2 ms).
    var fadeFrames: Int
    var callRamp: GainRamp
    var mediaRamp: GainRamp
    var limiter: Limiter
    var resumeSeen: UInt32 = 0

    init(config: EngineConfig, sampleRate: Int, channels: Int, callGain: Float, mediaGain: Float) {
        self.sampleRate = sampleRate
        self.channels = channels
        rampFrames = config.rampFrames(at: sampleRate)
        fadeFrames = max(1, sampleRate / 500)
        callRamp = GainRamp(initial: callGain, rampFrames: rampFrames)
        mediaRamp = GainRamp(initial: mediaGain, rampFrames: rampFrames)
        limiter = Limiter(thresholdDb: config.limiterThresholdDb, sampleRate: sampleRate)
    }
}

/// The engine state only control threads touch, under the control lock.
struct EngineControlState {
    var nextGeneration: UInt32 = 0
    var activeSources = 0
    var sourcesAdded: UInt64 = 0
    var sourcesRemoved: UInt64 = 0
    /// Counters of sources already freed, so engine totals never go down.
    var retiredRejected: UInt64 = 0
    var retiredNonfinite: UInt64 = 0
}
