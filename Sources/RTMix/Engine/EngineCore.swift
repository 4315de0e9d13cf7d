import CRTMixSupport
import Synchronization

/// The engine's state, allocated once at a stable address. The C handle
/// (`rtmix_engine *`) and the Swift `Engine` both point at it.
///
/// Threads: render (one at a time, enforced by `rendering`), one producer
/// per source, control threads serialised by `controlLock`. See
/// `EngineCore+Render.swift`, `+Push.swift` and `+Control.swift`.
@usableFromInline
struct EngineCore: ~Copyable {
    @usableFromInline let config: EngineConfig
    /// The current output format, for any thread (the renderer uses its own
    /// copy in `renderState`); changed only by `setOutputFormat`. One atomic
    /// holding rate and channels together (`packFormat`), so a reader never
    /// sees the new rate with the old channel count.
    @usableFromInline let outputFormat: Atomic<UInt32>
    @usableFromInline let slots: UnsafeMutablePointer<SourceSlot>
    @usableFromInline let slotControl: UnsafeMutablePointer<SlotControl>
    /// maxFrames × channels: the mix bus.
    @usableFromInline let mix: UnsafeMutablePointer<Float>
    /// 2 × maxFrames: per-frame domain gains of the current block.
    @usableFromInline let domainCurves: UnsafeMutablePointer<Float>
    @usableFromInline let controlLock: UnsafeMutableRawPointer

    // control → render
    @usableFromInline let callGainTarget: AtomicFloat
    @usableFromInline let mediaGainTarget: AtomicFloat

    /// Render-thread-only state (own allocation, see `EngineRenderState`).
    @usableFromInline let renderState: UnsafeMutablePointer<EngineRenderState>
    /// The render role: true while a thread renders (or a format change
    /// holds it). A second concurrent render call gets badState.
    @usableFromInline let renderRole = Atomic<Bool>(false)
    /// Render pass counter and pace (see SlotLifecycle for the reclamation rule).
    @usableFromInline let passes = RenderPasses()
    /// The engine clock (`setClock`), own allocation: changed by control
    /// threads only while neither render nor capture runs.
    @usableFromInline let clock: UnsafeMutablePointer<EngineClock>
    /// `setInterrupted(true)`: render plays silence and consumes nothing.
    @usableFromInline let interrupted = Atomic<Bool>(false)
    /// Incremented when an interruption ends; the renderer treats its next
    /// block as a resume after a stall.
    @usableFromInline let resumeRequests = Atomic<UInt32>(0)
    /// The host's output (device) latency, reported in source positions.
    @usableFromInline let outputLatencyNs = Atomic<UInt64>(0)

    // render counters
    @usableFromInline let renderCalls = Counter()
    @usableFromInline let framesRendered = Counter()
    @usableFromInline let underrunFrames = Counter()
    @usableFromInline let limiterActiveFrames = Counter()
    @usableFromInline let nonfiniteMixed = Counter()
    @usableFromInline let renderNsLast = Counter()
    @usableFromInline let renderNsMax = Counter()
    @usableFromInline let limiterGain = AtomicFloat(1)
    @usableFromInline let limiterMinGain = AtomicFloat(1)
    @usableFromInline let renderTimes = LatencyHistogram()
    /// Render → control: why audio went missing (see EngineEventKind).
    @usableFromInline let events = EventQueue()
    /// Render-gap and stall detection (render and control sides).
    @usableFromInline let stall = StallDetector()
    /// Media ducking (render thread only) and its gain, for stats.
    @usableFromInline let ducker: UnsafeMutablePointer<Ducker>
    @usableFromInline let duckGain = AtomicFloat(1)
    @usableFromInline let duckedFrames = Counter()
    /// The limiter is in a heavy (> 6 dB) episode (render thread only).
    @usableFromInline let limiterHeavyEpisode = Atomic<Bool>(false)
    /// maxSources: the "no RTC sound" monitor of each slot (render thread).
    @usableFromInline let callMonitors: UnsafeMutablePointer<CallMonitorSlot>

    /// Control-thread state, guarded by `controlLock` (own allocation).
    @usableFromInline let controlState: UnsafeMutablePointer<EngineControlState>
    /// The capture path (reference tap, ring, canceller); nil when
    /// `config.captureRate == 0`.
    @usableFromInline let capture: UnsafeMutablePointer<CaptureLink>?

