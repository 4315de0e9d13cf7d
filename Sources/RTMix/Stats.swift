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
    public init() {}
}
