import XCTest
@testable import RTMix

/// `EchoAbsence`: the rule that takes the echo as absent (a headset).
final class EchoAbsenceTests: XCTestCase {
    /// 100 frames a second, absent after 1 s of far end.
    private func absence() -> EchoAbsence { EchoAbsence(framesPerSecond: 100, seconds: 1) }

    /// Far-end frames in which the filter removes nothing count up to the
    /// limit; frames without the far end change nothing.
    func testFarEndFramesWithoutRemovalMakeTheEchoAbsent() {
        var a = absence()
        XCTAssertEqual(a.frames, 100)
        for _ in 0..<99 { a.frame(farEnd: true, mic: 1e-3, linear: 1e-3) }
        XCTAssertFalse(a.absent)
        for _ in 0..<500 { a.frame(farEnd: false, mic: 1e-3, linear: 1e-3) }
        XCTAssertFalse(a.absent)
        a.frame(farEnd: true, mic: 1e-3, linear: 1e-3)
        XCTAssertTrue(a.absent)
        XCTAssertEqual(a.quiet, 100)
    }

    /// Absent after 1 s over a floor at 1e-6 (−60 dBFS).
    private func absentOverAFloor() -> EchoAbsence {
        var a = absence()
        for _ in 0..<100 { a.frame(farEnd: true, mic: 1e-6, linear: 1e-6) }
        XCTAssertTrue(a.absent)
        XCTAssertEqual(a.floor, 1e-6)
        return a
    }

    /// Two far-end frames running in which the filter takes 6 dB out of a
    /// microphone 10 dB over the floor end the absence at once; one such
    /// frame, 6 dB out of a microphone under 10 dB over the floor (the room
    /// noise), or 5 dB out do not.
    func testRemovalInTwoFramesRunningEndsIt() {
        var a = absentOverAFloor()
        a.frame(farEnd: true, mic: 1e-4, linear: 2e-5)
        XCTAssertTrue(a.absent)
        a.frame(farEnd: true, mic: 1e-4, linear: 1e-4)  // the run is broken
        a.frame(farEnd: true, mic: 1e-4, linear: 2e-5)
        XCTAssertTrue(a.absent)
        a.frame(farEnd: true, mic: 1e-4, linear: 2e-5)
        XCTAssertFalse(a.absent)
        XCTAssertEqual(a.quiet, 0)

        var noise = absentOverAFloor()
        for _ in 0..<5 { noise.frame(farEnd: true, mic: 8e-6, linear: 2e-6) }  // 9 dB over the floor
        XCTAssertTrue(noise.absent)
        var little = absentOverAFloor()
        for _ in 0..<5 { little.frame(farEnd: true, mic: 1e-4, linear: 3.2e-5) }  // 5 dB out
        XCTAssertTrue(little.absent)
    }

    /// The delay estimator finding the echo where the reference is aligned
    /// ends the absence too (an echo too weak for the filter's 6 dB).
    func testTheEstimatorFindingTheEchoEndsIt() {
        var a = absentOverAFloor()
        a.echoFound()
        XCTAssertFalse(a.absent)
        XCTAssertEqual(a.quiet, 0)
    }

    /// The floor follows the linear output down at once and up by 1 dB a
    /// second; digital silence leaves it alone. A quiet microphone (an echo
    /// at −75 dBFS over a −95 dBFS floor) counts its removal, and so does a
    /// steady echo (a tone), whose microphone never falls to the floor:
    /// taken from the microphone's own minimum, the floor was the tone, and
    /// its echo was taken as absent (`engine_api.c`'s tone echo, 0.4 dB).
    func testTheFloorIsTheLinearOutputsLowest() {
        var a = absence()
        for _ in 0..<10 { a.frame(farEnd: false, mic: 0, linear: 0) }
        XCTAssertEqual(a.floor, 1)
        a.frame(farEnd: false, mic: 1, linear: 1e-8)
        XCTAssertEqual(a.floor, 1e-8)
        for _ in 0..<100 { a.frame(farEnd: false, mic: 1e-8, linear: 1) }
        XCTAssertEqual(10 * log10(Double(a.floor) / 1e-8), 1, accuracy: 0.01)

        var quiet = absence()
        for _ in 0..<100 { quiet.frame(farEnd: true, mic: 3e-10, linear: 3e-10) }
        XCTAssertTrue(quiet.absent)
        quiet.frame(farEnd: true, mic: 3e-8, linear: 3e-9)
        quiet.frame(farEnd: true, mic: 3e-8, linear: 3e-9)
        XCTAssertFalse(quiet.absent)

        var tone = absence()
        for _ in 0..<300 { tone.frame(farEnd: true, mic: 1e-2, linear: 1e-5) }
        XCTAssertFalse(tone.absent)
    }

    /// `justLost` holds in the one far-end frame 0.2 s (20 far-end frames)
    /// into a stretch without the echo: when the capture path keeps the
    /// suppressor's path gain for the echo's return. Frames without the far
    /// end do not count; the echo found again starts the count over.
    func testTheEchoIsJustLostInOneFrameAFifthOfASecondIn() {
        var a = absence()
        var lost: [Int] = []
        for i in 0..<60 {
            a.frame(farEnd: true, mic: 1e-6, linear: 1e-6)
            if a.justLost { lost.append(i) }
            if i == 9 { for _ in 0..<30 { a.frame(farEnd: false, mic: 1e-6, linear: 1e-6) } }
        }
        XCTAssertEqual(lost, [19])
        a.echoFound()
        XCTAssertFalse(a.justLost)
        for _ in 0..<20 { a.frame(farEnd: true, mic: 1e-6, linear: 1e-6) }
        XCTAssertTrue(a.justLost)
        a.frame(farEnd: true, mic: 1e-6, linear: 1e-6)
        XCTAssertFalse(a.justLost)
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
