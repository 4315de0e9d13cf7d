import CRTMixHeader
import Synchronization

/// The Swift API of the mixer. The C ABI (`rtmix.h`) is a thin layer over
/// the same core, so both behave identically.
///
/// Threads: `render*` from the render thread only (one at a time);
/// `push*` from one producer thread per source; everything else from
/// control threads. `render*` and `push*` are real-time safe.
public final class Engine: @unchecked Sendable {
    let core: UnsafeMutablePointer<EngineCore>

    public init(_ config: EngineConfig = EngineConfig()) throws(RTMixError) {
        if let error = config.validate() { throw error }
        switch EngineCore.create(config) {
        case .success(let p): core = p
        case .failure(let error): throw error
        }
    }

    deinit {
        EngineCore.destroy(core)
    }

    /// The configuration, with the current output format.
    public var config: EngineConfig {
        var c = core.pointee.config
        (c.sampleRate, c.channels) = core.pointee.currentFormat()
        return c
    }

    /// Changes the output rate and channel count of a running engine (e.g.
    /// a route change to Bluetooth HFP at 16 kHz mono, and back). Sources,
    /// their ids, rings and gains are kept; resamplers are rebuilt here, on
    /// the calling thread. Call it while the device is stopped: a render
    /// call during the change fails with `.badState` (it never waits), and
    /// if a render is in progress this throws `.badState` — try again.
    public func setOutputFormat(sampleRate: Int, channels: Int) throws(RTMixError) {
        let s = EngineCore.setOutputFormat(core, sampleRate: sampleRate, channels: channels)
        if s != 0 { throw RTMixError(code: s) }
    }

    // MARK: sources (control threads)

    public func addSource(_ config: SourceConfig) throws(RTMixError) -> SourceID {
        let r = EngineCore.addSource(core, config)
        if r.status != 0 { throw RTMixError(code: r.status) }
        return SourceID(rawValue: r.id)
    }

    public func removeSource(_ id: SourceID) throws(RTMixError) {
        let s = EngineCore.removeSource(core, id.rawValue)
        if s != 0 { throw RTMixError(code: s) }
    }

    public func setGain(_ gain: Float, for id: SourceID) throws(RTMixError) {
        let s = EngineCore.setSourceGain(core, id.rawValue, gain: gain, muted: nil)
        if s != 0 { throw RTMixError(code: s) }
    }

