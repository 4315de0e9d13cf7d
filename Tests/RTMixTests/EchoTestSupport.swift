import Foundation
@testable import RTMix

/// A small acoustic echo simulation for the capture-path tests: a seeded
/// room impulse response (direct path + exponentially decaying diffuse
/// tail), fast convolution, and a speech-like far-end/near-end signal.
enum EchoSim {
    /// xorshift noise in [-1, 1].
    struct Noise {
        var state: UInt64
        init(seed: UInt64) { state = seed | 1 }
        mutating func next() -> Float {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Float(state % 2_000_001) / 1_000_000 - 1
        }
    }

    /// Direct path after `directDelay` samples (gain `directGain`), then a
    /// diffuse tail decaying 60 dB in `rt60` seconds whose energy is
    /// `directToReverbDb` below the direct path's (a loudspeaker 0.3–0.5 m
    /// from the microphone in a small room: about +3 to +8 dB), `length` taps.
    static func roomImpulseResponse(rate: Int, directDelay: Int, directGain: Float = 0.5,
                                    rt60: Double = 0.35, directToReverbDb: Double = 4,
                                    length: Int, seed: UInt64) -> [Float] {
        var h = [Float](repeating: 0, count: length)
        var noise = Noise(seed: seed)
        let decayPerSample = pow(10, -3 / (rt60 * Double(rate)))  // amplitude: -60 dB over rt60
        // Uniform noise has power 1/3; tail energy = A²/3 / (1 - d²).
        let tailEnergy = Double(directGain * directGain) * pow(10, -directToReverbDb / 10)
        var envelope = (3 * tailEnergy * (1 - decayPerSample * decayPerSample)).squareRoot()
        let start = directDelay + rate / 1000  // first reflections after ~1 ms
        for i in start..<length {
            h[i] = Float(envelope) * noise.next()
            envelope *= decayPerSample
        }
        if directDelay < length { h[directDelay] = directGain }
        return h
    }

    /// Linear convolution, truncated to `x.count` (FFT overlap-add).
    static func convolve(_ x: [Float], _ h: [Float]) -> [Float] {
        var size = 1
        while size < 2 * h.count { size <<= 1 }
        let block = size - h.count + 1
        let fft = FFT(size: size)!
        var hr = [Float](repeating: 0, count: size), hi = [Float](repeating: 0, count: size)
        for i in 0..<h.count { hr[i] = h[i] }
        hr.withUnsafeMutableBufferPointer { r in hi.withUnsafeMutableBufferPointer { fft.forward(r.baseAddress!, $0.baseAddress!) } }
        var y = [Float](repeating: 0, count: x.count + size)
        var start = 0
        var re = [Float](repeating: 0, count: size), im = [Float](repeating: 0, count: size)
        while start < x.count {
            for i in 0..<size { re[i] = 0; im[i] = 0 }
            for i in 0..<min(block, x.count - start) { re[i] = x[start + i] }
            re.withUnsafeMutableBufferPointer { r in im.withUnsafeMutableBufferPointer { i in
                fft.forward(r.baseAddress!, i.baseAddress!)
                for k in 0..<size {
                    let a = r[k], b = i[k]
                    r[k] = a * hr[k] - b * hi[k]
                    i[k] = a * hi[k] + b * hr[k]
                }
                fft.inverse(r.baseAddress!, i.baseAddress!)
            } }
            for i in 0..<size { y[start + i] += re[i] }
            start += block
        }
        return Array(y[0..<x.count])
    }

