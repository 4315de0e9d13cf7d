import RTMix

/// The real engine, default configuration, sources fed through `push`.
final class EngineCase: RenderCase {
    let engine: Engine
    let ids: [SourceID]
    let loops: [SignalLoop]
    let output: UnsafeMutableBufferPointer<Float>

    init(_ specs: [SourceSpec], untimed: Bool = false) throws {
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
            loops.append(SignalLoop(spec, index: i, tail: spec.framesPerCallback))
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

    func feed() {
        for i in 0..<ids.count {
            let loop = loops[i]
            let chunk = loop.next(loop.spec.framesPerCallback)
            let accepted = try! engine.push(chunk, to: ids[i], channels: loop.spec.channels)
            precondition(accepted == loop.spec.framesPerCallback, "ring full: the case pushes too much")
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
        return nil
    }
}
