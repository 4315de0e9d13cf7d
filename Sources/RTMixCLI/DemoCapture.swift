import Glibc
import RTMix
import RTMixSignals
import Synchronization

/// Settings of the demo's capture side (see `Demo`'s options).
struct DemoCaptureOptions {
    var captureRate = 16_000
    var echoDelayMs = 60.0
    var delayHintMs: Int?
    var publishGain: Float = 0.5
    var rt60 = 0.35
    var irMs = 250.0
    var distance = 0.4
    var noiseDbfs = -65.0
    var nearGain: Float = 0.3
    /// The near-end talker speaks in [nearFrom, nearTo) × the run's length.
    var nearFrom = 0.4, nearTo = 0.7
    /// Seconds excluded from the demo's ERLE at the start (delay search,
    /// convergence) and after the near end stops talking (re-convergence).
    var settleSeconds = 2.0
    var afterTalkSeconds = 0.5
}

/// The simulated microphone of the demo's duplex callback. Called on the
/// render thread right after each render: everything is allocated at init,
/// the callback path only reads and writes preallocated memory.
///
/// mic = room(delay(decimate(mono(playout)))) + near-end talker + noise, at
/// the capture rate:
/// - mono: (L + R) / 2 of the rendered 48 kHz block;
/// - decimate: a linear-phase windowed-sinc low-pass (Blackman) evaluated
///   at every `factor`-th input sample; its group delay is a whole number
///   of capture samples (`groupDelay`) and is taken off the device delay;
/// - delay + room: one direct FIR over a linear history buffer (`irRev` is
///   the room response reversed; the device delay is the offset into the
///   history), SIMD dot products;
/// - the talker is a second SpeechSynth voice (lower pitch, longer vocal
///   tract than the far end), gated on in one part of the run.
final class DemoMic: @unchecked Sendable {
    /// Output frames per callback (10 ms at 48 kHz; a stored constant: a
    /// static would be lazily initialized, which @_noLocks rejects).
    let outputFrames = 480

    let rate: Int, factor: Int, block: Int
    let groupDelay: Int
    let deviceDelaySamples: Int
    let directPathMs: Double
    let irLength: Int
    let measuredRT60: Double
    let nearStart: Int, nearEnd: Int     // capture samples
    let noiseAmp: Float, nearGain: Float

    private let decTaps: Int
    private let decCoeffs: UnsafeMutablePointer<Float>
    private let decHist: UnsafeMutablePointer<Float>     // decTaps − 1 + 480 mono samples at 48 kHz
    private let decimated: UnsafeMutablePointer<Float>
    private let irRev: UnsafeMutablePointer<Float>
    private let xHist: UnsafeMutablePointer<Float>       // bulk + L − 1 + block samples at the capture rate
    private let xCount: Int
    private let talker: UnsafeMutablePointer<SpeechSynth>
    private let rng: UnsafeMutablePointer<SplitMix64>
    private var gate: Float = 0
    private let gateStep: Float
    private(set) var samples = 0

    /// True echo delay in ms under the engine's convention (device delay
    /// plus the room's direct path).
    var trueDelayMs: Double { Double(deviceDelaySamples) * 1000 / Double(rate) + directPathMs }

