import XCTest
import CSpeexDSP
@testable import RTMix

/// `EchoCanceller` (capture stage 4): the pause of speexdsp's residual-echo
/// suppression after the filter in use is lost (the canceller's other
/// behaviour: `EchoCancellerQuietTests`, `EchoFilterCheckTests`).
final class EchoCancellerTests: XCTestCase {
    /// The echo state the preprocessor holds (nil: its residual-echo
    /// suppression is off).
    private func heldEchoState(_ c: borrowing EchoCanceller) -> OpaquePointer? {
        guard let p = c.preprocess else { return nil }
        var state: OpaquePointer? = nil
        _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_GET_ECHO_STATE, &state)
        return state
    }

    func testAPauseLetsGoOfTheEchoStateForItsFramesOnly() throws {
        let n = 160
        guard let c = EchoCanceller(frameSize: n, sampleRate: 16_000, tailMs: 200, speakers: 1,
                                    noiseSuppression: true, echoSuppression: true, agc: false) else {
            return XCTFail("allocation failed")
        }
        XCTAssertTrue(c.residualSuppression)
        XCTAssertNotNil(heldEchoState(c))
        XCTAssertEqual(heldEchoState(c), c.echo)
        let mic = [Float](repeating: 0.01, count: n), ref = [Float](repeating: 0.01, count: n)
        var out = [Float](repeating: 0, count: n)
        c.pauseResidualSuppression(frames: 3)
        XCTAssertNil(heldEchoState(c))
        for frame in 0..<3 {
            _ = c.process(mic: mic, reference: ref, out: &out)
            if frame < 2 { XCTAssertNil(heldEchoState(c), "frame \(frame)") }
        }
        // The third frame's call ran with it again.
        XCTAssertEqual(heldEchoState(c), c.echo)
        // A pause asked for during one runs from the last request.
        c.pauseResidualSuppression(frames: 2)
        _ = c.process(mic: mic, reference: ref, out: &out)
        c.pauseResidualSuppression(frames: 2)
        _ = c.process(mic: mic, reference: ref, out: &out)
        XCTAssertNil(heldEchoState(c))
        _ = c.process(mic: mic, reference: ref, out: &out)
        XCTAssertEqual(heldEchoState(c), c.echo)
        // Bad input: nothing changes.
        c.pauseResidualSuppression(frames: 0)
        c.pauseResidualSuppression(frames: -5)
        XCTAssertEqual(heldEchoState(c), c.echo)
        XCTAssertEqual(c.pauseLeft[0], 0)
    }

    func testAPauseDoesNothingWithoutResidualEchoSuppression() throws {
        guard let c = EchoCanceller(frameSize: 160, sampleRate: 16_000, tailMs: 200, speakers: 1,
                                    noiseSuppression: true, echoSuppression: false, agc: false) else {
            return XCTFail("allocation failed")
        }
        XCTAssertFalse(c.residualSuppression)
        XCTAssertNil(heldEchoState(c))
        c.pauseResidualSuppression(frames: 10)
        XCTAssertEqual(c.pauseLeft[0], 0)
        XCTAssertNil(heldEchoState(c))
    }

    /// The capture path pauses it when a delay known before moves (the
    /// echo path changed) after the filter had converged, with a talker
    /// there (a near-end state), for `CaptureProcessor.residualPauseSeconds`;
    /// not when the filter had not converged (a wrong hint replaced at the
    /// start), nor with the far end alone, nor for a change that is no move.
    func testTheCapturePathPausesItWhenAConvergedFiltersEchoPathMoves() throws {
        var config = EngineConfig()
        config.captureRate = 16_000
        withCaptureLink(config) { link in
            guard var p = CaptureProcessor(config: config) else { return XCTFail("allocation failed") }
            XCTAssertTrue(p.canceller.residualSuppression)
            func change(pathChanged: Bool) -> DelayTracker.Change {
                DelayTracker.Change(samples: 2560, source: 2, pathChanged: pathChanged, restartCanceller: false,
                                    distrust: true)
            }
            func converge(_ p: inout CaptureProcessor) {
                var f = EchoCanceller.FramePowers()
                f.mic = 1e-2
                f.reference = 1e-2
                f.linear = 1e-5  // 30 dB removed
                for _ in 0..<40 { _ = p.check.frame(f, echoOnly: true) }
            }
            p.suppressor.nearEndFrames = 60
            // A hint replaced before the filter learnt anything.
            p.delayChanged(change(pathChanged: true), link: link)
            XCTAssertEqual(p.canceller.pauseLeft[0], 0)
            // The far end alone.
            converge(&p)
            p.suppressor.nearEndFrames = 0
            p.delayChanged(change(pathChanged: true), link: link)
            XCTAssertEqual(p.canceller.pauseLeft[0], 0)
            p.suppressor.nearEndFrames = 60
            converge(&p)
            XCTAssertTrue(p.check.hasConverged)
            p.delayChanged(change(pathChanged: false), link: link)
            XCTAssertEqual(p.canceller.pauseLeft[0], 0)
            XCTAssertFalse(p.check.hasConverged)  // the change restarted the check
            converge(&p)
            p.delayChanged(change(pathChanged: true), link: link)
            XCTAssertEqual(p.canceller.pauseLeft[0], CaptureProcessor.residualPauseSeconds * 100)
            XCTAssertNil(heldEchoState(p.canceller))
        }
    }

    /// It pauses for two frames at a time in the talk frames of a
    /// near-end state while the talker stands far over the echo
    /// (`TalkerOverEcho`, a quiet loudspeaker): not without that, nor in
    /// a frame without talk, nor outside a near-end state.
    func testTheCapturePathPausesItInTalkFramesWhileTheTalkerStandsFarOverTheEcho() throws {
        var config = EngineConfig()
        config.captureRate = 16_000
        guard var p = CaptureProcessor(config: config) else { return XCTFail("allocation failed") }
        let pauseLeft = p.canceller.pauseLeft
        func asked(nearEnd: Int, talk: Bool, far: Bool) -> Int {
            pauseLeft[0] = 0
            p.suppressor.nearEndFrames = nearEnd
            p.suppressor.sinceNearEnd = talk ? 0 : 40  // not in a word's tail
            p.suppressor.doubleTalk = talk
            p.suppressor.talkerFarOverEcho = far
            p.pauseSuppressionIfAsked()
            return pauseLeft[0]
        }
        XCTAssertEqual(asked(nearEnd: 40, talk: true, far: true), 2)
        XCTAssertEqual(asked(nearEnd: 40, talk: true, far: false), 0)
        XCTAssertEqual(asked(nearEnd: 40, talk: false, far: true), 0)
        XCTAssertEqual(asked(nearEnd: 0, talk: true, far: true), 0)
        pauseLeft[0] = 0
    }

    /// It pauses for two frames at a time while the suppressor asks: in a
    /// word's tail (the 20 ms after the near-end detector last found
    /// talk), not while it finds talk nor after the tail; a longer pause
    /// under way is not shortened.
    func testTheCapturePathPausesItInAWordsTail() throws {
        var config = EngineConfig()
        config.captureRate = 16_000
        guard var p = CaptureProcessor(config: config) else { return XCTFail("allocation failed") }
        XCTAssertEqual(p.suppressor.wordTailFrames, 2)
        // The canceller's counter through a local copy of the pointer:
        // `p.canceller.pauseLeft[0] -= 1` crashed swift-frontend 6.3.1 with
        // --sanitize=thread ("Invalid bitcast", a broken module).
        let pauseLeft = p.canceller.pauseLeft
        let echoState = p.canceller.echo
        p.suppressor.nearEndFrames = 40
        p.suppressor.sinceNearEnd = 0  // talking
        p.pauseSuppressionIfAsked()
        XCTAssertEqual(pauseLeft[0], 0)
        XCTAssertEqual(heldEchoState(p.canceller), echoState)
        var paused: [Int] = []
        var held: [Bool] = []
        for since in 1...2 {
            p.suppressor.sinceNearEnd = since
            p.pauseSuppressionIfAsked()
            paused.append(pauseLeft[0])
            held.append(heldEchoState(p.canceller) == nil)
            pauseLeft[0] = pauseLeft[0] - 1  // the frame's preprocessor run
        }
        XCTAssertEqual(paused, [2, 2])  // two frames from each tail frame
        XCTAssertEqual(held, [true, true])
        pauseLeft[0] = 0
        p.suppressor.sinceNearEnd = 3
        p.pauseSuppressionIfAsked()
        XCTAssertEqual(pauseLeft[0], 0)
        p.suppressor.sinceNearEnd = 2
        p.canceller.pauseResidualSuppression(frames: 500)
        p.pauseSuppressionIfAsked()
        XCTAssertEqual(pauseLeft[0], 500)
    }

    /// With no echo at the microphone (`EchoAbsence`), the microphone itself
    /// goes on, the echo estimate is 0, and the linear stage still runs and
    /// is measured: the powers are the same as without the pass, and so is
    /// the next frame (the filter is not touched).
    func testPassingTheMicrophoneStillRunsAndMeasuresTheLinearStage() throws {
        let n = 160
        func make() -> EchoCanceller? {
            EchoCanceller(frameSize: n, sampleRate: 16_000, tailMs: 200, speakers: 1,
                          noiseSuppression: false, echoSuppression: false, agc: false)
        }
        guard let a = make(), let b = make() else { return XCTFail("allocation failed") }
        var noise = EchoSim.Noise(seed: 3)
        let ref = (0..<(n * 80)).map { _ in 0.1 * noise.next() }
        let mic = (0..<(n * 80)).map { $0 >= 8 ? 0.5 * ref[$0 - 8] : 0 }
        var outA = [Float](repeating: 0, count: n), outB = outA
        var estA = [Float](repeating: 0, count: n), estB = [Float](repeating: 1, count: n)
        func frame(_ f: Int, pass: Bool) -> (EchoCanceller.FramePowers, EchoCanceller.FramePowers) {
            let m = Array(mic[(f * n)..<((f + 1) * n)]), r = Array(ref[(f * n)..<((f + 1) * n)])
            let pa = a.process(mic: m, reference: r, out: &outA, echoEstimate: &estA)
            let pb = b.process(mic: m, reference: r, out: &outB, echoEstimate: &estB, passMicrophone: pass)
            return (pa, pb)
        }
        for f in 0..<60 { _ = frame(f, pass: false) }
        let (pa, pb) = frame(60, pass: true)
        XCTAssertGreaterThan(pa.mic, 100 * pa.linear)  // the filter removes the echo
        XCTAssertEqual(pb.linear, pa.linear)
        XCTAssertEqual(pb.mic, pa.mic)
        XCTAssertEqual(pb.errorEcho, pa.errorEcho)
        let m = Array(mic[(60 * n)..<(61 * n)])
        for i in 0..<n {
            XCTAssertEqual(outB[i], m[i], accuracy: 1 / 32768)
            XCTAssertEqual(estB[i], 0)
        }
        XCTAssertGreaterThan(estA.map { $0 * $0 }.reduce(0, +), 0)
        let (qa, qb) = frame(61, pass: false)
        XCTAssertEqual(qa.linear, qb.linear)
        XCTAssertEqual(outA, outB)
    }
}
