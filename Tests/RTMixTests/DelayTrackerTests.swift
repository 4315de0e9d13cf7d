import XCTest
@testable import RTMix

/// Capture stage 3 on its own: which estimates are adopted, and the feed
/// offset that follows. The estimator's hops are injected (its own tests
/// are in CaptureStageTests).
final class DelayTrackerTests: XCTestCase {
    let rate = 16_000
    let anchor = 5_000  // the clock follower's locked c

    func makeTracker() -> DelayTracker {
        var t = DelayTracker(sampleRate: rate)!
        t.relock(cTarget: anchor, h: 0, n: 0)
        return t
    }

    /// The estimator reporting a delay of `samples` (confident, distinct);
    /// by default the hop alone says the same.
    func hop(_ t: inout DelayTracker, delay samples: Double, confidence: Float = 12, locked: Bool = true,
             single: (samples: Double, confidence: Float, distinct: Bool)? = nil) -> DelayTracker.Hop? {
        // estimate = c̄ − kEcho + lag + 1, kEcho = offset (bases 0).
        func offset(_ d: Double) -> Double { Double(anchor) + Double(ReferenceHistory.lag + 1) - d }
        let one = single ?? (samples, confidence, true)
        t.estimator.latest = DelayEstimator.Estimate(offset: offset(samples), confidence: confidence, hops: 5, distinct: true,
                                                     hopOffset: offset(one.samples), hopConfidence: one.confidence,
                                                     hopDistinct: one.distinct)
        return t.hop(locked: locked)
    }

    /// `frames` 10 ms frames in which the linear filter removed `db`.
    func linear(_ t: inout DelayTracker, removedDb db: Float, frames: Int = 25) {
        for _ in 0..<frames { t.linearFrame(mic: 1e-3, linear: 1e-3 / powf(10, db / 10)) }
    }

    func testAnEstimateIsAdoptedOnlyAfterTwoAgreeingHops() {
        var t = makeTracker()
        XCTAssertEqual(t.source, 0)
        XCTAssertEqual(t.kFeed, anchor)  // no delay known: the newest reference
        let first = hop(&t, delay: 640)
        XCTAssertEqual(first?.estimate ?? 0, 640, accuracy: 1e-9)
        XCTAssertNil(first?.change)
        XCTAssertEqual(t.source, 0)
        // A second hop 5 ms away does not agree: it starts a new candidate.
        XCTAssertNil(hop(&t, delay: 720)?.change)
        XCTAssertEqual(t.source, 0)
        // Two agreeing hops (within 4 ms) adopt it.
        let adopted = hop(&t, delay: 700)?.change
        XCTAssertNotNil(adopted)
        XCTAssertEqual(adopted?.samples ?? 0, 700, accuracy: 1e-9)
        XCTAssertEqual(adopted?.source, 2)
        XCTAssertEqual(adopted?.restartCanceller, true)  // the canceller adapted misaligned
        XCTAssertEqual(adopted?.pathChanged, false)      // nothing was known before
        XCTAssertEqual(t.source, 2)
        XCTAssertEqual(t.kFeed, anchor - 700 + ReferenceHistory.lag + 1 + rate * DelayTracker.leadMs / 1000)
        // Agreeing with the delay in use: settled, nothing changes.
        let settled = hop(&t, delay: 702)
        XCTAssertNil(settled?.change)
        XCTAssertEqual(settled?.distrust, false)
        XCTAssertTrue(t.estimator.tracking)
        // The echo moves by 100 ms: the first hop distrusts the canceller,
        // the second adopts the new delay as a path change.
        XCTAssertEqual(hop(&t, delay: 2_300)?.distrust, true)
        let moved = hop(&t, delay: 2_301)?.change
        XCTAssertEqual(moved?.pathChanged, true)
        XCTAssertEqual(moved?.restartCanceller, false)  // the filter stays valid when only the reference moves
        XCTAssertEqual(moved?.distrust, true)
    }

