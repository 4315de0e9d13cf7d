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
    @usableFromInline let rampFrames: Int
    /// Underrun fade length in output frames (2 ms).
    @usableFromInline let fadeFrames: Int
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
    @usableFromInline let rendering = Atomic<Bool>(false)
    /// Odd while a render pass runs; see SourceSlot for the reclamation rule.
    @usableFromInline let renderSeq = Atomic<UInt64>(0)

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

    /// Control-thread state, guarded by `controlLock` (own allocation).
    @usableFromInline let controlState: UnsafeMutablePointer<EngineControlState>

    /// Returns nil when the lock cannot be created. `config` must be valid.
    init?(config: EngineConfig) {
        guard let lock = rtmix_support_mutex_create() else { return nil }
        controlLock = lock
        self.config = config
        rampFrames = config.rampFrames
        fadeFrames = max(1, config.sampleRate / 500)
        slots = .allocate(capacity: config.maxSources)
        for i in 0..<config.maxSources { (slots + i).initialize(to: SourceSlot()) }
        slotControl = .allocate(capacity: config.maxSources)
        slotControl.initialize(repeating: SlotControl(), count: config.maxSources)
        mix = .allocate(capacity: config.maxFrames * config.channels)
        mix.initialize(repeating: 0, count: config.maxFrames * config.channels)
        domainCurves = .allocate(capacity: 2 * config.maxFrames)
        domainCurves.initialize(repeating: 1, count: 2 * config.maxFrames)
        callGainTarget = AtomicFloat(1)
        mediaGainTarget = AtomicFloat(1)
        renderState = .allocate(capacity: 1)
        renderState.initialize(to: EngineRenderState(
            callRamp: GainRamp(initial: 1, rampFrames: config.rampFrames),
            mediaRamp: GainRamp(initial: 1, rampFrames: config.rampFrames),
            limiter: Limiter(thresholdDb: config.limiterThresholdDb, sampleRate: config.sampleRate)))
        controlState = .allocate(capacity: 1)
        controlState.initialize(to: EngineControlState())
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
        rtmix_support_mutex_destroy(controlLock)
    }
}

/// The engine state only the render thread reads and writes.
@usableFromInline
struct EngineRenderState {
    @usableFromInline var callRamp: GainRamp
    @usableFromInline var mediaRamp: GainRamp
    @usableFromInline var limiter: Limiter
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
