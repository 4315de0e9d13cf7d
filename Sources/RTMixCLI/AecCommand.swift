import ArgumentParser
import Foundation
import RTMix

/// `rtmix-cli aec`: runs the engine's capture path (echo canceller, noise
/// and residual-echo suppression) on a recorded microphone file against the
/// playout file, the way a duplex device callback would.
struct Aec: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cancel the echo of a playout file in a microphone file through the engine's capture path.",
        discussion: """
        The playout (--ref) goes through one engine source at its own rate and channel \
        count with gain 1 (bit-exact; keep it below -1 dBFS so the limiter stays out), and \
        the engine runs in lockstep like a duplex callback: render one frame of playout, \
        then process the same frame of microphone. A playout sample rendered in frame b \
        whose echo appears τ samples later in the microphone file has a delay of τ. \
        The output has the microphone's rate and channels; by default it is shifted by the \
        capture latency so that it lines up sample for sample with --mic (--no-align keeps \
        it as produced). Every second prints the measured ERLE (10·log10 of microphone power \
        over output power in that second; meaningful only while the near end is silent), \
        the engine's delay estimate and its source, drift and double-talk flag. The summary's \
        median ERLE covers the seconds after --settle whose microphone level is above -60 dBFS.
        """)

    @Option(help: "Microphone recording (mono or stereo, 8000–48000 Hz).")
    var mic: String

    @Option(help: "Playout file: what the loudspeaker played (mono or stereo, 8000–192000 Hz).")
    var ref: String

    @Option(name: [.short, .long], help: "Output file (.wav or .flac): the processed microphone.")
    var output: String

    @Option(help: "Playout-to-capture delay hint in ms, 0–1000 (default: unknown, the engine estimates it).")
    var delayMs: Int?

    @Option(help: "Echo canceller tail in ms, 10–1000 (0 turns the canceller off).")
    var tailMs = 200

    @Flag(help: "Turn noise suppression off.")
    var noNs = false

    @Flag(help: "Turn residual-echo suppression off.")
    var noRes = false

    @Flag(help: "Turn automatic gain control on.")
    var agc = false

    @Option(help: "Frame (callback) size in ms: 1–40.")
    var frameMs = 10

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Microphone clock relative to the playout clock in ppm (> 0: mic faster).",
        discussion: "Interleaves render and capture calls as two devices with that clock offset would; 0 (default) is lockstep."))
    var clockPpm = 0.0

    @Option(help: ArgumentHelp(
        "Replay a live run's callbacks: the calls.txt that `rtmix-cli live --record` writes.",
        discussion: "Each line is one duplex callback (ns since the first, frames): render that many frames, then capture as many, with the engine's clock at the callback's time, as the live run did. Use with that run's render.wav (--ref) and capture.wav (--mic); after the last line, --frame-ms calls follow."))
    var calls: String?

    @Flag(inversion: .prefixedNo, help: "Shift the output by the capture latency so it lines up with --mic.")
    var align = true

    @Option(help: "Seconds excluded from the summary's median ERLE (convergence).")
    var settle = 3.0

    @Option(help: "Output sample format: s16, s24 or f32 (f32 only for .wav).")
    var format: SampleEncoding = .s16

    @Option(help: "Also write per-second rows and the summary as JSON to this file.")
    var json: String?

    @Flag(name: .shortAndLong, help: "No per-second lines (the summary is still printed).")
    var quiet = false

    @Option(help: ArgumentHelp(
        "Also draw ERLE per second and the levels per 20 ms into this SVG file.",
        discussion: "Panel 1: ERLE per second (measured, and the engine's statistic). Panel 2: microphone and output level per 20 ms frame, frames where the engine saw near-end talk shaded. The output is taken as aligned with --mic (--align)."))
    var plot: String?

    @Option(help: ArgumentHelp(
        "With --plot: the near-end talker alone (same rate as --mic), as a lab rig records it.",
        discussion: "Panel 2 then shows the talker instead of the microphone and marks its muted frames: active (within 25 dB of its mean active level) and the output more than 10 dB below it; the summary prints their share."))
    var talker: String?

    func validate() throws {
        guard (1...40).contains(frameMs) else { throw ValidationError("--frame-ms must be 1–40") }
        guard tailMs == 0 || (10...1_000).contains(tailMs) else { throw ValidationError("--tail-ms must be 0 (off) or 10–1000") }
        if let d = delayMs { guard (0...1_000).contains(d) else { throw ValidationError("--delay-ms must be 0–1000") } }
        guard settle >= 0 else { throw ValidationError("--settle must be >= 0") }
        guard abs(clockPpm) <= 10_000 else { throw ValidationError("--clock-ppm must be within ±10000") }
        if talker != nil && plot == nil { throw ValidationError("--talker needs --plot") }
        if calls != nil && clockPpm != 0 { throw ValidationError("--calls replays one duplex clock: drop --clock-ppm") }
        if plot != nil && !align { throw ValidationError("--plot needs the output aligned with --mic (drop --no-align)") }
    }

    func run() throws {
        for path in [mic, ref] where path == output { throw CLIError("the output '\(output)' is also an input") }
        if let json, json == output || json == mic || json == ref { throw CLIError("--json must name another file") }
        if let plot, plot == output || plot == mic || plot == ref || plot == json || plot == talker {
            throw CLIError("--plot must name another file")
        }
        var runner = try AecRunner(self)
        let report = try runner.run()
        if let plot, let picture = runner.picture {
            guard FileManager.default.createFile(atPath: plot, contents: Data(picture.utf8)) else {
                throw CLIError("cannot write '\(plot)'")
            }
        }
        if let json {
            let data = try JSONEncoder.sortedPretty.encode(report)
            guard FileManager.default.createFile(atPath: json, contents: data) else {
                throw CLIError("cannot write '\(json)'")
            }
        }
    }
}

