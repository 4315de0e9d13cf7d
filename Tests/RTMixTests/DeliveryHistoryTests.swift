import XCTest
@testable import RTMix
import RTMixSignals

/// Rule 2's step-versus-ramp test (DriftController, DeliveryHistory): the
/// last 20 s of a producer's delivery (frames delivered minus the nominal
/// rate × time, one sample per 0.5 s window) count as drift only when they
/// form a ramp, not a step.
final class DeliveryHistoryTests: XCTestCase {
    /// 40 windows of 0.5 s at 16 kHz; `value(k)` in frames.
    func history(_ value: (Int) -> Double) -> DeliveryHistory {
        var h = DeliveryHistory()
        for k in 0..<40 { h.add(t: Double(k) * 0.5, r: value(k)) }
        return h
    }

    func testADriftWithJitterIsARamp() {
        // −500 ppm at 16 kHz: −8 frames/s, −4 per window; ±16 frames
        // (1 ms) of noise on each window mean.
        var rng = SplitMix64(seed: 3)
        let h = history { k in -4 * Double(k) + (Double(rng.unit()) * 2 - 1) * 16 }
        XCTAssertTrue(h.showsRamp(sign: -1))
        XCTAssertFalse(h.showsRamp(sign: 1), "the wrong direction")
    }

    func testADelayStepIsNotARamp() {
        // One packet (160 frames) lower from window 25 on, with and without
        // noise: a step fits better than any line.
        XCTAssertFalse(history { $0 < 25 ? 0 : -160 }.showsRamp(sign: -1))
        var rng = SplitMix64(seed: 4)
        XCTAssertFalse(history { ($0 < 25 ? 0 : -160) + (Double(rng.unit()) * 2 - 1) * 16 }.showsRamp(sign: -1))
    }

    func testTwoPacketStepsOfAJitterFreeStreamAreARamp() {
        // −1000 ppm without jitter: the level drops one packet every 10 s
        // (20 windows): steps at windows 10 and 30.
        XCTAssertTrue(history { k in k < 10 ? 0 : (k < 30 ? -160 : -320) }.showsRamp(sign: -1))
    }

    func testAFlatLevelIsNoRampAndTooFewSamplesAreNone() {
        XCTAssertFalse(history { _ in 1234 }.showsRamp(sign: -1))
        XCTAssertFalse(history { _ in 1234 }.showsRamp(sign: 1))
        var h = DeliveryHistory()
        for k in 0..<(DeliveryHistory.minimumCount - 1) { h.add(t: Double(k) * 0.5, r: -100 * Double(k)) }
        XCTAssertFalse(h.showsRamp(sign: -1), "fewer than minimumCount samples")
        h.add(t: 10, r: -100 * 20)
        XCTAssertTrue(h.showsRamp(sign: -1))
    }

    func testTheOldestSamplesLeave() {
        // A step 60 windows ago has left the 40-window history: what is
        // left is flat, then a ramp starts.
        var h = DeliveryHistory()
        for k in 0..<60 { h.add(t: Double(k) * 0.5, r: k < 5 ? 0 : -160) }
        XCTAssertFalse(h.showsRamp(sign: -1))
        XCTAssertEqual(h.count, DeliveryHistory.capacity)
        for k in 60..<100 { h.add(t: Double(k) * 0.5, r: -160 - 8 * Double(k - 60)) }
        XCTAssertTrue(h.showsRamp(sign: -1))
    }
}