    /// Speech-like signal: noise through two resonances with a syllable
    /// envelope (4 Hz) and pauses, peak around -6 dBFS.
    static func speech(rate: Int, seconds: Double, seed: UInt64, pitchHz: Float = 140) -> [Float] {
        let n = Int(Double(rate) * seconds)
        var out = [Float](repeating: 0, count: n)
        var noise = Noise(seed: seed)
        var y1: Float = 0, y2: Float = 0, z1: Float = 0, z2: Float = 0
        let fs = Float(rate)
        func coefficients(_ f: Float, _ bw: Float) -> (Float, Float) {
            let r = expf(-Float.pi * bw / fs)
            return (2 * r * cosf(2 * Float.pi * f / fs), -r * r)
        }
        var phase: Float = 0
        for i in 0..<n {
            let t = Float(i) / fs
            let syllable = max(0, sinf(2 * Float.pi * 3.7 * t + Float(seed % 7)))
            let phrase: Float = sinf(2 * Float.pi * 0.23 * t + Float(seed % 5)) > -0.3 ? 1 : 0
            let f1 = 500 + 250 * sinf(2 * Float.pi * 1.3 * t)
            let f2 = 1500 + 600 * sinf(2 * Float.pi * 0.9 * t + 1)
            let (b1, c1) = coefficients(f1, 90)
            let (b2, c2) = coefficients(f2, 120)
            phase += (pitchHz * (1 + 0.1 * sinf(2 * Float.pi * 0.5 * t))) / fs
            var excitation: Float = 0
            if phase >= 1 { phase -= 1; excitation = 1 }
            excitation += 0.05 * noise.next()
            let a = b1 * y1 + c1 * y2 + excitation
            y2 = y1; y1 = a
            let b = b2 * z1 + c2 * z2 + a
            z2 = z1; z1 = b
            out[i] = syllable * phrase * (0.02 * a + 0.01 * b)
        }
        // Normalise to a -6 dBFS peak.
        let peak = out.reduce(0) { max($0, abs($1)) }
        if peak > 0 { for i in 0..<n { out[i] *= 0.5 / peak } }
        return out
    }

    static func power(_ x: ArraySlice<Float>) -> Double {
        x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))
    }
}

/// Drives an engine like a device: render blocks of the playout (pushed
/// into one source, so the render output is the playout itself) and
/// capture blocks of the microphone, each on its own clock. With
/// `micClockPpm == 0` the calls alternate render, capture (a duplex
/// callback); otherwise capture calls come `micClockPpm` faster.
nonisolated(unsafe) var simulatedNs: UInt64 = 0
func simulatedClock(_ context: UnsafeMutableRawPointer?) -> UInt64 { simulatedNs }

struct DeviceRun {
    var block: Int            // capture frames per call
    var playoutRate: Int
    var captureRate: Int
    var micClockPpm: Double = 0
    /// Duplex only: each capture call comes up to this many ms after its
    /// render call (the render's compute time, uniformly random): one
    /// clock, but a callback phase that jitters as a real host's does.
    var duplexJitterMs: Double = 0
    var jitterSeed: UInt64 = 1234

    func run(engine: Engine, source: SourceID, playout: [Float], mic: [Float],
             onCapture: ((Int) -> Void)? = nil) throws -> [Float] {
        let playBlock = block * playoutRate / captureRate
        let captureBlocks = mic.count / block
        let renderBlocks = playout.count / playBlock
        var out = [Float](repeating: 0, count: captureBlocks * block)
        var rendered = [Float](repeating: 0, count: playBlock * engine.config.channels)
        let renderPeriod = 1.0
        let capturePeriod = 1.0 / (1 + micClockPpm * 1e-6)
        let blockNs = Double(block) * 1e9 / Double(captureRate)
        // Both sides read a simulated clock: render r happens at r blocks,
        // capture c at c capture-clock blocks.
        try engine.setClock(simulatedClock)
        var r = 0, c = 0
        var jitter = EchoSim.Noise(seed: jitterSeed)
        while c < captureBlocks {
            // Render first when both are due at once (duplex order).
            if r < renderBlocks && Double(r) * renderPeriod <= Double(c) * capturePeriod {
                simulatedNs = UInt64(Double(r) * renderPeriod * blockNs) + 1_000_000_000
                try playout[(r * playBlock)..<((r + 1) * playBlock)].withUnsafeBufferPointer {
                    _ = try engine.push($0, to: source, channels: 1)
                }
                try rendered.withUnsafeMutableBufferPointer { try engine.render(into: $0, frames: playBlock) }
                r += 1
                continue
            }
            let late = duplexJitterMs * 1e6 * Double(0.5 + 0.5 * jitter.next())
            simulatedNs = UInt64(Double(c) * capturePeriod * blockNs + late) + 1_000_000_000
            try mic[(c * block)..<((c + 1) * block)].withUnsafeBufferPointer { m in
                try out[(c * block)..<((c + 1) * block)].withUnsafeMutableBufferPointer { o in
                    try engine.processCapture(mic: UnsafeBufferPointer(rebasing: m[...]),
                                              out: UnsafeMutableBufferPointer(rebasing: o[...]), frames: block)
                }
            }
            onCapture?(c)
            c += 1
        }
        return out
    }
}

/// The old name of the lockstep runner used by the first tests.
typealias LockstepRun = DeviceRun

