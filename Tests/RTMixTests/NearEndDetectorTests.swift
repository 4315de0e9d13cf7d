import XCTest
@testable import RTMix

/// The near-end detector's arithmetic (its decisions are tested end to end
/// in CaptureStageTests.testATalkerFifteenDecibelsUnderTheEchoIsKept and
/// measured on recorded speech by scripts/aec-eval, docs/capture.md).
final class NearEndDetectorTests: XCTestCase {
    func testLog10IsWithinATenThousandthOverTwentyFourDecades() {
        var worst: Double = 0
        var x: Float = 1e-12
        while x < 1e12 {
            let v = NearEndDetector.log10(SIMD4(x, x * 1.37, x * 2.9, x * 7.1))
            for (j, m) in [Float(1), 1.37, 2.9, 7.1].enumerated() {
                worst = max(worst, abs(Double(v[j]) - log10(Double(x * m))))
            }
            x *= 1.9
        }
        XCTAssertLessThan(worst, 2e-4)
    }

    func testBandsCoverZeroToEightKilohertzInBlocksOfFour() {
        // (capture rate, transform size): 8, 16 and 48 kHz as the suppressor sizes them.
        for (rate, size, bands) in [(8_000, 256, 12), (16_000, 512, 16), (48_000, 1024, 16)] {
            let d = NearEndDetector(bins: size / 2, binHz: Float(rate) / Float(size))
            XCTAssertEqual(d.bandCount, bands, "\(rate) Hz")
            var start = 0
            for b in 0..<16 {
                let stop = d.stop(b)
                XCTAssertEqual(stop % 4, 0)
                XCTAssertGreaterThanOrEqual(stop, start)
                XCTAssertLessThanOrEqual(stop, size / 2)
                if b < bands { XCTAssertGreaterThan(stop, start, "\(rate) Hz band \(b) empty") }
                start = stop
            }
            // The last band ends at 8 kHz (or Nyquist), within a block of bins.
            let topHz = Float(d.stop(bands - 1)) * Float(rate) / Float(size)
            XCTAssertEqual(topHz, Float(min(8_000, rate / 2)), accuracy: 4 * Float(rate) / Float(size))
        }
    }

    func testBandFeaturesAreLargestThirdLargestAndMean() {
        let d = NearEndDetector(bins: 256, binHz: 31.25)
        // Output 1 in every band; path echo 10^(−k/2) in band k (k = 0…15):
        // log output over path echo = k/2. Held echo 1: log ratio 0.
        var bands = [Float](repeating: 0, count: 192)
        for b in 0..<16 {
            bands[4 * b] = 1                         // four partial sums:
            bands[64 + 4 * b + 1] = 1                // any lanes add up
            bands[128 + 4 * b + 2] = powf(10, -Float(b) / 2)
        }
        let path = (0..<16).map { powf(10, -Float($0) / 2) }.reduce(0, +)
        let f = bands.withUnsafeBufferPointer { d.features(e: 1, y: 1, r: 1, kept: 1, talk: 1, x: 100 * path,
                                                           bands: $0.baseAddress!) }
        XCTAssertEqual(f.1[1], 7.5, accuracy: 1e-3)    // largest
        XCTAssertEqual(f.1[2], 6.5, accuracy: 1e-3)    // third largest
        XCTAssertEqual(f.1[3], 3.75, accuracy: 1e-3)   // mean of 0, 0.5, … 7.5
        XCTAssertEqual(f.2[0], 0, accuracy: 1e-3)
        XCTAssertEqual(f.2[1], 0, accuracy: 1e-3)
        XCTAssertEqual(f.2[2], 0, accuracy: 1e-3)
        XCTAssertEqual(f.0[0], 0, accuracy: 1e-3)      // kept / echo estimate = 1
        XCTAssertEqual(f.2[3], -2, accuracy: 1e-3)     // the coupling: path echo 20 dB under the reference
    }

    /// The coupling stays within the span the model was fitted on (−35 …
    /// −5 dB), so a louder or quieter device than any fitted on is not
    /// extrapolated.
    func testTheCouplingIsKeptWithinTheFittedSpan() {
        let d = NearEndDetector(bins: 256, binHz: 31.25)
        var bands = [Float](repeating: 0, count: 192)
        for b in 0..<16 { bands[4 * b] = 1; bands[64 + 4 * b] = 1; bands[128 + 4 * b] = 1 }  // path echo 16
        for (x, want) in [(Float(16), Float(-0.5)), (16 * 1e6, -3.5), (16 * 1e3, -3), (16 * 10, -1)] {
            let f = bands.withUnsafeBufferPointer { d.features(e: 1, y: 1, r: 1, kept: 1, talk: 1, x: x,
                                                               bands: $0.baseAddress!) }
            XCTAssertEqual(f.2[3], want, accuracy: 1e-3, "reference \(x)")
        }
    }

    /// A call's first `settleFrames` frames with far end are scored by the
    /// model before the coupling (`settled: false`), later ones by the
    /// refitted one.
    func testTheFirstFramesAreScoredByTheStartModel() {
        var d = NearEndDetector(bins: 256, binHz: 31.25)
        let f = (SIMD4<Float>(-1, 2, -0.5, 1.5), SIMD4<Float>(0.3, 4, 2, 1), SIMD4<Float>(3, 1, 0.5, -3))
        typealias W = (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)
        // After one update the averages are 0.1 of the features.
        func expected(_ w: W, _ a: W, _ b: Float) -> Float {
            b + (w.0 * f.0 + w.1 * f.1 + w.2 * f.2).sum() + 0.1 * (a.0 * f.0 + a.1 * f.1 + a.2 * f.2).sum()
        }
        XCTAssertEqual(d.startWeights.2[3], 0)     // the start model has no coupling
        XCTAssertNotEqual(d.weights.2[3], 0)
        _ = d.update(f, settled: false)
        XCTAssertEqual(d.score, expected(d.startWeights, d.startAverageWeights, d.startBias), accuracy: 1e-4)
        var e = NearEndDetector(bins: 256, binHz: 31.25)
        _ = e.update(f, settled: true)
        XCTAssertEqual(e.score, expected(e.weights, e.averageWeights, e.bias), accuracy: 1e-4)
        XCTAssertNotEqual(d.score, e.score, accuracy: 0.1)
    }

    func testTalkNeedsTwoFramesRunning() {
        var d = NearEndDetector(bins: 256, binHz: 31.25)
        let talkish = (SIMD4<Float>(0, 3, 0, 3), SIMD4<Float>(1, 6, 5, 2), SIMD4<Float>(5, 4, 1, 0))
        let echoish = (SIMD4<Float>(-5, -1, -5, -4), SIMD4<Float>(0.2, -2, -3, -4), SIMD4<Float>(-2, -3, -4, 0))
        XCTAssertFalse(d.update(echoish))
        var first = true
        var seen = 0
        for _ in 0..<20 {
            let t = d.update(talkish)
            if first { XCTAssertFalse(t); first = false }
            if t { seen += 1 }
        }
        XCTAssertGreaterThan(seen, 10, "score \(d.score)")
        for _ in 0..<40 { _ = d.update(echoish) }
        XCTAssertFalse(d.update(echoish), "score \(d.score)")
    }
}
