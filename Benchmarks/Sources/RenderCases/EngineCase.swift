import RTMix

/// The real engine, default configuration, sources fed through `push`.
/// `producerPpm` != 0: every producer pushes `1 + producerPpm·1e-6` times
/// what a callback consumes (the fraction carried from call to call), like
/// a producer on a clock of its own running that much fast.
final class EngineCase: RenderCase {
    let engine: Engine
    let ids: [SourceID]
    let loops: [SignalLoop]
    let output: UnsafeMutableBufferPointer<Float>
    let producerRatio: Double
    let checkDrift: Bool
    var carry: [Double]
    /// Drift case: callbacks (since `startChecking`) after which some source
    /// reported no correction, and callbacks checked.
    var notEngaged = 0
    var checkedCallbacks = 0
    var checking = false

    init(_ specs: [SourceSpec], untimed: Bool = false, producerPpm: Double = 0) throws {
        producerRatio = 1 + producerPpm * 1e-6
        checkDrift = producerPpm != 0
        carry = Array(repeating: 0, count: specs.count)
        var config = EngineConfig()
        config.sampleRate = outputRate
        config.channels = outputChannels
        engine = try Engine(config)
        var ids: [SourceID] = []
        var loops: [SignalLoop] = []
        for (i, spec) in specs.enumerated() {
            var sc = SourceConfig(domain: spec.kind == .media ? .media : .call,
                                  sampleRate: spec.rate, channels: spec.channels)
            if untimed { sc.untimed() }
            ids.append(try engine.addSource(sc))
            loops.append(SignalLoop(spec, index: i, tail: spec.framesPerCallback + 1))
        }
        self.ids = ids
        self.loops = loops
        output = .allocate(capacity: callbackFrames * outputChannels)
        output.initialize(repeating: 0)
        // Prefill 100 ms so the resampler never starves; afterwards each
        // feed() pushes exactly what one callback consumes on average.
        for _ in 0..<10 { feed() }
    }

    deinit { output.deallocate() }

    /// Drift case: from now on, `feed()` (unmeasured) checks that every
    /// source had a correction applied in the callback before.
    func startChecking() {
        checking = checkDrift
        notEngaged = 0
        checkedCallbacks = 0
    }

    func feed() {
        if checking {
            checkedCallbacks += 1
            for id in ids where try! engine.stats(for: id).driftPpm == 0 {
                notEngaged += 1
                break
            }
        }
        for i in 0..<ids.count {
            let loop = loops[i]
            carry[i] += Double(loop.spec.framesPerCallback) * producerRatio
            let n = Int(carry[i])
            carry[i] -= Double(n)
            let chunk = loop.next(n)
            let accepted = try! engine.push(chunk, to: ids[i], channels: loop.spec.channels)
            precondition(accepted == n, "ring full: the case pushes too much")
        }
    }

    func render() {
        try! engine.render(into: output, frames: callbackFrames)
    }

    func problems() -> String? {
        let s = engine.stats()
        if s.underrunFrames != 0 || s.rejectedFrames != 0 || s.limiterActiveFrames != 0 {
            return "underrunFrames=\(s.underrunFrames) rejectedFrames=\(s.rejectedFrames) "
                + "limiterActiveFrames=\(s.limiterActiveFrames) (renderCalls=\(s.renderCalls))"
        }
        if checkDrift && notEngaged > 0 {
            return "drift stage not engaged for every source in \(notEngaged) of the last \(checkedCallbacks) callbacks"
        }
        return nil
    }
}
