import XCTest
@testable import RTMix

/// Media ducking (issue 10, item 7): depth, attack and release measured
/// from the output, composition with the media volume, call audio and the
/// published media untouched, depth 0 bit-exact.
final class DuckingTests: XCTestCase {
    /// Mono 48 kHz: a media source at a constant 0.5, a call source that
    /// is silent for `leadMs`, then "talks" (constant 0.1, RMS -20 dBFS)
    /// for `talkMs`, then is silent again. Returns the media gain at each
    /// output frame, (out - call) / 0.5: the call source passes unchanged
    /// (same rate, gain 1), so the rest of the output is the media.
    func mediaGain(_ configure: (inout EngineConfig) -> Void = { _ in }, mediaVolume: Float = 1,
                   leadMs: Int = 200, talkMs: Int = 1000, tailMs: Int = 800) throws -> (gain: [Float], engine: Engine) {
        let e = makeEngine { $0.channels = 1; $0.duckDepthDb = -12; configure(&$0) }
        try e.setDomainGain(mediaVolume, for: .media)
        var cc = SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1)
        cc.bufferFrames = 1 << 17
        let call = try e.addSource(cc)
        var mc = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1)
        mc.bufferFrames = 1 << 17
        let media = try e.addSource(mc)
        let total = (leadMs + talkMs + tailMs) * 48
        var callSignal = [Float](repeating: 0, count: total)
        for i in (leadMs * 48)..<((leadMs + talkMs) * 48) { callSignal[i] = 0.1 }
        e.pushAll(callSignal, to: call, channels: 1)
        e.pushAll(Signal.constant(0.5, frames: total, channels: 1), to: media, channels: 1)
        let out = e.renderFrames(total)
        return ((0..<total).map { (out[$0] - callSignal[$0]) / 0.5 }, e)
    }

    func db(_ g: Float) -> Double { 20 * log10(Double(g)) }

    func testDepthAttackAndReleaseMeasuredFromTheOutput() throws {
        let (g, e) = try mediaGain()
        // Before the voice: not ducked.
        XCTAssertEqual(g[0..<9600].max()!, 1, accuracy: 1e-6)
        XCTAssertEqual(g[0..<9600].min()!, 1, accuracy: 1e-6)
        // Depth: -12 dB ± 0.5 dB while the voice lasts (after the attack).
        let ducked = g[(9600 + 2400)..<(9600 + 48_000)]
        XCTAssertEqual(db(ducked.max()!), -12, accuracy: 0.5)
        XCTAssertEqual(db(ducked.min()!), -12, accuracy: 0.5)
        // Attack: from the voice onset (frame 9600) to within 0.5 dB of the
        // depth: 20 ms nominal (linear in amplitude, so the last 0.5 dB
        // takes the last ~8 % of it), measured within ± 2 ms.
        let depth: Float = 0.251_188_6
        let attackEnd = (9600..<20_000).first { db(g[$0]) <= -11.5 }!
        XCTAssertEqual(Double(attackEnd - 9600) / 48, 20 * (1 - (pow(10, -11.5 / 20) - Double(depth)) / (1 - Double(depth))),
                       accuracy: 2)
        let fullyDucked = (9600..<20_000).first { g[$0] <= depth + 1e-5 }!
        XCTAssertEqual(Double(fullyDucked - 9600) / 48, 20, accuracy: 2)
        // Release: the voice ends at frame 57 600; 100 ms hold, then back
        // to 0 dB in 300 ms: 400 ms ± 10 ms (the hold ends on a block edge).
        let voiceEnd = 9600 + 48_000
        let releaseStart = (voiceEnd..<g.count).first { g[$0] > depth + 1e-5 }!
        XCTAssertEqual(Double(releaseStart - voiceEnd) / 48, 100, accuracy: 10)
        let released = (voiceEnd..<g.count).first { g[$0] >= 1 - 1e-6 }!
        XCTAssertEqual(Double(released - releaseStart) / 48, 300, accuracy: 2)
        XCTAssertEqual(Double(released - voiceEnd) / 48, 400, accuracy: 10)
        // No zipper: the gain moves at most one step per frame.
        var maxStep: Float = 0
        for i in 1..<g.count { maxStep = max(maxStep, abs(g[i] - g[i - 1])) }
        XCTAssertLessThan(maxStep, (1 - depth) / (20 * 48) * 1.01)
        let st = e.stats()
        XCTAssertEqual(st.duckGainDb, 0, accuracy: 1e-4)  // released at the end
        XCTAssertGreaterThan(st.duckedFrames, 48 * 1000)
    }

    func testConfiguredDepthAndTimes() throws {
        let (g, _) = try mediaGain({ $0.duckDepthDb = -20; $0.duckAttackMs = 50; $0.duckReleaseMs = 100 })
        let depth: Float = 0.1
        XCTAssertEqual(db(g[30_000]), -20, accuracy: 0.05)
        let fullyDucked = (9600..<30_000).first { g[$0] <= depth + 1e-5 }!
        XCTAssertEqual(Double(fullyDucked - 9600) / 48, 50, accuracy: 2)
        let voiceEnd = 9600 + 48_000
        let releaseStart = (voiceEnd..<g.count).first { g[$0] > depth + 1e-5 }!
        let released = (voiceEnd..<g.count).first { g[$0] >= 1 - 1e-6 }!
        XCTAssertEqual(Double(released - releaseStart) / 48, 100, accuracy: 2)
    }

    func testDuckComposesWithTheMediaVolume() throws {
        let (g, _) = try mediaGain(mediaVolume: 0.5)
        XCTAssertEqual(g[5000], 0.5, accuracy: 1e-6)
        XCTAssertEqual(db(g[30_000]), db(0.5) - 12, accuracy: 0.05)
        XCTAssertEqual(g[g.count - 1], 0.5, accuracy: 1e-6)
    }

    func testQuietCallAudioDoesNotDuck() throws {
        // Comfort noise at -60 dBFS is below the -45 dBFS detector.
        let e = makeEngine { $0.channels = 1; $0.duckDepthDb = -12 }
        let call = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let media = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.noise(frames: 9600, channels: 1, amplitude: 0.001, seed: 3), to: call, channels: 1)
        e.pushAll(Signal.constant(0.5, frames: 9600, channels: 1), to: media, channels: 1)
        _ = e.renderFrames(9600)
        XCTAssertEqual(e.stats().duckedFrames, 0)
        XCTAssertEqual(e.stats().duckGainDb, 0)
    }

    /// Call audio is never ducked: with media playing, the call source's
    /// share of the output is exactly what was pushed.
    func testCallAudioIsNotDucked() throws {
        let (g, _) = try mediaGain()
        // mediaGain() subtracts the pushed call signal exactly; were the
        // call scaled, (out - call) would not be a clean gain: check the
        // media gain is the same at all frames of a block in steady state.
        XCTAssertEqual(Set(g[20_000..<50_000]).count, 1)
    }

    /// Ducking is opt-in: with default engine and source configs, loud call
    /// voice over media leaves the media exactly at the level the app set.
    func testDefaultConfigNeverDucks() throws {
        XCTAssertEqual(EngineConfig().duckDepthDb, 0)
        let e = makeEngine { $0.channels = 1 }
        try e.setDomainGain(0.5, for: .media)
        let call = try e.addSource(SourceConfig(domain: .call, sampleRate: 48_000, channels: 1))
        let media = try e.addSource(SourceConfig(domain: .media, sampleRate: 48_000, channels: 1))
        let frames = 48_000
        let voice = Signal.sine(frequency: 300, rate: 48_000, frames: frames, amplitude: 0.5)
        let music = Signal.constant(0.4, frames: frames, channels: 1)
        var out = [Float]()
        // Lockstep: each source is one block ahead of the output.
        for b in 0..<(frames / 480) {
            let r = (b * 480)..<((b + 1) * 480)
            e.pushAll(Array(voice[r]), to: call, channels: 1)
            e.pushAll(Array(music[r]), to: media, channels: 1)
            out += e.renderFrames(480)
        }
        // Once both play (after their 40 / 100 ms start thresholds), the
        // output is exactly voice + 0.4 × 0.5: the media at the app's level,
        // the voice bit-exact (some fixed delay D).
        let window = (300 * 48)..<(900 * 48)
        let d = (0..<(150 * 48)).first { d in window.allSatisfy { out[$0] == voice[$0 - d] + Float(0.4) * Float(0.5) } }
        XCTAssertNotNil(d, "media not at its level, or the voice altered")
        XCTAssertEqual(e.stats().duckedFrames, 0)
        XCTAssertEqual(e.stats().duckGainDb, 0)
    }

    /// Depth 0 turns ducking off and leaves the render path as it was: media
    /// sources are summed straight into the mix, in slot order.
    func testDepthZeroIsBitExact() throws {
        let e = makeEngine { $0.channels = 1; $0.duckDepthDb = 0 }
        let call = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let m1 = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        let m2 = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        let c = Signal.noise(frames: 4800, channels: 1, amplitude: 0.2, seed: 1)
        let a = Signal.noise(frames: 4800, channels: 1, amplitude: 0.2, seed: 2)
        let b = Signal.noise(frames: 4800, channels: 1, amplitude: 0.2, seed: 5)
        e.pushAll(c, to: call, channels: 1)
        e.pushAll(a, to: m1, channels: 1)
        e.pushAll(b, to: m2, channels: 1)
        let out = e.renderFrames(4800)
        var exact = 0
        for i in 0..<4800 where out[i] == (c[i] + a[i]) + b[i] { exact += 1 }
        XCTAssertEqual(exact, 4800)
        XCTAssertEqual(e.stats().duckedFrames, 0)
    }

    /// The published media (capture path) keeps its publish gain: the duck
    /// is applied where the media bus joins the local mix only. The bus the
    /// capture path publishes from still holds the unducked media.
    func testPublishedMediaBusIsNotDucked() throws {
        let e = makeEngine { $0.channels = 1; $0.captureRate = 16_000; $0.duckDepthDb = -12 }
        try e.setPublishGain(1, for: .media)
        let call = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let media = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.1, frames: 4800, channels: 1), to: call, channels: 1)
        e.pushAll(Signal.constant(0.5, frames: 4800, channels: 1), to: media, channels: 1)
        let out = e.renderFrames(4800)
        XCTAssertEqual(db((out[4799] - 0.1) / 0.5), -12, accuracy: 0.05)  // local playout ducked
        let bus = e.core.pointee.mixBus.pointee.publishedMedia!
        XCTAssertEqual(bus[479], 0.5)  // what the far end is sent: not ducked
    }
}

extension DuckingTests {
    /// Without call sources, ducking changes nothing: media is mixed exactly
    /// as with ducking off, bit for bit.
    func testMediaOnlyIsBitExactWithDuckingOn() throws {
        func run(_ depth: Float) throws -> [Float] {
            let e = makeEngine { $0.channels = 2; $0.duckDepthDb = depth }
            try e.setDomainGain(0.7, for: .media)
            for seed in 0..<3 {
                let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
                e.pushAll(Signal.noise(frames: 4800, channels: 2, amplitude: 0.2, seed: UInt64(seed + 10)),
                          to: id, channels: 2)
            }
            return e.renderFrames(4800)
        }
        let on = try run(-12), off = try run(0)
        XCTAssertEqual(on.count, off.count)
        XCTAssertEqual(zip(on, off).filter { $0 != $1 }.count, 0)  // every sample identical
    }
}
