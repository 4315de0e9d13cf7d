import XCTest
@testable import RTMix

/// Capture stage 6 on its own: voice plus media at the publish gain.
final class CapturePublisherTests: XCTestCase {
    func testGainZeroPassesTheVoiceAndTheGainRampsInOverTenMilliseconds() {
        let rate = 16_000, n = 160
        var p = CapturePublisher(sampleRate: rate)
        XCTAssertFalse(p.mixing)
        let voice = [Float](repeating: 0.25, count: n), media = [Float](repeating: 0.5, count: n)
        var out = [Float](repeating: 0, count: n)
        func run(_ gain: Float) {
            voice.withUnsafeBufferPointer { v in media.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    p.publish(voice: v.baseAddress!, media: m.baseAddress!, gain: gain, into: o.baseAddress!, count: n)
                } } }
        }
        run(0)
        XCTAssertEqual(out, voice)
        run(1)  // ramps 0 → 1 over rate / 100 = 160 samples: this frame
        XCTAssertTrue(p.mixing)
        XCTAssertLessThan(out[0], 0.26)
        for i in 1..<n { XCTAssertGreaterThanOrEqual(out[i], out[i - 1]) }
        XCTAssertEqual(out[n - 1], 0.75, accuracy: 0.01)
        run(1)
        for i in 0..<n { XCTAssertEqual(out[i], 0.75, accuracy: 1e-6) }
    }

    func testOutputIsHardLimitedAndNaNBecomesZero() {
        var p = CapturePublisher(sampleRate: 16_000)
        let voice: [Float] = [3.7, -2, .nan, .infinity, 0.5, -0.5]
        let media = [Float](repeating: 0, count: voice.count)
        var out = [Float](repeating: 9, count: voice.count)
        voice.withUnsafeBufferPointer { v in media.withUnsafeBufferPointer { m in
            out.withUnsafeMutableBufferPointer { o in
                p.publish(voice: v.baseAddress!, media: m.baseAddress!, gain: 0, into: o.baseAddress!, count: voice.count)
            } } }
        XCTAssertEqual(out, [1, -1, 0, 0, 0.5, -0.5])
    }
}
