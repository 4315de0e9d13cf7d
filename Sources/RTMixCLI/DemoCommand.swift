import ArgumentParser
import Foundation
import RTMix
import Synchronization

extension SampleEncoding: ExpressibleByArgument {}

/// `rtmix-cli demo`: the classroom scenario with built-in synthetic signals.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play out a classroom scenario with synthetic signals (no files needed).",
        discussion: """
        A far-end voice (speech-like, 16 kHz mono, 20 ms frames with ±3 ms jitter from its \
        own thread) and a teacher's video soundtrack (music-like, 44.1 kHz stereo, decoded in \
        bursts of 1024–4096 frames by another thread that keeps 100–200 ms buffered) are mixed \
        by an output thread rendering 10 ms at 48 kHz stereo on absolute deadlines \
        (SCHED_FIFO when permitted). Half way, the media domain is ducked 1.0 → 0.3 and the \
        call domain turned down 1.0 → 0.5. The playout is written to a WAV file and a report \
        is printed.
        """)

    @Option(help: "Length of the scenario in seconds (0.1–3600).")
    var seconds: Double = 10

    @Option(name: [.short, .long], help: "WAV file to write.")
    var output = "rtmix-demo.wav"

    @Option(help: "WAV sample format: s16, s24 or f32.")
    var format: SampleEncoding = .s16

    @Flag(help: """
        No real-time pacing: the threads still run, but the render loop does not sleep; it \
        waits (outside the timed region) until the producers have caught up on the demo's \
        timeline. Quick and deterministic for a given --seed (for CI).
        """)
    var fast = false

    @Option(help: "Seed for the synthetic signals, bursts and jitter.")
    var seed: UInt64 = 1

    @Option(help: "Mute the other source to hear one alone: voice or media.")
    var solo: Solo?

    @Option(help: """
        Clock drift of the far-end voice's sender in ppm (positive: it sends faster than the \
        output device plays). The engine's drift compensation holds the voice buffer near \
        --voice-target-ms.
        """)
    var voiceDriftPpm: Double = 300

    @Option(help: "Drift-compensation target for the voice buffer in ms (5–2000; 0 turns compensation off).")
    var voiceTargetMs: Float = 30

    enum Solo: String, ExpressibleByArgument { case voice, media }

    func validate() throws {
        guard seconds.isFinite, (0.1...3600).contains(seconds) else {
            throw ValidationError("--seconds must be between 0.1 and 3600")
        }
        guard voiceDriftPpm.isFinite, abs(voiceDriftPpm) <= 5000 else {
            throw ValidationError("--voice-drift-ppm must be between -5000 and 5000")
        }
        guard voiceTargetMs == 0 || (5...2000).contains(voiceTargetMs) else {
            throw ValidationError("--voice-target-ms must be 0 or between 5 and 2000")
        }
    }

    func run() throws {
        let report = try DemoRun(seconds: seconds, output: output, format: format, fast: fast, seed: seed, solo: solo,
                                 voiceDriftPpm: voiceDriftPpm, voiceTargetMs: voiceTargetMs).run()
        print(report)
        if stopRequested.load(ordering: .relaxed) { throw ExitCode(130) }   // interrupted
    }
}

/// One run of the demo scenario.
struct DemoRun {
    let seconds: Double
    let output: String
    let format: SampleEncoding
    let fast: Bool
    let seed: UInt64
    let solo: Demo.Solo?
    var voiceDriftPpm: Double = 0
    var voiceTargetMs: Float = 0

    static let mediaDuck: Float = 0.3
    static let callLevel: Float = 0.5

    func run() throws -> String {
        let totalBlocks = max(1, Int((seconds * 100).rounded()))
        let halfBlock = totalBlocks / 2
        let controlNs = UInt64(halfBlock) * DemoShared.blockNs

        var config = EngineConfig()
        config.sampleRate = DemoShared.outputRate
        config.channels = DemoShared.outputChannels
        let engine: Engine
        let voice: SourceID, media: SourceID
        do {
            engine = try Engine(config)
            // --solo silences the other source through its initial gain: a mute
            // set after adding would still ramp down during the first 10 ms.
            var voiceConfig = SourceConfig(domain: .call, sampleRate: VoiceProducer.rate, channels: 1)
            voiceConfig.gain = solo == .media ? 0 : 1
            voiceConfig.targetBufferMs = voiceTargetMs
            var mediaConfig = SourceConfig(domain: .media, sampleRate: MediaProducer.rate, channels: MediaProducer.channels)
            mediaConfig.gain = solo == .voice ? 0 : 1
            voice = try engine.addSource(voiceConfig)
            media = try engine.addSource(mediaConfig)
        } catch {
            throw CLIError("engine setup failed: \(RTMixError.message(for: error.code))")
        }
        let file = try SoundFile(writing: output, sampleRate: DemoShared.outputRate,
                                 channels: DemoShared.outputChannels, encoding: format)

        // Prefill before any thread starts: the voice's jitter buffer (60 ms)
        // and the player's first decode (≥ 150 ms).
        let voiceReport = ProducerReport(), mediaReport = ProducerReport()
        var voiceProducer = VoiceProducer(seed: seed, driftPpm: voiceDriftPpm)
        for _ in 0..<VoiceProducer.prefillFrames {
            voiceProducer.pushFrame(engine: engine, id: voice, report: voiceReport, observe: false)
        }
        var mediaProducer = MediaProducer(seed: seed)
        mediaProducer.topUp(engine: engine, id: media, untilMs: MediaProducer.prefillMs, report: mediaReport,
                              observe: false)

        installStopSignals()
        let wallStart = monotonicNs()
        let shared = DemoShared(engine: engine, voice: voice, media: media, fast: fast, totalBlocks: totalBlocks,
                                startNs: wallStart + 20_000_000)
        let writer = DemoWriter(file: file, halfBlock: halfBlock)
        let voiceState = voiceProducer, mediaState = mediaProducer
        let threads = [
            JoinableThread { writer.run(shared: shared) },
            JoinableThread { voiceState.run(shared: shared, report: voiceReport) },
            JoinableThread { mediaState.run(shared: shared, report: mediaReport) },
            JoinableThread { shared.renderLoop() },
        ]

        // Control thread (this one): the volume changes half way.
        var gainError: String?
        var gainsChanged = false
        if shared.wait(until: controlNs, as: shared.controlClock) {
            do {
                try engine.setDomainGain(DemoRun.mediaDuck, for: .media)
                try engine.setDomainGain(DemoRun.callLevel, for: .call)
                gainsChanged = true
            } catch {
                gainError = RTMixError.message(for: error.code).description
            }
        }
        shared.controlClock.finish()
        for t in threads { t.join() }
        let wallNs = monotonicNs() - wallStart

        let es = engine.stats()
        var events: [EngineEvent] = []
        while let event = engine.nextEvent() { events.append(event) }
        let vs = try? engine.stats(for: voice)
        let ms = try? engine.stats(for: media)
        if let error = writer.error { throw error }
        if let gainError { throw CLIError("gain change failed: \(gainError)") }

        return DemoReportText(run: self, shared: shared, engine: es, voice: vs, media: ms,
                              voiceProducer: voiceReport, mediaProducer: mediaReport, writer: writer,
                              wallNs: wallNs, gainsChanged: gainsChanged, events: events).text
    }
}
