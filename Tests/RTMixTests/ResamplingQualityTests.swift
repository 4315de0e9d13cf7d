import XCTest
@testable import RTMix

/// Issue 17: THD+N of a sine through every playout conversion path with
/// DEFAULT configs, 48 kHz mono output: same-rate bypass, speexdsp at its
/// fixed ratio (16 kHz), libsamplerate at its fixed ratio (44.1 kHz), and the
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
    func enginePath(rate: Int, frequency: Double) throws -> Double {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: rate, channels: 1))
        let block = rate / 100
        let input = Signal.sine(frequency: frequency, rate: rate, frames: rate * 2, amplitude: Self.amplitude)
        var out = [Float]()
        for b in 0..<(input.count / block) {
            e.pushAll(Array(input[(b * block)..<((b + 1) * block)]), to: id, channels: 1)
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

    func testSpeexFixedRatio16k() throws {
        for f in [1000.0, 6000] {
            let d = try enginePath(rate: 16_000, frequency: f)
            report("speexdsp 16 -> 48 kHz, \(Int(f)) Hz", d)
            XCTAssertLessThanOrEqual(d, SpeexBound.bound(f), "speexdsp 16 kHz, \(f) Hz")
        }
    }

    func testLibsamplerateFixedRatio44_1k() throws {
        for f in [1000.0, 10_000] {
            let d = try enginePath(rate: 44_100, frequency: f)
            report("libsamplerate 44.1 -> 48 kHz, \(Int(f)) Hz", d)
            XCTAssertLessThanOrEqual(d, LibsamplerateBound.bound(f), "libsamplerate 44.1 kHz, \(f) Hz")
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
/// 2026-11-25 (x86_64, libsamplerate 0.2.2, speexdsp 1.2.1), all below the
/// issue's −90 dB goal. Measured: bypass −154.9 / −162.9 dB (1 / 10 kHz);
/// speexdsp −101.1 / −102.3 dB (1 / 6 kHz); libsamplerate −119.0 / −104.9 dB
/// (1 / 10 kHz); drift stage ±1000 ppm −101.6 / −100.3 dB (1 / 10 kHz).
enum SpeexBound { static func bound(_ f: Double) -> Double { -96 } }
enum LibsamplerateBound { static func bound(_ f: Double) -> Double { f < 2000 ? -110 : -100 } }
enum DriftStageBound { static func bound(_ f: Double) -> Double { -96 } }
