import XCTest
@testable import RTMix

/// Capture stage 2 on its own: the follower against simulated render and
/// capture callbacks (10 ms at 16 kHz): render calls `renderJitterMs` early
/// or late (uniform), capture calls 3 ms after them plus 0–`captureLateMs`
/// (uniform), the render side `ppm` faster than the capture side, and the
/// reference resampled at the follower's step, as the pipeline does.
final class CaptureClockFollowerTests: XCTestCase {
    struct Trace {
        var ppm: [Double] = []   // correction after each call, ppm
        var locks: [Int] = []    // call indices that (re)locked
    }

    static func simulate(ppm: Double, renderJitterMs: Double = 0, captureLateMs: Double = 0, seconds: Double,
                         firstCaptureLateMs: Double? = nil, seed: UInt64 = 1,
                         stall: ClosedRange<Double>? = nil) -> Trace {
        let rate = 16_000, block = 160
        var f = CaptureClockFollower(sampleRate: rate)
        var noise = EchoSim.Noise(seed: seed)
        let renderPeriod = 0.01 / (1 + ppm * 1e-6)
        var nextRender = 0, written: UInt64 = 0, read: UInt64 = 0
        var stampNs: UInt64 = 0
        var h = 0.0, n: Int64 = 0
        var trace = Trace()
        let calls = Int(seconds * 100)
        for m in 0..<calls {
            var late = Double(0.5 + 0.5 * noise.next()) * captureLateMs
            if m == 0, let first = firstCaptureLateMs { late = first }
            let now = Double(m) * 0.01 + 0.003 + late * 1e-3
            // Every render call due by now has happened (unless stalled).
            while true {
                let t = Double(nextRender) * renderPeriod + Double(noise.next()) * renderJitterMs * 1e-3
                if t > now { break }
                nextRender += 1
                if let s = stall, s.contains(t) { continue }  // render did not run
                written += UInt64(block)
                stampNs = UInt64((t + 1) * 1e9)
            }
            let arrived = Int(written - read)
            read = written
            h += Double(arrived) / f.step
            if written > 0 {  // the stamp reached (always, here)
                f.timeCall(now: UInt64((now + 1) * 1e9), renderedNs: stampNs, hostClock: true)
            } else {
                f.untimed()
            }
            n += Int64(block)
            if case .locked = f.follow(c: Int(Int64(h.rounded(.down)) - n), arrived: arrived, frames: block) {
                trace.locks.append(m)
            }
            trace.ppm.append(f.correction * 1e6)
        }
        return trace
    }

    /// One clock without jitter: the follower locks once and says 0, and
    /// so it does with 0–3 ms of capture-side callback jitter when it
    /// locked on a phase near the jitter's mean (the dead band: timing noise
    /// is not drift).
    func testOneClockSaysZero() {
        let steady = CaptureClockFollowerTests.simulate(ppm: 0, seconds: 60)
        XCTAssertEqual(steady.locks, [0])
        XCTAssertEqual(steady.ppm.map(abs).max() ?? 1, 0)
        for seed in [UInt64(1), 2, 5, 7] {
            let t = CaptureClockFollowerTests.simulate(ppm: 0, captureLateMs: 3, seconds: 120,
                                                       firstCaptureLateMs: 1.5, seed: seed)
            XCTAssertEqual(t.locks, [0])
            XCTAssertLessThan(t.ppm.map(abs).max() ?? 1, 1, "seed \(seed)")
        }
    }

