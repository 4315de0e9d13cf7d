import CSampleRate
import Glibc

/// Synthetic room impulse responses (loudspeaker → microphone) for echo
/// canceller tests: a fractional-delay direct path with 1/r gain, a few
/// early reflections, and an exponentially decaying noise tail with a given
/// RT60. Deterministic for a seed.
public enum RoomImpulseResponse {
    public static let speedOfSound = 343.0

    /// Propagation delay of the direct path in samples.
    public static func directPathDelay(distance: Double, sampleRate: Int) -> Double {
        distance / speedOfSound * Double(sampleRate)
    }

    /// - distance: loudspeaker-to-microphone distance in metres (direct path).
    /// - rt60: reverberation time in seconds (energy decay of 60 dB).
    /// - directToReverberantDb: direct-path energy over the energy of the
    ///   reflections and tail.
    /// - referenceDistance: distance at which the direct path has gain 1.
    /// The response lasts until the tail is 60 dB down.
    public static func generate(sampleRate: Int, distance: Double = 0.4, rt60: Double = 0.4,
                                directToReverberantDb: Double = 4, referenceDistance: Double = 0.1,
                                seed: UInt64 = 1) -> [Float] {
        precondition(distance > 0 && rt60 > 0 && sampleRate > 0)
        let fs = Double(sampleRate)
        var rng = SplitMix64(seed: seed ^ 0x5200_4D49_52)
        let direct = directPathDelay(distance: distance, sampleRate: sampleRate)
        let tailStart = direct + 0.004 * fs
        let length = Int(tailStart + rt60 * fs) + 32
        var h = [Double](repeating: 0, count: length)
        let directGain = referenceDistance / distance
        addImpulse(&h, at: direct, gain: directGain)

        // Reverberant part (reflections + tail), scaled afterwards to the DRR.
        var reverb = [Double](repeating: 0, count: length)
        let decayPerSecond = log(1000.0) / rt60          // amplitude: 60 dB in rt60
        let reflections = 8
        for _ in 0..<reflections {
            let extra = Double(rng.uniform(0.6, 7))            // extra path length, metres
            let t = direct + extra / speedOfSound * fs
            let r = distance + extra
            let sign: Double = rng.unit() < 0.5 ? -1 : 1
            let coefficient = Double(rng.uniform(0.5, 0.85))
            addImpulse(&reverb, at: t, gain: sign * coefficient * referenceDistance / r
                       * exp(-decayPerSecond * (t - direct) / fs))
        }
        let reflectionEnergy = reverb.reduce(0) { $0 + $1 * $1 }
        var tail = [Double](repeating: 0, count: length)
        let start = Int(tailStart.rounded(.up))
        for i in start..<length {
            let t = Double(i) - direct
            let onset = min(1, Double(i - start) / (0.002 * fs))   // 2 ms fade-in
            tail[i] = gaussian(&rng) * exp(-decayPerSecond * t / fs) * onset
        }
        // Tail carries the bulk of the reverberant energy (about 4:1 over the reflections).
        let tailEnergy = tail.reduce(0) { $0 + $1 * $1 }
        let wantedReverb = directGain * directGain * pow(10, -directToReverberantDb / 10)
        let tailScale = sqrt(max(0, wantedReverb * 0.8) / max(tailEnergy, 1e-30))
        let reflectionScale = sqrt(wantedReverb * 0.2 / max(reflectionEnergy, 1e-30))
        for i in 0..<length { h[i] += reverb[i] * reflectionScale + tail[i] * tailScale }
        return h.map { Float($0) }
    }

