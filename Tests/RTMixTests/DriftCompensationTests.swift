import XCTest
@testable import RTMix

/// A producer on its own clock, `ppm` faster (or slower) than the device,
/// pushing 20 ms frames while the device renders 10 ms blocks.
final class DriftCompensationTests: XCTestCase {
    /// `levelMs`: mean buffered audio just before each render (what the
    /// controller regulates) over the last 10 s.
    struct Outcome {
        var levelMs: Double; var driftPpm: Float; var underruns: UInt64
        /// The controller's own figures: the low-water mark it holds at the
        /// target, and its estimate of the producer's drift.
        var lowWaterMs: Float; var estimatePpm: Float
    }

    func simulate(ppm: Double, targetMs: Float, seconds: Int, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let e = makeEngine()
        var c = SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1)
        c.targetBufferMs = targetMs
        let id = try e.addSource(c)
        let chunk = Signal.sine(frequency: 200, rate: 16_000, frames: 4000, amplitude: 0.3)
        var owed = 16_000.0 * 0.080  // start with 80 ms buffered
        var out = [Float](repeating: 0, count: 960)
        var levelSum = 0.0, levelCount = 0.0
        for block in 0..<(seconds * 100) {
            if block % 2 == 0 { owed += 320 * (1 + ppm / 1_000_000) }  // producer: one 20 ms frame
            let n = Int(owed)
            if n > 0 {
                let pushed = try chunk.prefix(n).withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) }
                XCTAssertEqual(pushed, n, file: file, line: line)
                owed -= Double(n)
            }
            if block >= (seconds - 10) * 100 {
                levelSum += Double(try e.stats(for: id).bufferedMs)
                levelCount += 1
            }
            try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }
        }
        let s = try e.stats(for: id)
        return Outcome(levelMs: levelSum / levelCount, driftPpm: s.driftPpm, underruns: s.underrunFrames,
                       lowWaterMs: s.lowWaterMs, estimatePpm: s.driftEstimatePpm)
    }

    func testFastProducerIsHeldNearTarget() throws {
        let off = try simulate(ppm: 500, targetMs: 0, seconds: 120)
        let on = try simulate(ppm: 500, targetMs: 60, seconds: 120)
        // Without compensation the buffer grows by 500 ppm × 120 s = 60 ms.
        XCTAssertGreaterThan(off.levelMs, 80 + 50)
        // With it, the low-water mark (the level just before each 20 ms
        // push) sits on the target with no standing offset. The level is
        // sampled before each render: 20 ms pushes every other block
        // alternate (low-water + 10 ms, low-water), so the mean is 5 ms above
        // the low-water mark. (Until issue 17 the mean read 10 ms above: the
        // drifting libsamplerate held input of its own; the fixed-ratio
        // resampler and the drift stage leave the queue in the ring.)
        XCTAssertEqual(on.lowWaterMs, 60, accuracy: 1)
        XCTAssertEqual(on.levelMs, 65, accuracy: 1.5)
        XCTAssertEqual(on.estimatePpm, 500, accuracy: 20)
        XCTAssertEqual(on.driftPpm, 500, accuracy: 100)
        XCTAssertEqual(on.underruns, 0)
    }

    func testSlowProducerDoesNotUnderrun() throws {
        let off = try simulate(ppm: -800, targetMs: 0, seconds: 120)
        let on = try simulate(ppm: -800, targetMs: 60, seconds: 120)
        XCTAssertGreaterThan(off.underruns, 0)  // 96 ms lost over 120 s drains the 80 ms start
        XCTAssertEqual(on.underruns, 0)
        XCTAssertEqual(on.lowWaterMs, 60, accuracy: 1)
        XCTAssertEqual(on.levelMs, 65, accuracy: 1.5)
        XCTAssertEqual(on.estimatePpm, -800, accuracy: 20)
        XCTAssertEqual(on.driftPpm, -800, accuracy: 100)
    }

    func testCorrectionIsClamped() throws {
        let on = try simulate(ppm: 5_000, targetMs: 40, seconds: 30)
        XCTAssertEqual(on.driftPpm, SourceConfig.maxDriftCorrectionPpm, accuracy: 1)
        // The correction is clamped; the estimate tells how far off it is.
        XCTAssertEqual(on.estimatePpm, 5000, accuracy: 50)
    }

    func testInvalidTargetRejected() throws {
        let e = makeEngine()
        var c = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2)
        for bad: Float in [1, 4.9, 2001, .nan, -5] {
            c.targetBufferMs = bad
            XCTAssertThrowsError(try e.addSource(c))
        }
        c.targetBufferMs = 100
        let id = try e.addSource(c)
        XCTAssertGreaterThanOrEqual(try e.stats(for: id).capacityFrames, 9600)
    }
}