    /// A shift of 2–4 ms (under the 4 ms a move needs) is adopted after
    /// three hops that agree within 0.5 ms, and restarts the canceller;
    /// jitter within 2 ms, hops that disagree, or a hint in use never do.
    /// A hop confirms the echo (`EchoAbsence`) when a trusted estimate
    /// agrees with the delay in use or is adopted; never with no delay in
    /// use (confident estimates with no echo at the microphone: scenario j's
    /// held-out rooms had some), nor for one that disagrees or is not
    /// trusted.
    func testAHopConfirmsTheEchoOnlyAtTheDelayInUse() {
        var t = makeTracker()
        XCTAssertEqual(hop(&t, delay: 640)?.confirms, false)  // no delay in use
        XCTAssertEqual(hop(&t, delay: 720)?.confirms, false)
        XCTAssertEqual(hop(&t, delay: 700)?.confirms, true)   // adopted
        XCTAssertEqual(hop(&t, delay: 702)?.confirms, true)   // agrees
        XCTAssertEqual(hop(&t, delay: 702, confidence: 3)?.confirms, false)  // not trusted
        XCTAssertEqual(hop(&t, delay: 900)?.confirms, false)  // elsewhere
        var h = makeTracker()
        _ = h.applyHint(44, h: 0, n: 0)  // 704 samples at 16 kHz
        XCTAssertEqual(hop(&h, delay: 706)?.confirms, true)
        XCTAssertEqual(hop(&h, delay: 1200)?.confirms, false)
    }

    func testASmallShiftIsAdoptedAfterThreeAgreeingHopsWithARestart() {
        var t = makeTracker()
        _ = hop(&t, delay: 1_000)
        XCTAssertNotNil(hop(&t, delay: 1_000)?.change)
        // Within 2 ms (32 samples): settled, however often.
        for _ in 0..<6 { XCTAssertNil(hop(&t, delay: 1_030)?.change) }
        // 3.4 ms (54 samples) away, but the hops wander by more than 0.5 ms.
        XCTAssertNil(hop(&t, delay: 1_054)?.change)
        XCTAssertNil(hop(&t, delay: 1_040)?.change)
        XCTAssertNil(hop(&t, delay: 1_054)?.change)
        XCTAssertNil(hop(&t, delay: 1_064)?.change)
        XCTAssertEqual(t.delay, 1_000, accuracy: 1e-9)
        // Three agreeing hops 3.4 ms away: adopted, the canceller restarts.
        XCTAssertNil(hop(&t, delay: 1_054)?.change)
        XCTAssertNil(hop(&t, delay: 1_056)?.change)
        let moved = hop(&t, delay: 1_055)?.change
        XCTAssertNotNil(moved)
        XCTAssertEqual(moved?.samples ?? 0, 1_055, accuracy: 1e-9)
        XCTAssertEqual(moved?.restartCanceller, true)
        XCTAssertEqual(moved?.distrust, true)
        XCTAssertEqual(moved?.pathChanged, true)
        XCTAssertEqual(t.kFeed, anchor - 1_055 + ReferenceHistory.lag + 1 + rate * DelayTracker.leadMs / 1000)
        // Settled on the new delay.
        for _ in 0..<4 { XCTAssertNil(hop(&t, delay: 1_056)?.change) }
        // A hint in use is not moved by small shifts (hosts know their latency).
        var h = makeTracker()
        _ = h.applyHint(60, h: 0, n: 0)
        for _ in 0..<6 { XCTAssertNil(hop(&h, delay: 960 + 54)?.change) }
        XCTAssertEqual(h.delay, 960, accuracy: 1e-9)
    }

    func testUnconfidentOrUnlockedEstimatesAreNeverAdopted() {
        var t = makeTracker()
        for _ in 0..<6 { XCTAssertNil(hop(&t, delay: 640, confidence: 5)?.change) }
        for _ in 0..<6 { XCTAssertNil(hop(&t, delay: 640, locked: false)?.change) }
        XCTAssertEqual(t.source, 0)
        XCTAssertEqual(t.kFeed, anchor)
    }

    func testAHintIsUsedAtOnceIgnoresJitterAndNeedsFourHopsToBeOverruled() {
        var t = makeTracker()
        let c = t.applyHint(40, h: 0, n: 0)
        XCTAssertEqual(c?.samples ?? 0, 640, accuracy: 1e-9)
        XCTAssertEqual(c?.source, 1)
        XCTAssertEqual(c?.restartCanceller, false)
        XCTAssertEqual(t.kFeed, anchor - 640 + ReferenceHistory.lag + 1 + 128)
        XCTAssertNil(t.applyHint(40, h: 0, n: 0))  // repeated
        XCTAssertNil(t.applyHint(43, h: 0, n: 0))  // within 4 ms of the last hint
        XCTAssertEqual(t.source, 1)
        for i in 0..<3 { XCTAssertNil(hop(&t, delay: 1_600)?.change, "hop \(i + 1)") }
        let overruled = hop(&t, delay: 1_600)?.change
        XCTAssertEqual(overruled?.source, 2)
        XCTAssertEqual(overruled?.restartCanceller, true)
        XCTAssertEqual(overruled?.pathChanged, true)
    }

