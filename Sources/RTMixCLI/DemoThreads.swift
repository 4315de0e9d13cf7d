import Glibc
import RTMixSignals
import RTMix
import Synchronization

/// One thread's place on the demo timeline. `horizon` is the time (ns from
/// the start) of its next event: everything before it has been done (0 until
/// the thread publishes its first event). In --fast mode the render thread
/// waits until every horizon is past the block it is about to render, which
/// makes the run deterministic.
final class Participant: Sendable {
    let horizon = Atomic<UInt64>(0)
    init() {}
    func finish() { horizon.store(.max, ordering: .releasing) }
}

/// State shared by the demo's threads: the engine, the timeline, and a
/// lock-free single-producer/single-consumer ring of rendered blocks
/// (render thread → writer thread).
final class DemoShared: @unchecked Sendable {
    static let outputRate = 48_000, outputChannels = 2
    static let blockFrames = 480                      // 10 ms at 48 kHz
    static let blockNs: UInt64 = 10_000_000
    static let ringBlocks = 256                       // 2.56 s of slack for the writer

    let engine: Engine
    let voice: SourceID, media: SourceID
    let fast: Bool
    let totalBlocks: Int
    let totalNs: UInt64
    /// Real mode: CLOCK_MONOTONIC time of t = 0 (the first render deadline).
    let startNs: UInt64

    let voiceClock: Participant, mediaClock: Participant, controlClock: Participant
    /// The capture side (simulated microphone + processCapture in the
    /// render callback), nil when capture is off.
    let capture: DemoCapture?

    /// Blocks rendered so far (also the clock in fast mode).
    let renderedBlocks = Atomic<Int>(0)
    let renderDone = Atomic<Bool>(false)
    // Block ring.
    let ring: UnsafeMutablePointer<Float>
    let scratch: UnsafeMutablePointer<Float>
    let produced = Atomic<Int>(0)
    let consumed = Atomic<Int>(0)
    // Render-thread results (read after join).
    let droppedBlocks = Atomic<Int>(0)
    let renderErrors = Atomic<Int>(0)
    let deadlineMisses = Atomic<Int>(0)
    let lateness = MicrosHistogram(maxMicros: 20_000)
    nonisolated(unsafe) var realtimeScheduling = false

    let timeline: DemoTimeline

    init(engine: Engine, voice: SourceID, media: SourceID, fast: Bool, totalBlocks: Int, startNs: UInt64,
         capture: DemoCapture? = nil, timeline: DemoTimeline = DemoTimeline()) {
        self.timeline = timeline
        self.engine = engine
        self.capture = capture
        self.voice = voice
        self.media = media
        self.fast = fast
        self.totalBlocks = totalBlocks
        totalNs = UInt64(totalBlocks) * DemoShared.blockNs
        self.startNs = startNs
        voiceClock = Participant()
        mediaClock = Participant()
        controlClock = Participant()
        let blockSamples = DemoShared.blockFrames * DemoShared.outputChannels
        // Allocated and touched up front: no page faults on the render thread.
        ring = .allocate(capacity: DemoShared.ringBlocks * blockSamples)
        ring.initialize(repeating: 0, count: DemoShared.ringBlocks * blockSamples)
        scratch = .allocate(capacity: blockSamples)
        scratch.initialize(repeating: 0, count: blockSamples)
    }

    deinit {
        ring.deallocate()
        scratch.deallocate()
    }

    /// Timeline time in ns: wall clock since start, or rendered time in fast mode.
    @inline(__always)
    func now() -> UInt64 {
        if fast { return UInt64(renderedBlocks.load(ordering: .acquiring)) &* DemoShared.blockNs }
        let t = monotonicNs()
        return t > startNs ? t - startNs : 0
    }

    /// A producer's wait for its next event at `t` (publishes the horizon
    /// first). Returns false when the run is over.
    func wait(until t: UInt64, as participant: Participant) -> Bool {
        participant.horizon.store(t, ordering: .releasing)
        if fast {
            var spins = 0
            while now() < t {
                if renderDone.load(ordering: .acquiring) { return false }
                backoff(&spins)
            }
        } else {
            // Sleep in slices of at most 50 ms so an early stop is noticed.
            let deadline = startNs &+ t
            while true {
                let slice = min(deadline, monotonicNs() &+ 50_000_000)
                sleepUntil(slice)
                if slice == deadline { break }
                if renderDone.load(ordering: .acquiring) { return false }
            }
        }
        return !renderDone.load(ordering: .acquiring)
    }

    // MARK: render thread

