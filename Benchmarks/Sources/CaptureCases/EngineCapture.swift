import RTMix

/// The real engine in a duplex callback: each block, `prepare()` advances
/// the simulated clock by 10 ms, pushes 10 ms of the far end into one call
/// source (mono, at the engine's output rate) and renders it (the render
/// side hands the reference to the capture side); `capture()` is one
/// `processCapture` of the 10 ms microphone block.
final class EngineCapture: CaptureCase {
    let engine: Engine
    let source: SourceID
    let signals: CaptureSignals
    let playoutRate: Int
    let playoutBlock: Int
    /// Far end at the playout rate, one loop plus one block (contiguous windows).
    let playout: UnsafeMutableBufferPointer<Float>
    let playoutLoop: Int
    var playoutPosition = 0
    /// Microphone loop plus one block.
    let mic: UnsafeMutableBufferPointer<Float>
    var micPosition = 0
    /// The microphone block of the next capture() (set in prepare()).
    var micBlock: UnsafeBufferPointer<Float>
    let out: UnsafeMutableBufferPointer<Float>
    let rendered: UnsafeMutableBufferPointer<Float>
    let clockNs: UnsafeMutablePointer<UInt64>
    let frames: Int
    // output / microphone power after the warm-up (computed in prepare()).
    var blocks = 0
    var micEnergy: Double = 0
    var outEnergy: Double = 0
    /// Capture statistics at the end of the warm-up (the first calls, before
    /// the first reference arrives, legitimately have none).
    var warm = CaptureStats()

    init(signals: CaptureSignals, outputRate: Int, outputChannels: Int) throws {
        self.signals = signals
        var config = EngineConfig()
        config.sampleRate = outputRate
        config.channels = outputChannels
        config.captureRate = signals.captureRate
        config.captureChannels = 1
        // The same canceller as the floor (one reference channel): the
        // ratio is RTMix's cost around the same speexdsp calls.
        config.aecStereoReference = false
        engine = try Engine(config)
        source = try engine.addSource(SourceConfig(domain: .call, sampleRate: outputRate, channels: 1))
        playoutRate = outputRate
        playoutBlock = outputRate / 100
        let far = signals.far(atRate: outputRate)
        playoutLoop = far.count
        playout = .allocate(capacity: far.count + playoutBlock)
        for i in 0..<playout.count { playout[i] = far[i % far.count] }
        frames = signals.blockFrames
        mic = .allocate(capacity: signals.loopFrames + frames)
        for i in 0..<mic.count { mic[i] = signals.mic[i % signals.loopFrames] }
        micBlock = UnsafeBufferPointer(start: mic.baseAddress, count: frames)
        out = .allocate(capacity: frames)
        out.initialize(repeating: 0)
        rendered = .allocate(capacity: playoutBlock * outputChannels)
        rendered.initialize(repeating: 0)
        clockNs = .allocate(capacity: 1)
        clockNs.initialize(to: 1_000_000_000)
        try engine.setClock({ context in context!.assumingMemoryBound(to: UInt64.self).pointee },
                            context: UnsafeMutableRawPointer(clockNs))
        // The host's playout-to-capture delay, as a host would report it.
        try engine.setStreamDelay(ms: CaptureSignals.delayMs)
    }

    deinit {
        playout.deallocate()
        mic.deallocate()
        out.deallocate()
        rendered.deallocate()
        clockNs.deallocate()
    }

    func prepare() {
        // Statistics of the previous block (not measured).
        for i in 0..<frames {
            micEnergy += Double(micBlock[i]) * Double(micBlock[i])
            outEnergy += Double(out[i]) * Double(out[i])
        }
        blocks += 1
        clockNs.pointee &+= 10_000_000
        let chunk = UnsafeBufferPointer(rebasing: playout[playoutPosition..<(playoutPosition + playoutBlock)])
        let accepted = try! engine.push(chunk, to: source, channels: 1)
        precondition(accepted == playoutBlock, "source ring full")
        playoutPosition += playoutBlock
        if playoutPosition >= playoutLoop { playoutPosition -= playoutLoop }
        try! engine.render(into: rendered, frames: playoutBlock)
        micBlock = UnsafeBufferPointer(rebasing: mic[micPosition..<(micPosition + frames)])
        micPosition += frames
        if micPosition >= signals.loopFrames { micPosition -= signals.loopFrames }
    }

    func capture() {
        try! engine.processCapture(mic: micBlock, out: out, frames: frames)
    }

    func outputChecksum() -> Float {
        var s: Float = 0
        for x in out { s += x.magnitude }
        return s
    }

    /// Resets the output/mic power accumulation (called after the warm-up).
    func resetPowers() {
        micEnergy = 0
        outEnergy = 0
        blocks = 0
        warm = engine.stats().capture
    }

    func problems() -> String? {
        let s = engine.stats()
        let c = s.capture
        var p: [String] = []
        if s.underrunFrames != 0 || s.rejectedFrames != 0 || s.limiterActiveFrames != 0 {
            p.append("render: underrunFrames=\(s.underrunFrames) rejectedFrames=\(s.rejectedFrames) "
                     + "limiterActiveFrames=\(s.limiterActiveFrames)")
        }
        if c.callsWithoutReference != warm.callsWithoutReference || c.referenceOverflowFrames != 0
            || c.nonfiniteSamples != 0 {
            p.append("capture after warm-up: callsWithoutReference=\(c.callsWithoutReference - warm.callsWithoutReference) "
                     + "referenceOverflowFrames=\(c.referenceOverflowFrames) nonfinite=\(c.nonfiniteSamples)")
        }
        if c.delayChanges != warm.delayChanges { p.append("delay changed after warm-up") }
        if c.diverged || c.resets != 0 { p.append("canceller diverged=\(c.diverged) resets=\(c.resets)") }
        if c.delaySource == .none { p.append("no delay in use") }
        // The canceller must do real work: at least 20 dB of echo removed.
        if c.erleDb < 20 { p.append("ERLE only \(c.erleDb) dB") }
        return p.isEmpty ? nil : p.joined(separator: "; ")
    }

    func summary() -> String {
        let c = engine.stats().capture
        let attenuation = outEnergy > 0 ? 10 * log10(micEnergy / outEnergy) : .infinity
        return "calls=\(c.calls) callsWithoutReference(warm-up)=\(warm.callsWithoutReference) erleDb=\(c.erleDb) delayMs=\(c.delayMs) source=\(c.delaySource) "
            + "estimatedDelayMs=\(c.estimatedDelayMs) confidence=\(c.estimateConfidence) "
            + "driftPpm=\(c.driftPpm) doubleTalkFrames=\(c.doubleTalkFrames - warm.doubleTalkFrames) latencyFrames=\(c.latencyFrames) delayChanges=\(c.delayChanges) "
            + "mic/out=\(String(attenuation)) dB"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