    /// A moved echo path seen in single hops (the average still says the
    /// old delay): confident (≥ 8), distinct, more than 20 ms away (at most
    /// 500 ms), while the linear filter removed under 3 dB since the last
    /// hop. The first such hop only asks for the next at the full rate and
    /// half a hop sooner; the second within 4 ms adopts it as a path change (reference moved,
    /// filter kept, the suppressor told). Any condition missing, or two
    /// hops that disagree: nothing happens.
    func testAMoveSeenInTwoSingleHopsIsAdopted() {
        var t = makeTracker()
        _ = hop(&t, delay: 640)
        XCTAssertNotNil(hop(&t, delay: 640)?.change)
        _ = hop(&t, delay: 640)
        XCTAssertTrue(t.estimator.tracking)
        let moved = (samples: 2_240.0, confidence: Float(9.5), distinct: true)  // +100 ms
        // Each condition missing on its own: an ordinary settled hop, twice.
        let misses: [(String, Float, (samples: Double, confidence: Float, distinct: Bool))] = [
            ("the filter removed 3.05 dB", 3.05, moved),
            ("confidence 7.9", 0.5, (2_240, 7.9, true)),
            ("not distinct", 0.5, (2_240, 9.5, false)),
            ("19 ms away", 0.5, (640 + 304, 9.5, true)),
            ("past 500 ms", 0.5, (0.51 * 16_000, 9.5, true)),
        ]
        let unmoved = t.estimator.nextHopAt
        for (what, removed, single) in misses {
            for _ in 0..<2 {
                linear(&t, removedDb: removed)
                let h = hop(&t, delay: 640, single: single)
                XCTAssertEqual(t.estimator.nextHopAt, unmoved, what)
                XCTAssertEqual(h?.moved, false, what)
                XCTAssertEqual(h?.distrust, false, what)
                XCTAssertNil(h?.change, what)
                XCTAssertTrue(t.estimator.tracking, what)
            }
        }
        // No far-end frames since the last hop: nothing known of the filter.
        XCTAssertNil(hop(&t, delay: 640, single: moved)?.change)
        XCTAssertTrue(t.estimator.tracking)
        // All conditions: the first hop asks for the next at the full rate,
        // half a hop sooner (128 ms after it: the move is confirmed 0.13 s
        // sooner; scenario i: 93 echo windows under 20 dB instead of 107,
        // talkers muted 13.7 % instead of 15.3 %, h unchanged).
        let scheduled = t.estimator.nextHopAt
        linear(&t, removedDb: 0.5)
        let first = hop(&t, delay: 640, single: moved)
        XCTAssertEqual(first?.moved, false)
        XCTAssertEqual(first?.distrust, false)
        XCTAssertNil(first?.change)
        XCTAssertFalse(t.estimator.tracking)
        XCTAssertEqual(t.estimator.nextHopAt, scheduled - DelayEstimator.hop / 2)
        XCTAssertEqual(t.delay, 640, accuracy: 1e-9)
        // The second agreeing hop adopts the hop's delay.
        linear(&t, removedDb: -1)
        let second = hop(&t, delay: 641, single: (2_250, 10, true))
        XCTAssertEqual(second?.moved, true)
        XCTAssertEqual(second?.distrust, true)
        let change = try? XCTUnwrap(second?.change)
        XCTAssertEqual(change?.samples ?? 0, 2_250, accuracy: 1e-9)
        XCTAssertEqual(change?.pathChanged, true)
        XCTAssertEqual(change?.restartCanceller, false)
        XCTAssertEqual(change?.distrust, true)
        XCTAssertEqual(t.kFeed, anchor - 2_250 + ReferenceHistory.lag + 1 + rate * DelayTracker.leadMs / 1000)
        // Two hops that disagree by more than 4 ms, or one with an ordinary
        // hop between them, adopt nothing.
        var u = makeTracker()
        _ = hop(&u, delay: 640)
        _ = hop(&u, delay: 640)
        linear(&u, removedDb: 0)
        XCTAssertNil(hop(&u, delay: 640, single: moved)?.change)
        linear(&u, removedDb: 0)
        XCTAssertNil(hop(&u, delay: 640, single: (2_240 + 80, 9.5, true))?.change)
        linear(&u, removedDb: 0)
        XCTAssertNil(hop(&u, delay: 640, single: (640, 12, true))?.change)
        linear(&u, removedDb: 0)
        XCTAssertNil(hop(&u, delay: 640, single: (2_320, 9.5, true))?.change)
        XCTAssertEqual(u.delay, 640, accuracy: 1e-9)
    }
}
