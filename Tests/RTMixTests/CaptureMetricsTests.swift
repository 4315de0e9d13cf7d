import XCTest
@testable import RTMix

/// Capture stage 7 on its own: the statistics it writes, and that it is
/// the only writer of them.
final class CaptureMetricsTests: XCTestCase {
    /// Runs `body` with a capture link on a clock of its own.
    func withLink(_ body: (borrowing CaptureLink) -> Void) {
        var config = EngineConfig()
        config.captureRate = 16_000
        withCaptureLink(config, body)
    }

    func powers(mic: Float, reference: Float, linear: Float, output: Float) -> EchoCanceller.FramePowers {
        var p = EchoCanceller.FramePowers()
        p.mic = mic
        p.reference = reference
        p.linear = linear
        p.output = output
        return p
    }

    /// ERLE over a 100-frame window: mic over output power summed over
    /// the frames with far-end signal and no double talk (hang-over 10
    /// frames), as computed by hand.
    func testERLEMatchesAHandComputation() {
        withLink { link in
            var m = CaptureMetrics(sampleRate: 16_000, frameSize: 160)
            var noise = EchoSim.Noise(seed: 9)
            var micSum = 0.0, outSum = 0.0, used = 0
            var hangover = 0
            for k in 0..<100 {
                let farEnd = k % 7 != 3                 // some frames without far end
                let talk = k == 40                       // one double-talk detection
                let mic = Float(0.01 + 0.005 * Double(noise.next()))
                let out = Float(1e-5 * (1.5 + Double(noise.next())))
                let p = powers(mic: mic, reference: farEnd ? 0.02 : 0, linear: mic / 10, output: out)
                if talk { hangover = 10 }
                let talking = hangover > 0
                if talking { hangover -= 1 }
                if farEnd && !talking {
                    micSum += Double(mic)
                    outSum += Double(out)
                    used += 1
                }
                XCTAssertFalse(m.frame(p, doubleTalk: talk, linearActive: true, link: link))
                if k < 99 { XCTAssertEqual(link.erleDb.load(), 0) }  // not before the window is full
            }
            XCTAssertGreaterThanOrEqual(used, 50)
            let expected = 10 * log10(micSum / outSum)
            XCTAssertEqual(Double(link.erleDb.load()), expected, accuracy: 1e-3)
            XCTAssertEqual(link.doubleTalkFrames.read(), 10 * 160)
            XCTAssertEqual(link.diverged.read(), 0)
            XCTAssertEqual(link.resets.read(), 0)
        }
    }

    /// The linear stage adding energy for 50 frames resets the canceller
    /// (counted, event value 1); "diverged" shows from the 11th frame;
    /// trouble reported by the canceller resets at once (value 2).
    func testDivergenceAndTroubleResetTheCanceller() {
        withLink { link in
            var m = CaptureMetrics(sampleRate: 16_000, frameSize: 160)
            m.beginCall(captured: 4_800)
            let bad = powers(mic: 1e-3, reference: 1e-2, linear: 3e-3, output: 1e-3)
            for k in 1...49 {
                XCTAssertFalse(m.frame(bad, doubleTalk: false, linearActive: true, link: link))
                XCTAssertEqual(link.diverged.read(), k > 10 ? 1 : 0, "frame \(k)")
            }
            XCTAssertTrue(m.frame(bad, doubleTalk: false, linearActive: true, link: link))
            XCTAssertEqual(link.resets.read(), 1)
            // Without a linear stage there is nothing to diverge.
            for _ in 0..<60 { XCTAssertFalse(m.frame(bad, doubleTalk: false, linearActive: false, link: link)) }
            var trouble = powers(mic: 1e-3, reference: 1e-2, linear: 1e-3, output: 1e-3)
            trouble.trouble = true
            XCTAssertTrue(m.frame(trouble, doubleTalk: false, linearActive: true, link: link))
            XCTAssertEqual(link.resets.read(), 2)
            let first = link.events.next(), second = link.events.next()
            XCTAssertEqual(first?.value, 1)
            XCTAssertEqual(first?.frameTime, 4_800)
            XCTAssertEqual(second?.value, 2)
            XCTAssertEqual(first?.kind, link.events.code(.cancellerReset))
        }
    }

    /// Calls without their reference are counted each time; the event
    /// comes once per episode.
    func testMissingReferenceIsCountedPerCallAndReportedOncePerEpisode() {
        withLink { link in
            var m = CaptureMetrics(sampleRate: 16_000, frameSize: 160)
            for missing in [3, 5, 0, 7] { m.endFrames(missing: missing, link: link) }
            XCTAssertEqual(link.callsWithoutReference.read(), 3)
            XCTAssertEqual(link.events.next()?.value, 3)
            XCTAssertEqual(link.events.next()?.value, 7)
            XCTAssertNil(link.events.next())
        }
    }

    /// The statistics and events of the capture link are written in
    /// CaptureMetrics.swift and nowhere else in the capture path (the
    /// render side's overflow count and the control calls' settings are
    /// not statistics).
    func testCaptureMetricsIsTheOnlyWriterOfTheStatistics() throws {
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/RTMix/Capture").standardized
        let names = ["calls", "frames", "latencyFrames", "callsWithoutReference", "doubleTalkFrames", "resets",
                     "delayChanges", "nonfinite", "captureNsMax", "doubleTalk", "diverged", "delaySource", "erleDb",
                     "delayMs", "estimatedDelayMs", "estimateConfidence", "driftPpm"]
        let write = try NSRegularExpression(
            pattern: "\\.(\(names.joined(separator: "|")))\\.(add|set|store)\\(|\\bevents\\.post\\(")
        var writers: [String: Int] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: capture.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: capture.appendingPathComponent(file), encoding: .utf8)
            let n = write.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text))
            if n > 0 { writers[file] = n }
        }
        XCTAssertEqual(Array(writers.keys), ["CaptureMetrics.swift"])
        XCTAssertGreaterThanOrEqual(writers["CaptureMetrics.swift"] ?? 0, 20)
    }
}
