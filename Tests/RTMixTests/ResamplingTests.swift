import XCTest
@testable import RTMix

/// Resampling accuracy through the whole engine. Every test names the
/// backend it exercises (polyphase or libsamplerate, see `Resampler`) and
/// checks that the source really got that backend.
final class ResamplingTests: XCTestCase {
    /// A 1 kHz sine keeps its frequency (±0.5 Hz) and level (±0.05 dB) and
    /// has SNR >= 60 dB after conversion to the engine rate, with no underrun.
    func check(rate: Int, channels: Int, outChannels: Int = 2, engineRate: Int = 48_000,
               quality: ResamplerQuality = .sincFastest, backend: Resampler.Backend, minSnr: Double = 60,
               file: StaticString = #filePath, line: UInt = #line) throws {
        let e = makeEngine { $0.sampleRate = engineRate; $0.channels = outChannels; $0.resamplerQuality = quality }
        var sc = SourceConfig.classic(domain: .call, sampleRate: rate, channels: channels)
        sc.bufferFrames = rate * 2
        let id = try e.addSource(sc)
        XCTAssertEqual(e.resamplerBackend(of: id), backend, "backend, rate \(rate)", file: file, line: line)
        let seconds = 1
        e.pushAll(Signal.sine(frequency: 1000, rate: rate, frames: rate * seconds, channels: channels, amplitude: 0.5),
                  to: id, channels: channels)
        let out = e.renderFrames(engineRate * seconds - engineRate / 10)
        let left = Signal.channel(out, 0, of: outChannels)
        let steady = left[2400..<(left.count - 480)]  // skip the filter's start-up
        let fit = Signal.fitSine(steady, frequency: 1000, rate: engineRate)
        let freq = Signal.zeroCrossingFrequency(steady, rate: engineRate)
        let level = Signal.db(fit.amplitude / 0.5)
        XCTAssertEqual(freq, 1000, accuracy: 0.5, "frequency, rate \(rate)", file: file, line: line)
        XCTAssertEqual(level, 0, accuracy: 0.05, "level, rate \(rate)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(fit.snrDb, minSnr, "SNR, rate \(rate)", file: file, line: line)
        XCTAssertEqual(e.stats().underrunFrames, 0, file: file, line: line)
        if outChannels == 2 {
            // Mono is duplicated, stereo keeps both channels: the right one
            // must be as clean as the left.
            let right = Signal.channel(out, 1, of: outChannels)
            let fitR = Signal.fitSine(right[2400..<(right.count - 480)], frequency: 1000, rate: engineRate)
            XCTAssertGreaterThanOrEqual(fitR.snrDb, minSnr, "SNR right, rate \(rate)", file: file, line: line)
        }
        print(String(format: "ResamplingTests: %6d Hz %d ch -> %6d Hz %d ch [%@]: SNR %.1f dB, level %+.4f dB, %.3f Hz",
                     rate, channels, engineRate, outChannels, "\(backend)", fit.snrDb, level, freq))
    }

    // Polyphase (the default, `PolyphaseResampler`): every common rate pair.
    // SNR bound 95 dB (measured 98.3–146.7 dB for these, see the output).
    func test8kMonoTo48kStereoPolyphase() throws { try check(rate: 8_000, channels: 1, backend: .polyphase, minSnr: 95) }
    func test8kStereoTo48kStereoPolyphase() throws { try check(rate: 8_000, channels: 2, backend: .polyphase, minSnr: 95) }
    func test8kMonoTo48kMonoPolyphase() throws {
        try check(rate: 8_000, channels: 1, outChannels: 1, backend: .polyphase, minSnr: 95)
    }
    func test11_025kMonoTo48kPolyphase() throws { try check(rate: 11_025, channels: 1, backend: .polyphase, minSnr: 95) }
    func test12kMonoTo48kStereoPolyphase() throws { try check(rate: 12_000, channels: 1, backend: .polyphase, minSnr: 95) }
    func test16kMonoTo48kStereoPolyphase() throws { try check(rate: 16_000, channels: 1, backend: .polyphase, minSnr: 95) }
    func test16kStereoTo48kStereoPolyphase() throws { try check(rate: 16_000, channels: 2, backend: .polyphase, minSnr: 95) }
    func test16kStereoTo48kMonoPolyphase() throws {
        try check(rate: 16_000, channels: 2, outChannels: 1, backend: .polyphase, minSnr: 95)
    }
    func test22_05kMonoTo48kPolyphase() throws { try check(rate: 22_050, channels: 1, backend: .polyphase, minSnr: 95) }
    func test24kMonoTo48kStereoPolyphase() throws { try check(rate: 24_000, channels: 1, backend: .polyphase, minSnr: 95) }
    func test24kStereoTo48kStereoPolyphase() throws { try check(rate: 24_000, channels: 2, backend: .polyphase, minSnr: 95) }
    func test32kMonoTo48kStereoPolyphase() throws { try check(rate: 32_000, channels: 1, backend: .polyphase, minSnr: 95) }
    func test32kStereoTo48kStereoPolyphase() throws { try check(rate: 32_000, channels: 2, backend: .polyphase, minSnr: 95) }
    func test44_1kStereoTo48kStereoPolyphase() throws { try check(rate: 44_100, channels: 2, backend: .polyphase, minSnr: 95) }
    func test44_1kMonoTo48kMonoPolyphase() throws {
        try check(rate: 44_100, channels: 1, outChannels: 1, backend: .polyphase, minSnr: 95)
    }
    func test88_2kStereoTo48kPolyphase() throws { try check(rate: 88_200, channels: 2, backend: .polyphase, minSnr: 95) }
    func test96kStereoTo48kPolyphase() throws { try check(rate: 96_000, channels: 2, backend: .polyphase, minSnr: 95) }
    func test192kTo48kPolyphase() throws { try check(rate: 192_000, channels: 1, backend: .polyphase, minSnr: 95) }
    func test22_05kTo44_1kEnginePolyphase() throws {
        try check(rate: 22_050, channels: 2, engineRate: 44_100, backend: .polyphase, minSnr: 95)
    }
    func test16kTo44_1kEnginePolyphase() throws {
        try check(rate: 16_000, channels: 1, engineRate: 44_100, backend: .polyphase, minSnr: 95)
    }
    func test8kTo44_1kEnginePolyphase() throws {  // L = 441 phases
        try check(rate: 8_000, channels: 1, engineRate: 44_100, backend: .polyphase, minSnr: 95)
    }
    func test48kTo44_1kEnginePolyphase() throws {  // 147:160 down
        try check(rate: 48_000, channels: 2, engineRate: 44_100, backend: .polyphase, minSnr: 95)
    }

    // libsamplerate: ratios too fine to tabulate, explicit qualities.
    func test8001HzTo48kLibsamplerate() throws { try check(rate: 8_001, channels: 1, backend: .libsamplerate) }
    func test44_1kBestQualityLibsamplerate() throws {
        try check(rate: 44_100, channels: 2, quality: .sincBest, backend: .libsamplerate)
    }
    func test16kMediumQualityLibsamplerate() throws {
        try check(rate: 16_000, channels: 1, quality: .sincMedium, backend: .libsamplerate)
    }
    func test16kBestQualityLibsamplerate() throws {
        try check(rate: 16_000, channels: 1, quality: .sincBest, backend: .libsamplerate)
    }

    /// Drift control does not change the fixed-ratio backend (issue 17):
    /// the ratio that changes is the drift stage's, after it. A voice with
    /// drift control (the default) keeps the polyphase FIR at voice rates,
    /// and a same-rate source has no resampler at all.
    func testDriftControlledVoiceKeepsTheFixedRatioBackend() throws {
        let e = makeEngine()
        for rate in [8_000, 16_000, 24_000, 32_000, 48_000] {
            var sc = SourceConfig.classic(domain: .call, sampleRate: rate, channels: 1)
            sc.targetBufferMs = 60
            let id = try e.addSource(sc)
            XCTAssertEqual(e.resamplerBackend(of: id), rate == 48_000 ? nil : .polyphase, "rate \(rate)")
        }
    }

    /// Same rate and channels without drift compensation: no resampler.
    func testSameRateBypassesBothBackends() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        XCTAssertNil(e.resamplerBackend(of: id))
    }

