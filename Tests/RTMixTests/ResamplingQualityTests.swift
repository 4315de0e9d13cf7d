import XCTest
@testable import RTMix

/// Issue 17: THD+N of a sine through every playout conversion path with
/// DEFAULT configs, 48 kHz mono output: same-rate bypass, the polyphase FIR
/// at its fixed ratio (every common rate, 44.1 kHz included),
/// libsamplerate where it remains (a ratio too fine to tabulate), and the
/// drift stage (`DriftStage`, the shared `DriftResampler`) correcting a
/// same-rate source by ±1000 ppm.
///
/// THD+N here is the power of everything that is not the fitted sine (least
/// squares, known frequency) relative to the sine's power, over a 0.5 s
/// window after the start: harmonics, aliases, imaging, interpolation error
/// and quantisation to Float all count. The bounds are set below what was
/// measured (see docs/performance.md for the figures); the goal is
/// ≤ −90 dB on every path. No timing is asserted.
final class ResamplingQualityTests: XCTestCase {
    static let amplitude: Float = 0.5

    /// THD+N in dB of `x` against a sine of `frequency`.
    func thdN(_ x: ArraySlice<Float>, frequency: Double) -> Double {
        -Signal.fitSine(x, frequency: frequency, rate: 48_000).snrDb
    }

