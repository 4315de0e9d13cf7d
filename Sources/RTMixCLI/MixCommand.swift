import ArgumentParser
import Foundation
import RTMix

/// `rtmix-cli mix`: mixes a voice file and/or a media file offline through
/// the engine.
struct Mix: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mix a voice file and/or a media file through the engine into one file.",
        discussion: """
        Inputs are read with libsndfile (WAV, FLAC, AIFF, OGG, ...; 8000–192000 Hz; mono or \
        stereo). The voice goes to the call domain, the media to the media domain; both are \
        resampled and channel-mapped by the engine to --rate/--channels, mixed in 10 ms \
        blocks as fast as possible and limited (never clips). The output format follows the \
        extension of --output: .wav or .flac. Gains are in dB: 0 leaves a source unchanged, \
        -6 is about half amplitude, the maximum is +24. While the voice is active the media is \
        ducked by --duck-db (default 0 = off; e.g. -12). Progress goes to stderr for inputs \
        longer than 20 s (or with --progress); a summary goes to stdout.
        """)

    @Option(help: "Far-end voice file (call domain).")
    var voice: String?

    @Option(help: "Media file (media domain).")
    var media: String?

    @Option(name: [.short, .long], help: "Output file (.wav or .flac).")
    var output: String

    @Option(help: "Output sample rate in Hz (8000–192000).")
    var rate = 48_000

    @Option(help: "Output channels (1 or 2).")
    var channels = 2

    @Option(parsing: .unconditional, help: "Voice gain in dB (e.g. -6; at most +24).")
    var voiceGain: Float = 0

    @Option(parsing: .unconditional, help: "Media gain in dB (e.g. -12; at most +24).")
    var mediaGain: Float = 0

    @Option(parsing: .unconditional, help: "Media ducking while the voice is active, in dB (-60...0; 0 = off).")
    var duckDb: Float = 0

    @Option(help: "Output sample format: s16, s24 or f32 (f32 only for .wav).")
    var format: SampleEncoding = .s16

    @Flag(help: "Show progress on stderr even for short inputs.")
    var progress = false

    @Flag(name: .shortAndLong, help: "No progress and no summary.")
    var quiet = false

    func validate() throws {
        guard voice != nil || media != nil else {
            throw ValidationError("give at least one input: --voice FILE and/or --media FILE")
        }
        guard (8_000...192_000).contains(rate) else { throw ValidationError("--rate must be 8000–192000 Hz") }
        guard (1...2).contains(channels) else { throw ValidationError("--channels must be 1 or 2") }
        for (name, g) in [("--voice-gain", voiceGain), ("--media-gain", mediaGain)] {
            guard g.isFinite, g >= -120, g <= 24 else { throw ValidationError("\(name) must be between -120 and +24 dB") }
        }
        guard duckDb.isFinite, duckDb >= -60, duckDb <= 0 else { throw ValidationError("--duck-db must be between -60 and 0 dB") }
    }

    func run() throws {
        var inputs: [(role: String, domain: Domain, path: String, gainDb: Float)] = []
        if let voice { inputs.append(("voice", .call, voice, voiceGain)) }
        if let media { inputs.append(("media", .media, media, mediaGain)) }
        for i in inputs where i.path == output {
            throw CLIError("the output '\(output)' is also an input")
        }
        let summary = try FileMixer(inputs: inputs, output: output, rate: rate, channels: channels,
                                    duckDb: duckDb, format: format, showProgress: !quiet,
                                    forceProgress: progress).run()
        if !quiet { print(summary) }
    }
}

/// One input file streamed into an engine source.
private final class MixInput {
    static let chunkFrames = 4096

    let role: String
    let path: String
    let gainDb: Float
    let file: SoundFile
    let id: SourceID
    let channels: Int
    let blockNeed: Int                 // source frames per output block (rounded up)
    let buffer: UnsafeMutablePointer<Float>
    var pendingOffset = 0, pendingFrames = 0
    var fileDone = false
    var padLeft: Int                   // zero frames pushed after the end to flush the resampler
    var framesRead = 0
    var finalStats: SourceStats?       // set when the source is removed

