import XCTest
@testable import RTMix

final class ResamplingTests: XCTestCase {
    /// A 1 kHz sine keeps its frequency and level and has SNR >= 60 dB after
    /// conversion to 48 kHz.
    func check(rate: Int, channels: Int, outChannels: Int = 2, quality: ResamplerQuality = .sincFastest,
               file: StaticString = #filePath, line: UInt = #line) throws {
        let e = makeEngine { $0.channels = outChannels; $0.resamplerQuality = quality }
        var sc = SourceConfig(domain: .call, sampleRate: rate, channels: channels)
        sc.bufferFrames = rate * 2
        let id = try e.addSource(sc)
        let seconds = 1
        e.pushAll(Signal.sine(frequency: 1000, rate: rate, frames: rate * seconds, channels: channels, amplitude: 0.5),
                  to: id, channels: channels)
        let out = e.renderFrames(48_000 * seconds - 4800)
        let left = Signal.channel(out, 0, of: outChannels)
        let steady = left[2400..<(left.count - 480)]  // skip the filter's start-up
        let fit = Signal.fitSine(steady, frequency: 1000, rate: 48_000)
        let freq = Signal.zeroCrossingFrequency(steady, rate: 48_000)
        XCTAssertEqual(freq, 1000, accuracy: 0.5, "frequency, rate \(rate)", file: file, line: line)
        XCTAssertEqual(Signal.db(fit.amplitude / 0.5), 0, accuracy: 0.05, "level, rate \(rate)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(fit.snrDb, 60, "SNR, rate \(rate)", file: file, line: line)
        XCTAssertEqual(e.stats().underrunFrames, 0, file: file, line: line)
    }

    func test16kMonoTo48kStereo() throws { try check(rate: 16_000, channels: 1) }
    func test44_1kStereoTo48kStereo() throws { try check(rate: 44_100, channels: 2) }
    func test8kMonoTo48kMono() throws { try check(rate: 8_000, channels: 1, outChannels: 1) }
    func test96kStereoTo48k() throws { try check(rate: 96_000, channels: 2) }
    func test192kTo48k() throws { try check(rate: 192_000, channels: 1) }
    func test44_1kBestQuality() throws { try check(rate: 44_100, channels: 2, quality: .sincBest) }

    /// Frames are conserved through the resampler: consumed input matches the
    /// rendered output at the rate ratio (within the filter's latency).
    func testResampledFrameAccounting() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 44_100, channels: 2))
        e.pushAll(Signal.sine(frequency: 440, rate: 44_100, frames: 8820, channels: 2), to: id, channels: 2)
        _ = e.renderFrames(4800)
        let s = try e.stats(for: id)
        XCTAssertEqual(s.framesRendered, 4800)
        XCTAssertEqual(Double(s.framesConsumed), 4800 * 44_100 / 48_000, accuracy: 200)
        XCTAssertEqual(s.framesConsumed + UInt64(s.bufferedFrames), s.framesPushed)
    }
}
