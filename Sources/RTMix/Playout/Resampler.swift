import CSampleRate
import CSpeexDSP

/// Sample-rate conversion for one source at a fixed ratio: RTMix's own
/// polyphase FIR (`PolyphaseResampler`) by default, and a thin fence around
/// two C resamplers for what it does not cover. This is the only file that
/// calls resampler C functions (libsamplerate and speexdsp's resampler).
///
/// `init` allocates (`src_new` / `speex_resampler_init` / the polyphase
/// tables); `process` does not (neither `src_process` nor
/// `speex_resampler_process_interleaved_float` allocates, nor does the
/// polyphase FIR), so it is safe on the render thread. Nothing here ever
/// calls speexdsp's `set_rate*`/`set_quality`: they rebuild the filter with
/// `realloc`.
///
/// ## Backend choice (`Resampler.backend(...)`, fixed for the source's life)
///
/// With quality `.sincFastest` (the default), no drift compensation (the
/// playout path never asks for it any more: drift is the drift stage's)
/// and different rates:
/// 1. **polyphase** (`PolyphaseResampler`) for 1 or 2 channels when the
///    reduced ratio out:in = L:M has L ≤ 1024 and an L × taps table of at
///    most 65,536 coefficients: every pair of the common rates (8, 11.025,
///    12, 16, 22.05, 24, 32, 44.1, 48, 64, 88.2, 96, 176.4, 192 kHz), in
///    particular 44.1 → 48 kHz (160:147) and the voice rates. Exact phases,
///    32 taps at the lower rate, THD+N ≤ −98 dB for a 1 kHz tone on every
///    path measured (ResamplingTests, ResamplingQualityTests).
/// 2. **speexdsp** (quality 3, `speexQuality`) for more than 2 channels
///    (only the capture path's reference tap with a stereo reference: 3
///    channels) when L and M are both ≤ 8: speexdsp then uses its exact
///    ("direct") sinc table.
/// 3. **libsamplerate** SRC_SINC_FASTEST otherwise: ratios too fine to
///    tabulate (e.g. 8,001 or 47,999 Hz against 48 kHz), and more than 2
///    channels at a ratio such as 160:147 (speexdsp would interpolate its
///    table there, not much cheaper, and 1.2.1 has crashed in
///    `set_rate_frac` with such a fine fraction, shared/guide/toolchain.md).
///
/// `.sincMedium`, `.sincBest` and `.linear` always get the libsamplerate
/// converter of that name (an explicit quality request means that
/// converter), and so does drift compensation (`src_process` takes a new
/// ratio every call without allocating; the other two cannot).
///
/// Why polyphase over speexdsp and libsamplerate (measured 2026-11-26,
/// callgrind, per 10 ms callback at 48 kHz, x86_64): 44.1 kHz stereo
/// 42 K instructions against 749 K for SRC_SINC_FASTEST; 16 kHz mono 18 K
/// against 45 K for speexdsp q3. THD+N of a 1 kHz tone −105.9 dB at
/// 44.1 kHz (SRC_SINC_FASTEST: −119.0 dB; both −104 to −105 dB at 10 kHz),
/// −126.5 dB at 16 kHz (speexdsp q3: −101.1 dB); every polyphase path
/// ≤ −98 dB. See docs/performance.md.
///
/// ## speexdsp quality: 3 (`speexQuality`)
///
/// Measured with the engine's accuracy test when speexdsp was the voice
/// backend (1 kHz sine, 1 s, 480-frame blocks): SNR at q3 was 100.6 dB
/// (8 kHz), 99.7 (12 kHz), 101.1 (16 kHz), 97.1 (24 kHz), 106.7 (32 kHz),
/// 144.2 (96 kHz), 143.0 (192 kHz) → 48 kHz, level within 0.0002 dB; q2
/// has a ~60 dB stopband. Cost for a 16 kHz mono voice: q3 46 K, q4 57 K,
/// q5 68 K instructions per 10 ms (Benchmarks/Exploratory/resampler_cost.c).
///
/// ## Latency and start-up
///
/// The polyphase backend behaves like speexdsp below (first output aligned
/// with the first input frame; look-ahead `taps / 2` input frames, 16 for
/// upsampling; the look-ahead held in its own buffer). speexdsp is put in `speex_resampler_skip_zeros` mode: its first output
/// sample is aligned with the first input sample instead of being preceded
/// by `speex_resampler_get_input_latency()` (filter length / 2: 24 input
/// frames at q3, 1.5 ms) zeros. That is what libsamplerate does too: the
/// first call returns fewer frames than asked (it needs those 24 frames of
/// look-ahead first), the engine's start-up alignment places that short
/// first block at the end of the output block (no underrun), and the
/// stream's latency is the same as without skipping, or 1.5 ms less when
/// the first render finds more than a block buffered. Without skip_zeros
/// the leading zeros would count as produced audio and add that latency.
/// Measured through the engine (SpeexBackendTests): one block pushed per
/// block from the start never underruns in either mode and the audio is
/// delayed by the look-ahead (72 output frames at 16 kHz) in both; with a
/// block or more buffered before the first render, skip_zeros starts at
/// output frame 0 with zero delay, without it 72 frames (16 kHz) / 144
/// frames (8 kHz) later.
struct Resampler: ~Copyable {
    enum Backend: Sendable, Equatable {
        case libsamplerate
        case speexdsp
        /// `PolyphaseResampler` (exact-phase polyphase FIR, Swift).
        case polyphase
    }