    init(options o: DemoCaptureOptions, totalSeconds: Double, seed: UInt64) {
        rate = o.captureRate
        precondition(outputFrames == DemoShared.blockFrames)
        factor = DemoShared.outputRate / rate
        block = rate / 100
        // Decimator: N = 2·G·factor + 1 taps, group delay G capture samples.
        groupDelay = factor == 1 ? 0 : 16
        decTaps = 2 * groupDelay * factor + 1
        decCoeffs = .allocate(capacity: decTaps)
        let fc = 0.42 * Double(rate) / Double(DemoShared.outputRate)   // cycles per input sample
        var sum = 0.0
        var coeffs = [Double](repeating: 0, count: decTaps)
        for i in 0..<decTaps {
            let x = Double(i - (decTaps - 1) / 2)
            let sinc = x == 0 ? 2 * fc : sin(2 * Double.pi * fc * x) / (Double.pi * x)
            let w = decTaps == 1 ? 1 : 0.42 - 0.5 * cos(2 * Double.pi * Double(i) / Double(decTaps - 1))
                + 0.08 * cos(4 * Double.pi * Double(i) / Double(decTaps - 1))
            coeffs[i] = sinc * w
            sum += coeffs[i]
        }
        for i in 0..<decTaps { decCoeffs[i] = Float(coeffs[i] / sum) }
        decHist = .allocate(capacity: decTaps - 1 + outputFrames)
        decHist.initialize(repeating: 0, count: decTaps - 1 + outputFrames)
        decimated = .allocate(capacity: block)
        decimated.initialize(repeating: 0, count: block)

        // Room: RT60 ~0.35 s, truncated to irMs with a 10 ms half-cosine fade.
        let full = RoomImpulseResponse.generate(sampleRate: rate, distance: o.distance, rt60: o.rt60,
                                                seed: seed)
        measuredRT60 = RoomImpulseResponse.measureRT60(full, sampleRate: rate)
        directPathMs = RoomImpulseResponse.directPathDelay(distance: o.distance, sampleRate: rate) * 1000 / Double(rate)
        irLength = min(full.count, Int(o.irMs * Double(rate) / 1000))
        let fade = rate / 100
        irRev = .allocate(capacity: irLength)
        for k in 0..<irLength {
            var v = full[k]
            let fromEnd = irLength - 1 - k
            if fromEnd < fade { v *= Float(0.5 - 0.5 * cos(Double.pi * Double(fromEnd) / Double(fade))) }
            irRev[irLength - 1 - k] = v
        }
        deviceDelaySamples = Int((o.echoDelayMs * Double(rate) / 1000).rounded())
        let bulk = deviceDelaySamples - groupDelay          // validated ≥ 0
        xCount = bulk + irLength - 1 + block
        xHist = .allocate(capacity: xCount)
        xHist.initialize(repeating: 0, count: xCount)

        talker = .allocate(capacity: 1)
        talker.initialize(to: SpeechSynth(sampleRate: rate, seed: seed &+ 76, pitchScale: 0.62, formantScale: 0.92))
        _ = talker.pointee.nextSample()          // first use outside the callback (static tables)
        rng = .allocate(capacity: 1)
        rng.initialize(to: SplitMix64(seed: seed ^ 0x0A1C_0DE))
        nearStart = Int(totalSeconds * o.nearFrom * Double(rate))
        nearEnd = Int(totalSeconds * o.nearTo * Double(rate))
        noiseAmp = Float(pow(10, o.noiseDbfs / 20) * 3.0.squareRoot())   // uniform ±a has RMS a/√3
        nearGain = o.nearGain
        gateStep = 1 / Float(rate / 50)                                   // 20 ms ramps
    }

    deinit {
        decCoeffs.deallocate()
        decHist.deallocate()
        decimated.deallocate()
        irRev.deallocate()
        xHist.deallocate()
        talker.deinitialize(count: 1); talker.deallocate()
        rng.deinitialize(count: 1); rng.deallocate()
    }

    /// Whether the near end talks (before the 20 ms gate ramp) at capture sample `s`.
    func nearActive(at s: Int) -> Bool { s >= nearStart && s < nearEnd }

