import CRTMixHeader

/// Conversions between the C ABI structs of rtmix.h and the Swift types.
///
/// ABI evolution: every struct starts with `size`. Inputs shorter than the
/// first published version are rejected; fields past an input's `size` take
/// their defaults. Outputs are copied up to the caller's `size`, and `size`
/// is set to the bytes filled (min(caller's size, ours)).
enum CConversion {
    /// Size of each struct in ABI version 0 (RTMix 0.1.0, the first
    /// published layout, x86_64/arm64 LP64). Fixed numbers, never derived
    /// from the current layout: a caller compiled against the 0.1 header
    /// passes these sizes forever, and must keep working when fields are
    /// appended. Structs shorter than this are rejected.
    static var minimumConfigSize: UInt32 { @_noLocks get { 36 } }
    static var minimumSourceConfigSize: UInt32 { @_noLocks get { 28 } }
    static var minimumStatsSize: UInt32 { @_noLocks get { 112 } }
    static var minimumSourceStatsSize: UInt32 { @_noLocks get { 96 } }
    static var minimumEventSize: UInt32 { @_noLocks get { 32 } }
    static var minimumPositionSize: UInt32 { @_noLocks get { 40 } }

    /// A C `uint32_t` as `Int`, saturating at `Int.max`: `Int(v)` traps
    /// above 2^31 − 1 on 32-bit targets. Out-of-range values are then
    /// rejected by validation like any other.
    @_noLocks @inline(__always)
    static func int(_ v: UInt32) -> Int {
        Int(truncatingIfNeeded: min(v, UInt32(truncatingIfNeeded: Int.max)))
    }

    @_noLocks
    static func cConfig(_ c: EngineConfig) -> rtmix_engine_config {
        var r = rtmix_engine_config()
        r.size = UInt32(MemoryLayout<rtmix_engine_config>.size)
        r.sample_rate = UInt32(c.sampleRate)
        r.channels = UInt32(c.channels)
        r.max_frames = UInt32(c.maxFrames)
        r.max_sources = UInt32(c.maxSources)
        r.call_gain_floor = c.callGainFloor
        r.gain_ramp_ms = c.gainRampMs
        r.limiter_threshold_db = c.limiterThresholdDb
        r.resampler_quality = qualityCode(c.resamplerQuality)
        r.capture_rate = UInt32(c.captureRate)
        r.capture_channels = UInt32(c.captureChannels)
        r.aec_tail_ms = UInt32(c.aecTailMs)
        r.noise_suppression = c.noiseSuppression ? 1 : 0
        r.echo_suppression = c.echoSuppression ? 1 : 0
        r.agc = c.agc ? 1 : 0
        r.aec_stereo_reference = c.aecStereoReference ? 1 : 0
        r.duck_depth_db = c.duckDepthDb
        r.duck_attack_ms = c.duckAttackMs
        r.duck_release_ms = c.duckReleaseMs
        r.call_audio_missing_ms = UInt32(clamping: c.callAudioMissingMs)
        r.max_memory_bytes = UInt64(c.maxMemoryBytes)
        return r
    }

    /// `ResamplerQuality.rawValue`, spelled out: the synthesized accessor is
    /// not checked by `@_noLocks` across files.
    @_noLocks
    static func qualityCode(_ q: ResamplerQuality) -> UInt32 {
        switch q {
        case .sincFastest: return 0
        case .sincMedium: return 1
        case .sincBest: return 2
        case .linear: return 3
        }
    }

