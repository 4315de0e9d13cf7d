import CSampleRateFloor
import CSpeexDSPFloor

/// The floor: the bare resampler call per resampled source from preallocated
/// input, then summation into a stereo float buffer (mono duplicated, stereo
/// added). Same-rate sources are summed directly. No rings, no gains, no
/// limiter, no stats.
///
/// - `.libsamplerate`: `src_process` (SRC_SINC_FASTEST) for every resampled
///   source: the floor the issue specifies.
/// - `.engine`: the C backends the engine picked for each source with its
///   default configuration until 2026-11-26 (speexdsp quality 3 with
///   `skip_zeros` when the reduced ratio out:in has both terms <= 8 — the
///   16 kHz voices here — libsamplerate SRC_SINC_FASTEST otherwise). The
///   engine now uses its own polyphase FIR for both (`PolyphaseResampler`,
///   internal to RTMix, so no bare floor of it here: its own share of an
///   engine case is in `scripts/bench-callgrind --annotate`).
final class FloorCase: RenderCase {
    enum Backends {
        case libsamplerate
        case engine
    }

    /// Mirrors `Resampler.speexQuality` (internal to RTMix).
    static let speexQuality: Int32 = 3

    /// Mirrors the former `Resampler.backend(quality: .sincFastest, ..., driftCompensation: false)`.
    static func engineUsesSpeex(inputRate: Int, outputRate: Int) -> Bool {
        guard inputRate != outputRate else { return false }
        var a = inputRate, b = outputRate
        while b != 0 { (a, b) = (b, a % b) }
        return outputRate / a <= 8 && inputRate / a <= 8
    }

    /// Trivial (no references): iterating costs no retain/release.
    struct Source {
        let state: OpaquePointer?  // SRC_STATE*; nil: speex or same rate
        let speex: OpaquePointer?  // SpeexResamplerState*; nil: libsamplerate or same rate
        let pcm: UnsafeMutablePointer<Float>  // the loop's storage
        let loopFrames: Int
        let channels: Int
        let ratio: Double
        let window: Int  // input frames offered per call (like the engine's ring content)
        let scratch: UnsafeMutablePointer<Float>
    }

    // `let` pointers: the render path does no exclusivity checks or ARC.
    let sources: UnsafeMutableBufferPointer<Source>
    let loops: [SignalLoop]  // owns the PCM
    let positions: UnsafeMutablePointer<Int>
    let shortFrames: UnsafeMutablePointer<Int>
    let output: UnsafeMutableBufferPointer<Float>

    init(_ specs: [SourceSpec], backends: Backends = .libsamplerate) {
        output = .allocate(capacity: callbackFrames * outputChannels)
        output.initialize(repeating: 0)
        positions = .allocate(capacity: specs.count)
        positions.initialize(repeating: 0, count: specs.count)
        shortFrames = .allocate(capacity: 1)
        shortFrames.initialize(to: 0)
        var sources: [Source] = []
        var loops: [SignalLoop] = []
        for (i, spec) in specs.enumerated() {
            // The engine case keeps ~100 ms buffered and hands the whole
            // readable ring to the resampler; offer the same window here
            // (speexdsp, like src_process, consumes only what the requested
            // output needs).
            let window = spec.rate / 10
            let loop = SignalLoop(spec, index: i, tail: window)
            var state: OpaquePointer? = nil
            var speex: OpaquePointer? = nil
            if spec.rate != outputRate {
                if backends == .engine && FloorCase.engineUsesSpeex(inputRate: spec.rate, outputRate: outputRate) {
                    var error: Int32 = 0
                    speex = speex_resampler_init(UInt32(spec.channels), UInt32(spec.rate), UInt32(outputRate),
                                                 FloorCase.speexQuality, &error)
                    precondition(speex != nil && error == 0, "speex_resampler_init failed")
                    _ = speex_resampler_skip_zeros(speex)
                } else {
                    var error: Int32 = 0
                    state = src_new(Int32(SRC_SINC_FASTEST), Int32(spec.channels), &error)
                    precondition(state != nil && error == 0, "src_new failed")
                }
            }
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: callbackFrames * spec.channels)
            scratch.initialize(repeating: 0, count: callbackFrames * spec.channels)
            loops.append(loop)
            sources.append(Source(state: state, speex: speex, pcm: loop.storage.baseAddress!,
                                  loopFrames: loop.loopFrames, channels: spec.channels,
                                  ratio: Double(outputRate) / Double(spec.rate), window: window,
                                  scratch: scratch))
        }
        self.loops = loops
        self.sources = .allocate(capacity: sources.count)
        _ = self.sources.initialize(from: sources)
    }

    deinit {
        for s in sources {
            if let st = s.state { src_delete(st) }
            if let sp = s.speex { speex_resampler_destroy(sp) }
            s.scratch.deallocate()
        }
        output.deallocate()
        positions.deallocate()
        shortFrames.deallocate()
        sources.deallocate()
    }

    func feed() {}  // input is preallocated; positions advance in render()

    func render() {
        let out = output.baseAddress!
        out.update(repeating: 0, count: callbackFrames * outputChannels)
        var short = 0
        do {
            let all = sources
            for k in 0..<all.count {
                let s = all[k]
                let position = positions[k]
                let input: UnsafePointer<Float>
                let frames: Int
                var used: Int
                if let st = s.state {
                    var data = SRC_DATA()
                    data.data_in = UnsafePointer(s.pcm + position * s.channels)
                    data.input_frames = s.window
                    data.data_out = s.scratch
                    data.output_frames = callbackFrames
                    data.end_of_input = 0
                    data.src_ratio = s.ratio
                    let status = src_process(st, &data)
                    precondition(status == 0)
                    used = data.input_frames_used
                    input = UnsafePointer(s.scratch)
                    frames = data.output_frames_gen
                } else if let sp = s.speex {
                    // Lengths in frames (per channel), in and out.
                    var inLen = UInt32(s.window)
                    var outLen = UInt32(callbackFrames)
                    let status = speex_resampler_process_interleaved_float(
                        sp, UnsafePointer(s.pcm + position * s.channels), &inLen, s.scratch, &outLen)
                    precondition(status == 0)
                    used = Int(inLen)
                    input = UnsafePointer(s.scratch)
                    frames = Int(outLen)
                } else {
                    input = UnsafePointer(s.pcm + position * s.channels)
                    frames = callbackFrames
                    used = callbackFrames
                }
                short += callbackFrames - frames
                used += position
                positions[k] = used >= s.loopFrames ? used - s.loopFrames : used
                if s.channels == 1 {
                    for i in 0..<frames {
                        let v = input[i]
                        out[2 * i] += v
                        out[2 * i + 1] += v
                    }
                } else {
                    for i in 0..<(2 * frames) { out[i] += input[i] }
                }
            }
        }
        shortFrames.pointee += short
    }

    func problems() -> String? { shortFrames.pointee == 0 ? nil : "floor produced \(shortFrames.pointee) frames too few" }
}
