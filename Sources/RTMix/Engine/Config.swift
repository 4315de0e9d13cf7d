/// Gain domain of a source. `call` is far-end RTC voice and never goes below
/// the engine's call gain floor; `media` is decoded player PCM.
public enum Domain: Int32, Sendable, CaseIterable {
    case call = 0
    case media = 1
}

/// Resampler quality for sources whose rate differs from the engine's (or
/// that use drift compensation). See `Resampler` for the backend rule.
public enum ResamplerQuality: UInt32, Sendable {
    /// Default: the cheapest band-limited converter (98–147 dB SNR in the
    /// engine's 1 kHz accuracy tests). RTMix's exact-phase polyphase FIR
    /// (`PolyphaseResampler`) for every ratio it can tabulate (all pairs
    /// of the common rates 8 … 192 kHz, 44.1 kHz ↔ 48 kHz included);
    /// libsamplerate SRC_SINC_FASTEST for finer ratios (e.g. 8,001 Hz).
    case sincFastest = 0
    /// Always libsamplerate SRC_SINC_MEDIUM_QUALITY.
    case sincMedium = 1
    /// Always libsamplerate SRC_SINC_BEST_QUALITY.
    case sincBest = 2
    /// Always libsamplerate SRC_LINEAR (audible aliasing; tests only).
    case linear = 3
}

/// What a push into a full ring does.
public enum OverrunPolicy: Int32, Sendable {
    /// By domain: call sources `.dropOldest`, media sources `.reject`.
    case domainDefault = 0
    /// Favour latency: the push is accepted and the oldest audio is dropped
    /// (counted, `audioDropped` event), so latency never grows.
    case dropOldest = 1
    /// Favour completeness: what does not fit is refused (`bufferFull`,
    /// the accepted count tells how much went in); nothing is lost.
    case reject = 2
}

/// Largest gain the setters accept (+24 dB).
public let maxGain: Float = 16

/// Supported sample rates and channel counts, shared by engine and sources.
let supportedRates = 8_000...192_000
let supportedChannels = 1...2

/// Engine configuration. Defaults match `rtmix_engine_config_init`.
public struct EngineConfig: Sendable, Equatable {
    public var sampleRate: Int = 48_000
    public var channels: Int = 2
    public var maxFrames: Int = 4096
    public var maxSources: Int = 32
    public var callGainFloor: Float = 0.1
    public var gainRampMs: Float = 10
    public var limiterThresholdDb: Float = -1
    public var resamplerQuality: ResamplerQuality = .sincFastest
    /// Capture (microphone) rate in Hz, 8000...48000; 0 (default) turns the
    /// capture path off, so hosts that only render are unchanged.
    public var captureRate: Int = 0
    /// Microphone channels, 1 or 2 (a stereo mic is downmixed before the
    /// canceller; the published output has the same channel count, each
    /// channel carrying the same signal).
    public var captureChannels: Int = 1
    /// Echo canceller tail in ms (the longest echo path it models):
    /// 10...1000, default 200; 0 turns the canceller off.
    public var aecTailMs: Int = 200
    /// Noise suppression after the canceller (speex preprocessor).
    public var noiseSuppression = true
    /// Residual-echo suppression after the canceller.
    public var echoSuppression = true
    /// Automatic gain control of the published voice.
    public var agc = false
    /// With stereo output, cancel each loudspeaker's echo on its own
    /// (speexdsp's two-speaker canceller: +7 to +31 dB over a mono downmix
    /// reference with two distinct loudspeaker paths, at 1.8× the
    /// canceller's cost; Benchmarks/Exploratory/stereo_reference.c).
    /// false, or mono output: one canceller on the mono downmix.
    public var aecStereoReference = true
    /// Media ducking while call-domain voice is active, in dB: -60...0.
    /// Default 0: off, the media keeps the level the app set (the render
    /// path is unchanged, bit for bit). Ducking is opt-in: an app that wants
    /// its media lowered under the voice sets e.g. -12. See `Ducker` and
    /// docs/ducking.md.
    public var duckDepthDb: Float = 0
    /// Time the duck takes to reach its depth, ms (1...1000; default 20).
    public var duckAttackMs: Float = 20
    /// Time it takes to return to 0 dB after the voice (and the 100 ms
    /// hold) ended, ms (1...5000; default 300).
    public var duckReleaseMs: Float = 300
    /// "No RTC sound" alarm (`callAudioMissing`): a call source inaudible at
    /// the output for this long, ms: 100...60000, default 2000; 0 = off.
    public var callAudioMissingMs: Int = 2000
    /// Cap on the memory RTMix allocates for this engine and its sources, in
    /// bytes: default `defaultMaxMemoryBytes` (64 MiB); 0 = no cap. An
    /// engine whose own buffers exceed it is not created, and a source that
    /// would take the total above it is not added (`.limit`). Counted: the
    /// buffers RTMix allocates (rings, scratch, capture path); not counted:
    /// the resampler libraries' and speexdsp's internal state.
    public var maxMemoryBytes: Int = EngineConfig.defaultMaxMemoryBytes