    /// nil when `size` is too small or the quality is unknown.
    static func swiftConfig(_ p: UnsafePointer<rtmix_engine_config>) -> EngineConfig? {
        guard let c = copyIn(p, defaults: cConfig(EngineConfig()), minimum: minimumConfigSize),
              let quality = ResamplerQuality(rawValue: c.resampler_quality)
        else { return nil }
        var r = EngineConfig()
        r.sampleRate = int(c.sample_rate)
        r.channels = int(c.channels)
        r.maxFrames = int(c.max_frames)
        r.maxSources = int(c.max_sources)
        r.callGainFloor = c.call_gain_floor
        r.gainRampMs = c.gain_ramp_ms
        r.limiterThresholdDb = c.limiter_threshold_db
        r.resamplerQuality = quality
        r.captureRate = int(c.capture_rate)
        r.captureChannels = int(c.capture_channels)
        r.aecTailMs = int(c.aec_tail_ms)
        r.noiseSuppression = c.noise_suppression != 0
        r.echoSuppression = c.echo_suppression != 0
        r.agc = c.agc != 0
        r.aecStereoReference = c.aec_stereo_reference != 0
        r.duckDepthDb = c.duck_depth_db
        r.duckAttackMs = c.duck_attack_ms
        r.duckReleaseMs = c.duck_release_ms
        r.callAudioMissingMs = int(c.call_audio_missing_ms)
        // Saturates (above Int.max on 32-bit targets: in effect no cap).
        r.maxMemoryBytes = Int(truncatingIfNeeded: min(c.max_memory_bytes, UInt64(Int.max)))
        return r
    }

    /// nil when `size` is too small or the domain is unknown.
    static func swiftSourceConfig(_ p: UnsafePointer<rtmix_source_config>) -> SourceConfig? {
        var defaults = rtmix_source_config()
        defaults.gain = 1
        defaults.start_threshold_ms = -1
        defaults.overrun_policy = 0
        guard let c = copyIn(p, defaults: defaults, minimum: minimumSourceConfigSize),
              let domain = Domain(rawValue: c.domain) else { return nil }
        var r = SourceConfig(domain: domain, sampleRate: int(c.sample_rate), channels: int(c.channels))
        r.bufferFrames = int(c.buffer_frames)
        r.gain = c.gain
        r.targetBufferMs = c.target_buffer_ms
        r.startThresholdMs = c.start_threshold_ms
        guard let policy = OverrunPolicy(rawValue: c.overrun_policy) else { return nil }
        r.overrunPolicy = policy
        return r
    }

    static func cStats(_ s: EngineStats) -> rtmix_engine_stats {
        var r = rtmix_engine_stats()
        r.size = UInt32(MemoryLayout<rtmix_engine_stats>.size)
        r.active_sources = UInt32(s.activeSources)
        r.render_calls = s.renderCalls
        r.frames_rendered = s.framesRendered
        r.underrun_frames = s.underrunFrames
        r.rejected_frames = s.rejectedFrames
        r.nonfinite_samples = s.nonfiniteSamples
        r.limiter_active_frames = s.limiterActiveFrames
        r.limiter_gain_db = s.limiterGainDb
        r.limiter_min_gain_db = s.limiterMinGainDb
        r.render_ns_last = s.renderNsLast
        r.render_ns_max = s.renderNsMax
        r.render_ns_p50 = s.renderNsP50
        r.render_ns_p99 = s.renderNsP99
        r.sources_added = s.sourcesAdded
        r.sources_removed = s.sourcesRemoved
        let c = s.capture
        r.capture_calls = c.calls
        r.capture_frames = c.frames
        r.capture_latency_frames = UInt32(clamping: c.latencyFrames)
        r.aec_delay_source = c.delaySource.rawValue
        r.aec_erle_db = c.erleDb
        r.aec_delay_ms = c.delayMs
        r.aec_estimated_delay_ms = c.estimatedDelayMs
        r.aec_estimate_confidence = c.estimateConfidence
        r.aec_drift_ppm = c.driftPpm
        r.aec_double_talk = c.doubleTalk ? 1 : 0
        r.aec_diverged = c.diverged ? 1 : 0
        r.capture_rate = UInt32(clamping: s.captureRate)
        r.aec_double_talk_frames = c.doubleTalkFrames
        r.aec_resets = c.resets
        r.capture_calls_without_reference = c.callsWithoutReference
        r.aec_delay_changes = c.delayChanges
        r.capture_reference_overflow_frames = c.referenceOverflowFrames
        r.capture_nonfinite_samples = c.nonfiniteSamples
        r.capture_ns_max = c.captureNsMax
        r.duck_gain_db = s.duckGainDb
        r.ducked_frames = s.duckedFrames
        r.events_suppressed = s.eventsSuppressed
        r.memory_bytes = UInt64(s.memoryBytes)
        r.events_dropped = s.eventsDropped
        return r
    }

