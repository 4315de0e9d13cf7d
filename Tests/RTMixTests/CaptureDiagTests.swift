import XCTest
@testable import RTMix

/// Exploration harness (env-driven, prints only; skipped unless DIAG=1).
final class CaptureDiagTests: XCTestCase {
    func testDiag() throws {
        let env = ProcessInfo.processInfo.environment
        guard env["DIAG"] != nil else { return }
        let rate = 16_000
        let delay = Int(env["DIAG_DELAY"] ?? "150")! * rate / 1000
        let seconds = Double(env["DIAG_SECONDS"] ?? "20")!
        var far = env["DIAG_WAV"] != nil ? EchoSim.loadWav(env["DIAG_WAV"]!, rate: rate)! : EchoSim.speech(rate: rate, seconds: seconds, seed: 4)
        while far.count < Int(seconds * Double(rate)) { far += far }
        far = Array(far[0..<Int(seconds * Double(rate))])
        if env["DIAG_MUSIC"] != nil {
            let m = EchoSim.music(rate: rate, seconds: seconds, seed: 5)
            far = zip(far, m).map { 0.6 * $0 + 0.4 * $1 }
        }
        let h = EchoSim.roomImpulseResponse(rate: rate, directDelay: delay, directToReverbDb: Double(env["DIAG_DRR"] ?? "4")!, length: delay + 3200, seed: 10)
        var mic = EchoSim.convolve(far, h)
        let ppm = Double(env["DIAG_PPM"] ?? "0")!
        if ppm != 0 { mic = EchoSim.resampled(mic, ppm: ppm) }
        var near = [Float](repeating: 0, count: mic.count)
        if let nearPath = env["DIAG_NEAR"] {
            let talker = EchoSim.loadWav(nearPath, rate: rate)!
            let g = Float(env["DIAG_NEAR_GAIN"] ?? "0.5")!
            let start = 8 * rate
            for i in 0..<min(talker.count, near.count - start) { near[start + i] = g * talker[i] }
            for i in 0..<mic.count { mic[i] += near[i] }
        }
        var noise = EchoSim.Noise(seed: 77)
        for i in 0..<mic.count { mic[i] += 3e-4 * noise.next() }
        var c = EngineConfig()
        c.sampleRate = rate; c.channels = 1; c.captureRate = rate
        if env["DIAG_NORES"] != nil { c.echoSuppression = false }
        if env["DIAG_NOGATE"] != nil { }
        if env["DIAG_NONS"] != nil { c.noiseSuppression = false }
        let e = try Engine(c)
        var s = SourceConfig(domain: .call, sampleRate: rate, channels: 1)
        s.bufferFrames = 1 << 16
        let id = try e.addSource(s)
        if let hint = env["DIAG_HINT"] { try e.setStreamDelay(ms: Int(hint)!) }
        var line = ""
        let every = Int(env["DIAG_EVERY"] ?? "50")!
        let out = try DeviceRun(block: 160, playoutRate: rate, captureRate: rate, micClockPpm: ppm)
            .run(engine: e, source: id, playout: far, mic: mic) { b in
                if b % every == every - 1 {
                    let st = e.stats().capture
                    let p = e.core.pointee.capture!.pointee.processor
                    if let g = p.pointee.gate { line += String(format: " g%.0e/%.2f", g.leak, g.gain) }
                    line += String(format: " [%.1f %.1f %.0f c%d t%d s%.1f]", st.delayMs, st.estimatedDelayMs, st.driftPpm, p.pointee.h - p.pointee.n, p.pointee.cTarget, p.pointee.cSmoothed)
                }
            }
        print("timeline:" + line)
        var erles = ""
        for sec in 0..<(out.count / rate) {
            erles += String(format: " %.0f", EchoSim.erle(mic: mic, out: out, rate: rate, from: Double(sec), to: Double(sec + 1)))
        }
        print("erle:" + erles)
        if env["DIAG_NEAR"] != nil {
            let q = EchoSim.nearEndQuality(out: out, near: near, rate: rate, from: 8 * rate, to: min(out.count, 20 * rate), maxLag: 800)
            let micq = EchoSim.nearEndQuality(out: mic, near: near, rate: rate, from: 8 * rate, to: min(out.count, 20 * rate), maxLag: 10)
            print("near-end: lag \(q.lag) segSNR \(q.segmentalSnr) dB (mic itself: \(micq.segmentalSnr))")
        }
        print("median from 5 s: \(EchoSim.medianErle(mic: mic, out: out, rate: rate, from: 5, to: out.count / rate)) stats: \(e.stats().capture)")
    }
}