    /// Render thread: `rendered` is one 10 ms block at 48 kHz stereo;
    /// writes `block` microphone samples. No allocation, locks or I/O.
    @_noLocks @_optimize(speed)
    func simulate(rendered: UnsafePointer<Float>, into mic: UnsafeMutablePointer<Float>) {
        let n48 = outputFrames
        // 1. mono + decimation.
        let keep = decTaps - 1
        for i in 0..<keep { decHist[i] = decHist[i + n48] }        // forward copy: overlap is safe
        for i in 0..<n48 { decHist[keep + i] = 0.5 * (rendered[2 * i] + rendered[2 * i + 1]) }
        for m in 0..<block { decimated[m] = dot(decHist + m * factor, decCoeffs, decTaps) }
        // 2. device delay + room.
        for i in 0..<(xCount - block) { xHist[i] = xHist[i + block] }
        for i in 0..<block { xHist[xCount - block + i] = decimated[i] }
        let ns = nearStart, ne = nearEnd, tp = talker, rp = rng
        for j in 0..<block {
            let echo = dot(xHist + j, irRev, irLength)
            // 3. near-end talker (gated) and noise.
            let s = samples + j
            let target: Float = s >= ns ? (s < ne ? 1 : 0) : 0
            if gate < target { gate = min(target, gate + gateStep) } else if gate > target { gate = max(target, gate - gateStep) }
            // SpeechSynth and SplitMix64 (RTMixSignals, not inlinable here)
            // do no allocation after init: arithmetic and a static table
            // already initialized in `init`.
            let (voice, noise): (Float, Float) = _unsafePerformance { (tp.pointee.nextSample(), rp.pointee.uniform(-1, 1)) }
            mic[j] = echo + voice * gate * nearGain + noiseAmp * noise
        }
        samples += block
    }
}

/// Σ a[i]·b[i] with eight independent accumulators (which the optimizer
/// turns into vector code); optimized even in debug builds (cli-smoke runs
/// the debug demo).
@_optimize(speed)
func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ n: Int) -> Float {
    var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
    var s4: Float = 0, s5: Float = 0, s6: Float = 0, s7: Float = 0
    var i = 0
    while i + 8 <= n {
        s0 += a[i] * b[i]; s1 += a[i + 1] * b[i + 1]; s2 += a[i + 2] * b[i + 2]; s3 += a[i + 3] * b[i + 3]
        s4 += a[i + 4] * b[i + 4]; s5 += a[i + 5] * b[i + 5]; s6 += a[i + 6] * b[i + 6]; s7 += a[i + 7] * b[i + 7]
        i += 8
    }
    var s = ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
    while i < n { s += a[i] * b[i]; i += 1 }
    return s
}

/// The capture side of the demo's shared state: the simulated microphone,
/// ring slots for the mic and publish blocks (same indices as the render
/// ring: one slot holds one callback's render, mic and publish blocks), and
/// the callback's measurements.
final class DemoCapture: @unchecked Sendable {
    let options: DemoCaptureOptions
    let mic: DemoMic
    let block: Int
    let micRing: UnsafeMutablePointer<Float>
    let pubRing: UnsafeMutablePointer<Float>
    /// The callback number each slot holds.
    let slotBlock: UnsafeMutablePointer<Int>
    let micScratch: UnsafeMutablePointer<Float>
    let pubScratch: UnsafeMutablePointer<Float>
    /// processCapture durations (render thread only; read after join).
    let timing = MicrosHistogram(maxMicros: 20_000)
    let errors = Atomic<Int>(0)

    init(options: DemoCaptureOptions, totalSeconds: Double, seed: UInt64) {
        self.options = options
        mic = DemoMic(options: options, totalSeconds: totalSeconds, seed: seed)
        block = mic.block
        let n = DemoShared.ringBlocks * block
        micRing = .allocate(capacity: n); micRing.initialize(repeating: 0, count: n)
        pubRing = .allocate(capacity: n); pubRing.initialize(repeating: 0, count: n)
        slotBlock = .allocate(capacity: DemoShared.ringBlocks)
        slotBlock.initialize(repeating: 0, count: DemoShared.ringBlocks)
        micScratch = .allocate(capacity: block); micScratch.initialize(repeating: 0, count: block)
        pubScratch = .allocate(capacity: block); pubScratch.initialize(repeating: 0, count: block)
    }

    deinit {
        micRing.deallocate(); pubRing.deallocate(); slotBlock.deallocate()
        micScratch.deallocate(); pubScratch.deallocate()
    }