    static func cSourceStats(_ s: SourceStats) -> rtmix_source_stats {
        var r = rtmix_source_stats()
        r.size = UInt32(MemoryLayout<rtmix_source_stats>.size)
        r.domain = s.domain.rawValue
        r.sample_rate = UInt32(s.sampleRate)
        r.channels = UInt32(s.channels)
        r.frames_pushed = s.framesPushed
        r.frames_rejected = s.framesRejected
        r.frames_consumed = s.framesConsumed
        r.frames_rendered = s.framesRendered
        r.underrun_frames = s.underrunFrames
        r.underrun_events = s.underrunEvents
        r.nonfinite_samples = s.nonfiniteSamples
        r.buffered_frames = UInt32(s.bufferedFrames)
        r.capacity_frames = UInt32(s.capacityFrames)
        r.buffered_ms = s.bufferedMs
        r.gain = s.gain
        r.muted = s.muted ? 1 : 0
        r.drift_ppm = s.driftPpm
        r.drift_estimate_ppm = s.driftEstimatePpm
        r.low_water_ms = s.lowWaterMs
        r.target_ms = s.targetMs
        r.drift_saturated = s.driftSaturated ? 1 : 0
        r.frames_dropped = s.framesDropped
        r.frames_flushed = s.framesFlushed
        r.state = s.phase.rawValue
        r.paused = s.paused ? 1 : 0
        r.ended = s.ended ? 1 : 0
        r.pull = s.pull ? 1 : 0
        r.writable_frames = UInt32(clamping: s.writableFrames)
        r.effective_target_ms = s.effectiveTargetMs
        return r
    }

    // The struct rules themselves live once, in C (CRTMixHeader's
    // rtmix_struct_abi.h), shared with the session engine's C layer.

    /// `*_init` of an output struct: all zero but `size` (the first field).
    static func initEmpty<T>(_ p: UnsafeMutablePointer<T>?, _ empty: T) -> Int32 {
        guard let p else { return RTMixError.invalidArgument.code }
        rtmix_abi_init_empty(p, MemoryLayout<T>.size)
        return 0
    }

    /// Reads a caller's input struct: at most `size` bytes of it (an older
    /// caller's struct is shorter than ours), the rest from `defaults`.
    /// nil when `size` is below `minimum` (the version-0 size).
    static func copyIn<T>(_ p: UnsafePointer<T>, defaults: T, minimum: UInt32) -> T? {
        var value = defaults
        let status = withUnsafeMutableBytes(of: &value) {
            rtmix_abi_copy_in($0.baseAddress!, MemoryLayout<T>.size, p, minimum)
        }
        return status == 0 ? value : nil
    }

    /// Copies `value` into `dest` up to `dest.pointee.size` bytes (the
    /// caller's struct version) and writes back in `size` the bytes actually
    /// filled, min(caller's size, ours): a newer caller sees which of its
    /// fields this library knew. Sizes below `minimum` (the version-0 size)
    /// are rejected (nothing written).
    static func copyOut<T>(_ value: inout T, to dest: UnsafeMutablePointer<T>, minimum: UInt32) -> Int32 {
        withUnsafeBytes(of: &value) { src in
            copyOutRaw(src.baseAddress!, size: MemoryLayout<T>.size, to: UnsafeMutableRawPointer(dest), minimum: minimum)
        }
    }

    /// The non-generic core of `copyOut` (real-time safe).
    @_noLocks
    static func copyOutRaw(_ src: UnsafeRawPointer, size: Int, to dest: UnsafeMutableRawPointer,
                           minimum: UInt32) -> Int32 {
        _unsafePerformance { rtmix_abi_copy_out(dest, src, size, minimum) }
    }
}