    /// A sine from a default-config source at `rate`, fed in lockstep (one
    /// block per render, a producer on the render clock), 48 kHz mono out.
    /// Returns THD+N over 1.0–1.5 s.
    func enginePath(rate: Int, frequency: Double, backend: Resampler.Backend? = nil) throws -> Double {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: rate, channels: 1))
        XCTAssertEqual(e.resamplerBackend(of: id), backend, "backend, rate \(rate)")
        // 10 ms blocks (rates such as 11,025 or 8,001 Hz: the fraction carried).
        let input = Signal.sine(frequency: frequency, rate: rate, frames: rate * 2, amplitude: Self.amplitude)
        var out = [Float]()
        var pushed = 0
        for b in 1...200 {
            let upTo = rate * b / 100
            e.pushAll(Array(input[pushed..<upTo]), to: id, channels: 1)
            pushed = upTo
            out += e.renderFrames(480)
        }
        let s = try e.stats(for: id)
        XCTAssertEqual(s.driftPpm, 0, "lockstep: no correction expected")
        XCTAssertEqual(s.underrunEvents, 0)
        return thdN(out[48_000..<72_000], frequency: frequency)
    }

    /// A 48 kHz sine through `DriftStage` at a constant correction, driven
    /// as the renderer does (engage, then per 480-frame block: fetch what it
    /// needs, produce). The output is the input consumed `1 + correction`
    /// times faster, i.e. a sine of `frequency × (1 + correction)`. Returns
    /// THD+N over 0.5 s after the first 0.5 s.
    func driftStagePath(correction: Double, frequency: Double) throws -> Double {
        guard var stage = DriftStage(channels: 1, maxFrames: 480) else {
            XCTFail("DriftStage allocation failed")
            return 0
        }
        let total = 48_000 * 2
        let input = UnsafeMutablePointer<Float>.allocate(capacity: total)
        defer { input.deallocate() }
        for i in 0..<total {
            input[i] = Self.amplitude * Float(sin(2 * Double.pi * frequency * Double(i) / 48_000))
        }
        let outFrames = 48_000
        let out = UnsafeMutablePointer<Float>.allocate(capacity: outFrames)
        defer { out.deallocate() }
        // History first (as after inactive blocks), then engage.
        stage.record(input, frames: DriftStage.historyFrames)
        var read = DriftStage.historyFrames
        stage.engage()
        var done = 0
        let step = stage.step(correction: correction, frames: 480)
        XCTAssertEqual(step, 1 + correction)
        while done < outFrames {
            let need = stage.inputNeeded(frames: 480, step: step)
            for i in 0..<need { stage.staging[i] = input[read + i] }
            read += need
            stage.appendStaged(frames: need)
            let n = stage.produce(into: out + done, frames: 480, step: step)
            XCTAssertEqual(n, 480, "the stage starved")
            if n == 0 { break }
            done += n
        }
        let result = Array(UnsafeBufferPointer(start: out, count: outFrames))
        // The first output continues the recorded history: output k is input
        // historyFrames + k·step (no delay).
        return thdN(result[24_000..<48_000], frequency: frequency * (1 + correction))
    }

    func report(_ name: String, _ db: Double) {
        print(String(format: "ResamplingQualityTests: %@: THD+N %.1f dB", name, db))
    }

    func testBypassSameRate() throws {
        for f in [1000.0, 10_000] {
            let d = try enginePath(rate: 48_000, frequency: f)
            report("bypass 48 kHz, \(Int(f)) Hz", d)
            XCTAssertLessThanOrEqual(d, -130, "bypass, \(f) Hz")
        }
    }

    /// The default fixed-ratio backend on every common source rate into a
    /// 48 kHz engine, tones up to 0.4 × the source rate (0.375 × 48 kHz
    /// for downsampling): each path is the polyphase FIR.
    func testPolyphaseFixedRatio() throws {
        let paths: [(rate: Int, tones: [Double])] = [
            (8_000, [1000, 3000]), (11_025, [1000, 4000]), (12_000, [1000, 4500]), (16_000, [1000, 6000]),
            (22_050, [1000, 8000]), (24_000, [1000, 9000]), (32_000, [1000, 12_000]),
            (44_100, [1000, 10_000, 15_000, 17_000]), (88_200, [1000, 10_000, 17_000]),
            (96_000, [1000, 10_000, 17_000]), (192_000, [1000, 17_000]),
        ]
        for (rate, tones) in paths {
            for f in tones {
                let d = try enginePath(rate: rate, frequency: f, backend: .polyphase)
                report(String(format: "polyphase %.3f -> 48 kHz, %d Hz", Double(rate) / 1000, Int(f)), d)
                XCTAssertLessThanOrEqual(d, PolyphaseBound.bound(rate: rate, f), "polyphase \(rate) Hz, \(f) Hz")
            }
        }
    }

    /// libsamplerate where it remains: a ratio too fine to tabulate.
    func testLibsamplerateFineRatio() throws {
        for f in [1000.0, 3000] {
            let d = try enginePath(rate: 8_001, frequency: f, backend: .libsamplerate)
            report("libsamplerate 8.001 -> 48 kHz, \(Int(f)) Hz", d)
            XCTAssertLessThanOrEqual(d, -95, "libsamplerate 8001 Hz, \(f) Hz")
        }
    }

    func testDriftStagePlusMinus1000ppm() throws {
        for c in [1000e-6, -1000e-6] {
            for f in [1000.0, 10_000] {
                let d = try driftStagePath(correction: c, frequency: f)
                report(String(format: "drift stage %+.0f ppm, %d Hz", c * 1e6, Int(f)), d)
                XCTAssertLessThanOrEqual(d, DriftStageBound.bound(f), "drift stage \(c), \(f) Hz")
            }
        }
    }
}

/// Bounds (dB), each set a few dB above (worse than) the THD+N measured on
/// 2026-11-26 (x86_64; see docs/performance.md for every figure), all
/// below the issue's −90 dB goal. Polyphase FIR (Kaiser β 10, 32 taps at
/// the lower rate): worst −98.3 dB (32 kHz, 1 kHz tone), 44.1 kHz
/// −105.9 / −104.2 / −102.2 / −102.5 dB (1 / 10 / 15 / 17 kHz), 16 kHz
/// −126.8 / −118.3 dB (1 / 6 kHz). libsamplerate at 8,001 Hz −114.6 /
/// −97.8 dB (1 / 3 kHz). Bypass −154.9 / −162.9 dB (1 / 10 kHz); drift
/// stage ±1000 ppm −101.6 / −100.3 dB (1 / 10 kHz).
enum PolyphaseBound { static func bound(rate: Int, _ f: Double) -> Double { -95 } }
enum DriftStageBound { static func bound(_ f: Double) -> Double { -96 } }
