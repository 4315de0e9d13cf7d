import XCTest
@testable import RTMix

/// `PolyphaseResampler` on its own: stream bookkeeping (what it consumes,
/// what it produces, drain, reset) and that the result does not depend on
/// how the stream is cut into calls. Quality through the engine:
/// ResamplingTests and ResamplingQualityTests.
final class PolyphaseResamplerTests: XCTestCase {
    /// A deterministic test signal (two sines and a slow ramp), interleaved.
    func signal(frames: Int, channels: Int) -> [Float] {
        var x = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            for c in 0..<channels {
                let t = Double(i)
                x[i * channels + c] = Float(0.4 * sin(0.05 * t * Double(c + 1)) + 0.3 * sin(0.71 * t)
                                            + 0.1 * (t / Double(frames)))
            }
        }
        return x
    }

    /// Runs the whole input through in calls of `inChunk` input frames
    /// offered and `outChunk` output frames asked (cycled), then drains.
    func run(_ r: inout PolyphaseResampler, _ x: [Float], channels: Int, inChunks: [Int], outChunks: [Int])
        -> [Float] {
        let frames = x.count / channels
        var out = [Float]()
        var used = 0, call = 0
        var buf = [Float](repeating: 0, count: 8192 * channels)
        while used < frames {
            let offer = min(inChunks[call % inChunks.count], frames - used)
            let ask = outChunks[call % outChunks.count]
            call += 1
            let (u, g) = x.withUnsafeBufferPointer { xp in
                buf.withUnsafeMutableBufferPointer { bp in
                    r.process(input: xp.baseAddress! + used * channels, inputFrames: offer,
                              output: bp.baseAddress!, outputFrames: ask)
                }
            }
            XCTAssertLessThanOrEqual(u, offer)
            XCTAssertLessThanOrEqual(g, ask)
            used += u
            out += buf[0..<(g * channels)]
            XCTAssertLessThan(call, 100_000, "no progress")
            if call >= 100_000 { break }
        }
        // What the input still yields: outputs up to the look-ahead.
        while true {
            let g = buf.withUnsafeMutableBufferPointer { r.drain(output: $0.baseAddress!, outputFrames: 64) }
            out += buf[0..<(g * channels)]
            if g < 64 { break }
        }
        return out
    }

    /// However the stream is cut into calls, the output is the same (bit
    /// for bit but for the vertical kernel's rounding, see below) and has
    /// one frame per output position before the end of the input:
    /// ceil(frames × L / M).
    func testOutputIndependentOfCallSizes() throws {
        for (inRate, outRate) in [(44_100, 48_000), (16_000, 48_000), (48_000, 44_100), (96_000, 48_000),
                                  (11_025, 48_000), (48_000, 16_000)] {
            for channels in [1, 2] {
                let frames = 5_000
                let x = signal(frames: frames, channels: channels)
                let (up, down) = PolyphaseResampler.terms(inputRate: inRate, outputRate: outRate)
                let expected = (frames * up + down - 1) / down
                guard var a = PolyphaseResampler(channels: channels, inputRate: inRate, outputRate: outRate),
                      var b = PolyphaseResampler(channels: channels, inputRate: inRate, outputRate: outRate)
                else { return XCTFail("allocation") }
                let one = run(&a, x, channels: channels, inChunks: [frames], outChunks: [8192])
                let cut = run(&b, x, channels: channels, inChunks: [441, 1, 17, 3000, 160], outChunks: [480, 1, 7, 999])
                XCTAssertEqual(one.count, expected * channels, "\(inRate) -> \(outRate), \(channels) ch")
                XCTAssertEqual(cut.count, one.count, "\(inRate) -> \(outRate), \(channels) ch")
                // Bit for bit, except that mono integer upsampling computes
                // whole groups of 4 input positions vertically (another
                // summation order) where a call's output allows: Float
                // rounding apart, the same.
                let tolerance: Float = inRate * (outRate / inRate) == outRate && channels == 1 ? 1e-6 : 0
                let worst = zip(one, cut).map { abs($0 - $1) }.max() ?? 0
                XCTAssertLessThanOrEqual(worst, tolerance, "\(inRate) -> \(outRate), \(channels) ch")
                // And again after a reset: a new stream, the same output.
                a.reset()
                let again = run(&a, x, channels: channels, inChunks: [700], outChunks: [333])
                XCTAssertEqual(again.count, one.count, "\(inRate) -> \(outRate), \(channels) ch, after reset")
                let worstAgain = zip(one, again).map { abs($0 - $1) }.max() ?? 0
                XCTAssertLessThanOrEqual(worstAgain, tolerance, "\(inRate) -> \(outRate), \(channels) ch, after reset")
            }
        }
    }

    /// Input is consumed only as far as the outputs written need: output n
    /// sits at input position n·M/L and needs taps/2 frames beyond it.
    func testConsumesOnlyWhatTheOutputNeeds() throws {
        guard var r = PolyphaseResampler(channels: 2, inputRate: 44_100, outputRate: 48_000) else {
            return XCTFail("allocation")
        }
        let x = signal(frames: 4_000, channels: 2)
        var out = [Float](repeating: 0, count: 2 * 480)
        let (u, g) = x.withUnsafeBufferPointer { xp in
            out.withUnsafeMutableBufferPointer { op in
                r.process(input: xp.baseAddress!, inputFrames: 4_000, output: op.baseAddress!, outputFrames: 480)
            }
        }
        XCTAssertEqual(g, 480)
        // Last output 479 at 479 × 147 / 160 = 440.0875: frames 0...440 + 16.
        XCTAssertEqual(u, 479 * 147 / 160 + r.inputLatencyFrames + 1)
        XCTAssertEqual(r.inputLatencyFrames, 16)
    }

    /// Constant input comes out constant (every phase has a DC gain of
    /// exactly 1 up to Float rounding), and the first output is the first
    /// input frame's position: no leading zeros beyond the filter's edge.
    func testDCGainAndAlignment() throws {
        for (inRate, outRate) in [(44_100, 48_000), (16_000, 48_000), (48_000, 44_100), (192_000, 8_000)] {
            guard var r = PolyphaseResampler(channels: 1, inputRate: inRate, outputRate: outRate) else {
                return XCTFail("allocation")
            }
            let x = [Float](repeating: 0.5, count: 4_000)
            let y = run(&r, x, channels: 1, inChunks: [4_000], outChunks: [8192])
            // Away from both edges (the kernel half-length at the output rate).
            let edge = r.taps * outRate / inRate + 2
            for v in y[edge..<(y.count - edge)] {
                XCTAssertEqual(v, 0.5, accuracy: 2e-6, "\(inRate) -> \(outRate)")
            }
            // The first output is already audio (its position is input
            // frame 0; only the kernel's left half sees the zero history).
            XCTAssertGreaterThan(y[0], 0.1, "\(inRate) -> \(outRate)")
        }
    }

    /// Rates beyond the table limits are refused (the backend rule then
    /// picks libsamplerate); channels 1 and 2 only.
    func testLimits() {
        XCTAssertTrue(PolyphaseResampler.supports(inputRate: 11_025, outputRate: 48_000))  // L = 640
        XCTAssertFalse(PolyphaseResampler.supports(inputRate: 8_001, outputRate: 48_000))
        XCTAssertFalse(PolyphaseResampler.supports(inputRate: 48_000, outputRate: 48_000))
        switch PolyphaseResampler(channels: 3, inputRate: 16_000, outputRate: 48_000) {
        case .none: break
        case .some: XCTFail("3 channels accepted")
        }
        XCTAssertEqual(PolyphaseResampler.taps(up: 3, down: 1), 32)
        XCTAssertEqual(PolyphaseResampler.taps(up: 147, down: 160), 48)  // 32 × 160/147 = 34.8 → 48
        XCTAssertEqual(PolyphaseResampler.taps(up: 1, down: 24), 768)
    }
}