    /// The output "device": one `render` every 10 ms at absolute deadlines.
    /// Inside the loop: no allocation, locks, printing or strings; only
    /// atomics, clock_nanosleep, clock_gettime, `engine.render` and, with
    /// capture on, the duplex part right after render: the simulated
    /// microphone (preallocated) and `engine.processCapture`.
    func renderLoop() {
        realtimeScheduling = !fast && trySchedFifo(priority: 80)
        let engine = self.engine
        let blockSamples = DemoShared.blockFrames * DemoShared.outputChannels
        var deadline = startNs
        for n in 0..<totalBlocks {
            if stopRequested.load(ordering: .relaxed) { break }     // Ctrl-C
            if fast {
                waitForProducers(block: n)
            } else {
                sleepUntil(deadline)
                let woke = monotonicNs()
                lateness.record(ns: woke > deadline ? woke - deadline : 0)
            }
            let p = produced.load(ordering: .relaxed)
            var target = scratch
            var full = p - consumed.load(ordering: .acquiring) >= DemoShared.ringBlocks
            if full && fast {
                var spins = 0                                 // fast mode: wait for the writer
                while p - consumed.load(ordering: .acquiring) >= DemoShared.ringBlocks { backoff(&spins) }
                full = false
            }
            if !full { target = ring + (p % DemoShared.ringBlocks) * blockSamples }
            do {
                if timeline.interrupted(block: n) {
                    // Simulated interruption: the device callback does not
                    // run (the speaker is silent); producers go on.
                    target.update(repeating: 0, count: blockSamples)
                } else {
                    try engine.render(into: UnsafeMutableBufferPointer(start: target, count: blockSamples),
                                      frames: DemoShared.blockFrames)
                }
            } catch {
                target.update(repeating: 0, count: blockSamples)
                renderErrors.add(1, ordering: .relaxed)
            }
            capture?.duplex(engine: engine, rendered: target, slot: full ? nil : p % DemoShared.ringBlocks, callback: n)
            if full {
                droppedBlocks.add(1, ordering: .relaxed)
            } else {
                produced.store(p + 1, ordering: .releasing)
            }
            renderedBlocks.store(n + 1, ordering: .releasing)
            deadline &+= DemoShared.blockNs
            if !fast && monotonicNs() > deadline { deadlineMisses.add(1, ordering: .relaxed) }
        }
        renderDone.store(true, ordering: .releasing)
    }

    /// Fast mode only (not real-time): waits until every producer has done
    /// all its events up to the start of block `n`.
    private func waitForProducers(block n: Int) {
        let t = UInt64(n) &* DemoShared.blockNs
        var spins = 0
        while voiceClock.horizon.load(ordering: .acquiring) <= t
                || mediaClock.horizon.load(ordering: .acquiring) <= t
                || controlClock.horizon.load(ordering: .acquiring) <= t {
            backoff(&spins)
        }
    }
}

/// A zeroed float buffer allocated once (producers reuse it for every push).
final class FloatBuffer {
    let base: UnsafeMutablePointer<Float>
    init(count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
    }
    deinit { base.deallocate() }
}

/// What a producer observed (read after its thread is joined).
final class ProducerReport: @unchecked Sendable {
    var pushes = 0
    var framesPushed = 0
    var framesNotAccepted = 0
    var minBufferedMs: Float = .infinity
    var maxBufferedMs: Float = 0
    var errors = 0

    func observe(_ ms: Float) {
        minBufferedMs = min(minBufferedMs, ms)
        maxBufferedMs = max(maxBufferedMs, ms)
    }
}

/// Far-end voice: 16 kHz mono, one 20 ms frame per event, released at
/// nominal time ± a little jitter (a jitter buffer's output).
/// Handed over whole to its thread (hence @unchecked Sendable).
struct VoiceProducer: @unchecked Sendable {
    static let rate = 16_000
    static let frameSamples = 320                     // 20 ms
    static let prefillFrames = 3                      // 60 ms jitter-buffer depth
    static let frameNs: UInt64 = 20_000_000
    static let jitterNs: Float = 3_000_000            // ±3 ms

    var synth: SpeechSynth
    var rng: SplitMix64
    private let storage = FloatBuffer(count: VoiceProducer.frameSamples)
    var buffer: UnsafeMutablePointer<Float> { storage.base }

    /// The sender's clock runs this many ppm fast (negative: slow).
    let driftPpm: Double

    init(seed: UInt64, driftPpm: Double = 0) {
        synth = SpeechSynth(sampleRate: VoiceProducer.rate, seed: seed)
        rng = SplitMix64(seed: seed ^ 0x1177_E4)
        self.driftPpm = driftPpm
    }

    /// Release time of frame k (k ≥ prefillFrames), on the sender's clock.
    mutating func eventTime(frame k: Int) -> UInt64 {
        let nominal = Double(UInt64(k - VoiceProducer.prefillFrames + 1) * VoiceProducer.frameNs) / (1 + driftPpm / 1e6)
        return UInt64(nominal + Double(rng.uniform(-1, 1) * VoiceProducer.jitterNs))
    }

    mutating func pushFrame(engine: Engine, id: SourceID, report: ProducerReport, observe: Bool = true) {
        synth.render(into: buffer, count: VoiceProducer.frameSamples)
        if observe, let st = try? engine.stats(for: id) { report.observe(st.bufferedMs) }
        do {
            let n = try engine.push(UnsafeBufferPointer(start: buffer, count: VoiceProducer.frameSamples), to: id, channels: 1)
            report.pushes += 1
            report.framesPushed += n
            report.framesNotAccepted += VoiceProducer.frameSamples - n
        } catch {
            report.errors += 1
        }
    }