    /// speexdsp quality used for `.sincFastest` (see the type's comment).
    static var speexQuality: Int32 { 3 }
    /// Largest term of the reduced rate ratio that goes to speexdsp.
    static var speexMaxRatioTerm: Int { 8 }

    let backend: Backend
    /// `SRC_STATE *`, `SpeexResamplerState *` or
    /// `UnsafeMutablePointer<PolyphaseResampler>`, by `backend`.
    let state: OpaquePointer
    /// Nominal output/input rate ratio.
    let ratio: Double
    let channels: Int

    /// The backend `init` picks for these parameters (see the type's comment).
    static func backend(quality: ResamplerQuality, inputRate: Int, outputRate: Int,
                        driftCompensation: Bool, channels: Int = 1) -> Backend {
        guard quality == .sincFastest, !driftCompensation, inputRate != outputRate,
              inputRate > 0, outputRate > 0
        else { return .libsamplerate }
        if channels <= 2 && PolyphaseResampler.supports(inputRate: inputRate, outputRate: outputRate) {
            return .polyphase
        }
        let t = PolyphaseResampler.terms(inputRate: inputRate, outputRate: outputRate)
        let limit = speexMaxRatioTerm
        return t.up <= limit && t.down <= limit ? .speexdsp : .libsamplerate
    }

    /// Returns nil when the backend cannot allocate its state.
    init?(quality: ResamplerQuality, channels: Int, inputRate: Int, outputRate: Int,
          driftCompensation: Bool) {
        let backend = Resampler.backend(quality: quality, inputRate: inputRate, outputRate: outputRate,
                                        driftCompensation: driftCompensation, channels: channels)
        switch backend {
        case .speexdsp:
            var error: Int32 = 0
            guard let s = speex_resampler_init(UInt32(channels), UInt32(inputRate), UInt32(outputRate),
                                               Resampler.speexQuality, &error)
            else { return nil }
            guard error == 0 else {
                speex_resampler_destroy(s)
                return nil
            }
            _ = speex_resampler_skip_zeros(s)
            state = s
        case .polyphase:
            guard let p = PolyphaseResampler(channels: channels, inputRate: inputRate, outputRate: outputRate),
                  let s = Allocation.make(p)
            else { return nil }
            state = OpaquePointer(s)
        case .libsamplerate:
            let converter: Int32
            switch quality {
            case .sincFastest: converter = Int32(SRC_SINC_FASTEST)
            case .sincMedium: converter = Int32(SRC_SINC_MEDIUM_QUALITY)
            case .sincBest: converter = Int32(SRC_SINC_BEST_QUALITY)
            case .linear: converter = Int32(SRC_LINEAR)
            }
            var error: Int32 = 0
            guard let s = src_new(converter, Int32(channels), &error) else { return nil }
            guard error == 0 else {
                _ = src_delete(s)
                return nil
            }
            state = s
        }
        self.backend = backend
        ratio = Double(outputRate) / Double(inputRate)
        self.channels = channels
    }

    deinit {
        switch backend {
        case .libsamplerate: _ = src_delete(state)
        case .speexdsp: speex_resampler_destroy(state)
        case .polyphase: Allocation.destroy(UnsafeMutablePointer<PolyphaseResampler>(state))
        }
    }

    /// Input frames the converter needs beyond an output sample's position
    /// before it can produce that sample (its look-ahead): speexdsp's
    /// `speex_resampler_get_input_latency`, the polyphase kernel's half
    /// length; 0 for libsamplerate, which does not report it. Control
    /// threads and tests only.
    var inputLatencyFrames: Int {
        switch backend {
        case .libsamplerate: return 0
        case .speexdsp: return Int(speex_resampler_get_input_latency(state))
        case .polyphase: return UnsafeMutablePointer<PolyphaseResampler>(state).pointee.inputLatencyFrames
        }
    }

