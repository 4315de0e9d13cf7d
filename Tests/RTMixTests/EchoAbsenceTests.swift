import XCTest
@testable import RTMix

/// `EchoAbsence`: the rule that takes the echo as absent (a headset).
final class EchoAbsenceTests: XCTestCase {
    /// Far-end frames in which the filter removes nothing count up to the
    /// limit; frames without the far end change nothing.
    func testFarEndFramesWithoutRemovalMakeTheEchoAbsent() {
        var a = EchoAbsence(frames: 5)
        for _ in 0..<4 { a.frame(farEnd: true, mic: 1e-3, linear: 1e-3) }
        XCTAssertFalse(a.absent)
        for _ in 0..<100 { a.frame(farEnd: false, mic: 1e-3, linear: 1e-3) }
        XCTAssertFalse(a.absent)
        a.frame(farEnd: true, mic: 1e-3, linear: 1e-3)
        XCTAssertTrue(a.absent)
        XCTAssertEqual(a.quiet, 5)
    }

    /// Two far-end frames running in which the filter takes 6 dB out of a
    /// microphone above −60 dBFS end the absence at once; one such frame,
    /// 6 dB out of a quieter microphone (room noise), or 5 dB out do not.
    func testRemovalInTwoFramesRunningEndsIt() {
        func absent() -> EchoAbsence {
            var a = EchoAbsence(frames: 10)
            for _ in 0..<10 { a.frame(farEnd: true, mic: 1e-4, linear: 1e-4) }
            XCTAssertTrue(a.absent)
            return a
        }
        var a = absent()
        a.frame(farEnd: true, mic: 1e-4, linear: 2e-5)
        XCTAssertTrue(a.absent)
        a.frame(farEnd: true, mic: 1e-4, linear: 1e-4)  // the run is broken
        a.frame(farEnd: true, mic: 1e-4, linear: 2e-5)
        XCTAssertTrue(a.absent)
        a.frame(farEnd: true, mic: 1e-4, linear: 2e-5)
        XCTAssertFalse(a.absent)
        XCTAssertEqual(a.quiet, 0)

        var quiet = absent()
        for _ in 0..<5 { quiet.frame(farEnd: true, mic: 5e-7, linear: 1e-8) }  // under −60 dBFS
        XCTAssertTrue(quiet.absent)
        var little = absent()
        for _ in 0..<5 { little.frame(farEnd: true, mic: 1e-4, linear: 3.2e-5) }  // 5 dB out
        XCTAssertTrue(little.absent)
    }

    /// The capture path takes 5 s of far end.
    func testTheCapturePathTakesFiveSecondsOfFarEnd() {
        var config = EngineConfig()
        config.captureRate = 48_000
        guard let p = CaptureProcessor(config: config) else { return XCTFail("allocation failed") }
        XCTAssertEqual(p.absence.frames, 500)
        XCTAssertFalse(p.absence.absent)
    }
}
