import XCTest
@testable import RTMix

extension Engine {
    /// The resampler backend of a live source, nil when it bypasses the
    /// resampler (or is unknown). Test-only peek into the core.
    func resamplerBackend(of id: SourceID) -> Resampler.Backend? {
        EngineCore.withControlLock(core) { () -> Resampler.Backend? in
            guard let s = EngineCore.lookup(core, id.rawValue) else { return nil }
            switch s.pointee.render.pointee.resampler {
            case .none: return nil
            case .some(let r): return r.backend
            }
        }
    }

    /// The input latency (look-ahead) of a source's resampler: polyphase
    /// taps / 2, speexdsp's own figure, 0 for libsamplerate.
    func resamplerInputLatency(of id: SourceID) -> Int? {
        EngineCore.withControlLock(core) { () -> Int? in
            guard let s = EngineCore.lookup(core, id.rawValue) else { return nil }
            switch s.pointee.render.pointee.resampler {
            case .none: return nil
            case .some(let r): return r.inputLatencyFrames
            }
        }
    }
}

/// Start-up, latency and underrun behaviour of the default fixed-ratio
/// backend, the polyphase FIR (`PolyphaseResampler`): the first output
/// aligned with the first input frame, the look-ahead held inside the
/// resampler — the behaviour the speexdsp backend had with
/// `speex_resampler_skip_zeros` (these tests were written for it).
final class FixedRatioBackendTests: XCTestCase {
    /// Delay of a 1 kHz sine in output frames modulo its period (48 frames
    /// at 48 kHz), from the fitted phase: input sin(2π f n / rate) rendered
    /// with delay d is sin(2π f (m - d) / 48000).
    func sineDelayFrames(_ x: ArraySlice<Float>, startFrame: Int) -> Double {
        var ss = 0.0, cc = 0.0, sc = 0.0, xs = 0.0, xc = 0.0
        for (k, v) in x.enumerated() {
            let w = 2 * Double.pi * 1000 * Double(startFrame + k) / 48_000
            let s = sin(w), c = cos(w)
            ss += s * s; cc += c * c; sc += s * c
            xs += Double(v) * s; xc += Double(v) * c
        }
        let det = ss * cc - sc * sc
        let a = (xs * cc - xc * sc) / det
        let b = (xc * ss - xs * sc) / det
        // a sin w + b cos w = A sin(w + φ), φ = -2π f d / 48000
        let phi = atan2(b, a)
        var d = -phi / (2 * Double.pi) * 48
        d = d.truncatingRemainder(dividingBy: 48)
        if d < 0 { d += 48 }
        return d
    }

    /// A source with plenty buffered before its first render starts at
    /// output frame 0 with no added delay: no leading zeros from the
    /// filter's history (speexdsp without skip_zeros would start 24 input
    /// frames = 72 output frames later at 16 kHz, q3).
    func testPrefilledSourceHasNoExtraLatency() throws {
        for rate in [8_000, 16_000, 24_000, 32_000] {
            let e = makeEngine()
            let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: rate, channels: 1))
            XCTAssertEqual(e.resamplerBackend(of: id), .polyphase)
            XCTAssertEqual(e.resamplerInputLatency(of: id), 16, "32 taps at the source rate")
            e.pushAll(Signal.sine(frequency: 1000, rate: rate, frames: rate / 5, amplitude: 0.5), to: id, channels: 1)
            let out = e.renderFrames(4800)
            let left = Signal.channel(out, 0, of: 2)
            XCTAssertGreaterThan(abs(left[1]), 0.01, "rate \(rate): audio from the first frames")
            let d = sineDelayFrames(left[480..<4320], startFrame: 480)
            XCTAssertTrue(d < 0.05 || d > 47.95, "rate \(rate): delay \(d) frames (mod 48), want 0")
            XCTAssertEqual(try e.stats(for: id).underrunFrames, 0, "rate \(rate)")
        }
    }

    /// One block pushed per block from the start: never an underrun, the
    /// first block's shortfall (the filter's look-ahead) is absorbed by the
    /// engine's start-up alignment, and the audio is continuous from then on
    /// with the same delay as the libsamplerate path would have.
    func testPerfectlyTimedVoiceStartsAlignedWithoutUnderrun() throws {
        for (rate, channels) in [(8_000, 1), (16_000, 1), (24_000, 2), (32_000, 1), (16_000, 2)] {
            let e = makeEngine()
            let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: rate, channels: channels))
            XCTAssertEqual(e.resamplerBackend(of: id), .polyphase)
            let tone = Signal.sine(frequency: 1000, rate: rate, frames: rate, channels: channels, amplitude: 0.3)
            let per = rate / 100
            var out: [Float] = []
            for b in 0..<50 {
                e.pushAll(Array(tone[(b * per * channels)..<((b + 1) * per * channels)]), to: id, channels: channels)
                out += e.renderFrames(480)
            }
            let s = try e.stats(for: id)
            XCTAssertEqual(s.underrunFrames, 0, "rate \(rate)")
            XCTAssertEqual(s.underrunEvents, 0, "rate \(rate)")
            let left = Signal.channel(out, 0, of: 2)
            let firstSound = left.firstIndex { $0 != 0 }!
            // Look-ahead of 16 input frames = 16 × 48000 / rate output frames.
            let lookahead = 16 * 48_000 / rate
            XCTAssertEqual(firstSound, lookahead, accuracy: 1, "rate \(rate)")
            // Continuous from there: delay = the look-ahead, constant.
            let d = sineDelayFrames(left[960..<23_520], startFrame: 960)
            let want = Double(lookahead % 48)
            let off = abs(d - want)
            XCTAssertLessThan(min(off, 48 - off), 0.05, "rate \(rate): delay \(d) (mod 48), want \(want)")
            XCTAssertEqual(Signal.rms(left[(firstSound + 1)...]), 0.3 / 2.0.squareRoot(), accuracy: 0.003, "rate \(rate)")
            // Every pushed frame is consumed: the resampler holds the
            // look-ahead in its own buffer, not in the ring.
            XCTAssertEqual(s.bufferedFrames, 0, "rate \(rate)")
        }
    }

    /// Underrun and resume through the polyphase FIR: the gap is silent
    /// and counted, the resumed audio plays again.
    func testUnderrunAndResumeThroughPolyphase() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1))
        XCTAssertEqual(e.resamplerBackend(of: id), .polyphase)
        e.pushAll(Signal.sine(frequency: 300, rate: 16_000, frames: 640, amplitude: 0.3), to: id, channels: 1)
        let out = e.renderFrames(4800)
        XCTAssertTrue(out.suffix(4000).allSatisfy { $0 == 0 })
        XCTAssertGreaterThan(Signal.rms(out.prefix(1800)[...]), 0.1)
        XCTAssertGreaterThan(try e.stats(for: id).underrunFrames, 2800)
        e.pushAll(Signal.sine(frequency: 300, rate: 16_000, frames: 3200, amplitude: 0.3), to: id, channels: 1)
        let resumed = e.renderFrames(4800)
        XCTAssertGreaterThan(Signal.rms(resumed[960..<8000]), 0.15)
    }
}