    /// Forgets all history (after a flush or a drop: the next input is
    /// not a continuation). Real-time safe: every backend only clears its
    /// buffers here.
    @_noLocks
    func reset() {
        let s = state
        switch backend {
        case .libsamplerate: _ = _unsafePerformance { src_reset(s) }
        case .speexdsp:
            _ = _unsafePerformance { speex_resampler_reset_mem(s) }
            _ = _unsafePerformance { speex_resampler_skip_zeros(s) }
        case .polyphase: UnsafeMutablePointer<PolyphaseResampler>(s).pointee.reset()
        }
    }

    /// End of stream: produces the output still held back by the filter's
    /// look-ahead (the input already consumed but not yet played), at most
    /// `outputFrames`. `zeros` must hold `Resampler.drainInputFrames ×
    /// channels` zero samples (speexdsp is flushed by feeding silence).
    /// Returns the frames produced; call `reset` before new input.
    @_noLocks
    func drain(output: UnsafeMutablePointer<Float>, outputFrames: Int, ratio: Double,
               zeros: UnsafePointer<Float>) -> Int {
        let s = state
        switch backend {
        case .libsamplerate:
            var data = SRC_DATA()
            data.data_in = zeros
            data.data_out = output
            data.input_frames = 0
            data.output_frames = outputFrames
            data.end_of_input = 1
            data.src_ratio = ratio
            let status: Int32 = _unsafePerformance { src_process(s, &data) }
            return status == 0 ? data.output_frames_gen : 0
        case .speexdsp:
            let latency = Int(_unsafePerformance { speex_resampler_get_input_latency(s) })
            var inLen = UInt32(clamping: min(latency, Resampler.drainInputFrames))
            let wanted = min(outputFrames, Int(Double(inLen) * self.ratio + 0.5))
            var outLen = UInt32(clamping: wanted)
            _ = _unsafePerformance {
                speex_resampler_process_interleaved_float(s, zeros, &inLen, output, &outLen)
            }
            return Int(outLen)
        case .polyphase:
            return UnsafeMutablePointer<PolyphaseResampler>(s).pointee.drain(output: output, outputFrames: outputFrames)
        }
    }

    /// Zero input frames `drain` may feed (speexdsp's look-ahead at the
    /// qualities used is far below this).
    static var drainInputFrames: Int { @_noLocks get { 256 } }

    /// Converts from `input` (interleaved, `inputFrames`) into `output` (room
    /// for `outputFrames`) at `ratio` (output/input). Returns the input
    /// frames consumed and output frames produced (frames, i.e. samples per
    /// channel, for both backends). Input and output must not overlap.
    ///
    /// libsamplerate: a ratio that differs from the previous call's is
    /// reached smoothly within the call (libsamplerate interpolates it).
    /// speexdsp and polyphase: `ratio` is ignored. Their rate is fixed at
    /// `init` (polyphase: the tables are for one ratio). speexdsp: changing
    /// it (`speex_resampler_set_rate*`) reallocates the filter, which must
    /// never happen on the render thread, and this backend is only chosen
    /// when drift compensation is off, so the renderer always passes the
    /// nominal `self.ratio` anyway.
    @_noLocks
    func process(input: UnsafePointer<Float>, inputFrames: Int,
                 output: UnsafeMutablePointer<Float>, outputFrames: Int, ratio: Double) -> (used: Int, generated: Int) {
        let s = state
        switch backend {
        case .libsamplerate:
            var data = SRC_DATA()
            data.data_in = input
            data.data_out = output
            data.input_frames = inputFrames
            data.output_frames = outputFrames
            data.end_of_input = 0
            data.src_ratio = ratio
            let status: Int32 = _unsafePerformance { src_process(s, &data) }
            if status != 0 { return (0, 0) }
            return (data.input_frames_used, data.output_frames_gen)
        case .speexdsp:
            // Lengths are per-channel frames, in and out: on return they
            // hold the frames consumed and produced. speexdsp consumes input
            // only up to the next output sample's position (the look-ahead
            // stays in its filter memory), so unused input remains in the
            // caller's ring. Its only error (an allocation that failed in
            // `init`, which then returned nil) cannot occur here.
            var inLen = UInt32(clamping: inputFrames)
            var outLen = UInt32(clamping: outputFrames)
            _ = _unsafePerformance {
                speex_resampler_process_interleaved_float(s, input, &inLen, output, &outLen)
            }
            return (Int(inLen), Int(outLen))
        case .polyphase:
            // Fixed ratio too (`ratio` ignored), and the same contract as
            // speexdsp: input consumed only as far as the outputs need.
            return UnsafeMutablePointer<PolyphaseResampler>(s).pointee.process(
                input: input, inputFrames: inputFrames, output: output, outputFrames: outputFrames)
        }
    }
}