    public func setMuted(_ muted: Bool, for id: SourceID) throws(RTMixError) {
        let s = EngineCore.setSourceGain(core, id.rawValue, gain: nil, muted: muted)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// Sets a domain's gain (ramped). The call domain is clamped to
    /// `config.callGainFloor`.
    public func setDomainGain(_ gain: Float, for domain: Domain) throws(RTMixError) {
        let s = EngineCore.setDomainGain(core, domain, gain)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// The effective (post-floor) target gain of a domain.
    public func domainGain(_ domain: Domain) -> Float { EngineCore.domainGain(core, domain) }

    public func stats() -> EngineStats { EngineCore.engineStats(core) }

    /// The oldest event not yet read (why audio went missing or changed),
    /// or nil when there is none. Control threads; never blocks the renderer.
    /// Events carry a timestamp (`timeNs`, the engine's clock), the source
    /// and its domain, and are rate-limited (see `EventRateLimiter`). A
    /// render stall is detected here: when the render callback has been
    /// absent for several block periods (and the host did not call
    /// `setInterrupted(true)`), this returns `renderStalled` once.
    public func nextEvent() -> EngineEvent? {
        guard let raw = EngineCore.nextEvent(core), let kind = EngineEventKind(rawValue: raw.kind) else { return nil }
        return EngineEvent(kind: kind, source: raw.source == 0 ? nil : SourceID(rawValue: raw.source),
                           frameTime: raw.frameTime, value: raw.value, timeNs: raw.timeNs,
                           domain: Domain(rawValue: raw.domain), suppressed: raw.suppressed)
    }

    public func stats(for id: SourceID) throws(RTMixError) -> SourceStats {
        guard let s = EngineCore.sourceStats(core, id.rawValue) else { throw .notFound }
        return s
    }

    // MARK: producer thread (real-time safe)

    /// Pushes interleaved frames; returns how many frames fit (fewer than
    /// given when the ring is full). `channels` must be the source's channel
    /// count (else `.invalidArgument`) and `samples.count` a multiple of it.
    @discardableResult @_noLocks
    public func push(_ samples: UnsafeBufferPointer<Float>, to id: SourceID, channels: Int) throws(RTMixError) -> Int {
        try pushRaw(samples.baseAddress, count: samples.count, channels: channels, format: .f32, id: id)
    }

    @discardableResult @_noLocks
    public func push(_ samples: UnsafeBufferPointer<Int16>, to id: SourceID, channels: Int) throws(RTMixError) -> Int {
        try pushRaw(samples.baseAddress, count: samples.count, channels: channels, format: .s16, id: id)
    }

    @_noLocks
    func pushRaw(_ base: UnsafeRawPointer?, count: Int, channels: Int, format: EngineCore.SampleFormat,
                 id: SourceID) throws(RTMixError) -> Int {
        guard let base, channels > 0, count % channels == 0 else { throw .invalidArgument }
        var accepted = 0
        let s = EngineCore.push(core, id: id.rawValue, samples: base, format: format,
                                frames: count / channels, callerChannels: channels, accepted: &accepted)
        if s != 0 && s != RTMixError.bufferFull.code { throw RTMixError(code: s) }
        return accepted
    }

    /// Frames waiting in a source's ring, for a producer pacing itself.
    /// Real-time safe (no lock); any thread.
    @_noLocks
    public func bufferedFrames(of id: SourceID) throws(RTMixError) -> Int {
        let n = EngineCore.bufferedFrames(core, id: id.rawValue)
        if n < 0 { throw .notFound }
        return n
    }

    /// Frames a push could add now without dropping (drop-oldest) or
    /// refusing (reject) audio: a decoder paces itself on this.
    /// Real-time safe (no lock); any thread.
    @_noLocks
    public func writableFrames(of id: SourceID) throws(RTMixError) -> Int {
        let n = EngineCore.writableFrames(core, id: id.rawValue)
        if n < 0 { throw .notFound }
        return n
    }

    // MARK: source timing (real-time safe, lock-free)

    /// Pauses (silence after a short fade, ring untouched, nothing counted
    /// as underrun) or resumes (fade in) a source. Any thread.
    @_noLocks
    public func setPaused(_ paused: Bool, for id: SourceID) throws(RTMixError) {
        let s = EngineCore.setPaused(core, id: id.rawValue, paused)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// Drops the audio pushed so far (a seek), with a fade-out; the id,
    /// gains and position are kept, and the source re-primes. Call it from
    /// the producer thread (or with no push in flight): audio pushed after
    /// it plays. Clears `endSource`. `.badState` for pull sources.
    @_noLocks
    public func flush(_ id: SourceID) throws(RTMixError) {
        let s = EngineCore.flush(core, id: id.rawValue)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// End of stream: everything pushed plays out, including the
    /// resampler's tail; then a `sourceDrained` event and the source stays
    /// silent (no underrun is counted). Later pushes get `.badState` until
    /// a `flush`. Call after the last push (producer thread).
    @_noLocks
    public func endSource(_ id: SourceID) throws(RTMixError) {
        let s = EngineCore.end(core, id: id.rawValue)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// Where the source's audio is (A/V sync): see `SourcePosition`.
    /// Lock-free, any thread.
    @_noLocks
    public func position(of id: SourceID) throws(RTMixError) -> SourcePosition {
        let (s, p) = EngineCore.position(core, id: id.rawValue)
        if s != 0 { throw RTMixError(code: s) }
        return p
    }

    /// The host's output latency (device buffer + hardware), reported back
    /// in `position(of:)` so a player adds it. Any thread.
    @_noLocks
    public func setOutputLatency(ns: UInt64) {
        core.pointee.outputLatencyNs.store(ns, ordering: .relaxed)
    }

    /// Adds a pull source: `callback` runs on the render thread for the
    /// frames each block needs (see `PullCallback`). Control threads.
    public func addPullSource(_ config: SourceConfig, callback: PullCallback,
                              context: UnsafeMutableRawPointer?) throws(RTMixError) -> SourceID {
        let r = EngineCore.addSource(core, config, pull: callback, context: context)
        if r.status != 0 { throw RTMixError(code: r.status) }
        return SourceID(rawValue: r.id)
    }

    /// Interruption on/off (see `EngineCore.setInterrupted`). Control threads.
    public func setInterrupted(_ on: Bool) {
        _ = EngineCore.setInterrupted(core, on)
    }

    // MARK: capture (real-time safe)

    /// Processes `frames` microphone frames (capture rate and channels,
    /// interleaved) into `out` (the publish output: processed voice plus
    /// media at its publish gain; same layout). Call from the device's
    /// input callback: one thread at a time, either its own or the render
    /// thread right after render. `mic` and `out` may be the same memory.
    @_noLocks
    public func processCapture(mic: UnsafeBufferPointer<Float>, out: UnsafeMutableBufferPointer<Float>,
                               frames: Int) throws(RTMixError) {
        guard let m = mic.baseAddress, let o = out.baseAddress else { throw .invalidArgument }
        let need = frames * core.pointee.config.captureChannels
        guard frames > 0, mic.count >= need, out.count >= need else { throw .invalidArgument }
        let s = EngineCore.processCapture(core, mic: m, out: o, frames: frames)
        if s != 0 { throw RTMixError(code: s) }
    }

    @_noLocks
    public func processCapture(mic: UnsafeBufferPointer<Int16>, out: UnsafeMutableBufferPointer<Int16>,
                               frames: Int) throws(RTMixError) {
        guard let m = mic.baseAddress, let o = out.baseAddress else { throw .invalidArgument }
        let need = frames * core.pointee.config.captureChannels
        guard frames > 0, mic.count >= need, out.count >= need else { throw .invalidArgument }
        let s = EngineCore.processCaptureS16(core, mic: m, out: o, frames: frames)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// The host's playout-to-capture delay (output + input latency) in ms,
    /// 0...1000, or nil when unknown. A hint: the engine also estimates
    /// the delay and replaces a hint that is wrong. Any thread.
    @_noLocks
    public func setStreamDelay(ms: Int?) throws(RTMixError) {
        let s = EngineCore.setStreamDelay(core, ms: ms ?? -1)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// The gain at which `domain` is mixed into the published output
    /// (default 0: media is heard locally only). Only `.media` can be
    /// published; `.call` throws `.invalidArgument`. Any thread.
    public func setPublishGain(_ gain: Float, for domain: Domain) throws(RTMixError) {
        let s = EngineCore.setPublishGain(core, media: domain == .media, gain)
        if s != 0 { throw RTMixError(code: s) }
    }

    /// Replaces the clock (nanoseconds, any epoch, monotonic) with which the
    /// capture path times render and capture calls to measure the two
    /// devices' drift. The default is CLOCK_MONOTONIC at call time; a host
    /// with device timestamps (the time the block is played / was
    /// captured) or a simulation faster than real time provides its own.
    /// `clock` runs on the render and capture threads: it must be
    /// real-time safe. Call it only while neither render nor capture runs.
    public func setClock(_ clock: (@convention(c) (UnsafeMutableRawPointer?) -> UInt64)?,
                         context: UnsafeMutableRawPointer? = nil) throws(RTMixError) {
        let s = EngineCore.setClock(core, clock, context: context)
        if s != 0 { throw RTMixError(code: s) }
    }

    public func publishGain(_ domain: Domain) -> Float { EngineCore.publishGain(core, media: domain == .media) }

    // MARK: render thread (real-time safe)

    /// Renders `frames` interleaved frames (engine rate and channels) into
    /// `output`, which must hold at least frames × channels samples (checked
    /// against the current format). On error the first
    /// min(output.count, frames × 2) samples are set to 0.
    @_noLocks
    public func render(into output: UnsafeMutableBufferPointer<Float>, frames: Int) throws(RTMixError) {
        guard let base = output.baseAddress else { throw .invalidArgument }
        let s = EngineCore.render(core, into: base, frames: frames, capacity: output.count)
        if s != 0 { throw RTMixError(code: s) }
    }

    @_noLocks
    public func render(into output: UnsafeMutableBufferPointer<Int16>, frames: Int) throws(RTMixError) {
        guard let base = output.baseAddress else { throw .invalidArgument }
        let s = EngineCore.renderS16(core, into: base, frames: frames, capacity: output.count)
        if s != 0 { throw RTMixError(code: s) }
    }
}

/// A source handle. Never 0; never reused during an engine's life.
public struct SourceID: Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
}

/// The library version, from the `RTMIX_VERSION_*` macros of include/rtmix.h
/// (what `rtmix_version()` returns).
public enum RTMixVersion {
    public static var major: Int { Int(RTMIX_VERSION_MAJOR) }
    public static var minor: Int { Int(RTMIX_VERSION_MINOR) }
    public static var patch: Int { Int(RTMIX_VERSION_PATCH) }
}