    /// Reverberation time from Schroeder backward integration: a least-squares
    /// line through the energy decay curve between -5 and -25 dB (T20 × 3).
    public static func measureRT60(_ h: [Float], sampleRate: Int) -> Double {
        var edc = [Double](repeating: 0, count: h.count)
        var acc = 0.0
        for i in stride(from: h.count - 1, through: 0, by: -1) {
            acc += Double(h[i]) * Double(h[i])
            edc[i] = acc
        }
        let total = max(acc, 1e-30)
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, n = 0.0
        for i in 0..<h.count {
            let db = 10 * log10(max(edc[i], 1e-300) / total)
            guard db <= -5 && db >= -25 else { continue }
            let t = Double(i) / Double(sampleRate)
            sx += t; sy += db; sxx += t * t; sxy += t * db; n += 1
        }
        guard n > 2 else { return 0 }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)     // dB per second (negative)
        return -60 / slope
    }

    /// Adds a fractionally delayed impulse (Hann-windowed sinc, ±16 taps).
    static func addImpulse(_ h: inout [Double], at t: Double, gain: Double) {
        let centre = Int(t.rounded(.down))
        let frac = t - Double(centre)
        let halfWidth = 16
        for k in -halfWidth...(halfWidth + 1) {
            let i = centre + k
            guard i >= 0 && i < h.count else { continue }
            let x = Double(k) - frac
            let sinc = abs(x) < 1e-12 ? 1 : sin(Double.pi * x) / (Double.pi * x)
            let w = abs(x) >= Double(halfWidth + 1) ? 0 : 0.5 * (1 + cos(Double.pi * x / Double(halfWidth + 1)))
            h[i] += gain * sinc * w
        }
    }

    static func gaussian(_ rng: inout SplitMix64) -> Double {
        let u1 = max(Double(rng.next() >> 11) * 0x1p-53, 1e-300)
        let u2 = Double(rng.next() >> 11) * 0x1p-53
        return sqrt(-2 * log(u1)) * cos(2 * Double.pi * u2)
    }
}

/// Offline resampling with libsamplerate's best sinc converter (output
/// time-aligned with the input: no filter delay).
public enum SincResampler {
    /// `ratio` = output samples per input sample.
    public static func resample(_ x: [Float], ratio: Double) -> [Float] {
        guard ratio != 1, !x.isEmpty else { return x }
        let outCount = Int((Double(x.count) * ratio).rounded()) + 64
        var out = [Float](repeating: 0, count: outCount)
        var generated = 0
        let rc: Int32 = x.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                var data = SRC_DATA()
                data.data_in = input.baseAddress
                data.data_out = output.baseAddress
                data.input_frames = input.count
                data.output_frames = output.count
                data.src_ratio = ratio
                data.end_of_input = 1
                let rc = src_simple(&data, Int32(SRC_SINC_BEST_QUALITY), 1)
                generated = data.output_frames_gen
                return rc
            }
        }
        precondition(rc == 0, "libsamplerate: \(String(cString: src_strerror(rc)))")
        return Array(out[0..<generated])
    }
}

/// Clock drift: resamples a signal by `1 + ppm·1e-6` (output samples per
/// input sample) with libsamplerate's best sinc converter. A positive `ppm`
/// models a microphone clock running fast relative to the playout clock.
public enum ClockDrift {
    public static func resample(_ x: [Float], ppm: Double) -> [Float] {
        guard ppm != 0 else { return x }
        return SincResampler.resample(x, ratio: 1 + ppm * 1e-6)
    }
}

/// A simulated acoustic echo path for canceller tests: the far-end (playout)
/// signal through a room impulse response, then clock drift, then a bulk
/// device delay (optionally jumping once), plus low noise and an optional
/// near-end talker. All signals mono at one sample rate.
///
/// Delay convention: a playout sample x[n] reaches the microphone at
/// n + bulkDelay + directPath (+ jump after the jump point).
public struct EchoPath: Sendable {
    public struct Options: Sendable {
        public var sampleRate: Int
        public var distance = 0.4                 // metres, loudspeaker to mic
        public var rt60 = 0.4                     // seconds
        public var directToReverberantDb = 4.0
        public var referenceDistance = 0.1        // metres: direct gain = referenceDistance / distance
        public var seed: UInt64 = 1
        public var bulkDelay = 0                  // samples (device / driver delay)
        public var driftPpm = 0.0                 // mic clock relative to the playout clock
        public var jumpAt: Int? = nil             // mic sample at which the bulk delay changes
        public var jumpBy = 0                     // samples added to the bulk delay there
        public var noiseSnrDb: Double? = nil      // echo RMS over noise RMS; nil = no noise
        public init(sampleRate: Int) { self.sampleRate = sampleRate }
    }