extension EchoSim {
    /// Reads a 16-bit mono WAV and converts it to `rate` (diagnostics).
    static func loadWav(_ path: String, rate: Int) -> [Float]? {
        guard let data = FileManager.default.contents(atPath: path), data.count > 44 else { return nil }
        let bytes = [UInt8](data)
        let fileRate = Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16
        var i = 12
        var samples: [Float] = []
        while i + 8 <= bytes.count {
            let id = String(bytes: bytes[i..<i + 4], encoding: .ascii) ?? ""
            let size = Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]) << 16 | Int(bytes[i + 7]) << 24
            if id == "data" {
                let end = min(bytes.count, i + 8 + size)
                var j = i + 8
                while j + 1 < end {
                    samples.append(Float(Int16(bitPattern: UInt16(bytes[j]) | UInt16(bytes[j + 1]) << 8)) / 32768)
                    j += 2
                }
                break
            }
            i += 8 + size
        }
        if fileRate == rate { return samples }
        guard let r = Resampler(quality: .sincBest, channels: 1, inputRate: fileRate, outputRate: rate,
                                driftCompensation: false) else { return nil }
        var out = [Float](repeating: 0, count: samples.count * rate / fileRate + 1024)
        let res = samples.withUnsafeBufferPointer { inp in out.withUnsafeMutableBufferPointer { o in
            r.process(input: inp.baseAddress!, inputFrames: inp.count, output: o.baseAddress!, outputFrames: o.count,
                      ratio: Double(rate) / Double(fileRate)) } }
        return Array(out[0..<res.generated])
    }
}

extension EchoSim {
    /// `x` played on a clock `ppm` slower than the microphone's: the
    /// microphone records 1 + ppm·1e-6 samples per playout sample.
    static func resampled(_ x: [Float], ppm: Double) -> [Float] {
        let ratio = 1 + ppm * 1e-6
        guard let r = Resampler(quality: .sincBest, channels: 1, inputRate: 48_000, outputRate: 48_000,
                                driftCompensation: true) else { return x }
        var out = [Float](repeating: 0, count: Int(Double(x.count) * ratio) + 4096)
        var used = 0, made = 0
        x.withUnsafeBufferPointer { inp in out.withUnsafeMutableBufferPointer { o in
            while used < inp.count && made < o.count {
                let res = r.process(input: inp.baseAddress! + used, inputFrames: min(4096, inp.count - used),
                                    output: o.baseAddress! + made, outputFrames: min(8192, o.count - made),
                                    ratio: ratio)
                if res.used == 0 && res.generated == 0 { break }
                used += res.used
                made += res.generated
            }
        } }
        return Array(out[0..<made])
    }

    /// `x` (at `rate`) whose echo path lengthens at `ppm` between `from`
    /// and `to` seconds and stands still before and after: a creeping
    /// device delay (PulseAudio's loopback after a resume did this at
    /// about 500 ppm for 7–14 s), not a clock that stays off.
    static func crept(_ x: [Float], rate: Int, from: Double, to: Double, ppm: Double) -> [Float] {
        guard let r = Resampler(quality: .sincBest, channels: 1, inputRate: 48_000, outputRate: 48_000,
                                driftCompensation: true) else { return x }
        var out = [Float](repeating: 0, count: Int(Double(x.count) * (1 + abs(ppm) * 1e-6)) + 8192)
        var used = 0, made = 0
        let block = rate / 100
        x.withUnsafeBufferPointer { inp in out.withUnsafeMutableBufferPointer { o in
            while used < inp.count && made < o.count {
                let t = Double(used) / Double(rate)
                let ratio = t >= from && t < to ? 1 + ppm * 1e-6 : 1
                let res = r.process(input: inp.baseAddress! + used, inputFrames: min(block, inp.count - used),
                                    output: o.baseAddress! + made, outputFrames: min(2 * block, o.count - made),
                                    ratio: ratio)
                if res.used == 0 && res.generated == 0 { break }
                used += res.used
                made += res.generated
            }
        } }
        return Array(out[0..<made])
    }

    /// ERLE in dB over [from, to) seconds: microphone power / output power.
    static func erle(mic: [Float], out: [Float], rate: Int, from: Double, to: Double) -> Double {
        let a = Int(from * Double(rate)), b = min(out.count, mic.count, Int(to * Double(rate)))
        return 10 * log10(power(mic[a..<b]) / max(1e-20, power(out[a..<b])))
    }

