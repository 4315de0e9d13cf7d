import XCTest
@testable import RTMix

/// The capture path's stages on their own (the end-to-end behaviour is in
/// CaptureTests).
final class CaptureStageTests: XCTestCase {
    // MARK: FFT

    func testFFTMatchesDirectDFTAndInverts() {
        let n = 64
        let fft = FFT(size: n)!
        var noise = EchoSim.Noise(seed: 3)
        let x = (0..<n).map { _ in noise.next() }
        var re = x, im = [Float](repeating: 0, count: n)
        re.withUnsafeMutableBufferPointer { r in im.withUnsafeMutableBufferPointer { fft.forward(r.baseAddress!, $0.baseAddress!) } }
        for k in [0, 1, 7, 32, 63] {
            var sr = 0.0, si = 0.0
            for t in 0..<n {
                sr += Double(x[t]) * cos(-2 * Double.pi * Double(k * t) / Double(n))
                si += Double(x[t]) * sin(-2 * Double.pi * Double(k * t) / Double(n))
            }
            XCTAssertEqual(Double(re[k]), sr, accuracy: 1e-4)
            XCTAssertEqual(Double(im[k]), si, accuracy: 1e-4)
        }
        re.withUnsafeMutableBufferPointer { r in im.withUnsafeMutableBufferPointer { fft.inverse(r.baseAddress!, $0.baseAddress!) } }
        for t in 0..<n { XCTAssertEqual(re[t], x[t], accuracy: 1e-5) }
    }

    // MARK: drift follower

    func testDriftResamplerIsBitExactAtUnitStep() {
        var d = DriftResampler(chunkFrames: 256, channels: 2)!
        var noise = EchoSim.Noise(seed: 5)
        let input = (0..<400).map { _ in noise.next() }
        var outputs: [Float] = []
        var out = [Float](repeating: 0, count: 2 * 512)
        var fed = 0
        while fed < 200 {
            let frames = min(100, 200 - fed)
            input[(2 * fed)..<(2 * (fed + frames))].withUnsafeBufferPointer { d.append(interleaved: $0.baseAddress!, frames: frames) }
            fed += frames
            let made = out.withUnsafeMutableBufferPointer { d.produce($0.baseAddress!, outStride: 512, maxFrames: 512, step: 1, computed: 2) }
            outputs += out[0..<made]
        }
        // Output k is input frame k + taps/2 − 1, channel 0.
        let lag = DriftResampler.taps / 2 - 1
        XCTAssertGreaterThan(outputs.count, 100)
        for k in 0..<outputs.count { XCTAssertEqual(outputs[k], input[2 * (k + lag)]) }
    }

    func testDriftResamplerInterpolatesAToneAtAFractionalStep() {
        // A 3 kHz tone at 16 kHz played 500 ppm faster: each output must be
        // the tone at its fractional input position (error < -60 dB).
        let rate = 16_000.0, f = 3000.0, step = 1.0005
        var d = DriftResampler(chunkFrames: 4096, channels: 2)!
        let n = 4000
        var input = [Float](repeating: 0, count: 2 * n)
        for i in 0..<n { input[2 * i] = Float(sin(2 * Double.pi * f * Double(i) / rate)) }
        input.withUnsafeBufferPointer { d.append(interleaved: $0.baseAddress!, frames: n) }
        var out = [Float](repeating: 0, count: 2 * 8192)
        let made = out.withUnsafeMutableBufferPointer { d.produce($0.baseAddress!, outStride: 8192, maxFrames: 8192, step: step, computed: 1) }
        var err = 0.0, sig = 0.0
        let lag = Double(DriftResampler.taps / 2 - 1)
        for k in 100..<(made - 100) {
            let want = sin(2 * Double.pi * f * (lag + Double(k) * step) / rate)
            err += pow(Double(out[k]) - want, 2)
            sig += want * want
        }
        XCTAssertLessThan(10 * log10(err / sig), -60)
    }

    // MARK: delay estimator

    /// Feeds reference and mic in 10 ms calls; returns the last estimate.
    func feed(_ e: inout DelayEstimator, far: [Float], mic: [Float]) -> DelayEstimator.Estimate? {
        var found: DelayEstimator.Estimate?
        var i = 0
        while i + 160 <= far.count {
            far[i..<(i + 160)].withUnsafeBufferPointer { e.appendReference($0.baseAddress!, count: 160) }
            mic[i..<(i + 160)].withUnsafeBufferPointer { e.appendMic($0.baseAddress!, count: 160) }
            e.step()
            if let l = e.latest { found = l; e.latest = nil }
            i += 160
        }
        return found
    }

    func testDelayEstimatorFindsADelayedCopy() {
        let rate = 16_000, delay = 1_937  // 121.06 ms
        var e = DelayEstimator(sampleRate: rate)!
        let far = EchoSim.speech(rate: rate, seconds: 6, seed: 8)
        var mic = [Float](repeating: 0, count: far.count)
        for i in delay..<far.count { mic[i] = 0.4 * far[i - delay] }
        let found = feed(&e, far: far, mic: mic)
        let est = try! XCTUnwrap(found)
        // The echo in mic sample n is reference sample n + offset.
        XCTAssertEqual(est.offset, Double(-delay), accuracy: 16)  // 1 ms
        XCTAssertGreaterThan(est.confidence, 6)
        XCTAssertTrue(est.distinct)
    }