    /// 64 MiB: 32 stereo 48 kHz sources with 400 ms rings take about 10 MiB.
    public static var defaultMaxMemoryBytes: Int { @_noLocks get { 64 << 20 } }

    @_noLocks public init() {}

    /// Capture rates the engine accepts (besides 0 = off).
    public static let captureRates = 8_000...48_000

    /// Checks every field; returns nil when valid.
    public func validate() -> RTMixError? {
        guard supportedRates.contains(sampleRate), supportedChannels.contains(channels) else {
            return .unsupportedFormat
        }
        guard (1...16_384).contains(maxFrames), (1...256).contains(maxSources),
              callGainFloor.isFinite, callGainFloor >= 0, callGainFloor <= 1,
              gainRampMs.isFinite, gainRampMs >= 1, gainRampMs <= 1000,
              limiterThresholdDb.isFinite, limiterThresholdDb >= -20, limiterThresholdDb <= 0,
              maxMemoryBytes >= 0
        else { return .invalidArgument }
        // capture_channels is checked even with capture off: it sizes the
        // zero-fill of a refused capture call.
        guard supportedChannels.contains(captureChannels) else { return .unsupportedFormat }
        guard duckDepthDb.isFinite, duckDepthDb >= -60, duckDepthDb <= 0,
              duckAttackMs.isFinite, duckAttackMs >= 1, duckAttackMs <= 1000,
              duckReleaseMs.isFinite, duckReleaseMs >= 1, duckReleaseMs <= 5000,
              callAudioMissingMs == 0 || (100...60_000).contains(callAudioMissingMs)
        else { return .invalidArgument }
        if captureRate != 0 {
            guard EngineConfig.captureRates.contains(captureRate) else { return .unsupportedFormat }
            guard aecTailMs == 0 || (10...1000).contains(aecTailMs) else { return .invalidArgument }
        }
        return nil
    }

    /// Reference channels the canceller gets (1 or 2).
    var captureReferenceChannels: Int { aecStereoReference && channels == 2 ? 2 : 1 }

    /// The canceller's frame: 10 ms at the capture rate.
    var captureFrameSize: Int { captureRate / 100 }

    /// Frames of one gain ramp at `rate` (at least 1).
    func rampFrames(at rate: Int) -> Int { max(1, Int((Float(rate) * gainRampMs / 1000).rounded())) }
}

/// Source configuration. Defaults match `rtmix_source_config_init`.
public struct SourceConfig: Sendable, Equatable {
    public var domain: Domain
    public var sampleRate: Int
    public var channels: Int
    /// Ring capacity in source frames; 0 picks at least 400 ms, rounded up to
    /// a power of two.
    public var bufferFrames: Int = 0
    public var gain: Float = 1
    /// Clock-drift compensation target in ms; on by default (call 40 ms,
    /// media 100 ms: `defaultTargetBufferMs`). The renderer keeps the
    /// source's low-water mark (the least audio buffered within each
    /// 0.5 s) at this level by resampling up to ±`maxDriftCorrectionPpm`
    /// faster or slower (see `DriftController`), for sources pushed on a
    /// clock of their own. 0 turns it off: the source plays at its nominal
    /// rate (and a same-rate source is mixed bit-exact, without a
    /// resampler). Otherwise 5...2000.
    public var targetBufferMs: Float
    /// Audio the source must hold before it starts (and restarts after an
    /// underrun or a flush), in ms. -1 (default): `targetBufferMs`; 0:
    /// start with the first audio; otherwise up to 2000.
    public var startThresholdMs: Float = -1
    /// What a push does when the ring is full (default: by domain).
    public var overrunPolicy: OverrunPolicy = .domainDefault