    init(role: String, path: String, gainDb: Float, file: SoundFile, id: SourceID, outputRate: Int, blockFrames: Int) {
        self.role = role
        self.path = path
        self.gainDb = gainDb
        self.file = file
        self.id = id
        channels = file.channels
        blockNeed = (blockFrames * file.sampleRate + outputRate - 1) / outputRate
        padLeft = max(file.sampleRate / 25, 2 * blockNeed)       // 40 ms
        buffer = .allocate(capacity: MixInput.chunkFrames * channels)
    }

    deinit { buffer.deallocate() }

    var active: Bool { finalStats == nil }

    /// Keeps at least two blocks' worth buffered in the engine; removes the
    /// source once the file and its padding have played out.
    func feed(_ engine: Engine) throws {
        guard active else { return }
        let target = 2 * blockNeed + 64
        while true {
            let st = try engine.stats(for: id)
            if fileDone && padLeft == 0 && pendingFrames == 0 {
                if st.bufferedFrames < 2 * blockNeed {
                    finalStats = st
                    try engine.removeSource(id)
                }
                return
            }
            if st.bufferedFrames >= target { return }
            if pendingFrames == 0 {
                let room = min(MixInput.chunkFrames, st.capacityFrames - st.bufferedFrames)
                if room <= 0 { return }
                if !fileDone {
                    let n = file.read(into: buffer, frames: room)
                    if n <= 0 { fileDone = true; continue }
                    framesRead += n
                    pendingFrames = n
                } else {
                    let n = min(room, padLeft)
                    buffer.update(repeating: 0, count: n * channels)
                    padLeft -= n
                    pendingFrames = n
                }
                pendingOffset = 0
            }
            let accepted = try engine.push(
                UnsafeBufferPointer(start: buffer + pendingOffset * channels, count: pendingFrames * channels),
                to: id, channels: channels)
            pendingOffset += accepted
            pendingFrames -= accepted
            if pendingFrames > 0 { return }            // ring full; the next block drains it
        }
    }
}

/// The offline mixing loop.
private struct FileMixer {
    let inputs: [(role: String, domain: Domain, path: String, gainDb: Float)]
    let output: String
    let rate: Int
    let channels: Int
    let duckDb: Float
    let format: SampleEncoding
    let showProgress: Bool
    let forceProgress: Bool

