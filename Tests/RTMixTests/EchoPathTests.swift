import Foundation
import RTMixSignals
import XCTest

/// Checks of the echo-path simulation itself (RTMixSignals), so canceller
/// tests built on it measure the canceller and not the simulation.
final class EchoPathTests: XCTestCase {
    func testFFTConvolutionMatchesDirectConvolution() {
        var rng = SplitMix64(seed: 3)
        let x = (0..<5_000).map { _ in rng.uniform(-1, 1) }
        let h = (0..<300).map { _ in rng.uniform(-0.5, 0.5) }
        let y = fftConvolve(x, h)
        XCTAssertEqual(y.count, x.count + h.count - 1)
        for n in stride(from: 0, to: y.count, by: 97) {
            var acc = 0.0
            for k in 0..<h.count where n - k >= 0 && n - k < x.count { acc += Double(h[k]) * Double(x[n - k]) }
            XCTAssertEqual(Double(y[n]), acc, accuracy: 1e-4, "sample \(n)")
        }
    }

    func testRT60OfGeneratedResponse() {
        for (rt60, seed) in [(0.3, UInt64(1)), (0.4, 2), (0.5, 3)] {
            for rate in [16_000, 48_000] {
                let h = RoomImpulseResponse.generate(sampleRate: rate, distance: 0.4, rt60: rt60, seed: seed)
                let measured = RoomImpulseResponse.measureRT60(h, sampleRate: rate)
                XCTAssertEqual(measured, rt60, accuracy: 0.2 * rt60, "RT60 \(rt60) s at \(rate) Hz")
            }
        }
    }

    func testDirectPathAndBulkDelayArePlacedExactly() {
        let rate = 16_000
        var o = EchoPath.Options(sampleRate: rate)
        o.distance = 343.0 * 10 / Double(rate)     // exactly 10 samples of propagation
        o.bulkDelay = 480
        o.jumpAt = 8_000
        o.jumpBy = 1_600
        let path = EchoPath(o)
        XCTAssertEqual(path.echoDelaySamples, 490, accuracy: 1e-9)
        var x = [Float](repeating: 0, count: 16_000)
        x[1_000] = 1                                  // before the jump
        x[9_000] = 1                                  // after: arrives 1600 samples later
        let e = path.echo(of: x)
        let directGain = Float(o.referenceDistance / o.distance)
        func peak(_ r: Range<Int>) -> (Int, Float) {
            var best = r.lowerBound
            for i in r where abs(e[i]) > abs(e[best]) { best = i }
            return (best, e[best])
        }
        let (p1, v1) = peak(1_000..<8_000)
        XCTAssertEqual(p1, 1_490)
        XCTAssertEqual(v1, directGain, accuracy: 0.05 * directGain)
        XCTAssertEqual(e[1_000..<1_480].map { abs($0) }.max() ?? 0, 0, accuracy: 1e-6, "nothing before the direct path")
        let (p2, _) = peak(10_000..<16_000)
        XCTAssertEqual(p2, 9_000 + 490 + 1_600)
    }

    func testDriftResamplesByTheRightRatioWithoutDelay() {
        let rate = 16_000, ppm = 500.0
        let sine = (0..<(3 * rate)).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / Double(rate))) }
        let y = ClockDrift.resample(sine, ppm: ppm)
        XCTAssertEqual(Double(y.count), Double(sine.count) * (1 + ppm * 1e-6), accuracy: 2)
        let f = Signal.zeroCrossingFrequency(y[rate / 2..<(5 * rate / 2)], rate: rate)
        let measuredPpm = (1_000 / f - 1) * 1e6
        XCTAssertEqual(measuredPpm, ppm, accuracy: 10, "measured ratio \(measuredPpm) ppm")

        var click = [Float](repeating: 0, count: 2 * rate)
        click[rate] = 1
        let c = ClockDrift.resample(click, ppm: ppm)
        let at = c.indices.max { abs(c[$0]) < abs(c[$1]) }!
        XCTAssertEqual(at, rate + 8, "a click at 1 s lands at 1 s × (1 + 500 ppm)")
    }

    func testNoiseLevelAndTalkers() {
        let rate = 16_000
        var o = EchoPath.Options(sampleRate: rate)
        o.noiseSnrDb = 40
        let path = EchoPath(o)
        let far = EchoPath.farEndTalker(sampleRate: rate, count: 4 * rate)
        let near = EchoPath.nearEndTalker(sampleRate: rate, count: 4 * rate)
        let m = path.microphone(farEnd: far, nearEnd: near)
        let echoRms = Signal.rms(m.echo[...]), noiseRms = Signal.rms(m.noise[...])
        XCTAssertEqual(Signal.db(echoRms / noiseRms), 40, accuracy: 0.1)
        XCTAssertGreaterThan(Signal.rms(near[...]), 0.01)
        XCTAssertNotEqual(far, near)
        for i in stride(from: 0, to: m.mic.count, by: 1_001) {
            XCTAssertEqual(m.mic[i], m.echo[i] + m.nearEnd[i] + m.noise[i], accuracy: 1e-6)
        }
    }
}
