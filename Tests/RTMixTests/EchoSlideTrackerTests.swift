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

    /// The four-at-a-time scan finds what one tap at a time finds: the
    /// first of equal largest magnitudes (ties placed in different lanes
    /// and in the tail past the last four), any length, either sign.
    func testMainTapMatchesAOneTapAtATimeScan() {
        func scalar(_ h: [Int32], peakRatio: Double) -> Double? {
            var best = 0, bestValue: Double = 0, sum: Double = 0
            for i in 0..<h.count {
                let v = Double(h[i])
                sum += v * v
                if abs(v) > bestValue { bestValue = abs(v); best = i }
            }
            guard best > 0, best < h.count - 1, bestValue > 0,
                  bestValue * bestValue > peakRatio * peakRatio * sum / Double(h.count) else { return nil }
            let a = abs(Double(h[best - 1])), b = bestValue, c = abs(Double(h[best + 1]))
            let den = a - 2 * b + c
            let shift = den < 0 ? 0.5 * (a - c) / den : 0
            return Double(best) + max(-0.5, min(0.5, shift))
        }
        var noise = EchoSim.Noise(seed: 21)
        var found = 0
        for trial in 0..<400 {
            let n = 5 + trial % 37 + (trial % 3 == 0 ? 3000 : 0)
            var h = (0..<n).map { _ in Int32(300 * noise.next()) }
            let peak = Int32(20_000 + trial)
            let first = 1 + Int(abs(noise.next()) * Float(n - 3)) % (n - 2)
            h[first] = trial % 2 == 0 ? peak : -peak
            if trial % 4 < 2 {  // an equal magnitude later, in another lane or the tail
                let later = min(n - 2, first + 1 + trial % 7)
                if later != first { h[later] = trial % 3 == 0 ? -peak : peak }
            }
            let fast = h.withUnsafeBufferPointer { EchoSlideTracker.mainTap($0.baseAddress!, count: n, peakRatio: 8) }
            let slow = scalar(h, peakRatio: 8)
            XCTAssertEqual(fast, slow, "trial \(trial), n \(n)")
            if slow != nil { found += 1 }
        }
        XCTAssertGreaterThan(found, 100)  // 134 found: the peaks, not only both nil
        let zeros = [Int32](repeating: 0, count: 64)
        XCTAssertNil(zeros.withUnsafeBufferPointer { EchoSlideTracker.mainTap($0.baseAddress!, count: 64, peakRatio: 8) })
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

    /// One step is not a slide (twenty-seventh session): PulseAudio's
    /// loopback moved its latency by 3 samples once (48 kHz, a live run on a
    /// loaded machine) and a 4 s line through the main tap's readings read
    /// it as −10 ppm of drift on one clock, which cost 8.6 dB of ERLE in
    /// the replay. A step of 3 samples with the readings' jitter is
    /// explained better by two levels than by a line, wherever in the
    /// window it falls; a slide (200 ppm at 16 kHz in 2-sample steps, as
    /// the filter re-learns it; 20 ppm at 48 kHz, smooth) is not, nor a
    /// still tap's jitter alone. Held only as a first correction under
    /// 50 ppm: a slow drift's main tap can step once per window too.
    func testOneStepOfTheMainTapIsNotASlide() {
        var noise = EchoSim.Noise(seed: 5)
        let t = (0..<40).map { Double($0) * 0.1 }
        for at in [3, 10, 20, 30, 36] {
            let step = (0..<40).map { 200 + ($0 >= at ? 3 : 0) + 0.1 * Double(noise.next()) }
            let fit = EchoSlideTracker.slope(t, step, count: 40)!
            XCTAssertTrue(EchoSlideTracker.stepFitsBetter(t, step, count: 40), "step at reading \(at)")
            XCTAssertTrue(EchoSlideTracker.isOneStep(0, slope: fit.slope, rate: 48_000, t, step, count: 40))
            if (10...30).contains(at) {
                // What the rule guards against: the line alone would correct.
                XCTAssertNotNil(EchoSlideTracker.corrected(0, slope: fit.slope, standardError: fit.standardError,
                                                           rate: 48_000), "step at reading \(at)")
                // A correction in use is refined, and a step read at 16 kHz
                // as over 50 ppm is taken: a slow drift steps like that too.
                XCTAssertFalse(EchoSlideTracker.isOneStep(-200e-6, slope: fit.slope, rate: 48_000, t, step, count: 40))
                XCTAssertFalse(EchoSlideTracker.isOneStep(0, slope: fit.slope, rate: 8_000, t, step, count: 40))
            }
        }
        let staircase = t.map { 100 + (3.2 * $0 / 2).rounded(.down) * 2 }
        XCTAssertFalse(EchoSlideTracker.stepFitsBetter(t, staircase, count: 40))
        let slow = t.map { 100 + 0.96 * $0 + 0.05 * Double(noise.next()) }
        XCTAssertFalse(EchoSlideTracker.stepFitsBetter(t, slow, count: 40))
        XCTAssertFalse(EchoSlideTracker.stepFitsBetter(t, t.map { 100 + 2 * $0 }, count: 40))
        XCTAssertFalse(EchoSlideTracker.stepFitsBetter(t, t.map { _ in 100 }, count: 40))
    }

    /// A refinement's readings that open on the filter's catch-up (the
    /// recorded room's case at 130 ppm and 48 kHz: rising 2.2 samples a
    /// second, the 44 ppm left, with a jump of 19.5 samples 0.5 s in) are
    /// read around the step: the slide left, not the line's 4.7. A
    /// line, a staircase (the main tap's steps as the filter follows a
    /// slide, several in a window), a still tap and a bend (a filter still
    /// converging: one step of a sample) keep the line's slope.
    func testARefinementReadsTheSlideAroundTheFiltersCatchUp() {
        var noise = EchoSim.Noise(seed: 11)
        let t = (0..<40).map { 9.2 + Double($0) * 0.1 }
        for at in [3, 5, 12, 25, 37] {
            let y = (0..<40).map { i in
                405.5 + 2.2 * (t[i] - t[0]) + (i < at ? 0 : 19.5) + 0.05 * Double(noise.next())
            }
            let line = EchoSlideTracker.slope(t, y, count: 40)!
            let read = EchoSlideTracker.refinementSlope(line, t, y, count: 40, rate: 48_000)
            XCTAssertEqual(read.slope, 2.2, accuracy: 0.05, "catch-up at reading \(at), line \(line.slope)")
            XCTAssertLessThan(read.standardError, 0.05)
            XCTAssertGreaterThan(line.slope - 2.2, 0.9, "the line alone over-reads (catch-up at reading \(at))")
            let step = EchoSlideTracker.slopeAroundOneStep(t, y, count: 40)!
            XCTAssertEqual(step.step, 19.5, accuracy: 0.2)
            // The same readings a day into the capture, 9000 taps further:
            // the same fit (its sums start from the first reading).
            let late = EchoSlideTracker.slopeAroundOneStep(t.map { $0 + 86_400 }, y.map { $0 + 9_000 }, count: 40)!
            XCTAssertEqual(late.slope, step.slope, accuracy: 1e-9)
            XCTAssertEqual(late.step, step.step, accuracy: 1e-7)
            XCTAssertEqual(late.residualShare, step.residualShare, accuracy: 1e-9)
        }
        let cases: [(String, [Double])] = [
            ("line", t.map { 100 + 2.2 * $0 + 0.05 * Double(noise.next()) }),
            ("staircase", t.map { 100 + (3.2 * $0 / 2).rounded(.down) * 2 }),
            ("still", t.map { _ in 100 + 0.05 * Double(noise.next()) }),
        ]
        for (name, y) in cases {
            let line = EchoSlideTracker.slope(t, y, count: 40)!
            let read = EchoSlideTracker.refinementSlope(line, t, y, count: 40, rate: 48_000)
            XCTAssertEqual(read.slope, line.slope, name)
            XCTAssertEqual(read.standardError, line.standardError, name)
        }
        // A filter still converging bends the readings: one step and a
        // slope fit them better than a line, but the step is a sample, not
        // a catch-up (under 0.2 ms).
        let bend = t.map { 100 + 2.2 * $0 - 1.2 * exp(-($0 - 9.2) / 0.8) }
        let bendLine = EchoSlideTracker.slope(t, bend, count: 40)!
        let bendStep = EchoSlideTracker.slopeAroundOneStep(t, bend, count: 40)!
        XCTAssertLessThan(bendStep.residualShare, EchoSlideTracker.catchUpResidualShare)
        XCTAssertLessThan(abs(bendStep.step), 9.6)
        XCTAssertEqual(EchoSlideTracker.refinementSlope(bendLine, t, bend, count: 40, rate: 48_000).slope, bendLine.slope)
        XCTAssertNil(EchoSlideTracker.slopeAroundOneStep(t, t, count: 11))
        XCTAssertNil(EchoSlideTracker.slopeAroundOneStep([Double](repeating: 1, count: 20), t, count: 20))
    }

    /// `slopeAroundOneStep`'s running sums give what a least-squares fit of
    /// each split on its own gives: random readings, every split tried.
    func testTheSlopeAroundOneStepIsTheBestSplitsLeastSquares() {
        var noise = EchoSim.Noise(seed: 17)
        for trial in 0..<50 {
            let n = 12 + trial % 29
            let t = (0..<n).map { Double($0) * 0.1 + 0.01 * Double(noise.next()) }
            let y = (0..<n).map { i in 50 + Double(trial % 7) * t[i] + (i > n / 2 ? 4 : 0) + Double(noise.next()) }
            var best = Double.infinity, bestSlope: Double = 0, bestStep: Double = 0
            for k in 3...(n - 3) {
                // Solve y = a1·[i < k] + a2·[i ≥ k] + b·t by the normal
                // equations (3 × 3, Cramer), then the residual directly.
                var m = [[Double]](repeating: [0, 0, 0], count: 3), v: [Double] = [0, 0, 0]
                for i in 0..<n {
                    let x = [i < k ? 1.0 : 0, i < k ? 0 : 1.0, t[i]]
                    for r in 0..<3 { v[r] += x[r] * y[i]; for c in 0..<3 { m[r][c] += x[r] * x[c] } }
                }
                func det(_ a: [[Double]]) -> Double {
                    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
                }
                let d = det(m)
                var solved: [Double] = []
                for c in 0..<3 {
                    var mc = m
                    for r in 0..<3 { mc[r][c] = v[r] }
                    solved.append(det(mc) / d)
                }
                var residual: Double = 0
                for i in 0..<n {
                    let r = y[i] - (i < k ? solved[0] : solved[1]) - solved[2] * t[i]
                    residual += r * r
                }
                if residual < best { best = residual; bestSlope = solved[2]; bestStep = solved[1] - solved[0] }
            }
            let line = EchoSlideTracker.slope(t, y, count: n)!
            var lineResidual: Double = 0
            let mt = t.reduce(0, +) / Double(n), my = y.reduce(0, +) / Double(n)
            for i in 0..<n { let r = y[i] - my - line.slope * (t[i] - mt); lineResidual += r * r }
            let fit = EchoSlideTracker.slopeAroundOneStep(t, y, count: n)!
            XCTAssertEqual(fit.slope, bestSlope, accuracy: 1e-6 * max(1, abs(bestSlope)), "trial \(trial)")
            XCTAssertEqual(fit.step, bestStep, accuracy: 1e-6 * max(1, abs(bestStep)), "trial \(trial)")
            XCTAssertEqual(fit.residualShare, best / lineResidual, accuracy: 1e-9, "trial \(trial)")
        }
    }

    /// The dead band: while no drift has been found, a slope under 4 ppm is
    /// not acted on, however sure the fit (one clock must stay at 0); once
    /// one has, what is left of it is followed down to 0.3 ppm (the first
    /// correction leaves a ppm or so, which slid on unseen and cost up to
    /// 10 dB of ERLE at 48 kHz). Each step applies all of the slope, and
    /// never a slope within 4 standard errors of 0.
    func testWhatIsLeftOfAFoundDriftIsFollowedBelowTheDeadBand() {
        let rate = 48_000
        let onePpm = Double(rate) * 1e-6  // samples per second
        // No drift found yet: 1 ppm (and 3.9) stays unseen, 5 ppm is taken.
        XCTAssertNil(EchoSlideTracker.corrected(0, slope: 1 * onePpm, standardError: 0.01 * onePpm, rate: rate))
        XCTAssertNil(EchoSlideTracker.corrected(0, slope: 3.9 * onePpm, standardError: 0.01 * onePpm, rate: rate))
        let first = EchoSlideTracker.corrected(0, slope: 5 * onePpm, standardError: 0.01 * onePpm, rate: rate)
        XCTAssertEqual(first ?? 0, -5e-6, accuracy: 1e-12)
        // Drift found (−199 ppm): 1 ppm left is followed, 0.2 ppm is not.
        let found = -199e-6
        let next = EchoSlideTracker.corrected(found, slope: 1 * onePpm, standardError: 0.02 * onePpm, rate: rate)
        XCTAssertEqual(next ?? 0, found - 1e-6, accuracy: 1e-12)
        XCTAssertNil(EchoSlideTracker.corrected(found, slope: 0.2 * onePpm, standardError: 0.01 * onePpm, rate: rate))
        // Not 4 standard errors out of 0: kept either way.
        XCTAssertNil(EchoSlideTracker.corrected(found, slope: 1 * onePpm, standardError: 0.3 * onePpm, rate: rate))
        XCTAssertNil(EchoSlideTracker.corrected(0, slope: 50 * onePpm, standardError: 20 * onePpm, rate: rate))
    }

    /// The estimates' rule (`followed`) at 48 kHz: a slide under 100 ppm
    /// (4.8 samples a second) is never
    /// taken from them (the main tap's, and one clock must stay at 0); a
    /// faster one is taken whole; once taken, a change of 20 ppm or more is
    /// followed; a slide that falls under 100 ppm (it stopped) sets the
    /// correction back to exactly 0, on 2 standard errors (4 elsewhere).
    func testAFastSlideFromTheEstimatesIsTakenWholeAndLetGoToZero() {
        let rate = 48_000
        let ppm = Double(rate) * 1e-6  // samples per second per ppm
        // Nothing in use: 90 ppm is left alone however sure (at 16 kHz
        // too, where the band in samples a second would be 300 ppm, but
        // `fastBandMaxPpm` caps it: 110 ppm is taken there); 500 is taken.
        XCTAssertNil(EchoSlideTracker.followed(0, fast: false, slope: 90 * ppm, standardError: 1 * ppm, rate: rate))
        XCTAssertNil(EchoSlideTracker.followed(0, fast: false, slope: 90 * 16_000e-6, standardError: 0.01,
                                               rate: 16_000))
        let taken16 = EchoSlideTracker.followed(0, fast: false, slope: 110 * 16_000e-6, standardError: 0.01,
                                                rate: 16_000)
        XCTAssertEqual(taken16 ?? 0, -110e-6, accuracy: 1e-12)
        let taken = EchoSlideTracker.followed(0, fast: false, slope: 500 * ppm, standardError: 20 * ppm, rate: rate)
        XCTAssertEqual(taken ?? 0, -500e-6, accuracy: 1e-12)
        // Not 4 standard errors out: kept.
        XCTAssertNil(EchoSlideTracker.followed(0, fast: false, slope: 500 * ppm, standardError: 130 * ppm, rate: rate))
        // Following: 30 ppm more is taken, 10 is not.
        let more = EchoSlideTracker.followed(-500e-6, fast: true, slope: 530 * ppm, standardError: 5 * ppm, rate: rate)
        XCTAssertEqual(more ?? 0, -530e-6, accuracy: 1e-12)
        XCTAssertNil(EchoSlideTracker.followed(-500e-6, fast: true, slope: 510 * ppm, standardError: 1 * ppm, rate: rate))
        // The slide stopped (what is left is under 100 ppm): back to 0,
        // on 2 standard errors; a correction the main tap set is left to it
        // unless the estimates see it 150 ppm off (the next test).
        XCTAssertEqual(EchoSlideTracker.followed(-500e-6, fast: true, slope: 60 * ppm, standardError: 200 * ppm,
                                                 rate: rate), 0)
        XCTAssertNil(EchoSlideTracker.followed(-500e-6, fast: true, slope: 60 * ppm, standardError: 250 * ppm,
                                               rate: rate))
        XCTAssertNil(EchoSlideTracker.followed(-200e-6, fast: false, slope: 130 * ppm, standardError: 5 * ppm,
                                               rate: rate))
    }

    /// A correction the main tap set is the estimates' only from 1.5 times
    /// their band (150 ppm at 48 and at 16 kHz), however sure their
    /// fit: the recorded room where a fit 102 ppm off the main tap's 165
    /// ppm (a slide of 200) was taken, and nine corrections followed in
    /// 10 s. From rest, and while following their own correction, the
    /// bands are as before.
    func testAMainTapCorrectionIsTakenOverOnlyFarFromIt() {
        let rate = 48_000
        let ppm = Double(rate) * 1e-6
        // The room's case: 267 wanted, 165 in use from the main tap: kept.
        XCTAssertNil(EchoSlideTracker.followed(165e-6, fast: false, slope: -267 * ppm, standardError: 16 * ppm, rate: rate))
        // 140 ppm off: kept; 160 ppm off: taken whole.
        XCTAssertNil(EchoSlideTracker.followed(165e-6, fast: false, slope: -305 * ppm, standardError: 1 * ppm, rate: rate))
        let far = EchoSlideTracker.followed(165e-6, fast: false, slope: -325 * ppm, standardError: 1 * ppm, rate: rate)
        XCTAssertEqual(far ?? 0, 325e-6, accuracy: 1e-12)
        // A creep of 500 ppm on top of a main-tap correction: taken.
        let creep = EchoSlideTracker.followed(-20e-6, fast: false, slope: 520 * ppm, standardError: 20 * ppm, rate: rate)
        XCTAssertEqual(creep ?? 0, -520e-6, accuracy: 1e-12)
        // From rest 110 ppm is taken, as before; the same 110 ppm off the
        // estimates' own correction (fast) too.
        let rest = EchoSlideTracker.followed(0, fast: false, slope: -110 * ppm, standardError: 1 * ppm, rate: rate)
        XCTAssertEqual(rest ?? 0, 110e-6, accuracy: 1e-12)
        let own = EchoSlideTracker.followed(165e-6, fast: true, slope: -275 * ppm, standardError: 1 * ppm, rate: rate)
        XCTAssertEqual(own ?? 0, 275e-6, accuracy: 1e-12)
        // 16 kHz: the band is 100 ppm too (`fastBandMaxPpm`; 4.8 samples a
        // second would be 300), 150 off a main-tap correction.
        let r16 = 16_000, ppm16 = Double(r16) * 1e-6
        XCTAssertNil(EchoSlideTracker.followed(100e-6, fast: false, slope: -240 * ppm16, standardError: 1 * ppm16, rate: r16))
        let far16 = EchoSlideTracker.followed(100e-6, fast: false, slope: -260 * ppm16, standardError: 1 * ppm16, rate: r16)
        XCTAssertEqual(far16 ?? 0, 260e-6, accuracy: 1e-12)
    }

    /// A slide that falls under the estimates' band (100 ppm) while they
    /// follow it is the main tap's: `followed` returns what the estimates
    /// read when it is 4 standard errors out of 0 (else 0, a stop), and
    /// `handsOver` keeps it only when the main tap's own slope is nearer
    /// what that slide leaves than what a stop leaves. The recorded room's
    /// case (`drift_rooms.py --ppm 80`): 148 ppm taken from rest for a
    /// slide of 80, the line then reading 80.
    func testASlowerSlideIsHandedToTheMainTapOnlyWhenItAgrees() {
        let rate = 48_000
        let ppm = Double(rate) * 1e-6
        let handed = EchoSlideTracker.followed(148e-6, fast: true, slope: -80 * ppm, standardError: 2 * ppm, rate: rate)
        XCTAssertEqual(handed ?? 0, 80e-6, accuracy: 1e-12)
        // Not 4 standard errors out of 0 (80 against 4 × 25): a stop.
        XCTAssertEqual(EchoSlideTracker.followed(148e-6, fast: true, slope: -80 * ppm, standardError: 25 * ppm,
                                                 rate: rate), 0)
        // With 148 ppm in use the reference moves 7.1 samples a second: an
        // echo sliding 80 ppm (3.8 a second) leaves 3.3 sliding against it,
        // an echo standing still 7.1.
        XCTAssertTrue(EchoSlideTracker.handsOver(148e-6, slope: -80 * ppm, mainTapSlope: 3.0, rate: rate))
        XCTAssertFalse(EchoSlideTracker.handsOver(148e-6, slope: -80 * ppm, mainTapSlope: 6.5, rate: rate))
        XCTAssertFalse(EchoSlideTracker.handsOver(148e-6, slope: -80 * ppm, mainTapSlope: nil, rate: rate))
        // The other sign (the echo getting shorter).
        XCTAssertTrue(EchoSlideTracker.handsOver(-148e-6, slope: 80 * ppm, mainTapSlope: -3.5, rate: rate))
        XCTAssertFalse(EchoSlideTracker.handsOver(-148e-6, slope: 80 * ppm, mainTapSlope: -7.0, rate: rate))
    }

    /// End to end, without a main tap (no canceller frames): a slide of
    /// 160 ppm the estimates take, slowing to 70 ppm, is not left at what
    /// they read under their band: nobody would refine it. It goes to 0,
    /// as before there was a hand-over.
    func testASlowerSlideIsNotHandedOverWithoutTheMainTap() throws {
        let changes = try followEstimates(rate: 48_000, seconds: 40, noiseMs: 0.02, seed: 3) { t in
            t > 2 ? (t <= 12 ? 160 : 70) : 0
        }
        print("160 then 70 ppm, no main tap: corrections " + changes.map { String(format: "%.1f:%.0f", $0.t, $0.ppm) }.joined(separator: " "))
        XCTAssertEqual(try XCTUnwrap(changes.last { $0.t <= 12 }).ppm, -160, accuracy: 20)
        XCTAssertEqual(try XCTUnwrap(changes.last).ppm, 0)
        XCTAssertFalse(changes.contains { $0.ppm != 0 && abs($0.ppm) <= 100 }, "\(changes)")
    }

    /// The estimates path end to end: estimates every 256 ms with 0.1 ms
    /// of noise. Still: nothing, ever. Sliding 500 ppm: the correction is
    /// taken within 3 s; the estimates then move only with what is left
    /// (the tracker adds back what its correction moved); when the slide
    /// stops the correction goes back to 0. One estimate far off (a hop
    /// whose peak flipped) is skipped: nothing moves.
    func testEstimatesFollowASlideAndLetItGo() throws {
        let rate = 48_000, frame = 480
        guard let canceller = EchoCanceller(frameSize: frame, sampleRate: rate, tailMs: 200, speakers: 1,
                                            noiseSuppression: false, echoSuppression: false, agc: false),
              var tracker = EchoSlideTracker(canceller: canceller, sampleRate: rate, frameSize: frame) else {
            return XCTFail("allocation failed")
        }
        var noise = EchoSim.Noise(seed: 5)
        var echo = 0.12 * Double(rate)   // the echo's own delay, samples
        var reference: Double = 0        // what the correction moved the reference by
        var correction: Double = 0
        var changes: [(t: Double, ppm: Double)] = []
        let slideFrom = 20.0, slideTo = 34.0
        var seen = echo                  // the estimator lags (0.5 s average)
        for i in 0..<(60 * 100) {
            let t = Double(i + 1) * 0.01
            _ = tracker.frame(canceller: canceller, echo: false, hostTiming: false)
            if t > slideFrom && t <= slideTo { echo += 500e-6 * Double(rate) * 0.01 }
            reference += correction * Double(rate) * 0.01
            seen += 0.01 / 0.5 * (echo + reference - seen)
            guard i % 26 == 25 else { continue }
            var estimate = seen + 0.1e-3 * Double(rate) * Double(noise.next())
            if i == 40 * 100 + 25 { estimate += 0.01 * Double(rate) }  // one hop's peak flipped
            if let c = tracker.estimate(estimate, hostTiming: false) {
                correction = c
                changes.append((t, c * 1e6))
            }
        }
        print("estimates: corrections (s, ppm): " + changes.map { String(format: "%.1f:%.0f", $0.t, $0.ppm) }.joined(separator: " "))
        XCTAssertTrue(changes.allSatisfy { $0.t > slideFrom }, "acted while the echo stood still")
        let during = changes.filter { $0.t < slideTo }
        XCTAssertLessThan(try XCTUnwrap(during.first).t, slideFrom + 3)
        XCTAssertEqual(try XCTUnwrap(during.last).ppm, -500, accuracy: 30)
        XCTAssertEqual(try XCTUnwrap(changes.last).ppm, 0)
        XCTAssertLessThan(try XCTUnwrap(changes.last).t, slideTo + 4)
        // Host timing in use: the estimates are not looked at.
        XCTAssertNil(tracker.estimate(1e6, hostTiming: true))
    }

    /// Estimates every 256 ms with `noiseMs` of noise, of an echo that
    /// slides at `ppm` from `from` to `to` (s) and stands still otherwise;
    /// the estimator lags by its 0.5 s average. Returns the corrections
    /// (time, ppm) the tracker asked for.
    func followEstimates(rate: Int, ppm: Double, from: Double, to: Double, seconds: Double, noiseMs: Double,
                         seed: UInt64) throws -> [(t: Double, ppm: Double)] {
        try followEstimates(rate: rate, seconds: seconds, noiseMs: noiseMs, seed: seed) { t in
            t > from && t <= to ? ppm : 0
        }
    }

    /// The same for an echo that slides at `slidePpm(t)` at time t (s).
    func followEstimates(rate: Int, seconds: Double, noiseMs: Double, seed: UInt64,
                         slidePpm: (Double) -> Double) throws -> [(t: Double, ppm: Double)] {
        let frame = rate / 100
        guard let canceller = EchoCanceller(frameSize: frame, sampleRate: rate, tailMs: 200, speakers: 1,
                                            noiseSuppression: false, echoSuppression: false, agc: false),
              var tracker = EchoSlideTracker(canceller: canceller, sampleRate: rate, frameSize: frame) else {
            XCTFail("allocation failed")
            return []
        }
        var noise = EchoSim.Noise(seed: seed)
        var echo = 0.12 * Double(rate), reference: Double = 0, correction: Double = 0
        var seen = echo
        var changes: [(t: Double, ppm: Double)] = []
        for i in 0..<Int(seconds * 100) {
            let t = Double(i + 1) * 0.01
            _ = tracker.frame(canceller: canceller, echo: false, hostTiming: false)
            echo += slidePpm(t) * 1e-6 * Double(rate) * 0.01
            reference += correction * Double(rate) * 0.01
            seen += 0.01 / 0.5 * (echo + reference - seen)
            guard i % 26 == 25 else { continue }
            if let c = tracker.estimate(seen + noiseMs * 1e-3 * Double(rate) * Double(noise.next()),
                                        hostTiming: false) {
                correction = c
                changes.append((t, c * 1e6))
            }
        }
        return changes
    }

    /// A fast slide that stops (900 ppm at 48 kHz, PulseAudio's loopback
    /// after a resume) is let go within 2.5 s of the stop by the last
    /// second's estimates (`stopped`; the 3 s line alone took 5.6 s in
    /// CaptureTests' scenario), and not taken again by the older estimates
    /// that saw it slide. A slide that goes on (250 and 900 ppm
    /// and 500 at 48 kHz, 500 at 16 kHz, 50 noise seeds each, 40 s) is never let
    /// go while it slides (250 ppm at 48 kHz was, in 3 of 20 runs, before
    /// `stopSlideSamplesPerSecond`). Measured: let go 1.64–2.16 s after the
    /// stop.
    func testAStoppedSlideIsLetGoFromTheLastSecondAndASlideThatGoesOnIsNot() throws {
        var delays: [Double] = []
        for seed in UInt64(1)...20 {
            let c = try followEstimates(rate: 48_000, ppm: 900, from: 5, to: 15, seconds: 30, noiseMs: 0.05, seed: seed)
            let during = c.filter { $0.t <= 15 }
            XCTAssertEqual(try XCTUnwrap(during.last).ppm, -900, accuracy: 60, "seed \(seed)")
            // After the stop: only toward 0 (the 3 s line's steps down
            // while it lags), then 0 and nothing more.
            let after = c.filter { $0.t > 15 }
            XCTAssertTrue(zip(after, after.dropFirst()).allSatisfy { abs($1.ppm) < abs($0.ppm) }, "seed \(seed): \(after)")
            let zero = try XCTUnwrap(after.first { $0.ppm == 0 }, "seed \(seed): never let go")
            XCTAssertEqual(after.last?.t, zero.t, "seed \(seed): taken again: \(after)")
            delays.append(zero.t - 15)
        }
        print("900 ppm at 48 kHz stopped: let go after " + String(format: "%.2f…%.2f s", delays.min()!, delays.max()!))
        XCTAssertLessThan(delays.max()!, 2.5)
        for (rate, ppm) in [(48_000, 250.0), (48_000, 500.0), (48_000, 900.0), (16_000, 500.0)] {
            for seed in UInt64(1)...50 {
                let c = try followEstimates(rate: rate, ppm: ppm, from: 2, to: 60, seconds: 40, noiseMs: 0.1,
                                            seed: seed)
                let taken = try XCTUnwrap(c.first, "\(rate) \(ppm) seed \(seed): never taken")
                XCTAssertLessThan(taken.t, 6, "\(rate) \(ppm) seed \(seed)")
                XCTAssertFalse(c.contains { $0.ppm == 0 }, "\(rate) \(ppm) seed \(seed): let go while sliding: \(c)")
            }
        }
    }
}