    /// Render thread, right after render (the duplex callback): simulates
    /// the microphone from the block just rendered and processes it.
    /// `slot` is nil when the writer ring is full (the blocks are dropped).
    /// Not annotated @_noLocks only because of the retain/release of the
    /// class references (`mic`, `timing`); `simulate` and processCapture are.
    func duplex(engine: Engine, rendered: UnsafePointer<Float>, slot: Int?, callback n: Int) {
        var micDst = micScratch, pubDst = pubScratch
        if let s = slot {
            micDst = micRing + s * block
            pubDst = pubRing + s * block
            slotBlock[s] = n
        }
        mic.simulate(rendered: rendered, into: micDst)
        let t0 = monotonicNs()
        do {
            try engine.processCapture(mic: UnsafeBufferPointer(start: micDst, count: block),
                                      out: UnsafeMutableBufferPointer(start: pubDst, count: block), frames: block)
        } catch {
            errors.add(1, ordering: .relaxed)
        }
        timing.record(ns: monotonicNs() &- t0)
    }
}

/// The writer thread's side of capture: mic.wav, publish.wav and the
/// demo's own ERLE.
///
/// ERLE (demo) = mic power / published power over the 10 ms blocks in which
/// the near end is silent by construction (before the talker's part, after
/// `settleSeconds`; and from `afterTalkSeconds` after it), the microphone
/// is above -60 dBFS, and the media publish gain is 0 (otherwise the
/// published media would count as residual echo: it is not measured).
final class DemoCaptureWriter: @unchecked Sendable {
    let micFile: SoundFile, pubFile: SoundFile
    let capture: DemoCapture
    var micBefore = 0.0, outBefore = 0.0, blocksBefore = 0
    var micAfter = 0.0, outAfter = 0.0, blocksAfter = 0
    var micLevel = LevelMeter(), pubLevel = LevelMeter()
    var nearMicPower = 0.0, nearBlocks = 0

    init(micFile: SoundFile, pubFile: SoundFile, capture: DemoCapture) {
        self.micFile = micFile
        self.pubFile = pubFile
        self.capture = capture
    }

    var measuring: Bool { capture.options.publishGain == 0 }

    func write(slot: Int) throws(CLIError) {
        let b = capture.block
        let micBlock = capture.micRing + slot * b, pubBlock = capture.pubRing + slot * b
        try micFile.write(micBlock, frames: b)
        try pubFile.write(pubBlock, frames: b)
        micLevel.add(micBlock, count: b)
        pubLevel.add(pubBlock, count: b)

        let n = capture.slotBlock[slot]
        let m = capture.mic
        let start = n * b, end = start + b
        var pm = 0.0, po = 0.0
        for i in 0..<b {
            pm += Double(micBlock[i]) * Double(micBlock[i])
            po += Double(pubBlock[i]) * Double(pubBlock[i])
        }
        if end > m.nearStart && start < m.nearEnd { nearMicPower += pm; nearBlocks += 1 }
        guard measuring, pm / Double(b) > 1e-6 else { return }
        let settle = Int(capture.options.settleSeconds * Double(m.rate))
        let after = m.nearEnd + Int(capture.options.afterTalkSeconds * Double(m.rate))
        if start >= settle && end <= m.nearStart {
            micBefore += pm; outBefore += po; blocksBefore += 1
        } else if start >= after {
            micAfter += pm; outAfter += po; blocksAfter += 1
        }
    }

    func close() {
        micFile.close()
        pubFile.close()
    }

    static func erle(_ mic: Double, _ out: Double) -> Double? {
        guard mic > 0 else { return nil }
        return 10 * log10(mic / max(out, 1e-20))
    }
}

/// The clock the capture path reads in --fast mode: the demo's timeline
/// (10 ms per render callback), so the drift follower sees real-time audio.
func demoTimelineClock(_ context: UnsafeMutableRawPointer?) -> UInt64 {
    let shared = Unmanaged<DemoShared>.fromOpaque(context!).takeUnretainedValue()
    return 1_000_000_000 &+ UInt64(shared.renderedBlocks.load(ordering: .acquiring)) &* DemoShared.blockNs
}