extension JSONEncoder {
    static var sortedPretty: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return e
    }
}

/// The JSON document `aec --json` writes.
struct AecReport: Encodable {
    struct Second: Encodable {
        var t: Double                 // end of the second, seconds from the start
        var erleDb: Double            // measured: mic power / output power
        var micDbfs: Double
        var outDbfs: Double
        var engineErleDb: Double
        var delayMs: Double
        var delaySource: String
        var estimatedDelayMs: Double
        var estimateConfidence: Double
        var driftPpm: Double
        var doubleTalk: Bool
        var diverged: Bool
        var resets: UInt64
    }
    struct Summary: Encodable {
        var seconds: Double
        var micRate: Int
        var micChannels: Int
        var refRate: Int
        var refChannels: Int
        var frameMs: Int
        var tailMs: Int
        var delayHintMs: Int?
        var clockPpm: Double
        var settleSeconds: Double
        var medianErleDb: Double?     // nil when no second qualified
        var erleSecondsUsed: Int
        var finalDelayMs: Double
        var finalDelaySource: String
        var finalDriftPpm: Double
        var engineErleDb: Double
        var resets: UInt64
        var delayChanges: UInt64
        var doubleTalkFrames: UInt64
        var callsWithoutReference: UInt64
        var referenceOverflowFrames: UInt64
        var captureNsMax: UInt64
        var latencyFrames: Int
        var latencyMs: Double
        var aligned: Bool
        var renderUnderrunFrames: UInt64
        var limiterActiveFrames: UInt64
        var elapsedSeconds: Double
    }
    var rows: [Second] = []
    var summary: Summary?
}

private func rjust(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}

private func signed(_ v: Double) -> String { (v >= 0 ? "+" : "") + fixed(v, 1) }

private func db10(_ ratio: Double) -> Double { ratio > 0 ? 10 * log10(ratio) : -200 }

/// The lockstep render/capture loop.
private struct AecRunner {
    let options: Aec
    let micFile: SoundFile
    let refFile: SoundFile
    let talkerFile: SoundFile?
    /// The SVG for --plot, after `run`.
    private(set) var picture: String?

    /// --calls: each live callback's time (ns since the first) and frames.
    let callNs: [UInt64]
    let callFrames: [Int]