    func run() throws -> String {
        // Open and check every input before creating the output.
        var files: [SoundFile] = []
        for input in inputs {
            let f = try SoundFile(reading: input.path)
            guard (1...2).contains(f.channels) else {
                throw CLIError("'\(input.path)' has \(f.channels) channels; only mono or stereo inputs are supported")
            }
            guard (8_000...192_000).contains(f.sampleRate) else {
                throw CLIError("'\(input.path)' is sampled at \(f.sampleRate) Hz; supported rates are 8000–192000 Hz")
            }
            files.append(f)
        }
        let blockFrames = max(1, rate / 100)
        var config = EngineConfig()
        config.sampleRate = rate
        config.channels = channels
        config.duckDepthDb = duckDb
        let engine: Engine
        var mixInputs: [MixInput] = []
        do {
            engine = try Engine(config)
            for (input, file) in zip(inputs, files) {
                var sc = SourceConfig(domain: input.domain, sampleRate: file.sampleRate, channels: file.channels)
                // A file processor pushes exactly what each render takes, on no clock
                // of its own: no drift compensation, no priming, nothing dropped.
                sc.untimed()
                sc.bufferFrames = max(8_192, file.sampleRate / 4)
                sc.gain = powf(10, input.gainDb / 20)
                let id = try engine.addSource(sc)
                mixInputs.append(MixInput(role: input.role, path: input.path, gainDb: input.gainDb, file: file,
                                          id: id, outputRate: rate, blockFrames: blockFrames))
            }
        } catch {
            throw CLIError("engine setup failed: \(RTMixError.message(for: error.code))")
        }
        let totalFrames = files.map { f in
            Int((Int64(f.frames) * Int64(rate) + Int64(f.sampleRate) - 1) / Int64(f.sampleRate))
        }.max() ?? 0
        guard totalFrames > 0 else { throw CLIError("nothing to mix: the input files are empty") }

        let out = try SoundFile(writing: output, sampleRate: rate, channels: channels, encoding: format)
        let batchBlocks = 50
        let batch = UnsafeMutablePointer<Float>.allocate(capacity: batchBlocks * blockFrames * channels)
        defer { batch.deallocate() }
        var meter = LevelMeter()
        var progress = Progress(total: totalFrames, rate: rate,
                                enabled: showProgress && (forceProgress || totalFrames > 20 * rate))
        let started = monotonicNs()
        var rendered = 0
        var batched = 0
        do {
            while rendered < totalFrames {
                for input in mixInputs { try input.feed(engine) }
                let n = min(blockFrames, totalFrames - rendered)
                let dst = batch + batched * channels
                try engine.render(into: UnsafeMutableBufferPointer(start: dst, count: n * channels), frames: n)
                meter.add(dst, count: n * channels)
                batched += n
                rendered += n
                if batched + blockFrames > batchBlocks * blockFrames || rendered == totalFrames {
                    try out.write(batch, frames: batched)
                    batched = 0
                }
                progress.update(rendered)
            }
        } catch let error as RTMixError {
            throw CLIError("mixing failed: \(RTMixError.message(for: error.code))")
        }
        out.close()
        progress.finish()
        let elapsed = Double(monotonicNs() - started) / 1e9

        // Statistics: removed sources kept their final figures.
        var underruns: UInt64 = 0, rejected: UInt64 = 0
        var lines: [String] = []
        var warnings: [String] = []
        let seconds = Double(totalFrames) / Double(rate)
        lines.append("rtmix-cli mix: \(mixInputs.count) input\(mixInputs.count == 1 ? "" : "s") -> \(output) (\(out.formatName), \(rate) Hz \(channelName(channels)))")
        for input in mixInputs {
            let st = input.finalStats ?? (try? engine.stats(for: input.id)) ?? SourceStats()
            underruns += st.underrunFrames
            rejected += st.framesRejected
            let f = input.file
            lines.append("  " + padded(input.role, 7) + "\(input.path): \(f.formatName), \(f.sampleRate) Hz \(channelName(f.channels)), \(fixed(Double(f.frames) / Double(f.sampleRate), 2)) s, gain \(fixed(Double(input.gainDb))) dB, underrun frames \(st.underrunFrames)"
                         + (st.nonfiniteSamples > 0 ? ", non-finite samples replaced by 0: \(st.nonfiniteSamples)" : ""))
            if st.nonfiniteSamples > 0 {
                warnings.append("rtmix-cli mix: warning: \(input.path) has \(st.nonfiniteSamples) NaN/Inf samples; they were mixed as 0")
            }
        }
        let es = engine.stats()
        lines.append("  " + padded("output", 7) + "\(totalFrames) frames (\(fixed(seconds, 2)) s) in \(fixed(elapsed, 2)) s (\(fixed(seconds / max(elapsed, 1e-9), 0))× real time)")
        for w in warnings { FileHandle.standardError.write(Data((w + "\n").utf8)) }
        lines.append("  " + padded("engine", 7) + "underrun frames \(underruns), rejected \(rejected), non-finite samples replaced \(es.nonfiniteSamples), limiter active \(es.limiterActiveFrames) frames (min gain \(fixed(Double(es.limiterMinGainDb), 2)) dB), render p50 \(micros(es.renderNsP50)) p99 \(micros(es.renderNsP99))")
        lines.append("  " + padded("level", 7) + "peak \(decibels(Double(meter.peak))), RMS \(decibels(meter.rms))")
        return lines.joined(separator: "\n")
    }

    private func channelName(_ c: Int) -> String { c == 1 ? "mono" : "stereo" }
}

/// A percentage on stderr, updated every 5 %.
private struct Progress {
    let total: Int
    let rate: Int
    let enabled: Bool
    private var lastStep = -1
    private let tty = isatty(2) != 0

    init(total: Int, rate: Int, enabled: Bool) {
        self.total = total
        self.rate = rate
        self.enabled = enabled
    }

    mutating func update(_ done: Int) {
        guard enabled else { return }
        let step = Int(Double(done) / Double(total) * 20)
        guard step != lastStep else { return }
        lastStep = step
        let line = "mix: \(step * 5)% (\(fixed(Double(done) / Double(rate), 1)) s of \(fixed(Double(total) / Double(rate), 1)) s)"
        FileHandle.standardError.write(Data(((tty ? "\r" : "") + line + (tty ? "" : "\n")).utf8))
    }

    func finish() {
        if enabled && tty { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