    /// Returns nil when the lock cannot be created. `config` must be valid.
    init?(config: EngineConfig) {
        guard let lock = rtmix_support_mutex_create() else { return nil }
        var link: UnsafeMutablePointer<CaptureLink>? = nil
        if config.captureRate != 0 {
            guard let l = CaptureLink(config: config) else {
                rtmix_support_mutex_destroy(lock)
                return nil
            }
            let p = UnsafeMutablePointer<CaptureLink>.allocate(capacity: 1)
            p.initialize(to: l)
            link = p
        }
        capture = link
        controlLock = lock
        self.config = config
        outputFormat = Atomic(EngineCore.packFormat(sampleRate: config.sampleRate, channels: config.channels))
        slots = .allocate(capacity: config.maxSources)
        for i in 0..<config.maxSources { (slots + i).initialize(to: SourceSlot()) }
        slotControl = .allocate(capacity: config.maxSources)
        slotControl.initialize(repeating: SlotControl(), count: config.maxSources)
        // Sized for stereo whatever the current format: the output format
        // may change later (setOutputFormat) without allocating here.
        mix = .allocate(capacity: config.maxFrames * 2)
        mix.initialize(repeating: 0, count: config.maxFrames * 2)
        domainCurves = .allocate(capacity: 2 * config.maxFrames)
        domainCurves.initialize(repeating: 1, count: 2 * config.maxFrames)
        callGainTarget = AtomicFloat(1)
        mediaGainTarget = AtomicFloat(1)
        renderState = .allocate(capacity: 1)
        renderState.initialize(to: EngineRenderState(config: config, sampleRate: config.sampleRate,
                                                     channels: config.channels, callGain: 1, mediaGain: 1))
        controlState = .allocate(capacity: 1)
        controlState.initialize(to: EngineControlState())
        clock = .allocate(capacity: 1)
        clock.initialize(to: EngineClock())
        ducker = .allocate(capacity: 1)
        ducker.initialize(to: Ducker(config: config))
        callMonitors = .allocate(capacity: config.maxSources)
        callMonitors.initialize(repeating: CallMonitorSlot(), count: config.maxSources)
    }

    deinit {
        for i in 0..<config.maxSources {
            if let s = slots[i].source.load(ordering: .acquiring) {
                s.deinitialize(count: 1)
                s.deallocate()
            }
        }
        slots.deinitialize(count: config.maxSources)
        slots.deallocate()
        slotControl.deallocate()
        mix.deallocate()
        domainCurves.deallocate()
        renderState.deallocate()
        controlState.deallocate()
        clock.deallocate()
        ducker.pointee.deallocate()
        ducker.deallocate()
        callMonitors.deallocate()
        if let p = capture {
            p.deinitialize(count: 1)
            p.deallocate()
        }
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
    @usableFromInline @_noLocks
    func now() -> UInt64 { clock.pointee.now() }

    /// The current output format, read in one atomic load.
    @usableFromInline @_noLocks
    func currentFormat() -> (sampleRate: Int, channels: Int) {
        let f = outputFormat.load(ordering: .relaxed)
        return (Int(truncatingIfNeeded: f >> 4), Int(truncatingIfNeeded: f & 0xF))
    }
}

/// The engine state only the render thread reads and writes (and a control
/// thread while it holds the render role, see `setOutputFormat`).
@usableFromInline
struct EngineRenderState {
    /// Output format.
    @usableFromInline var sampleRate: Int
    @usableFromInline var channels: Int
    @usableFromInline var rampFrames: Int
    /// Underrun fade length in output frames (2 ms).
    @usableFromInline var fadeFrames: Int
    @usableFromInline var callRamp: GainRamp
    @usableFromInline var mediaRamp: GainRamp
    @usableFromInline var limiter: Limiter
    @usableFromInline var resumeSeen: UInt32 = 0

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
@usableFromInline
struct EngineControlState {
    var nextGeneration: UInt32 = 0
    var activeSources = 0
    var sourcesAdded: UInt64 = 0
    var sourcesRemoved: UInt64 = 0
    /// Counters of sources already freed, so engine totals never go down.
    var retiredRejected: UInt64 = 0
    var retiredNonfinite: UInt64 = 0
}
