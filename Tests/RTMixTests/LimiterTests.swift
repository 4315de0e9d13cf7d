import XCTest
@testable import RTMix

final class LimiterTests: XCTestCase {
    func testTransparentBelowThreshold() {
        var l = Limiter(thresholdDb: -1, sampleRate: 48_000)
        var x = Signal.noise(frames: 4800, channels: 2, amplitude: 0.89, seed: 3)  // -1 dBFS = 0.891
        let original = x
        let report = x.withUnsafeMutableBufferPointer { l.process($0.baseAddress!, frames: 4800, channels: 2) }
        XCTAssertEqual(report.changedFrames, 0)
        XCTAssertTrue(x == original)
    }

    /// 16 loud sources sum to ~8× full scale: output stays inside (-1, 1),
    /// finite, and without jumps larger than the input's own.
    func testManyLoudSourcesStayBoundedAndSmooth() throws {
        let e = makeEngine { $0.duckDepthDb = 0 }  // the same 16 sources at full level
        var ids: [SourceID] = []
        for k in 0..<16 {
            let id = try e.addSource(SourceConfig.classic(domain: k % 2 == 0 ? .call : .media, sampleRate: 48_000, channels: 2))
            e.pushAll(Signal.sine(frequency: 220 + Double(k) * 3, rate: 48_000, frames: 24_000, channels: 2,
                                  amplitude: 0.9, phase: 0), to: id, channels: 2)
            ids.append(id)
        }
        let out = e.renderFrames(24_000)
        XCTAssertTrue(out.allSatisfy { $0.isFinite && $0 > -1 && $0 < 1 })
        var maxStep: Float = 0
        for i in 2..<out.count { maxStep = max(maxStep, abs(out[i] - out[i - 2])) }
        // The raw sum's largest step is 16 × 0.9 × 2π × 343/48000 ≈ 0.65; the
        // limited output must not jump more than that (no discontinuity).
        XCTAssertLessThan(maxStep, 0.65)
        let st = e.stats()
        XCTAssertGreaterThan(st.limiterActiveFrames, 0)
        XCTAssertLessThan(st.limiterMinGainDb, -10)
        // Sustained overload is handled by the gain, not by clipping: the
        // settled peak sits near the threshold.
        let tailPeak = out.suffix(9600).map { abs($0) }.max()!
        XCTAssertLessThan(tailPeak, 0.97)
    }

    func testS16OutputSaturatesNeverWraps() throws {
        let e = makeEngine()
        for _ in 0..<8 {
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
            e.pushAll(Signal.constant(0.99, frames: 4800, channels: 2), to: id, channels: 2)
        }
        var out = [Int16](repeating: 0, count: 4800 * 2)
        try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 4096) }
        XCTAssertTrue(out.prefix(4096 * 2).allSatisfy { $0 > 0 }, "wrapped to negative")
    }

    func testNonFiniteInputNeverReachesOutput() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        var x = Signal.constant(0.25, frames: 480, channels: 2)
        x[10] = .nan; x[11] = .infinity; x[500] = -.infinity; x[901] = .signalingNaN
        e.pushAll(x, to: id, channels: 2)
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0.isFinite })
        XCTAssertEqual(out[10], 0)
        XCTAssertEqual(out[12], 0.25)
        XCTAssertEqual(try e.stats(for: id).nonfiniteSamples, 4)
        XCTAssertEqual(e.stats().nonfiniteSamples, 4)
    }

    /// Huge finite inputs that overflow to Inf when summed are still caught.
    func testOverflowingSumIsSanitized() throws {
        let e = makeEngine()
        for _ in 0..<4 {
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
            try e.setGain(16, for: id)
            e.pushAll(Signal.constant(Float.greatestFiniteMagnitude, frames: 480, channels: 2), to: id, channels: 2)
        }
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0.isFinite && abs($0) < 1 })
    }

    /// A single source at ±Float.greatestFiniteMagnitude (finite, so the push
    /// accepts it) still renders finite output within [-1, 1]. Found by
    /// fuzzing (Fuzz/Crashes/FuzzEngineC/render-nan-greatest-finite-swift-api).
    func testGreatestFiniteInputStaysFiniteAndBounded() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        var x = Signal.constant(Float.greatestFiniteMagnitude, frames: 480, channels: 2)
        for i in stride(from: 1, to: x.count, by: 4) { x[i] = -Float.greatestFiniteMagnitude }
        e.pushAll(x, to: id, channels: 2)
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0.isFinite && $0 >= -1 && $0 <= 1 })
        var s16 = [Int16](repeating: 0, count: 960)
        e.pushAll(x, to: id, channels: 2)
        try s16.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }
        XCTAssertTrue(s16.contains(32767) || s16.contains { $0 > 30_000 })
    }

    func testSoftClipIsContinuousAndBounded() {
        let l = Limiter(thresholdDb: -1, sampleRate: 48_000)
        var previous = l.softClip(0)
        var x: Float = 0
        while x < 100 {
            x += 0.001
            let y = l.softClip(x)
            XCTAssertLessThan(y, 1)
            XCTAssertGreaterThanOrEqual(y, previous - 1e-6)  // monotonic up to float rounding
            XCTAssertLessThanOrEqual(y - previous, 0.0010001)  // slope <= 1
            previous = y
        }
        XCTAssertEqual(l.softClip(-2), -l.softClip(2))
    }
}

final class LimiterRecoveryTests: XCTestCase {
    /// After an overload the gain returns exactly to 1 and the output is
    /// bit-exact again (no permanent −0.001 dB residue).
    func testGainRecoversExactlyAfterOverload() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        e.pushAll(Signal.constant(0.99, frames: 480, channels: 2), to: id, channels: 2)
        _ = e.renderFrames(480)
        XCTAssertLessThan(e.stats().limiterGainDb, -0.5)
        var last: [Float] = []
        for _ in 0..<6 {
            e.pushAll(Signal.constant(0.5, frames: 24_000, channels: 2), to: id, channels: 2)
            last = e.renderFrames(24_000)
        }
        XCTAssertEqual(e.stats().limiterGainDb, 0)
        XCTAssertTrue(last.allSatisfy { $0 == 0.5 })  // the last 0.5 s
        // Release (80 ms time constant) to exactly 0 dB takes ~1.1 s.
        XCTAssertLessThan(e.stats().limiterActiveFrames, 72_000)
    }
}

final class GainBeforeFirstRenderTests: XCTestCase {
    /// A mute or gain set between addSource and the first render applies
    /// at once: nothing leaks.
    func testMuteBeforeFirstRenderLeaksNothing() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        try e.setMuted(true, for: id)
        e.pushAll(Signal.constant(0.5, frames: 480, channels: 2), to: id, channels: 2)
        XCTAssertTrue(e.renderFrames(480).allSatisfy { $0 == 0 })
        let id2 = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        try e.setGain(0.5, for: id2)
        e.pushAll(Signal.constant(0.5, frames: 480, channels: 2), to: id2, channels: 2)
        XCTAssertTrue(e.renderFrames(480).allSatisfy { $0 == 0.25 })
    }
}
