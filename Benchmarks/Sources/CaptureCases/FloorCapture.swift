import CSpeexDSPFloor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor: the bare speexdsp calls per 10 ms frame, configured as the
/// engine's `EchoCanceller` with the engine's default capture settings
/// (tail 200 ms, noise suppression on, echo suppression on, AGC off):
///
///     speex_echo_state_init(frame, rate * 200 / 1000)
///     speex_echo_ctl(SPEEX_ECHO_SET_SAMPLING_RATE, rate)
///     speex_preprocess_state_init(frame, rate)
///     speex_preprocess_ctl(SET_DENOISE, 1), (SET_AGC, 0), (SET_ECHO_STATE, echo)
///
/// Per call: `speex_echo_cancellation(mic16, ref16, out16)` then
/// `speex_preprocess_run(out16)`, on precomputed int16 frames (the
/// microphone and the reference aligned as the engine aligns it).
final class FloorCapture: CaptureCase {
    let echo: OpaquePointer
    let preprocess: OpaquePointer
    let signals: CaptureSignals
    let frames: Int
    /// Loop plus one block each (contiguous windows).
    let mic16: UnsafeMutablePointer<Int16>
    let ref16: UnsafeMutablePointer<Int16>
    let out16: UnsafeMutablePointer<Int16>
    var position = 0
    /// Frame pointers of the next capture() (set in prepare()).
    var micFrame: UnsafePointer<Int16>
    var refFrame: UnsafePointer<Int16>
    var micEnergy: Double = 0
    var outEnergy: Double = 0

    init(signals: CaptureSignals) {
        self.signals = signals
        let rate = signals.captureRate
        frames = signals.blockFrames
        guard let e = speex_echo_state_init(Int32(frames), Int32(rate * 200 / 1000)) else {
            fatalError("speex_echo_state_init failed")
        }
        var r = Int32(rate)
        _ = speex_echo_ctl(e, SPEEX_ECHO_SET_SAMPLING_RATE, &r)
        guard let p = speex_preprocess_state_init(Int32(frames), Int32(rate)) else {
            fatalError("speex_preprocess_state_init failed")
        }
        var on: Int32 = 1
        _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_DENOISE, &on)
        var agc: Int32 = 0
        _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_AGC, &agc)
        _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(e))
        echo = e
        preprocess = p
        let n = signals.loopFrames + frames
        mic16 = .allocate(capacity: n)
        ref16 = .allocate(capacity: n)
        for i in 0..<n {
            mic16[i] = signals.mic16[i % signals.loopFrames]
            ref16[i] = signals.ref16[i % signals.loopFrames]
        }
        out16 = .allocate(capacity: frames)
        out16.initialize(repeating: 0, count: frames)
        micFrame = UnsafePointer(mic16)
        refFrame = UnsafePointer(ref16)
    }

    deinit {
        speex_preprocess_state_destroy(preprocess)
        speex_echo_state_destroy(echo)
        mic16.deallocate()
        ref16.deallocate()
        out16.deallocate()
    }

    func prepare() {
        for i in 0..<frames {
            micEnergy += Double(micFrame[i]) * Double(micFrame[i])
            outEnergy += Double(out16[i]) * Double(out16[i])
        }
        micFrame = UnsafePointer(mic16 + position)
        refFrame = UnsafePointer(ref16 + position)
        position += frames
        if position >= signals.loopFrames { position -= signals.loopFrames }
    }

    func capture() {
        speex_echo_cancellation(echo, micFrame, refFrame, out16)
        _ = speex_preprocess_run(preprocess, out16)
    }

    func outputChecksum() -> Float {
        var s: Float = 0
        for i in 0..<frames { s += Float(out16[i]).magnitude / 32768 }
        return s
    }

    func resetPowers() {
        micEnergy = 0
        outEnergy = 0
    }

    func problems() -> String? {
        let attenuation = outEnergy > 0 ? 10 * log10(micEnergy / outEnergy) : .infinity
        return attenuation < 20 ? "floor removes only \(attenuation) dB" : nil
    }

    func summary() -> String {
        let attenuation = outEnergy > 0 ? 10 * log10(micEnergy / outEnergy) : .infinity
        return "mic/out=\(String(attenuation)) dB"
    }
}
