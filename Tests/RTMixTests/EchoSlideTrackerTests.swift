import XCTest
@testable import RTMix

/// Capture stage 4b on its own: the main tap found to a fraction of a
/// sample, and the slope fit with its standard error.
final class EchoSlideTrackerTests: XCTestCase {
    /// A band-limited impulse at a fractional position: the parabola puts
    /// the main tap within 0.15 samples of it; a flat response has none.
    func testMainTapIsFoundBetweenSamples() {
        for position in [100.0, 100.25, 100.5, 173.8] {
            var h = [Int32](repeating: 0, count: 400)
            for i in 0..<400 {
                let x = Double(i) - position
                let sinc = x == 0 ? 1 : sin(.pi * x * 0.8) / (.pi * x * 0.8)
                h[i] = Int32(20_000 * sinc * exp(-abs(x) / 40))
            }
            let p = h.withUnsafeBufferPointer { EchoSlideTracker.mainTap($0.baseAddress!, count: 400, peakRatio: 8) }
            XCTAssertNotNil(p)
            XCTAssertEqual(p ?? -1, position, accuracy: 0.15, "impulse at \(position)")
        }
        var noise = EchoSim.Noise(seed: 9)
        let flat = (0..<400).map { _ in Int32(1000 * noise.next()) }
        XCTAssertNil(flat.withUnsafeBufferPointer { EchoSlideTracker.mainTap($0.baseAddress!, count: 400, peakRatio: 8) })
    }

    /// A main tap moving 3.2 samples/s (200 ppm at 16 kHz) in steps, as
    /// the filter re-learns it: the fit finds the slope, with a standard
    /// error far below it; a still tap with jitter gives a slope inside 4
    /// standard errors of 0.
    func testSlopeAndItsStandardError() {
        var t = [Double](), moving = [Double](), still = [Double]()
        var noise = EchoSim.Noise(seed: 3)
        for i in 0..<40 {
            let time = Double(i) * 0.1
            t.append(time)
            moving.append(100 + (3.2 * time / 2).rounded(.down) * 2)  // 2-sample steps
            still.append(100 + 0.3 * Double(noise.next()))
        }
        let m = EchoSlideTracker.slope(t, moving, count: 40)!
        XCTAssertEqual(m.slope, 3.2, accuracy: 0.4)
        XCTAssertLessThan(4 * m.standardError, abs(m.slope))
        let s = EchoSlideTracker.slope(t, still, count: 40)!
        XCTAssertLessThan(abs(s.slope), 4 * s.standardError + 0.05)
        XCTAssertNil(EchoSlideTracker.slope(t, still, count: 2))
    }

    /// The dead band: while no drift has been found, a slope under 4 ppm is
    /// not acted on, however sure the fit (one clock must stay at 0); once
    /// one has, what is left of it is followed down to 0.3 ppm (the first
    /// correction leaves a ppm or so, which slid on unseen and cost up to
    /// 10 dB of ERLE at 48 kHz). Each step applies 0.8 of the slope, and
    /// never a slope within 4 standard errors of 0.
    func testWhatIsLeftOfAFoundDriftIsFollowedBelowTheDeadBand() {
        let rate = 48_000
        let onePpm = Double(rate) * 1e-6  // samples per second
        // No drift found yet: 1 ppm (and 3.9) stays unseen, 5 ppm is taken.
        XCTAssertNil(EchoSlideTracker.corrected(0, slope: 1 * onePpm, standardError: 0.01 * onePpm, rate: rate))
        XCTAssertNil(EchoSlideTracker.corrected(0, slope: 3.9 * onePpm, standardError: 0.01 * onePpm, rate: rate))
        let first = EchoSlideTracker.corrected(0, slope: 5 * onePpm, standardError: 0.01 * onePpm, rate: rate)
        XCTAssertEqual(first ?? 0, -4e-6, accuracy: 1e-12)
        // Drift found (−199 ppm): 1 ppm left is followed, 0.2 ppm is not.
        let found = -199e-6
        let next = EchoSlideTracker.corrected(found, slope: 1 * onePpm, standardError: 0.02 * onePpm, rate: rate)
        XCTAssertEqual(next ?? 0, found - 0.8e-6, accuracy: 1e-12)
        XCTAssertNil(EchoSlideTracker.corrected(found, slope: 0.2 * onePpm, standardError: 0.01 * onePpm, rate: rate))
        // Not 4 standard errors out of 0: kept either way.
        XCTAssertNil(EchoSlideTracker.corrected(found, slope: 1 * onePpm, standardError: 0.3 * onePpm, rate: rate))
        XCTAssertNil(EchoSlideTracker.corrected(0, slope: 50 * onePpm, standardError: 20 * onePpm, rate: rate))
    }
}