    /// Largest drift correction, ppm (3.5 cents of pitch: inaudible).
    public static var maxDriftCorrectionPpm: Float { @_noLocks get { 2000 } }

    /// Default drift target of a domain, ms.
    public static func defaultTargetBufferMs(_ domain: Domain) -> Float {
        switch domain {
        case .call: return 40
        case .media: return 100
        }
    }

    public init(domain: Domain, sampleRate: Int, channels: Int) {
        self.domain = domain
        self.sampleRate = sampleRate
        self.channels = channels
        targetBufferMs = SourceConfig.defaultTargetBufferMs(domain)
    }

    public static let maxBufferFrames = 1 << 22

    /// Timing off, for hosts that feed a source in lockstep with rendering
    /// (file processors, tests): no drift compensation (a same-rate source
    /// is mixed bit-exact), start with the first audio, refuse what does not
    /// fit rather than drop.
    public mutating func untimed() {
        targetBufferMs = 0
        startThresholdMs = 0
        overrunPolicy = .reject
    }

    /// The policy in force.
    var effectiveOverrunPolicy: OverrunPolicy {
        switch overrunPolicy {
        case .domainDefault: return domain == .call ? .dropOldest : .reject
        default: return overrunPolicy
        }
    }

    /// The start threshold in source frames.
    var startThresholdFrames: Int {
        let ms = startThresholdMs < 0 ? targetBufferMs : startThresholdMs
        return Int((Double(sampleRate) * Double(ms) / 1000).rounded())
    }

    public func validate() -> RTMixError? {
        guard supportedRates.contains(sampleRate), supportedChannels.contains(channels) else {
            return .unsupportedFormat
        }
        guard bufferFrames >= 0, bufferFrames <= SourceConfig.maxBufferFrames,
              gain.isFinite, gain >= 0, gain <= maxGain,
              targetBufferMs == 0 || (targetBufferMs >= 5 && targetBufferMs <= 2000),
              startThresholdMs == -1 || (startThresholdMs >= 0 && startThresholdMs <= 2000)
        else { return .invalidArgument }
        // An explicit ring that cannot hold the drift compensation's target
        // level: the level could never be reached (continuous correction).
        guard bufferFrames == 0 || targetBufferMs == 0
                || Double(bufferFrames) >= Double(sampleRate) * Double(targetBufferMs) / 1000
        else { return .invalidArgument }
        return nil
    }

    /// Source frames one render block of `maxFrames` output frames at
    /// `outputRate` consumes (rounded up, plus the drift correction's
    /// ±0.1 % and a few frames of resampler look-ahead when resampling).
    static func blockInputFrames(sampleRate: Int, maxFrames: Int, outputRate: Int) -> Int {
        if sampleRate == outputRate { return maxFrames }
        let exact = (maxFrames * sampleRate + outputRate - 1) / outputRate
        return exact + exact / 1000 + 1
    }

    /// Checks against the engine it is added to (besides `validate()`): the
    /// ring must hold one render block's input, or every block of
    /// `maxFrames` would underrun however fast the producer pushes.
    func validate(engineMaxFrames: Int, outputRate: Int) -> RTMixError? {
        let needed = SourceConfig.blockInputFrames(sampleRate: sampleRate, maxFrames: engineMaxFrames,
                                                   outputRate: outputRate)
        guard ringCapacityFrames >= needed else { return .invalidArgument }
        return nil
    }

    /// The ring storage allocated: twice the capacity for a drop-oldest
    /// source (see `SourceState.capacityFrames`).
    var physicalRingFrames: Int {
        effectiveOverrunPolicy == .dropOldest ? ringCapacityFrames * 2 : ringCapacityFrames
    }

    /// The ring capacity (a power of two).
    var ringCapacityFrames: Int {
        let minimum = sampleRate * 400 / 1000
        let forDrift = Int(Float(sampleRate) * max(targetBufferMs, startThresholdMs) / 1000) * 3
        let wanted = bufferFrames > 0 ? bufferFrames : max(minimum, forDrift)
        var capacity = 1
        while capacity < wanted { capacity <<= 1 }
        return capacity
    }
}