    /// The selection rule itself (see `Resampler`): polyphase for
    /// `.sincFastest`, no drift compensation, 1–2 channels and a ratio it
    /// tabulates; speexdsp for more channels at small ratio terms;
    /// libsamplerate otherwise.
    func testBackendSelectionRule() {
        func pick(_ rate: Int, _ engine: Int = 48_000, _ q: ResamplerQuality = .sincFastest,
                  drift: Bool = false, channels: Int = 1) -> Resampler.Backend {
            Resampler.backend(quality: q, inputRate: rate, outputRate: engine, driftCompensation: drift,
                              channels: channels)
        }
        for rate in [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 64_000, 88_200, 96_000,
                     176_400, 192_000] {
            XCTAssertEqual(pick(rate), .polyphase, "rate \(rate)")
            XCTAssertEqual(pick(rate, channels: 2), .polyphase, "rate \(rate), stereo")
            XCTAssertEqual(pick(rate, drift: true), .libsamplerate, "rate \(rate), drift")
            for q in [ResamplerQuality.sincMedium, .sincBest, .linear] {
                XCTAssertEqual(pick(rate, 48_000, q), .libsamplerate, "rate \(rate), \(q)")
            }
            // And against a 44.1 kHz engine, both ways.
            if rate != 44_100 {
                XCTAssertEqual(pick(rate, 44_100), .polyphase, "rate \(rate) -> 44.1 kHz")
            }
        }
        // Too fine to tabulate (L > 1024): libsamplerate.
        for rate in [8_001, 47_999, 44_101] {
            XCTAssertEqual(pick(rate), .libsamplerate, "rate \(rate)")
        }
        // More than 2 channels (the capture reference tap): speexdsp at
        // small ratio terms, libsamplerate otherwise.
        XCTAssertEqual(pick(48_000, 16_000, channels: 3), .speexdsp)
        XCTAssertEqual(pick(48_000, 8_000, channels: 3), .speexdsp)       // 6:1 down
        XCTAssertEqual(pick(48_000, 44_100, channels: 3), .libsamplerate)
        XCTAssertEqual(pick(48_000, 16_000, channels: 2), .polyphase)
        XCTAssertEqual(pick(192_000, 8_000), .polyphase)                  // 24:1 down
        XCTAssertEqual(pick(48_000, 48_000), .libsamplerate)              // only with drift compensation
    }

    /// Frames are conserved through the resampler: consumed input matches the
    /// rendered output at the rate ratio (within the filter's latency).
    func testResampledFrameAccounting() throws {
        for (rate, backend) in [(44_100, Resampler.Backend.polyphase), (16_000, .polyphase), (8_001, .libsamplerate)] {
            let e = makeEngine()
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: rate, channels: 2))
            XCTAssertEqual(e.resamplerBackend(of: id), backend)
            e.pushAll(Signal.sine(frequency: 440, rate: rate, frames: rate / 5, channels: 2), to: id, channels: 2)
            _ = e.renderFrames(4800)
            let s = try e.stats(for: id)
            XCTAssertEqual(s.framesRendered, 4800, "rate \(rate)")
            XCTAssertEqual(Double(s.framesConsumed), Double(4800 * rate / 48_000), accuracy: 200, "rate \(rate)")
            XCTAssertEqual(s.framesConsumed + UInt64(s.bufferedFrames), s.framesPushed, "rate \(rate)")
        }
    }
}