    /// Locked on an unlucky phase (the first call far from the jitter's
    /// mean): the follower holds the mean over its first 4 s, not that
    /// call's phase, so on one clock it still says 0 (issue 16 item 3: "0
    /// within a few ppm"). 160 runs: callbacks 0–1, 3, 6 and 10 ms late,
    /// 20 seeds, the lock on the earliest and the latest phase. Measured:
    /// 0 ppm in all 160. Holding the first call's phase (the code before),
    /// all 160 went above 2 ppm, the worst to the 1000 ppm limit.
    func testOneClockLockedOnAnyPhaseSaysZero() {
        var above = 0, worst = 0.0
        for jitter in [1.0, 3.0, 6.0, 10.0] {
            for seed in UInt64(100)..<UInt64(120) {
                for first in [0.0, jitter] {
                    let t = CaptureClockFollowerTests.simulate(ppm: 0, captureLateMs: jitter, seconds: 120,
                                                               firstCaptureLateMs: first, seed: seed &* 2_654_435_761)
                    XCTAssertEqual(t.locks, [0])
                    let w = t.ppm.map(abs).max() ?? 1000
                    if w > 2 { above += 1 }
                    worst = max(worst, w)
                }
            }
        }
        print("one clock, 160 jitter/seed/phase runs: \(above) above 2 ppm, worst \(worst) ppm")
        XCTAssertEqual(above, 0)
        XCTAssertLessThan(worst, 2)
    }

    /// ±200 ppm between the clocks: the correction converges to the drift,
    /// exactly without jitter, on average with 0–3 ms of callback jitter.
    func testFollowsPlusAndMinus200ppm() {
        for ppm in [200.0, -200.0] {
            let t = CaptureClockFollowerTests.simulate(ppm: ppm, seconds: 120)
            XCTAssertEqual(t.locks, [0])
            for v in t.ppm.suffix(6000) { XCTAssertEqual(v, ppm, accuracy: 0.5) }
            for seed in [UInt64(1), 2, 5] {
                let j = CaptureClockFollowerTests.simulate(ppm: ppm, captureLateMs: 3, seconds: 120, seed: seed)
                XCTAssertEqual(j.locks, [0])
                let last = j.ppm.suffix(6000)  // the last 60 s
                // Measured: within 7.1 ppm over seeds 100–104 at ±200 and
                // 50 ppm (the error sits at the 6 σ dead band's edge).
                XCTAssertEqual(last.reduce(0, +) / Double(last.count), ppm, accuracy: 10, "ppm \(ppm) seed \(seed)")
            }
        }
    }

    /// A drift the acquisition's 4 s already show plainly (callbacks
    /// without jitter) is taken at once: from the end of the acquisition
    /// the correction is within 1 ppm of ±200 and stays there. The PI loop
    /// alone (the code before) started 4 s of slide behind, overshot to
    /// about 300 ppm and was still 7 ppm off 10 s later. With 3 ms of
    /// callback jitter the line is not sure enough and the loop finds the
    /// drift as before (`testFollowsPlusAndMinus200ppm`).
    func testAPlainDriftIsTakenAtTheEndOfTheAcquisition() {
        for ppm in [200.0, -200.0] {
            let t = CaptureClockFollowerTests.simulate(ppm: ppm, seconds: 30)
            XCTAssertEqual(t.locks, [0])
            let after = t.ppm[410...]  // from 4.1 s on
            let worst = after.map { abs($0 - ppm) }.max() ?? 1000
            print("plain \(ppm) ppm: at 4.1 s \(t.ppm[410]) ppm, worst error from then \(worst) ppm, "
                  + "peak \(t.ppm.map(abs).max() ?? 0) ppm")
            XCTAssertLessThan(worst, 1, "ppm \(ppm)")
        }
    }

    /// A render stall of half a second makes c jump: the follower waits for
    /// render to resume, then locks anew (and still says 0).
    func testARenderStallRelocks() {
        let t = CaptureClockFollowerTests.simulate(ppm: 0, seconds: 20, stall: 10...10.5)
        XCTAssertEqual(t.locks.count, 2)
        if t.locks.count == 2 { XCTAssertEqual(Double(t.locks[1]) * 0.01, 10.5, accuracy: 0.05) }
        XCTAssertEqual(t.ppm.map(abs).max() ?? 1, 0)
    }
}