    init(_ options: Aec) throws {
        self.options = options
        micFile = try SoundFile(reading: options.mic)
        refFile = try SoundFile(reading: options.ref)
        if let path = options.calls {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw CLIError("cannot read '\(path)'") }
            var ns: [UInt64] = [], frames: [Int] = []
            for (i, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") {
                let f = line.split(separator: " ")
                guard f.count == 2, let t = UInt64(f[0]), let n = Int(f[1]), (1...16_384).contains(n),
                      t >= (ns.last ?? 0) else {
                    throw CLIError("'\(path)' line \(i + 1): expected '<ns since the first callback> <frames 1-16384>', times not decreasing")
                }
                ns.append(t); frames.append(n)
            }
            guard !ns.isEmpty else { throw CLIError("'\(path)' holds no callback") }
            guard micFile.sampleRate == refFile.sampleRate else {
                throw CLIError("--calls replays one duplex stream: --mic and --ref must have one rate (\(micFile.sampleRate) and \(refFile.sampleRate) Hz)")
            }
            callNs = ns; callFrames = frames
        } else {
            callNs = []; callFrames = []
        }
        talkerFile = try options.talker.map { try SoundFile(reading: $0) }
        if let t = talkerFile, let path = options.talker {
            guard t.sampleRate == micFile.sampleRate else {
                throw CLIError("'\(path)' is sampled at \(t.sampleRate) Hz; --talker must have the microphone's rate (\(micFile.sampleRate) Hz)")
            }
            guard (1...2).contains(t.channels) else { throw CLIError("'\(path)' has \(t.channels) channels; mono or stereo") }
        }
        guard (1...2).contains(micFile.channels) else {
            throw CLIError("'\(options.mic)' has \(micFile.channels) channels; the capture path takes mono or stereo")
        }
        guard (8_000...48_000).contains(micFile.sampleRate) else {
            throw CLIError("'\(options.mic)' is sampled at \(micFile.sampleRate) Hz; capture rates are 8000–48000 Hz")
        }
        guard (1...2).contains(refFile.channels) else {
            throw CLIError("'\(options.ref)' has \(refFile.channels) channels; only mono or stereo playout is supported")
        }
        guard (8_000...192_000).contains(refFile.sampleRate) else {
            throw CLIError("'\(options.ref)' is sampled at \(refFile.sampleRate) Hz; supported rates are 8000–192000 Hz")
        }
        guard micFile.frames > 0 else { throw CLIError("'\(options.mic)' is empty") }
        guard refFile.frames > 0 else {
            throw CLIError("'\(options.ref)' is empty: no playout, so no echo to cancel")
        }
    }

    /// Frames in call `k` at `rate`: call boundaries fall on the whole frame
    /// at or below k·frameMs, so a frame size that is no whole number of
    /// frames (10 ms at 22050 Hz: 220.5) alternates (220, 221, ...) and
    /// the calls keep exact time.
    func block(_ k: Int, rate: Int) -> Int {
        if k < callFrames.count { return callFrames[k] }
        let j = k - callFrames.count
        return ((j + 1) * rate * options.frameMs) / 1000 - (j * rate * options.frameMs) / 1000
    }

    /// The engine clock at call `k` (render or capture: one duplex clock).
    func callTime(_ k: Int, frameNs: Double, ppm: Double) -> UInt64 {
        if k < callNs.count { return callNs[k] + 1_000_000_000 }
        let tail = callNs.last.map { $0 + 1_000_000_000 + UInt64(Double(callFrames.last!) * 1e9 / Double(micFile.sampleRate)) } ?? 1_000_000_000
        return tail + UInt64(Double(k - callNs.count) * frameNs / (1 + ppm * 1e-6))
    }

    private static func message(_ e: RTMixError) -> String { "\(RTMixError.message(for: e.code))" }

    mutating func run() throws -> AecReport {
        let refRate = refFile.sampleRate, refCh = refFile.channels
        let micRate = micFile.sampleRate, micCh = micFile.channels
        // The largest call (see `block`).
        let refBlock = max((refRate * options.frameMs + 999) / 1000, callFrames.max() ?? 0)
        let micBlock = max((micRate * options.frameMs + 999) / 1000, callFrames.max() ?? 0)

        var config = EngineConfig()
        config.sampleRate = refRate
        config.channels = refCh
        config.maxFrames = max(config.maxFrames, refBlock, micBlock)
        config.captureRate = micRate
        config.captureChannels = micCh
        config.aecTailMs = options.tailMs
        config.noiseSuppression = !options.noNs
        config.echoSuppression = !options.noRes
        config.agc = options.agc
        let engine: Engine
        let source: SourceID
        do {
            engine = try Engine(config)
            var sc = SourceConfig(domain: .media, sampleRate: refRate, channels: refCh)
            // A file processor pushes exactly what each render takes, on no clock
            // of its own: no drift compensation, no priming, nothing dropped.
            sc.untimed()
            sc.gain = 1
            sc.bufferFrames = max(8 * refBlock, 4_096)
            source = try engine.addSource(sc)
            try engine.setStreamDelay(ms: options.delayMs)
        } catch {
            throw CLIError("engine setup failed: \(AecRunner.message(error))")
        }

        let out = try SoundFile(writing: options.output, sampleRate: micRate, channels: micCh, encoding: options.format)
        var refBuffer = [Float](repeating: 0, count: refBlock * refCh)
        var playout = [Float](repeating: 0, count: refBlock * refCh)
        var micBuffer = [Float](repeating: 0, count: micBlock * micCh)
        var outBuffer = [Float](repeating: 0, count: micBlock * micCh)
        var refDone = false

        let totalFrames = micFile.frames
        let secondsCount = (totalFrames + micRate - 1) / micRate
        var micPower = [Double](repeating: 0, count: secondsCount)
        var outPower = [Double](repeating: 0, count: secondsCount)
        var secondFrames = [Int](repeating: 0, count: secondsCount)
        var report = AecReport()
        // --plot: per 20 ms frame, mic and output power, the engine's
        // double-talk flag (at the call that processed the frame's end).
        let plotFrame = max(1, micRate / 50)
        let plotFrames = options.plot == nil ? 0 : (totalFrames + plotFrame - 1) / plotFrame
        var plotMic = [Double](repeating: 0, count: plotFrames)
        var plotOut = [Double](repeating: 0, count: plotFrames)
        var plotDoubleTalk = [Bool](repeating: false, count: plotFrames)
        var latency = -1                  // capture latency in frames, read after the first call
        var skip = 0                      // output frames still to drop (alignment)
        var written = 0                   // aligned output frames written
        var micRead = 0
        var nextSecond = 0
        let started = Date()
        if !options.quiet {
            print("rtmix-cli aec: \(options.mic) (\(micRate) Hz, \(micCh) ch) against \(options.ref) (\(refRate) Hz, \(refCh) ch), frame \(options.frameMs) ms, tail \(options.tailMs) ms, delay hint \(options.delayMs.map { "\($0) ms" } ?? "none")\(options.clockPpm != 0 ? ", mic clock \(signed(options.clockPpm)) ppm" : "")")
        }

        func emitSeconds(upTo frames: Int, final: Bool) {
            while nextSecond < secondsCount && (frames >= (nextSecond + 1) * micRate || (final && frames >= totalFrames)) {
                let k = nextSecond
                let n = Double(max(1, secondFrames[k] * micCh))
                let micP = micPower[k] / n, outP = outPower[k] / n
                let cs = engine.stats().capture
                let row = AecReport.Second(
                    t: Double(min((k + 1) * micRate, totalFrames)) / Double(micRate),
                    erleDb: db10(micP / max(outP, 1e-20)), micDbfs: db10(micP), outDbfs: db10(outP),
                    engineErleDb: Double(cs.erleDb), delayMs: Double(cs.delayMs),
                    delaySource: "\(cs.delaySource)", estimatedDelayMs: Double(cs.estimatedDelayMs),
                    estimateConfidence: Double(cs.estimateConfidence), driftPpm: Double(cs.driftPpm),
                    doubleTalk: cs.doubleTalk, diverged: cs.diverged, resets: cs.resets)
                report.rows.append(row)
                if !options.quiet {
                    print("t \(rjust(fixed(row.t, 0), 4)) s  ERLE \(rjust(fixed(row.erleDb, 1), 5)) dB (engine \(rjust(fixed(row.engineErleDb, 1), 5)))  mic \(rjust(fixed(row.micDbfs, 1), 6)) dBFS  delay \(rjust(fixed(row.delayMs, 1), 6)) ms (\(row.delaySource))  drift \(rjust(signed(row.driftPpm), 7)) ppm  double-talk \(row.doubleTalk ? "yes" : "no")  resets \(row.resets)\(row.diverged ? "  DIVERGED" : "")")
                }
                nextSecond += 1
            }
        }

        do {
            // Main loop, then flush blocks (zero microphone) until the aligned
            // output covers the whole microphone file.
            var renders = 0.0, captures = 0.0
            // Files are processed faster than real time: both sides read a
            // simulated clock that advances by one frame per call (on its
            // own device's clock), so the drift follower sees the timing a
            // real duplex device would give it.
            let frameNs = Double(options.frameMs) * 1e6
            try engine.setClock(aecSimulatedClock)
            while written < totalFrames {
                // Render call j happens at j·T (playout clock), capture call k
                // at k·T / (1 + ppm·1e-6) (mic clock); ties: render first.
                // With --clock-ppm 0 this is plain lockstep.
                let renderDue = renders * (1e6 + options.clockPpm) <= captures * 1e6
                if renderDue {
                aecSimulatedNs = callNs.isEmpty ? UInt64(renders * frameNs) + 1_000_000_000
                    : callTime(Int(renders), frameNs: frameNs, ppm: 0)
                // 1. playout: push one frame of the reference and render it.
                let rb = block(Int(renders), rate: refRate)
                if !refDone {
                    let n = refBuffer.withUnsafeMutableBufferPointer { refFile.read(into: $0.baseAddress!, frames: rb) }
                    if n < rb {                           // end of the playout: silence from here
                        for i in (max(0, n) * refCh)..<(rb * refCh) { refBuffer[i] = 0 }
                        refDone = true
                    }
                } else {
                    for i in 0..<(rb * refCh) { refBuffer[i] = 0 }
                }
                let accepted = try refBuffer.withUnsafeBufferPointer {
                    try engine.push(UnsafeBufferPointer(rebasing: $0[0..<(rb * refCh)]), to: source, channels: refCh)
                }
                if accepted != rb { throw CLIError("the engine accepted only \(accepted) of \(rb) playout frames") }
                try playout.withUnsafeMutableBufferPointer { try engine.render(into: $0, frames: rb) }
                renders += 1
                continue
                }

                // 2. capture: the next frame of microphone.
                aecSimulatedNs = callNs.isEmpty ? UInt64(captures * frameNs / (1 + options.clockPpm * 1e-6)) + 1_000_000_000
                    : callTime(Int(captures), frameNs: frameNs, ppm: 0)
                let mb = block(Int(captures), rate: micRate)
                captures += 1
                var got = 0
                if micRead < totalFrames {
                    got = micBuffer.withUnsafeMutableBufferPointer { micFile.read(into: $0.baseAddress!, frames: mb) }
                    got = max(0, got)
                }
                for i in (got * micCh)..<(mb * micCh) { micBuffer[i] = 0 }
                for f in 0..<got {
                    let k = (micRead + f) / micRate
                    var p = 0.0
                    for c in 0..<micCh { let v = Double(micBuffer[f * micCh + c]); p += v * v }
                    micPower[k] += p
                    if plotFrames > 0 { plotMic[(micRead + f) / plotFrame] += p / Double(micCh) }
                }
                micRead += got
                try micBuffer.withUnsafeBufferPointer { m in
                    try outBuffer.withUnsafeMutableBufferPointer { o in
                        try engine.processCapture(mic: m, out: o, frames: mb)
                    }
                }
                if latency < 0 {
                    latency = max(0, engine.stats().capture.latencyFrames)
                    skip = options.align ? latency : 0
                }
                if plotFrames > 0 && got > 0 && engine.stats().capture.doubleTalk {
                    // The flag belongs to the audio this call read (the
                    // output is aligned with the microphone).
                    let a = (micRead - got) / plotFrame, b = (micRead - 1) / plotFrame
                    for k in a...b where k < plotFrames { plotDoubleTalk[k] = true }
                }

                // 3. output (aligned), per-second output power.
                let drop = min(skip, mb)
                skip -= drop
                let keep = min(mb - drop, totalFrames - written)
                if keep > 0 {
                    try outBuffer.withUnsafeBufferPointer { try out.write($0.baseAddress! + drop * micCh, frames: keep) }
                    for f in 0..<keep {
                        let k = (written + f) / micRate
                        var p = 0.0
                        for c in 0..<micCh { let v = Double(outBuffer[(drop + f) * micCh + c]); p += v * v }
                        outPower[k] += p
                        secondFrames[k] += 1
                        if plotFrames > 0 { plotOut[(written + f) / plotFrame] += p / Double(micCh) }
                    }
                    written += keep
                }
                emitSeconds(upTo: written, final: false)
            }
        } catch let error as RTMixError {
            throw CLIError("processing failed: \(AecRunner.message(error))")
        }
        emitSeconds(upTo: written, final: true)
        out.close()

        let elapsed = Date().timeIntervalSince(started)
        let es = engine.stats()
        let cs = es.capture
        let qualifying = report.rows.filter { $0.t > options.settle + 0.999 && $0.micDbfs > -60 }.map(\.erleDb).sorted()
        let median: Double? = qualifying.isEmpty ? nil
            : qualifying.count % 2 == 1 ? qualifying[qualifying.count / 2]
            : 0.5 * (qualifying[qualifying.count / 2 - 1] + qualifying[qualifying.count / 2])
        let sourceStats = try? engine.stats(for: source)
        let summary = AecReport.Summary(
            seconds: Double(totalFrames) / Double(micRate), micRate: micRate, micChannels: micCh,
            refRate: refRate, refChannels: refCh, frameMs: options.frameMs, tailMs: options.tailMs,
            delayHintMs: options.delayMs, clockPpm: options.clockPpm, settleSeconds: options.settle,
            medianErleDb: median, erleSecondsUsed: qualifying.count,
            finalDelayMs: Double(cs.delayMs), finalDelaySource: "\(cs.delaySource)", finalDriftPpm: Double(cs.driftPpm),
            engineErleDb: Double(cs.erleDb), resets: cs.resets, delayChanges: cs.delayChanges,
            doubleTalkFrames: cs.doubleTalkFrames, callsWithoutReference: cs.callsWithoutReference,
            referenceOverflowFrames: cs.referenceOverflowFrames, captureNsMax: cs.captureNsMax,
            latencyFrames: cs.latencyFrames, latencyMs: Double(cs.latencyFrames) * 1000 / Double(micRate),
            aligned: options.align, renderUnderrunFrames: sourceStats?.underrunFrames ?? 0,
            limiterActiveFrames: es.limiterActiveFrames, elapsedSeconds: elapsed)
        report.summary = summary

        var lines: [String] = []
        lines.append("summary: \(fixed(summary.seconds, 2)) s -> \(options.output) (\(out.formatName)) in \(fixed(elapsed, 2)) s")
        lines.append("  median ERLE \(median.map { fixed($0, 1) + " dB" } ?? "n/a") over \(qualifying.count) s (after \(fixed(options.settle, 1)) s, mic above -60 dBFS); engine ERLE \(fixed(summary.engineErleDb, 1)) dB")
        lines.append("  delay \(fixed(summary.finalDelayMs, 1)) ms (\(summary.finalDelaySource)), \(summary.delayChanges) changes; drift \(fixed(summary.finalDriftPpm, 1)) ppm (> 0: playout clock faster)")
        lines.append("  resets \(summary.resets), double-talk frames \(summary.doubleTalkFrames), calls without reference \(summary.callsWithoutReference), reference overflow frames \(summary.referenceOverflowFrames)")
        lines.append("  capture latency \(summary.latencyFrames) frames (\(fixed(summary.latencyMs, 1)) ms)\(options.align ? ", removed from the output" : "")")
        if summary.limiterActiveFrames > 0 {
            lines.append("  warning: the limiter acted on \(summary.limiterActiveFrames) playout frames: the reference differs from --ref (keep --ref below -1 dBFS)")
        }
        if summary.renderUnderrunFrames > 0 {
            lines.append("  warning: \(summary.renderUnderrunFrames) playout frames underran")
        }
        if plotFrames > 0 {
            var plot = AecPlot()
            plot.seconds = report.rows.map { ($0.t, $0.erleDb, $0.engineErleDb) }
            func mean(_ sums: [Double]) -> [Double] {
                sums.indices.map { sums[$0] / Double(max(1, min(plotFrame, totalFrames - $0 * plotFrame))) }
            }
            plot.mic = mean(plotMic)
            plot.out = mean(plotOut)
            plot.doubleTalk = plotDoubleTalk
            if let t = talkerFile {
                var sums = [Double](repeating: 0, count: plotFrames)
                var buffer = [Float](repeating: 0, count: 4_096 * t.channels)
                var at = 0
                while at < totalFrames {
                    let n = buffer.withUnsafeMutableBufferPointer { t.read(into: $0.baseAddress!, frames: min(4_096, totalFrames - at)) }
                    if n <= 0 { break }
                    for f in 0..<n {
                        var p = 0.0
                        for c in 0..<t.channels { let v = Double(buffer[f * t.channels + c]); p += v * v }
                        sums[(at + f) / plotFrame] += p / Double(t.channels)
                    }
                    at += n
                }
                plot.talker = mean(sums)
                let (muted, active, longest) = plot.mutedFrames()
                lines.append("  talker: \(muted.count) of \(active) active 20 ms frames muted (\(fixed(100 * Double(muted.count) / Double(max(active, 1)), 1)) %), longest run \(longest * 20) ms")
            }
            picture = plot.svg(title: "rtmix-cli aec: \((options.mic as NSString).lastPathComponent) against \((options.ref as NSString).lastPathComponent), \(micRate) Hz")
            lines.append("  plot: \(options.plot ?? "")")
        }
        print(lines.joined(separator: "\n"))
        return report
    }
}

/// The simulated time of the current call (file processing: see `run`).
nonisolated(unsafe) var aecSimulatedNs: UInt64 = 0
func aecSimulatedClock(_ context: UnsafeMutableRawPointer?) -> UInt64 { aecSimulatedNs }
