import XCTest
@testable import RTMix

/// Capture stage 4e: how far the talker stands over the echo.
final class TalkerOverEchoTests: XCTestCase {
    private func db(_ x: Float) -> Float { 10 * log10f(x) }

    /// A talker 40 dB over the echo holds once the echo's level has a
    /// second of frames and the talker's a tenth of one.
    func testATalkerFortyDecibelsOverTheEchoHolds() {
        var b = TalkerOverEcho(framesPerSecond: 100)
        for _ in 0..<99 { b.frame(mic: 1e-7, echoOnly: true, talk: false) }
        for _ in 0..<20 { b.frame(mic: 1e-3, echoOnly: false, talk: true) }
        XCTAssertFalse(b.holds, "99 echo frames are not a second")
        b.frame(mic: 1e-7, echoOnly: true, talk: false)
        XCTAssertTrue(b.holds)

        var c = TalkerOverEcho(framesPerSecond: 100)
        for _ in 0..<100 { c.frame(mic: 1e-7, echoOnly: true, talk: false) }
        var held: [Bool] = []
        for _ in 0..<10 {
            c.frame(mic: 1e-3, echoOnly: false, talk: true)
            held.append(c.holds)
        }
        XCTAssertEqual(held, [Bool](repeating: false, count: 9) + [true])
        // Frames of neither kind (a near-end state between words) change nothing.
        for _ in 0..<50 { c.frame(mic: 1e-9, echoOnly: false, talk: false) }
        XCTAssertTrue(c.holds)
        XCTAssertEqual(db(c.talker), -30, accuracy: 0.01)
        XCTAssertEqual(db(c.echo), -70, accuracy: 0.01)
    }

    /// At the usual levels (the talker within a few dB of the echo, as on
    /// the recorded rooms, −12 … +5 dB) it never holds; nor with the
    /// talker 15 dB over (the frames spread over ±10 dB).
    func testTheUsualLevelsNeverHold() {
        var noise = EchoSim.Noise(seed: 61)
        for overDb: Float in [-12, 0, 5, 15] {
            var b = TalkerOverEcho(framesPerSecond: 100)
            var ever = false
            for i in 0..<3000 {
                // Each frame's power spread over ±10 dB, as speech's is.
                let spread = powf(10, noise.next())
                if i % 3 == 0 {
                    b.frame(mic: 1e-3 * powf(10, overDb / 10) * spread, echoOnly: false, talk: true)
                } else {
                    b.frame(mic: 1e-3 * spread, echoOnly: true, talk: false)
                }
                ever = ever || b.holds
            }
            XCTAssertFalse(ever, "the talker \(overDb) dB over the echo")
        }
    }

    /// Each frame's power is clamped within 6 dB of the level: a talker's
    /// onset that the detector missed, 40 dB over a quiet echo in one of
    /// its frames in 20, lifts the echo's level by under 1.5 dB (a plain
    /// average of the frames would stand 27 dB higher), and the talker
    /// 40 dB over it still holds.
    func testAMissedOnsetInTheEchosFramesHardlyLiftsItsLevel() {
        var b = TalkerOverEcho(framesPerSecond: 100)
        var plain = 0.0
        for i in 0..<2000 {
            let p: Float = i % 20 == 19 ? 1e-3 : 1e-7
            b.frame(mic: p, echoOnly: true, talk: false)
            plain += Double(p)
        }
        plain /= 2000
        XCTAssertLessThan(db(b.echo), -70 + 1.5)
        XCTAssertGreaterThan(10 * log10(plain), -70 + 25)
        for _ in 0..<20 { b.frame(mic: 1e-3, echoOnly: false, talk: true) }
        XCTAssertTrue(b.holds)
    }

    /// It lets go 3 dB under its ratio: held at 18.5 dB once it held at
    /// 20, not taken at 18.5 from the start, let go at 16.5.
    func testItLetsGoThreeDecibelsUnderItsRatio() {
        func run(_ levelsDb: [Float]) -> [Bool] {
            var b = TalkerOverEcho(framesPerSecond: 100)
            for _ in 0..<100 { b.frame(mic: 1e-7, echoOnly: true, talk: false) }
            var out: [Bool] = []
            for l in levelsDb {
                // The level settles within 0.1 dB of each step.
                for _ in 0..<600 { b.frame(mic: 1e-7 * powf(10, l / 10), echoOnly: false, talk: true) }
                out.append(b.holds)
            }
            return out
        }
        XCTAssertEqual(run([21, 18.5, 16.5]), [true, true, false])
        XCTAssertEqual(run([18.5]), [false])
    }

    /// Digital silence and non-finite powers say nothing: a level set
    /// from a zero would never move again.
    func testDigitalSilenceAndNonFiniteFramesAreLeftOut() {
        var b = TalkerOverEcho(framesPerSecond: 100)
        for _ in 0..<50 { b.frame(mic: 0, echoOnly: true, talk: false) }
        b.frame(mic: .nan, echoOnly: true, talk: false)
        b.frame(mic: .infinity, echoOnly: false, talk: true)
        XCTAssertEqual(b.echoFrames, 0)
        XCTAssertEqual(b.talkerFrames, 0)
        for _ in 0..<100 { b.frame(mic: 1e-7, echoOnly: true, talk: false) }
        for _ in 0..<10 { b.frame(mic: 1e-3, echoOnly: false, talk: true) }
        XCTAssertTrue(b.holds)
        XCTAssertTrue(b.echo.isFinite && b.talker.isFinite)
    }

    /// The capture path's copy follows 10 ms frames at either rate.
    func testTheCapturePathFollowsASecondOfFrames() {
        for rate in [16_000, 48_000] {
            var config = EngineConfig()
            config.captureRate = rate
            guard let p = CaptureProcessor(config: config) else { return XCTFail("allocation failed") }
            XCTAssertEqual(p.balance.echoMinimumFrames, 100)
            XCTAssertEqual(p.balance.talkerMinimumFrames, 10)
            XCTAssertFalse(p.balance.holds)
        }
    }
}
