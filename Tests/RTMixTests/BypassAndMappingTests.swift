import XCTest
@testable import RTMix

final class BypassAndMappingTests: XCTestCase {
    /// Same rate and channels, gain 1: output is the input, bit for bit,
    /// across ring wrap-around and odd block sizes.
    func testBypassIsBitExact() throws {
        let e = makeEngine { $0.maxFrames = 1024 }  // a ring must hold one block
        var sc = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2)
        sc.bufferFrames = 1024  // small ring: wraps many times
        let id = try e.addSource(sc)
        let input = Signal.noise(frames: 20_000, channels: 2, amplitude: 0.8, seed: 7)
        var output: [Float] = []
        var pushed = 0
        let blocks = [480, 64, 1000, 1, 333, 256]
        var b = 0
        while output.count < input.count {
            // Keep the ring ahead of the renderer without overflowing it.
            let want = min(input.count / 2 - pushed, 700)
            if want > 0 {
                let n = input[(pushed * 2)..<((pushed + want) * 2)].withUnsafeBufferPointer {
                    try! e.push($0, to: id, channels: 2)
                }
                pushed += n
            }
            let stats = try e.stats(for: id)
            let n = min(blocks[b % blocks.count], stats.bufferedFrames, (input.count - output.count) / 2)
            b += 1
            if n == 0 { continue }
            output += e.renderFrames(n, block: n)
        }
        XCTAssertEqual(output.count, input.count)
        XCTAssertTrue(output == input, "bypass output differs from input")
        XCTAssertEqual(e.stats().underrunFrames, 0)
        XCTAssertEqual(e.stats().limiterActiveFrames, 0)
    }

    /// int16 in, int16 out at gain 1 is exact too (x/32768 in, x·32768 out).
    func testBypassS16RoundTrip() throws {
        let e = makeEngine { $0.channels = 1; $0.limiterThresholdDb = 0 }
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let input: [Int16] = (0..<4800).map { Int16(truncatingIfNeeded: ($0 * 37) % 20_000 - 10_000) }
        _ = try input.withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) }
        var out = [Int16](repeating: 0, count: 4800)
        try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 4096) }
        let maxError = zip(input.prefix(4096), out.prefix(4096)).map { abs(Int($0) - Int($1)) }.max()!
        XCTAssertEqual(maxError, 0)
    }

    func testMonoToStereoDuplicates() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let input = Signal.sine(frequency: 500, rate: 48_000, frames: 960, amplitude: 0.4)
        e.pushAll(input, to: id, channels: 1)
        let out = e.renderFrames(960)
        XCTAssertEqual(Signal.channel(out, 0, of: 2), input)
        XCTAssertEqual(Signal.channel(out, 1, of: 2), input)
    }

    func testStereoToMonoAverages() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        var input = [Float](repeating: 0, count: 960 * 2)
        for i in 0..<960 { input[2 * i] = 0.6; input[2 * i + 1] = Float(i % 10) / 20 }
        e.pushAll(input, to: id, channels: 2)
        let out = e.renderFrames(960)
        for i in 0..<960 { XCTAssertEqual(out[i], (0.6 + Float(i % 10) / 20) * 0.5, accuracy: 1e-7) }
    }

    func testTwoSourcesSum() throws {
        let e = makeEngine { $0.duckDepthDb = 0 }  // the plain sum (ducking: DuckingTests)
        let a = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        let b = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        e.pushAll(Signal.constant(0.25, frames: 480, channels: 2), to: a, channels: 2)
        e.pushAll(Signal.constant(-0.5, frames: 480, channels: 2), to: b, channels: 2)
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0 == -0.25 })
    }

    func testSilenceInSilenceOut() throws {
        for rate in [8_000, 16_000, 44_100, 48_000, 96_000] {
            for channels in [1, 2] {
                let e = makeEngine()
                let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: rate, channels: channels))
                e.pushAll([Float](repeating: 0, count: rate / 10 * channels), to: id, channels: channels)
                let out = e.renderFrames(2400)
                XCTAssertTrue(out.allSatisfy { $0 == 0 }, "rate \(rate) ch \(channels)")
            }
        }
    }
}
