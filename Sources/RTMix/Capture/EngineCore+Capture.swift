import CRTMixSupport
import Synchronization

/// The capture entry points and the capture-related control calls.
/// Capture: one thread at a time (its own real-time thread, or the render
/// thread right after render in a duplex callback). Real-time safe.
extension EngineCore {
    /// Claims the capture role after validating the call. Returns the link
    /// or a status; on failure `out` is zero-filled when its size is known.
    @_noLocks
    static func beginCapture(_ e: UnsafeMutablePointer<EngineCore>, frames: Int,
                             zero: (UnsafeMutableRawPointer, Int)?) -> (UnsafeMutablePointer<CaptureLink>?, Int32) {
        guard frames > 0 else { return (nil, RTMixError.invalidArgument.code) }
        guard frames <= e.pointee.config.maxFrames else { return (nil, RTMixError.tooManyFrames.code) }
        let samples = frames * e.pointee.config.captureChannels
        guard let link = e.pointee.capture else {
            if let z = zero { z.0.initializeMemory(as: UInt8.self, repeating: 0, count: samples * z.1) }
            return (nil, RTMixError.badState.code)
        }
        guard link.pointee.capturing.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else {
            if let z = zero { z.0.initializeMemory(as: UInt8.self, repeating: 0, count: samples * z.1) }
            return (nil, RTMixError.badState.code)
        }
        return (link, 0)
    }

    @_noLocks
    static func endCapture(_ link: UnsafeMutablePointer<CaptureLink>, frames: Int, start: UInt64) {
        let end: UInt64 = _unsafePerformance { rtmix_support_monotonic_ns() }
        CaptureMetrics.endCall(frames: frames, elapsedNs: end &- start, link: link.pointee)
        link.pointee.capturing.store(false, ordering: .releasing)
    }

    /// Processes `frames` microphone frames (capture rate, capture
    /// channels, interleaved) into the publish output `out` (same layout;
    /// may be the same buffer as `mic`).
    @_noLocks
    static func processCapture(_ e: UnsafeMutablePointer<EngineCore>, mic: UnsafePointer<Float>,
                               out: UnsafeMutablePointer<Float>, frames: Int) -> Int32 {
        let (l, status) = beginCapture(e, frames: frames, zero: (UnsafeMutableRawPointer(out), 4))
        guard let link = l else { return status }
        let start: UInt64 = _unsafePerformance { rtmix_support_monotonic_ns() }
        // Pointer copies: no formal access of the shared CaptureLink spans
        // the call (other threads read it meanwhile).
        let processor = link.pointee.processor
        processor.pointee.process(mic: mic, out: out, frames: frames, link: link.pointee)
        endCapture(link, frames: frames, start: start)
        return 0
    }

    /// As `processCapture`, int16 in and out (saturating).
    @_noLocks
    static func processCaptureS16(_ e: UnsafeMutablePointer<EngineCore>, mic: UnsafePointer<Int16>,
                                  out: UnsafeMutablePointer<Int16>, frames: Int) -> Int32 {
        let (l, status) = beginCapture(e, frames: frames, zero: (UnsafeMutableRawPointer(out), 2))
        guard let link = l else { return status }
        let start: UInt64 = _unsafePerformance { rtmix_support_monotonic_ns() }
        let p = link.pointee.processor
        let count = frames * p.pointee.framer.channels
        let input = p.pointee.framer.scratchIn, output = p.pointee.framer.scratchOut
        Mixing.convertFromS16(mic, input, count: count)
        p.pointee.process(mic: input, out: output, frames: frames, link: link.pointee)
        Mixing.convertToS16(output, out, count: count)
        endCapture(link, frames: frames, start: start)
        return 0
    }

    /// The host's playout-to-capture delay estimate (output + input
    /// latency) in ms, 0...1000; -1 forgets it. Any thread, lock-free.
    @_noLocks
    static func setStreamDelay(_ e: UnsafeMutablePointer<EngineCore>, ms: Int) -> Int32 {
        guard ms >= -1, ms <= 1000 else { return RTMixError.invalidArgument.code }
        guard let link = e.pointee.capture else { return RTMixError.badState.code }
        link.pointee.delayHintMs.store(Int32(ms), ordering: .relaxed)
        return 0
    }

    /// Gain at which a domain is mixed into the published output. Only the
    /// media domain can be published (call audio is the far end's: it is
    /// never sent back). Any thread, lock-free; ramped over 10 ms.
    @_noLocks
    static func setPublishGain(_ e: UnsafeMutablePointer<EngineCore>, media: Bool, _ gain: Float) -> Int32 {
        guard media, gain.isFinite, gain >= 0, gain <= 16 else {  // 16: maxGain
            return RTMixError.invalidArgument.code
        }
        guard let link = e.pointee.capture else { return RTMixError.badState.code }
        link.pointee.publishGain.store(gain)
        return 0
    }

    @_noLocks
    static func publishGain(_ e: UnsafeMutablePointer<EngineCore>, media: Bool) -> Float {
        guard media, let link = e.pointee.capture else { return 0 }
        return link.pointee.publishGain.load()
    }

    /// Replaces the clock the capture path times render and capture calls
    /// with (`nil` restores CLOCK_MONOTONIC). Only while neither render nor
    /// capture runs.
    static func setClock(_ e: UnsafeMutablePointer<EngineCore>,
                         _ clock: (@convention(c) (UnsafeMutableRawPointer?) -> UInt64)?,
                         context: UnsafeMutableRawPointer?) -> Int32 {
        var engineClock = EngineClock()
        if let c = clock {
            engineClock.read = c
            engineClock.context = context
            engineClock.host = true
        }
        // The one engine clock: render stalls, source positions, the
        // capture path's timing, event timestamps and the rate limiters all
        // read `e.clock` (the capture link and both event queues point to it).
        e.pointee.clock.pointee = engineClock
        return 0
    }

    /// The capture statistics (zero when capture is off). Any thread.
    static func captureStats(_ e: UnsafeMutablePointer<EngineCore>) -> CaptureStats {
        var st = CaptureStats()
        guard let link = e.pointee.capture else { return st }
        st.calls = link.pointee.calls.read()
        st.frames = link.pointee.frames.read()
        st.latencyFrames = Int(link.pointee.latencyFrames.read())
        st.erleDb = link.pointee.erleDb.load()
        st.delayMs = link.pointee.delayMs.load()
        st.delaySource = CaptureStats.DelaySource(rawValue: Int32(link.pointee.delaySource.read())) ?? .none
        st.estimatedDelayMs = link.pointee.estimatedDelayMs.load()
        st.estimateConfidence = link.pointee.estimateConfidence.load()
        st.driftPpm = link.pointee.driftPpm.load()
        st.doubleTalk = link.pointee.doubleTalk.read() != 0
        st.doubleTalkFrames = link.pointee.doubleTalkFrames.read()
        st.diverged = link.pointee.diverged.read() != 0
        st.resets = link.pointee.resets.read()
        st.callsWithoutReference = link.pointee.callsWithoutReference.read()
        st.delayChanges = link.pointee.delayChanges.read()
        st.referenceOverflowFrames = link.pointee.referenceOverflow.read()
        st.nonfiniteSamples = link.pointee.nonfinite.read()
        st.captureNsMax = link.pointee.captureNsMax.read()
        return st
    }
}