    /// Issue 19: the decimated sample counters are rebased before they
    /// could reach 2³¹ (a trap on 32-bit ARM after ~50 h of capture). Preset
    /// just below the threshold, the estimator crosses it mid-run, the
    /// counters come back down, and the delay is still found exactly.
    func testDelayEstimatorCountersAreRebasedAndKeepWorking() {
        let rate = 16_000, delay = 1_937
        var e = DelayEstimator(sampleRate: rate)!
        let start = DelayEstimator.rebaseThreshold - 2_000
        e.micCount = start
        e.refCount = start
        e.nextHopAt = start + DelayEstimator.fftSize
        let far = EchoSim.speech(rate: rate, seconds: 6, seed: 8)
        var mic = [Float](repeating: 0, count: far.count)
        for i in delay..<far.count { mic[i] = 0.4 * far[i - delay] }
        let found = feed(&e, far: far, mic: mic)
        XCTAssertLessThan(e.micCount, DelayEstimator.rebaseThreshold, "the counters were not rebased")
        let est = try! XCTUnwrap(found)
        XCTAssertEqual(est.offset, Double(-delay), accuracy: 16)
        XCTAssertGreaterThan(est.confidence, 6)
    }

    func testDelayEstimatorRefusesAToneAsAmbiguous() {
        let rate = 16_000
        var e = DelayEstimator(sampleRate: rate)!
        let n = rate * 4
        let tone = (0..<n).map { Float(0.3 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        var last: DelayEstimator.Estimate?
        var i = 0
        while i + 160 <= n {
            tone[i..<(i + 160)].withUnsafeBufferPointer { e.appendReference($0.baseAddress!, count: 160) }
            if i >= 640 { tone[(i - 640)..<(i - 480)].withUnsafeBufferPointer { e.appendMic($0.baseAddress!, count: 160) } }
            else { [Float](repeating: 0, count: 160).withUnsafeBufferPointer { e.appendMic($0.baseAddress!, count: 160) } }
            e.step()
            if let l = e.latest { last = l; e.latest = nil }
            i += 160
        }
        XCTAssertFalse(try XCTUnwrap(last).distinct)
    }

    // MARK: residual-echo gate

    func testGateClosesOnEchoOnlyAndOpensForTheNearEnd() {
        var g = ResidualEchoGate(sampleRate: 16_000, frameSize: 160)
        var frame = [Float](repeating: 0.01, count: 160)
        // Far end only (15 s): the residual stays 30 dB under the mic, the
        // mic 10 dB under the reference; both trackers learn that.
        for _ in 0..<1500 {
            for i in 0..<160 { frame[i] = 0.01 }
            frame.withUnsafeMutableBufferPointer { g.process($0.baseAddress!, count: 160, referencePower: 0.01, micPower: 1e-3, outputPower: 1e-6) }
        }
        XCTAssertLessThan(g.gain, 0.02)
        XCTAssertFalse(g.doubleTalk)
        // A single near-end-looking frame among echo-only frames (a chance
        // coincidence of both tests, as on a loop with no room) does not
        // open the gate: the tests must pass on two frames in a row.
        var probe = g
        for k in 0..<200 {
            for i in 0..<160 { frame[i] = 0.01 }
            let spike = k % 10 == 0
            frame.withUnsafeMutableBufferPointer {
                probe.process($0.baseAddress!, count: 160, referencePower: 0.01,
                              micPower: spike ? 4e-3 : 1e-3, outputPower: spike ? 1e-4 : 1e-6)
            }
            XCTAssertFalse(probe.doubleTalk, "frame \(k)")
        }
        XCTAssertLessThan(probe.gain, 0.02)
        // Near end talks: the residual jumps 20 dB and the mic 6 dB; the
        // second such frame opens the gate.
        for i in 0..<160 { frame[i] = 0.01 }
        frame.withUnsafeMutableBufferPointer { g.process($0.baseAddress!, count: 160, referencePower: 0.01, micPower: 4e-3, outputPower: 1e-4) }
        XCTAssertFalse(g.doubleTalk)
        for i in 0..<160 { frame[i] = 0.01 }
        frame.withUnsafeMutableBufferPointer { g.process($0.baseAddress!, count: 160, referencePower: 0.01, micPower: 4e-3, outputPower: 1e-4) }
        XCTAssertTrue(g.doubleTalk)
        XCTAssertGreaterThan(g.gain, 0.99)
        // Far end silent: open.
        var h = ResidualEchoGate(sampleRate: 16_000, frameSize: 160)
        for _ in 0..<100 {
            frame.withUnsafeMutableBufferPointer { h.process($0.baseAddress!, count: 160, referencePower: 0, micPower: 1e-3, outputPower: 1e-3) }
        }
        XCTAssertEqual(h.gain, 1, accuracy: 1e-6)
    }

    /// A gate trained on 15 s of far end only: the residual 30 dB under the
    /// mic, the mic 10 dB under the reference.
    private func trainedGate() -> ResidualEchoGate {
        var g = ResidualEchoGate(sampleRate: 16_000, frameSize: 160)
        var frame = [Float](repeating: 0.01, count: 160)
        for _ in 0..<1500 {
            frame.withUnsafeMutableBufferPointer { g.process($0.baseAddress!, count: 160, referencePower: 0.01, micPower: 1e-3, outputPower: 1e-6) }
        }
        return g
    }

    private func feed(_ g: inout ResidualEchoGate, reference: Float, mic: Float, output: Float) {
        var frame = [Float](repeating: 0.01, count: 160)
        frame.withUnsafeMutableBufferPointer { g.process($0.baseAddress!, count: 160, referencePower: reference, micPower: mic, outputPower: output) }
    }

    func testGateNeedsThreeFramesOfResidualAloneToOpen() {
        // A canceller missing a broadband transient (the live check's noise
        // markers on the PulseAudio loop): the residual is 20 dB over its
        // usual level (the 15 dB test alone) while the mic is what the echo
        // explains, for two frames: the gate stays closed. A third such
        // frame (a talker quieter than the echo) opens it.
        var g = trainedGate()
        XCTAssertLessThan(g.gain, 0.02)
        for k in 0..<2 {
            feed(&g, reference: 0.01, mic: 1e-3, output: 1e-4)
            XCTAssertFalse(g.doubleTalk, "frame \(k)")
        }
        XCTAssertLessThan(g.gain, 0.02)
        feed(&g, reference: 0.01, mic: 1e-3, output: 1e-4)
        XCTAssertTrue(g.doubleTalk)
        XCTAssertGreaterThan(g.gain, 0.99)
    }

    func testGateTakesALinearOutputLouderThanTheMicOnlyWithALouderMic() {
        // The canceller adds energy (misadapted after a transient): 50
        // frames of output 3 dB over a mic that the echo explains are no
        // near-end talk; the gate stays closed.
        var g = trainedGate()
        for k in 0..<50 {
            feed(&g, reference: 0.01, mic: 0.9e-3, output: 1.8e-3)
            XCTAssertFalse(g.doubleTalk, "frame \(k)")
        }
        XCTAssertLessThan(g.gain, 0.02)
        // The same with the mic 6 dB louder than the echo explains (a talker
        // the canceller adapts on): near-end talk, open on the second frame.
        var h = trainedGate()
        feed(&h, reference: 0.01, mic: 4e-3, output: 8e-3)
        XCTAssertFalse(h.doubleTalk)
        feed(&h, reference: 0.01, mic: 4e-3, output: 8e-3)
        XCTAssertTrue(h.doubleTalk)
        XCTAssertGreaterThan(h.gain, 0.99)
    }

    func testGateComparesTheMicWithThePreviousFramesReference() {
        // The reference reaches the canceller a few ms before its echo, so
        // on a falling edge the mic holds the previous frame's echo: with
        // the reference halving every frame and each frame's mic the echo
        // (0.9 × the learnt loss) of the frame before, the mic is never
        // louder than the echo explains. With a residual 10 dB over its
        // usual level (the 3 dB test, not the 15 dB one) the gate must not
        // open. (Compared with the decayed reference alone, the mic looked
        // 0.6–2 dB too loud and the gate opened on the second frame.)
        var g = trainedGate()
        var reference: Float = 0.1
        feed(&g, reference: reference, mic: 0.9e-3, output: 0.9e-6)
        for k in 1...6 {
            let mic = 0.09 * reference
            reference *= 0.5
            feed(&g, reference: reference, mic: mic, output: mic * 1e-2)
            XCTAssertFalse(g.doubleTalk, "frame \(k)")
        }
        XCTAssertLessThan(g.gain, 0.02)
    }

    // MARK: canceller conversions

    func testFloatToInt16RoundsToNearestEvenSaturatesAndZeroesNaN() {
        let values: [Float] = [0, 0.5 / 32768, 1.5 / 32768, -0.5 / 32768, 2.5 / 32768, 0.49999997 / 32768,
                               1, -1, 1.5, -7, .nan, .infinity, -.infinity, 12345.4 / 32768, -12345.6 / 32768,
                               32766.5 / 32768, 0.25, -0.25, 1e-9, -1e-9]
        let want: [Int16] = [0, 0, 2, 0, 2, 0, 32767, -32768, 32767, -32768, 0, 32767, -32768, 12345, -12346,
                             32766, 8192, -8192, 0, 0]
        var out = [Int16](repeating: 99, count: values.count)
        let power = values.withUnsafeBufferPointer { v in out.withUnsafeMutableBufferPointer {
            EchoCanceller.toS16(v.baseAddress!, $0.baseAddress!, count: values.count) } }
        XCTAssertEqual(out, want)  // both the 8-wide and the scalar tail paths
        let expected = want.reduce(0.0) { $0 + Double($1) * Double($1) } / (Double(want.count) * 32768 * 32768)
        XCTAssertEqual(Double(power), expected, accuracy: expected * 1e-5)
    }
}
