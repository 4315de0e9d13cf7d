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

        Capture (duplex, like iOS VoiceProcessingIO): right after each render the callback \
        simulates the microphone — the rendered block (stereo → mono, decimated to the \
        capture rate) after a device delay (--echo-delay-ms) through a synthetic room \
        (RT60 0.35 s, 250 ms response, 0.4 m direct path), plus a near-end talker (another \
        synthetic voice, 40–70 % of the run: double talk) and noise at -65 dBFS — and calls \
        the engine's processCapture. The microphone goes to mic.wav, the published output \
        (echo-cancelled voice + media at --publish-gain) to publish.wav; the report gives \
        ERLE, the delay estimate against the simulated truth, drift, double talk, \
        processCapture timing and the capture events.
        """)

    @Option(help: "Length of the scenario in seconds (0.1–3600).")
    var seconds: Double = 10

    @Option(name: [.short, .long], help: "WAV file to write (its directory is created if missing; out/ is git-ignored).")
    var output = "out/rtmix-demo.wav"

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

    @Option(help: "Drift-compensation target for the voice buffer in ms (5–2000; 0 turns compensation off; default: the engine's, 40).")
    var voiceTargetMs: Float?

    @Option(help: "Simulate an interruption: the render callback stops at this time (s) while the producers go on.")
    var interruptAt: Double?

    @Option(help: "Length of the simulated interruption in seconds.")
    var interruptSeconds: Double = 2

    @Option(help: "Simulate a seek at this time (s): the player flushes the media source and decodes from elsewhere.")
    var seekAt: Double?

    @Option(help: "Simulate the end of the media stream at this time (s): the player ends the source; it drains.")
    var endAt: Double?

    @Option(help: "Capture (microphone) rate in Hz: 16000 (default), 48000, 24000 or 8000.")
    var captureRate = 16_000

    @Option(help: "Simulated device delay from playout to microphone in ms (2–500; the room's direct path adds 1.2 ms).")
    var echoDelayMs = 60.0

    @Option(help: "Playout-to-capture delay hint for the engine in ms (0–1000; default none: the engine estimates it).")
    var delayHintMs: Int?

    @Option(help: """
        Gain of the media domain in publish.wav (0–16). With 0 the demo also measures ERLE \
        itself (mic / published power while only the far end plays).
        """)
    var publishGain: Float = 0.5

    @Option(help: "Microphone WAV (default: mic.wav next to --output).")
    var micOutput: String?

    @Option(help: "Published-output WAV (default: publish.wav next to --output).")
    var publishOutput: String?

    @Flag(help: "No capture: render only (no mic.wav, publish.wav).")
    var noCapture = false

    enum Solo: String, ExpressibleByArgument { case voice, media }

    func validate() throws {
        guard seconds.isFinite, (0.1...3600).contains(seconds) else {
            throw ValidationError("--seconds must be between 0.1 and 3600")
        }
        guard voiceDriftPpm.isFinite, abs(voiceDriftPpm) <= 5000 else {
            throw ValidationError("--voice-drift-ppm must be between -5000 and 5000")
        }
        if let t = voiceTargetMs, !(t == 0 || (5...2000).contains(t)) {
            throw ValidationError("--voice-target-ms must be 0 or between 5 and 2000")
        }
        guard [8_000, 16_000, 24_000, 48_000].contains(captureRate) else {
            throw ValidationError("--capture-rate must be 8000, 16000, 24000 or 48000")
        }
        guard echoDelayMs.isFinite, (2...500).contains(echoDelayMs) else {
            throw ValidationError("--echo-delay-ms must be between 2 and 500")
        }
        if let d = delayHintMs, !(0...1000).contains(d) { throw ValidationError("--delay-hint-ms must be 0–1000") }
        guard publishGain.isFinite, (0...16).contains(publishGain) else {
            throw ValidationError("--publish-gain must be between 0 and 16")
        }
        for (name, t) in [("--interrupt-at", interruptAt), ("--seek-at", seekAt), ("--end-at", endAt)] {
            if let t, !(t.isFinite && t >= 0 && t < seconds) {
                throw ValidationError("\(name) must be within the scenario (0 ..< --seconds)")
            }
        }
        guard interruptSeconds.isFinite, (0.05...60).contains(interruptSeconds) else {
            throw ValidationError("--interrupt-seconds must be between 0.05 and 60")
        }
    }

    /// mic.wav / publish.wav next to --output unless given.
    func sidePath(_ given: String?, _ name: String) -> String {
        if let given { return given }
        guard let slash = output.lastIndex(of: "/") else { return name }
        return String(output[...slash]) + name
    }

    func run() throws {
        var capture: DemoCaptureOptions?
        if !noCapture {
            var c = DemoCaptureOptions()
            c.captureRate = captureRate
            c.echoDelayMs = echoDelayMs
            c.delayHintMs = delayHintMs
            c.publishGain = publishGain
            capture = c
        }
        let paths = [output, sidePath(micOutput, "mic.wav"), sidePath(publishOutput, "publish.wav")]
        if capture != nil && Set(paths).count < 3 { throw CLIError("--output, --mic-output and --publish-output must differ") }
        for path in paths.prefix(capture != nil ? 3 : 1) {
            let dir = (path as NSString).deletingLastPathComponent
            if !dir.isEmpty {
                do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                    throw CLIError("cannot create \(dir): \(error.localizedDescription)")
                }
            }
        }
        let report = try DemoRun(seconds: seconds, output: output, format: format, fast: fast, seed: seed, solo: solo,
                                 voiceDriftPpm: voiceDriftPpm, voiceTargetMs: voiceTargetMs,
                                 capture: capture, micOutput: paths[1], publishOutput: paths[2],
                                 timeline: DemoTimeline(interruptAt: interruptAt, interruptSeconds: interruptSeconds,
                                                        seekAt: seekAt, endAt: endAt)).run()
        print(report)
        if stopRequested.load(ordering: .relaxed) { throw ExitCode(130) }   // interrupted
    }
}

/// The simulated incidents of a demo run (times in seconds).
struct DemoTimeline {
    var interruptAt: Double? = nil
    var interruptSeconds: Double = 2
    var seekAt: Double? = nil
    var endAt: Double? = nil

    /// Block `n` falls inside the interruption (the render callback does not run).
    func interrupted(block n: Int) -> Bool {
        guard let at = interruptAt else { return false }
        let t = Double(n) / 100
        return t >= at && t < at + interruptSeconds
    }

    var description: String {
        var parts: [String] = []
        if let at = interruptAt { parts.append("render stops at \(at) s for \(interruptSeconds) s") }
        if let at = seekAt { parts.append("media seek (flush) at \(at) s") }
        if let at = endAt { parts.append("media end of stream at \(at) s") }
        return parts.joined(separator: "; ")
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
    var voiceTargetMs: Float? = nil
    var capture: DemoCaptureOptions? = nil
    var micOutput = "mic.wav"
    var publishOutput = "publish.wav"
    var timeline = DemoTimeline()

    static let mediaDuck: Float = 0.3
    static let callLevel: Float = 0.5

    func run() throws -> String {
        let totalBlocks = max(1, Int((seconds * 100).rounded()))
        let halfBlock = totalBlocks / 2
        let controlNs = UInt64(halfBlock) * DemoShared.blockNs

        var config = EngineConfig()
        config.sampleRate = DemoShared.outputRate
        config.channels = DemoShared.outputChannels
        if let capture { config.captureRate = capture.captureRate }
        let engine: Engine
        let voice: SourceID, media: SourceID
        do {
            engine = try Engine(config)
            // --solo silences the other source through its initial gain: a mute
            // set after adding would still ramp down during the first 10 ms.
            var voiceConfig = SourceConfig(domain: .call, sampleRate: VoiceProducer.rate, channels: 1)
            voiceConfig.gain = solo == .media ? 0 : 1
            if let t = voiceTargetMs { voiceConfig.targetBufferMs = t }
            var mediaConfig = SourceConfig(domain: .media, sampleRate: MediaProducer.rate, channels: MediaProducer.channels)
            mediaConfig.gain = solo == .voice ? 0 : 1
            // The player refills whenever less than 100 ms is buffered: it
            // paces itself on the engine's buffer, so it has no clock drift
            // to compensate (docs/source-timing.md: which producers need it).
            mediaConfig.targetBufferMs = 0
            voice = try engine.addSource(voiceConfig)
            media = try engine.addSource(mediaConfig)
            if let capture {
                try engine.setPublishGain(capture.publishGain, for: .media)
                if let hint = capture.delayHintMs { try engine.setStreamDelay(ms: hint) }
            }
        } catch {
            throw CLIError("engine setup failed: \(RTMixError.message(for: error.code))")
        }
        let file = try SoundFile(writing: output, sampleRate: DemoShared.outputRate,
                                 channels: DemoShared.outputChannels, encoding: format)
        var demoCapture: DemoCapture?
        var captureWriter: DemoCaptureWriter?
        if let capture {
            let c = DemoCapture(options: capture, totalSeconds: Double(totalBlocks) / 100, seed: seed)
            captureWriter = DemoCaptureWriter(
                micFile: try SoundFile(writing: micOutput, sampleRate: capture.captureRate, channels: 1, encoding: format),
                pubFile: try SoundFile(writing: publishOutput, sampleRate: capture.captureRate, channels: 1, encoding: format),
                capture: c)
            demoCapture = c
        }

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
                                startNs: wallStart + 20_000_000, capture: demoCapture, timeline: timeline)
        if fast {
            // Faster than real time: the engine's clock (stall detection,
            // positions, capture timing) is the demo's timeline.
            do { try engine.setClock(demoTimelineClock, context: Unmanaged.passUnretained(shared).toOpaque()) } catch {
                throw CLIError("engine setup failed: \(RTMixError.message(for: error.code))")
            }
        }
        let writer = DemoWriter(file: file, captureWriter: captureWriter, halfBlock: halfBlock)
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

        // The engine must not call the timeline clock after `shared` is gone.
        if fast { try? engine.setClock(nil) }
        return DemoReportText(run: self, shared: shared, engine: es, voice: vs, media: ms,
                              voiceProducer: voiceReport, mediaProducer: mediaReport, writer: writer,
                              wallNs: wallNs, gainsChanged: gainsChanged, events: events).text
    }
}
