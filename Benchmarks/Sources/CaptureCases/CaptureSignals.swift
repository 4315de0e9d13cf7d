import CSampleRateFloor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Precomputed signals of the capture cases (all built in setup).
///
/// - far end at the capture rate: a 2 s loop of speech-band noise
///   (xorshift noise, one-pole high-pass ~100 Hz and low-pass ~3 kHz) with
///   a 4 Hz syllable envelope between 0.25 and 1 (never silent), peak 0.3;
/// - the same far end at 48 kHz for an engine that renders at 48 kHz while
///   capturing at 16 kHz (libsamplerate SINC_BEST, computed circularly so
///   the loop stays seamless);
/// - microphone at the capture rate: the echo of the far end,
///   0.3 × far[i − 40 ms] + 0.1 × far[i − 45 ms], plus uniform noise of
///   amplitude 0.001 (about −65 dBFS), computed circularly over the loop;
/// - for the floor: the microphone and the aligned reference
///   (far[i − 40 ms + 8 ms], the engine's 8 ms lead) as int16 (round to
///   nearest, saturating — as the engine converts).
public final class CaptureSignals {
    public static let loopSeconds = 2
    public static let delayMs = 40
    public static let reflectionMs = 45
    public static let leadMs = 8

    public let captureRate: Int
    public let loopFrames: Int
    public let blockFrames: Int
    /// Far end at the capture rate (loopFrames).
    public let far: [Float]
    /// Microphone (loopFrames).
    public let mic: [Float]
    public let mic16: [Int16]
    /// Reference aligned as the engine aligns it (loopFrames).
    public let ref16: [Int16]

    public static func shared(captureRate: Int) -> CaptureSignals { CaptureSignals(captureRate: captureRate) }

    init(captureRate: Int) {
        self.captureRate = captureRate
        loopFrames = captureRate * CaptureSignals.loopSeconds
        blockFrames = captureRate / 100
        let n = loopFrames
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func noise() -> Float {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Float(state % 2_000_001) / 1_000_000 - 1
        }
        let fs = Float(captureRate)
        let lp = 1 - expf(-2 * Float.pi * 3000 / fs)
        let hp = expf(-2 * Float.pi * 100 / fs)
        var low: Float = 0, hpIn: Float = 0, hpOut: Float = 0
        var x = [Float](repeating: 0, count: n)
        // Run the filters over one loop first so the loop starts in steady state.
        for pass in 0..<2 {
            for i in 0..<n {
                low += lp * (noise() - low)
                hpOut = hp * (hpOut + low - hpIn)
                hpIn = low
                if pass == 1 {
                    let t = Float(i) / fs
                    let envelope = 0.25 + 0.75 * max(0, sinf(2 * Float.pi * 4 * t))
                    x[i] = envelope * hpOut
                }
            }
        }
        let peak = x.reduce(0) { max($0, abs($1)) }
        for i in 0..<n { x[i] *= 0.3 / peak }
        far = x

        let d1 = captureRate * CaptureSignals.delayMs / 1000
        let d2 = captureRate * CaptureSignals.reflectionMs / 1000
        var m = [Float](repeating: 0, count: n)
        for i in 0..<n {
            m[i] = 0.3 * x[(i - d1 + n) % n] + 0.1 * x[(i - d2 + n) % n] + 0.001 * noise()
        }
        mic = m
        mic16 = m.map(CaptureSignals.toS16)
        let lead = captureRate * CaptureSignals.leadMs / 1000
        ref16 = (0..<n).map { CaptureSignals.toS16(x[(($0 - d1 + lead) % n + n) % n]) }
    }

    /// As the engine's EchoCanceller.toS16: round to nearest, saturating.
    static func toS16(_ v: Float) -> Int16 {
        Int16(max(-32768, min(32767, (v * 32768).rounded(.toNearestOrEven))))
    }

    /// The far end at `rate` (the capture rate or a multiple), loop of
    /// `loopSeconds`, converted circularly with SRC_SINC_BEST_QUALITY.
    public func far(atRate rate: Int) -> [Float] {
        if rate == captureRate { return far }
        let n = loopFrames
        let ratio = Double(rate) / Double(captureRate)
        let outLoop = rate * CaptureSignals.loopSeconds
        let input = far + far + far
        var output = [Float](repeating: 0, count: 3 * outLoop + 64)
        var data = SRC_DATA()
        let status = input.withUnsafeBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out in
                data.data_in = inp.baseAddress
                data.input_frames = 3 * n
                data.data_out = out.baseAddress
                data.output_frames = out.count
                data.src_ratio = ratio
                return src_simple(&data, Int32(SRC_SINC_BEST_QUALITY), 1)
            }
        }
        precondition(status == 0 && data.output_frames_gen >= 2 * outLoop, "src_simple failed")
        return Array(output[outLoop..<(2 * outLoop)])
    }
}
