import XCTest
@testable import RTMix

/// Capture stage 1 on its own: re-blocking calls of any size into frames
/// and back.
final class CaptureFramerTests: XCTestCase {
    /// Calls of random sizes (1...maxFrames) in, frames through an identity
    /// "canceller", calls out: every sample comes back, in order, delayed by
    /// `latency` (whole frames, at most 4 of them + one call's rounding).
    /// The latency only grows: where the framer pads (a call longer than
    /// what is queued), whole frames of zeros come out and the samples
    /// after them are later by as much. A first call of whole frames needs
    /// no pad, so its samples come out at once and the zeros come later:
    /// run once with such a start (it failed the old check, which wanted
    /// all the zeros first, in about 1 run of 170) and once at random.
    func testReblocksArbitraryCallSizesIntoExactFramesAndBackLosingNothing() {
        reblock(start: [160, 100])
        reblock(start: [])
    }

    private func reblock(start: [Int]) {
        let frameSize = 160, maxFrames = 512
        var framer = CaptureFramer(channels: 1, frameSize: frameSize, maxFrames: maxFrames)!
        var rng = SystemRandomNumberGenerator()
        var input: [Float] = [], output: [Float] = []
        var framesSeen = 0
        var next: Float = 1
        var call = [Float](repeating: 0, count: maxFrames), out = [Float](repeating: 0, count: maxFrames)
        for n in 0..<2000 {
            let frames = n < start.count ? start[n] : Int.random(in: 1...maxFrames, using: &rng)
            for i in 0..<frames { call[i] = next; next += 1 }
            input += call[0..<frames]
            let appended = call.withUnsafeBufferPointer { framer.append($0.baseAddress!, frames: frames) }
            XCTAssertEqual(appended.nonfinite, 0)
            while framer.hasFrame {
                // Each frame is the next frameSize input samples, exactly.
                for i in 0..<frameSize {
                    XCTAssertEqual(framer.frame[i], input[framesSeen * frameSize + i])
                }
                for i in 0..<frameSize { framer.output[i] = framer.frame[i] }
                framer.advance()
                framesSeen += 1
            }
            out.withUnsafeMutableBufferPointer { framer.emit(into: $0.baseAddress!, frames: frames) }
            output += out[0..<frames]
        }
        XCTAssertEqual(framer.captured, Int64(input.count))
        XCTAssertEqual(framer.framed, Int64(framesSeen * frameSize))
        XCTAssertEqual(framesSeen, input.count / frameSize)
        let latency = framer.latency
        XCTAssertEqual(latency % frameSize, 0)
        XCTAssertLessThanOrEqual(latency, maxFrames + frameSize)
        XCTAssertEqual(output.count, input.count)
        // The input counts from 1: a zero out is a pad. The pads add up to
        // the latency, and without them the output is the input, in order.
        let pads = output.filter { $0 == 0 }.count
        XCTAssertEqual(pads, latency)
        let samples = output.filter { $0 != 0 }
        XCTAssertEqual(samples.count, input.count - latency)
        var mismatches = 0
        for i in 0..<min(samples.count, input.count) where samples[i] != input[i] { mismatches += 1 }
        XCTAssertEqual(mismatches, 0)
    }

    /// Stereo calls are mixed down to the mean; non-finite samples are
    /// counted and become 0; the output repeats the mono frame on both
    /// channels.
    func testStereoIsMixedDownAndNonFiniteSamplesAreCountedAndZeroed() {
        let frameSize = 4
        var framer = CaptureFramer(channels: 2, frameSize: frameSize, maxFrames: 8)!
        let mic: [Float] = [0.5, 0.25, .nan, 0.5, 1, -1, .infinity, -.infinity,
                            0.1, 0.3, 0, 0, -0.5, -0.5, 0.2, 0]
        let appended = mic.withUnsafeBufferPointer { framer.append($0.baseAddress!, frames: 8) }
        XCTAssertEqual(appended.nonfinite, 3)
        let expected: [Float] = [0.375, 0.25, 0, 0, 0.2, 0, -0.5, 0.1]
        for i in 0..<8 { XCTAssertEqual(appended.samples[i], expected[i], accuracy: 1e-7) }
        for _ in 0..<2 {
            XCTAssertTrue(framer.hasFrame)
            for i in 0..<frameSize { framer.output[i] = framer.frame[i] }
            framer.advance()
        }
        XCTAssertFalse(framer.hasFrame)
        var out = [Float](repeating: 9, count: 16)
        out.withUnsafeMutableBufferPointer { framer.emit(into: $0.baseAddress!, frames: 8) }
        XCTAssertEqual(framer.latency, 0)
        for i in 0..<8 {
            XCTAssertEqual(out[2 * i], expected[i], accuracy: 1e-7)
            XCTAssertEqual(out[2 * i + 1], expected[i], accuracy: 1e-7)
        }
    }
}