    func run(shared: DemoShared, report: ProducerReport) {
        var me = self
        var k = VoiceProducer.prefillFrames
        var t = me.eventTime(frame: k)
        while t < shared.totalNs, shared.wait(until: t, as: shared.voiceClock) {
            me.pushFrame(engine: shared.engine, id: shared.voice, report: report)
            k += 1
            t = me.eventTime(frame: k)
        }
        shared.voiceClock.finish()
    }
}

/// Teacher's video soundtrack: 44.1 kHz stereo "decoded" in bursts of
/// 1024–4096 frames whenever less than 100 ms is buffered (so 100–200 ms
/// stays buffered). Checks every 5 ms.
/// Handed over whole to its thread (hence @unchecked Sendable).
struct MediaProducer: @unchecked Sendable {
    static let rate = 44_100, channels = 2
    static let checkNs: UInt64 = 5_000_000
    static let lowWaterMs: Float = 100
    static let prefillMs: Float = 150

    var synth: MusicSynth
    var rng: SplitMix64
    private let storage = FloatBuffer(count: 4096 * MediaProducer.channels)
    var buffer: UnsafeMutablePointer<Float> { storage.base }

    init(seed: UInt64) {
        synth = MusicSynth(sampleRate: MediaProducer.rate, seed: seed)
        rng = SplitMix64(seed: seed ^ 0xB0_B5)
    }

    /// Decodes bursts until at least `lowWaterMs` (or `untilMs`) is buffered.
    mutating func topUp(engine: Engine, id: SourceID, untilMs: Float, report: ProducerReport, observe: Bool = true) {
        guard var buffered = (try? engine.stats(for: id))?.bufferedMs else { report.errors += 1; return }
        if observe { report.observe(buffered) }
        while buffered < untilMs {
            let burst = rng.int(1024, 4096)
            synth.render(into: buffer, frames: burst)
            do {
                let n = try engine.push(UnsafeBufferPointer(start: buffer, count: burst * MediaProducer.channels),
                                        to: id, channels: MediaProducer.channels)
                report.pushes += 1
                report.framesPushed += n
                report.framesNotAccepted += burst - n
                if n < burst { break }                 // ring full: try again later
            } catch {
                report.errors += 1
                break
            }
            buffered += Float(burst) * 1000 / Float(MediaProducer.rate)
        }
    }

    func run(shared: DemoShared, report: ProducerReport) {
        var me = self
        var t = MediaProducer.checkNs
        let seekNs = shared.timeline.seekAt.map { UInt64($0 * 1e9) }
        let endNs = shared.timeline.endAt.map { UInt64($0 * 1e9) }
        var seeked = false, ended = false
        while t < shared.totalNs, shared.wait(until: t, as: shared.mediaClock) {
            if let s = seekNs, !seeked, t >= s {
                // A seek: drop what is buffered, decode from elsewhere.
                seeked = true
                do { try shared.engine.flush(shared.media) } catch { report.errors += 1 }
                me.synth = MusicSynth(sampleRate: MediaProducer.rate, seed: me.rng.next())
            }
            if let e = endNs, !ended, t >= e {
                ended = true
                do { try shared.engine.endSource(shared.media) } catch { report.errors += 1 }
            }
            if !ended {
                me.topUp(engine: shared.engine, id: shared.media, untilMs: MediaProducer.lowWaterMs, report: report)
            }
            t += MediaProducer.checkNs
        }
        shared.mediaClock.finish()
    }
}

/// The disk writer: drains the block ring into the WAV file (libsndfile is
/// called here only, never on the render thread) and meters the levels.
final class DemoWriter: @unchecked Sendable {
    let file: SoundFile
    let captureWriter: DemoCaptureWriter?
    let halfBlock: Int
    var firstHalf = LevelMeter(), secondHalf = LevelMeter(), whole = LevelMeter()
    var blocksWritten = 0
    var error: CLIError?

    init(file: SoundFile, captureWriter: DemoCaptureWriter? = nil, halfBlock: Int) {
        self.file = file
        self.captureWriter = captureWriter
        self.halfBlock = halfBlock
    }

    func run(shared: DemoShared) {
        let blockSamples = DemoShared.blockFrames * DemoShared.outputChannels
        var spins = 0
        while true {
            let c = shared.consumed.load(ordering: .relaxed)
            if c == shared.produced.load(ordering: .acquiring) {
                if shared.renderDone.load(ordering: .acquiring) && c == shared.produced.load(ordering: .acquiring) { break }
                if shared.fast { backoff(&spins) } else { usleep(5_000) }
                continue
            }
            spins = 0
            let block = shared.ring + (c % DemoShared.ringBlocks) * blockSamples
            whole.add(block, count: blockSamples)
            if blocksWritten < halfBlock { firstHalf.add(block, count: blockSamples) } else { secondHalf.add(block, count: blockSamples) }
            if error == nil {
                do {
                    try file.write(block, frames: DemoShared.blockFrames)
                    try captureWriter?.write(slot: c % DemoShared.ringBlocks)
                } catch { self.error = error }
            }
            blocksWritten += 1
            shared.consumed.store(c + 1, ordering: .releasing)
        }
        file.close()
        captureWriter?.close()
    }
}
