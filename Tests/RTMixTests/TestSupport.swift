import Foundation
import XCTest
@testable import RTMix

/// Signal generators and measurement helpers shared by the engine tests.
enum Signal {
    static func sine(frequency: Double, rate: Int, frames: Int, channels: Int = 1,
                     amplitude: Float = 0.5, phase: Double = 0) -> [Float] {
        var out = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            let v = amplitude * Float(sin(2 * Double.pi * frequency * Double(i) / Double(rate) + phase))
            for c in 0..<channels { out[i * channels + c] = v }
        }
        return out
    }

    static func constant(_ value: Float, frames: Int, channels: Int) -> [Float] {
        [Float](repeating: value, count: frames * channels)
    }

    /// Deterministic pseudo-random noise in [-amplitude, amplitude].
    static func noise(frames: Int, channels: Int, amplitude: Float, seed: UInt64) -> [Float] {
        var state = seed | 1
        return (0..<(frames * channels)).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return amplitude * (Float(state % 2_000_001) / 1_000_000 - 1)
        }
    }

    /// One channel of interleaved audio.
    static func channel(_ x: [Float], _ c: Int, of channels: Int) -> [Float] {
        stride(from: c, to: x.count, by: channels).map { x[$0] }
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        sqrt(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count)))
    }

    static func db(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// Least-squares fit of a sine of known frequency; returns amplitude and
    /// the SNR of the residual in dB.
    static func fitSine(_ x: ArraySlice<Float>, frequency: Double, rate: Int) -> (amplitude: Double, snrDb: Double) {
        var ss = 0.0, cc = 0.0, sc = 0.0, xs = 0.0, xc = 0.0
        for (n, v) in x.enumerated() {
            let w = 2 * Double.pi * frequency * Double(n) / Double(rate)
            let s = sin(w), c = cos(w)
            ss += s * s; cc += c * c; sc += s * c
            xs += Double(v) * s; xc += Double(v) * c
        }
        let det = ss * cc - sc * sc
        let a = (xs * cc - xc * sc) / det
        let b = (xc * ss - xs * sc) / det
        var signal = 0.0, noise = 0.0
        for (n, v) in x.enumerated() {
            let w = 2 * Double.pi * frequency * Double(n) / Double(rate)
            let fit = a * sin(w) + b * cos(w)
            signal += fit * fit
            noise += (Double(v) - fit) * (Double(v) - fit)
        }
        return (sqrt(a * a + b * b), 10 * log10(signal / max(noise, 1e-30)))
    }

    /// Frequency estimated from rising zero crossings (linear interpolation).
    static func zeroCrossingFrequency(_ x: ArraySlice<Float>, rate: Int) -> Double {
        var crossings: [Double] = []
        let a = Array(x)
        for i in 1..<a.count where a[i - 1] < 0 && a[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-a[i - 1] / (a[i] - a[i - 1])))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / (last - first)
    }
}

extension Engine {
    /// Pushes all of `samples`, failing the test if anything is rejected.
    func pushAll(_ samples: [Float], to id: SourceID, channels: Int,
                 file: StaticString = #filePath, line: UInt = #line) {
        let accepted = samples.withUnsafeBufferPointer { try! push($0, to: id, channels: channels) }
        XCTAssertEqual(accepted, samples.count / channels, "push rejected frames", file: file, line: line)
    }

    /// Renders `frames` frames in blocks of `block`.
    func renderFrames(_ frames: Int, block: Int = 480) -> [Float] {
        let ch = config.channels
        var out = [Float](repeating: 0, count: frames * ch)
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            out.withUnsafeMutableBufferPointer { buf in
                let slice = UnsafeMutableBufferPointer(rebasing: buf[(done * ch)..<((done + n) * ch)])
                try! render(into: slice, frames: n)
            }
            done += n
        }
        return out
    }
}

func makeEngine(_ configure: (inout EngineConfig) -> Void = { _ in }) -> Engine {
    var c = EngineConfig()
    configure(&c)
    return try! Engine(c)
}

extension SourceConfig {
    /// The engine's behaviour before drift compensation and priming became
    /// defaults: no drift control, start with the first audio, refuse what
    /// does not fit. Tests of mixing, resampling, gains and bypass use it so
    /// their figures do not depend on the timing defaults.
    static func classic(domain: Domain, sampleRate: Int, channels: Int) -> SourceConfig {
        var c = SourceConfig(domain: domain, sampleRate: sampleRate, channels: channels)
        c.untimed()
        return c
    }
}
