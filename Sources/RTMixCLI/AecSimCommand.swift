import ArgumentParser
import Foundation
import RTMixSignals

/// `rtmix-cli aec-sim`: writes a playout file and the microphone recording
/// of it in a simulated room (RTMixSignals.EchoPath), to try `aec` without
/// any other tool.
struct AecSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aec-sim",
        abstract: "Simulate an echo path: write playout.wav and mic.wav for `rtmix-cli aec`.",
        discussion: """
        The playout is synthetic far-end speech (plus synthetic music with --music) at \
        --rate, mono, peak -3 dBFS. The microphone, at --capture-rate, hears it through a \
        simulated room (direct path at --distance, reflections, a noise tail with --rt60), \
        a device delay (--delay-ms, optionally jumping by --jump-ms at --jump-at), clock \
        drift (--drift-ppm), white noise --snr-db below the echo, and with --near-end a \
        second synthetic talker. The true echo delay (device delay + direct path; a playout \
        sample rendered in block b whose echo is τ samples later in mic.wav has delay τ) \
        is printed. Then try:
          rtmix-cli aec --mic DIR/mic.wav --ref DIR/playout.wav -o DIR/out.wav
        """)

    @Option(name: [.short, .long], help: "Output directory (created if missing).")
    var output: String

    @Option(help: "Length in seconds.")
    var seconds = 10.0

    @Option(help: "Playout sample rate in Hz.")
    var rate = 48_000

    @Option(help: "Microphone sample rate in Hz (8000–48000).")
    var captureRate = 16_000

    @Option(help: "Device (bulk) delay in ms.")
    var delayMs = 40.0

    @Option(help: "Loudspeaker-to-microphone distance in metres.")
    var distance = 0.4

    @Option(help: "Room reverberation time RT60 in seconds.")
    var rt60 = 0.4

    @Option(parsing: .unconditional, help: "Microphone clock relative to the playout clock, in ppm.")
    var driftPpm = 0.0

    @Option(help: "Time in seconds at which the device delay jumps (with --jump-ms).")
    var jumpAt: Double?

    @Option(parsing: .unconditional, help: "Delay change at --jump-at in ms.")
    var jumpMs = 100.0

    @Option(help: "Echo-to-noise ratio in dB.")
    var snrDb = 50.0

    @Flag(help: "Add synthetic music to the playout (a mixed stream).")
    var music = false

    @Flag(help: "Add a near-end talker (double talk) from 1/3 of the file on.")
    var nearEnd = false

    @Option(help: "Sample format of the files: s16, s24 or f32.")
    var format: SampleEncoding = .f32

    @Option(help: "Seed for the signals and the room.")
    var seed: UInt64 = 1

    func validate() throws {
        guard seconds > 0, seconds <= 3_600 else { throw ValidationError("--seconds must be in (0, 3600]") }
        guard (8_000...192_000).contains(rate) else { throw ValidationError("--rate must be 8000–192000 Hz") }
        guard (8_000...48_000).contains(captureRate) else { throw ValidationError("--capture-rate must be 8000–48000 Hz") }
        guard delayMs >= 0, delayMs <= 2_000 else { throw ValidationError("--delay-ms must be 0–2000") }
        guard distance > 0.01, distance <= 20 else { throw ValidationError("--distance must be 0.01–20 m") }
        guard rt60 >= 0.05, rt60 <= 2 else { throw ValidationError("--rt60 must be 0.05–2 s") }
        guard abs(driftPpm) <= 5_000 else { throw ValidationError("--drift-ppm must be within ±5000") }
        if let jumpAt { guard jumpAt >= 0, jumpAt < seconds else { throw ValidationError("--jump-at must lie inside the file") } }
        guard delayMs + min(0, jumpMs) >= 0 else { throw ValidationError("the delay cannot become negative") }
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let n = Int(seconds * Double(rate))
        var playout = EchoPath.farEndTalker(sampleRate: rate, count: n, seed: seed)
        if music {
            var synth = MusicSynth(sampleRate: rate, seed: seed &+ 1)
            var stereo = [Float](repeating: 0, count: 2 * n)
            stereo.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, frames: n) }
            for i in 0..<n { playout[i] += 0.35 * (stereo[2 * i] + stereo[2 * i + 1]) }
        }
        let peak = playout.reduce(0) { max($0, abs($1)) }
        let scale = peak > 0 ? powf(10, -3 / 20) / peak : 1
        for i in 0..<n { playout[i] *= scale }

        let atCapture = SincResampler.resample(playout, ratio: Double(captureRate) / Double(rate))
        let m = Int(seconds * Double(captureRate))
        var far = Array(atCapture.prefix(m))
        if far.count < m { far += [Float](repeating: 0, count: m - far.count) }
        var o = EchoPath.Options(sampleRate: captureRate)
        o.distance = distance
        o.rt60 = rt60
        o.seed = seed
        o.bulkDelay = Int((delayMs * Double(captureRate) / 1000).rounded())
        o.driftPpm = driftPpm
        if let jumpAt {
            o.jumpAt = Int(jumpAt * Double(captureRate))
            o.jumpBy = Int((jumpMs * Double(captureRate) / 1000).rounded())
        }
        o.noiseSnrDb = snrDb
        let path = EchoPath(o)
        var near: [Float]? = nil
        if nearEnd {
            var talker = EchoPath.nearEndTalker(sampleRate: captureRate, count: m, seed: seed &+ 76, gain: 0.25)
            for i in 0..<min(m, m / 3) { talker[i] = 0 }
            near = talker
        }
        let mic = path.microphone(farEnd: far, nearEnd: near)
        let micPeak = mic.mic.reduce(0) { max($0, abs($1)) }
        guard micPeak < 1 else { throw CLIError("the simulated microphone clips (peak \(micPeak)); lower the levels") }

        try write(playout, rate: rate, to: output + "/playout.wav")
        try write(mic.mic, rate: captureRate, to: output + "/mic.wav")
        if nearEnd { try write(mic.nearEnd, rate: captureRate, to: output + "/near.wav") }
        let trueDelay = path.echoDelaySamples * 1000 / Double(captureRate)
        print("rtmix-cli aec-sim: \(output)/playout.wav (\(rate) Hz mono) and \(output)/mic.wav (\(captureRate) Hz mono), \(fixed(seconds, 1)) s\(nearEnd ? ", near.wav (clean near end)" : "")")
        print("  room: \(fixed(distance, 2)) m direct path, RT60 \(fixed(rt60, 2)) s (measured \(fixed(RoomImpulseResponse.measureRT60(path.impulseResponse, sampleRate: captureRate), 2)) s)")
        print("  true echo delay \(fixed(trueDelay, 2)) ms (device \(fixed(delayMs, 1)) ms + direct path \(fixed(path.directPathSamples * 1000 / Double(captureRate), 2)) ms)\(jumpAt.map { ", +\(fixed(jumpMs, 0)) ms at \(fixed($0, 1)) s" } ?? "")")
        print("  drift \(fixed(driftPpm, 1)) ppm, echo-to-noise \(fixed(snrDb, 0)) dB\(music ? ", playout = speech + music" : "")")
    }

    private func write(_ x: [Float], rate: Int, to path: String) throws {
        let f = try SoundFile(writing: path, sampleRate: rate, channels: 1, encoding: format)
        try x.withUnsafeBufferPointer { try f.write($0.baseAddress!, frames: x.count) }
        f.close()
    }
}