    /// Median of per-second ERLE over [from, to), counting only seconds in
    /// which the far end is active (microphone above -50 dBFS).
    static func medianErle(mic: [Float], out: [Float], rate: Int, from: Int, to: Int) -> Double {
        var values: [Double] = []
        for s in from..<to {
            let a = s * rate, b = min(out.count, mic.count, a + rate)
            guard b > a, power(mic[a..<b]) > 1e-5 else { continue }
            values.append(10 * log10(power(mic[a..<b]) / max(1e-20, power(out[a..<b]))))
        }
        values.sort()
        return values.isEmpty ? 0 : values[values.count / 2]
    }
}

extension EchoSim {
    /// How well `out` preserves the near-end talker `near` (both at the
    /// same rate, `out` possibly delayed by up to `maxLag`): the lag that
    /// best aligns them, then the segmental SNR (20 ms segments where the
    /// talker is active, each clamped to [-10, 35] dB) of `out` against
    /// the best-scaled `near`.
    static func nearEndQuality(out: [Float], near: [Float], rate: Int, from: Int, to: Int,
                               maxLag: Int) -> (lag: Int, segmentalSnr: Double) {
        var bestLag = 0, best = -Double.infinity
        for lag in stride(from: 0, through: maxLag, by: 1) {
            var dot = 0.0
            var i = from
            while i < to - maxLag { dot += Double(out[i + lag]) * Double(near[i]); i += 4 }
            if dot > best { best = dot; bestLag = lag }
        }
        var num = 0.0, den = 0.0
        for i in from..<(to - maxLag) {
            num += Double(out[i + bestLag]) * Double(near[i]); den += Double(near[i]) * Double(near[i])
        }
        let g = den > 0 ? num / den : 1
        let seg = rate / 50
        var sum = 0.0, count = 0
        var i = from
        while i + seg <= to - maxLag {
            var ps = 0.0, pe = 0.0
            for j in i..<(i + seg) {
                let s = g * Double(near[j])
                ps += s * s
                let e = Double(out[j + bestLag]) - s
                pe += e * e
            }
            if ps / Double(seg) > 1e-5 {
                sum += min(35, max(-10, 10 * log10(ps / max(pe, 1e-20))))
                count += 1
            }
            i += seg
        }
        return (bestLag, count > 0 ? sum / Double(count) : 0)
    }
}

extension EchoSim {
    /// Music-like signal: a chord progression of decaying harmonic notes
    /// plus a bass line, peak around -6 dBFS.
    static func music(rate: Int, seconds: Double, seed: UInt64) -> [Float] {
        let n = Int(Double(rate) * seconds)
        var out = [Float](repeating: 0, count: n)
        let chords: [[Double]] = [[261.6, 329.6, 392.0], [246.9, 293.7, 392.0], [220.0, 261.6, 329.6],
                                  [174.6, 220.0, 261.6]]
        var noise = Noise(seed: seed)
        let noteLength = rate / 4
        for start in stride(from: 0, to: n, by: noteLength) {
            let chord = chords[(start / (noteLength * 8)) % chords.count]
            let f = chord[Int(noise.next() * 1.49 + 1.5) % chord.count] * (noise.next() > 0.5 ? 2 : 1)
            let bass = chord[0] / 2
            for i in 0..<min(noteLength * 2, n - start) {
                let t = Double(i) / Double(rate)
                let env = exp(-t * 6)
                var v = 0.0
                for h in 1...5 { v += sin(2 * Double.pi * f * Double(h) * t) / Double(h * h) }
                v = 0.25 * env * v + 0.12 * exp(-t * 3) * sin(2 * Double.pi * bass * t)
                out[start + i] += Float(v)
            }
        }
        let peak = out.reduce(0) { max($0, abs($1)) }
        if peak > 0 { for i in 0..<n { out[i] *= 0.5 / peak } }
        return out
    }
}

/// Runs `body` with a capture link for `config` on an engine clock of its
/// own (capture stages tested without an engine).
func withCaptureLink(_ config: EngineConfig, _ body: (borrowing CaptureLink) -> Void) {
    let clock = UnsafeMutablePointer<EngineClock>.allocate(capacity: 1)
    clock.initialize(to: EngineClock())
    defer { clock.deallocate() }
    do {
        let link = CaptureLink(config: config, clock: clock)!
        body(link)
    }
}