    /// The microphone signal and its parts (each `count` samples).
    public struct Microphone: Sendable {
        public var mic: [Float]
        public var echo: [Float]
        public var nearEnd: [Float]
        public var noise: [Float]
    }

    public let options: Options
    public let impulseResponse: [Float]

    public init(_ options: Options) {
        precondition(options.bulkDelay >= 0 && options.bulkDelay + min(0, options.jumpBy) >= 0,
                     "EchoPath: the bulk delay cannot become negative")
        self.options = options
        impulseResponse = RoomImpulseResponse.generate(
            sampleRate: options.sampleRate, distance: options.distance, rt60: options.rt60,
            directToReverberantDb: options.directToReverberantDb,
            referenceDistance: options.referenceDistance, seed: options.seed)
    }

    /// Direct-path propagation delay in samples.
    public var directPathSamples: Double {
        RoomImpulseResponse.directPathDelay(distance: options.distance, sampleRate: options.sampleRate)
    }

    /// Total echo delay (bulk + direct path) in samples before any jump.
    public var echoDelaySamples: Double { Double(options.bulkDelay) + directPathSamples }

    /// The echo of `farEnd` as the microphone records it: `farEnd.count` samples.
    public func echo(of farEnd: [Float]) -> [Float] {
        let n = farEnd.count
        var room = fftConvolve(farEnd, impulseResponse, outputCount: n)
        if options.driftPpm != 0 { room = ClockDrift.resample(room, ppm: options.driftPpm) }
        var out = [Float](repeating: 0, count: n)
        for i in 0..<n {
            var delay = options.bulkDelay
            if let at = options.jumpAt, i >= at { delay += options.jumpBy }
            let j = i - delay
            if j >= 0 && j < room.count { out[i] = room[j] }
        }
        return out
    }

    /// Microphone = echo + near-end talker + noise (noise scaled to
    /// `noiseSnrDb` below the echo's RMS).
    public func microphone(farEnd: [Float], nearEnd: [Float]? = nil) -> Microphone {
        let n = farEnd.count
        let e = echo(of: farEnd)
        var near = [Float](repeating: 0, count: n)
        if let nearEnd { for i in 0..<min(n, nearEnd.count) { near[i] = nearEnd[i] } }
        var noise = [Float](repeating: 0, count: n)
        if let snr = options.noiseSnrDb {
            let echoRms = sqrt(e.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, n)))
            let level = echoRms * pow(10, -snr / 20)
            var rng = SplitMix64(seed: options.seed ^ 0x4E01_5E)
            for i in 0..<n { noise[i] = Float(RoomImpulseResponse.gaussian(&rng) * level) }
        }
        var mic = [Float](repeating: 0, count: n)
        for i in 0..<n { mic[i] = e[i] + near[i] + noise[i] }
        return Microphone(mic: mic, echo: e, nearEnd: near, noise: noise)
    }

    /// A near-end talker distinguishable from the default far-end voice
    /// (lower pitch, longer vocal tract), `count` samples.
    public static func nearEndTalker(sampleRate: Int, count: Int, seed: UInt64 = 77, gain: Float = 1) -> [Float] {
        var synth = SpeechSynth(sampleRate: sampleRate, seed: seed, pitchScale: 0.62, formantScale: 0.92)
        var out = [Float](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, count: count) }
        if gain != 1 { for i in 0..<count { out[i] *= gain } }
        return out
    }

    /// The default far-end voice, `count` samples.
    public static func farEndTalker(sampleRate: Int, count: Int, seed: UInt64 = 1) -> [Float] {
        var synth = SpeechSynth(sampleRate: sampleRate, seed: seed)
        var out = [Float](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, count: count) }
        return out
    }
}
