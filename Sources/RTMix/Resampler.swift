import CSampleRate

/// Sample-rate conversion for one source: a thin fence around libsamplerate.
/// This is the only file that calls libsamplerate.
///
/// `init` allocates (`src_new`); `process` does not (libsamplerate never
/// allocates in `src_process`), so it is safe on the render thread.
@usableFromInline
struct Resampler: ~Copyable {
    @usableFromInline let state: OpaquePointer
    /// Nominal output/input rate ratio.
    @usableFromInline let ratio: Double
    @usableFromInline let channels: Int

    /// Returns nil when libsamplerate cannot allocate its state.
    init?(quality: ResamplerQuality, channels: Int, inputRate: Int, outputRate: Int) {
        let converter: Int32
        switch quality {
        case .sincFastest: converter = Int32(SRC_SINC_FASTEST)
        case .sincMedium: converter = Int32(SRC_SINC_MEDIUM_QUALITY)
        case .sincBest: converter = Int32(SRC_SINC_BEST_QUALITY)
        case .linear: converter = Int32(SRC_LINEAR)
        }
        var error: Int32 = 0
        guard let s = src_new(converter, Int32(channels), &error), error == 0 else { return nil }
        state = s
        ratio = Double(outputRate) / Double(inputRate)
        self.channels = channels
    }

    deinit { _ = src_delete(state) }

    /// Converts from `input` (interleaved, `inputFrames`) into `output` (room
    /// for `outputFrames`) at `ratio` (output/input). Returns the input
    /// frames consumed and output frames produced. Input and output must not
    /// overlap. A ratio that differs from the previous call's is reached
    /// smoothly within the call (libsamplerate interpolates it).
    @_noLocks
    func process(input: UnsafePointer<Float>, inputFrames: Int,
                 output: UnsafeMutablePointer<Float>, outputFrames: Int, ratio: Double) -> (used: Int, generated: Int) {
        var data = SRC_DATA()
        data.data_in = input
        data.data_out = output
        data.input_frames = inputFrames
        data.output_frames = outputFrames
        data.end_of_input = 0
        data.src_ratio = ratio
        let s = state
        let status: Int32 = _unsafePerformance { src_process(s, &data) }
        if status != 0 { return (0, 0) }
        return (data.input_frames_used, data.output_frames_gen)
    }
}
