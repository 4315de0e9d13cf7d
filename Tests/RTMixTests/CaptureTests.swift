import XCTest
@testable import RTMix

/// One simulated device: a playout through a room to a microphone, with a
/// device delay, optional clock drift, a delay jump and a near-end talker,
/// processed by an engine with capture on.
struct EchoScenario {
    var captureRate = 16_000
    var outputRate = 16_000
    var seconds = 12.0
    var delayMs = 120.0
    var hintMs: Int? = nil
    var micClockPpm = 0.0
    /// The microphone's clock differs but the calls come in lockstep (one
    /// duplex callback driving two devices, a file tool): only the echo
    /// drifts, the call timing says nothing.
    var acousticOnly = false
    var duplexJitterMs = 0.0
    var jitterSeed: UInt64 = 1234
    /// From `atSeconds` the echo path is `extraMs` longer (shorter when
    /// negative, by at most `delayMs`).
    var jump: (atSeconds: Double, extraMs: Double)? = nil
    /// The echo path lengthens at `ppm` from `fromSeconds` to `toSeconds`
    /// (`EchoSim.crept`); the calls stay in lockstep.
    var creep: (fromSeconds: Double, toSeconds: Double, ppm: Double)? = nil
    /// Media heard by the microphone but played outside the engine.
    var voiceOnlyReference = false
    var nearEnd = false
    /// The microphone hears no echo before this time (a headset taken
    /// off then; past `seconds`: no echo at all).
    var echoFromSeconds = 0.0
    /// The microphone hears no echo in this span (a loudspeaker muted for
    /// a while).
    var echoGap: Range<Double>? = nil
    /// The echo's level (a quieter loudspeaker: < 1).
    var echoGain: Float = 1
    /// The microphone's gain: everything it hears (echo, talker, noise)
    /// scaled alike (a quieter microphone: < 1).
    var micGain: Float = 1
    /// The near-end talker's amplitude (the synthetic speech's scale).
    var nearGain: Float = 0.5
    /// The near-end talker's pitch. At 210 Hz (1.5 × the far end's 140,
    /// with the same vibrato and formant tracks) its harmonics fall on
    /// the far end's: the linear filter takes 10–30 dB of it out as if it
    /// were echo.
    var nearPitchHz: Float = 210
    var publishMedia: Float = 0
    var seed: UInt64 = 4
    /// The room: reverberation time and impulse response length past the
    /// direct path (default: 0.35 s, 200 ms: what speexdsp's tail models).
    var rt60 = 0.35
    var tailSeconds = 0.2

    struct Result {
        var mic: [Float]
        var out: [Float]
        var near: [Float]
        var stats: CaptureStats
        var events: [EngineEvent]
        /// The largest |drift| the capture statistics showed after any call.
        var peakDriftPpm: Float = 0
        /// The drift the statistics showed after each capture call.
        var driftPpm: [Float] = []
    }

    func run(configure: ((inout EngineConfig) -> Void)? = nil) throws -> Result {
        let voice = EchoSim.speech(rate: outputRate, seconds: seconds, seed: seed)
        let media = EchoSim.music(rate: outputRate, seconds: seconds, seed: seed + 1)
        let heard = zip(voice, media).map { 0.6 * $0 + 0.4 * $1 }
        let played = voiceOnlyReference ? voice.map { 0.6 * $0 } : heard
        // The microphone hears `heard` at the capture rate.
        var atMic = heard
        if outputRate != captureRate {
            let r = Resampler(quality: .sincBest, channels: 1, inputRate: outputRate, outputRate: captureRate,
                              driftCompensation: false)!
            var y = [Float](repeating: 0, count: heard.count * captureRate / outputRate + 4096)
            let res = heard.withUnsafeBufferPointer { i in y.withUnsafeMutableBufferPointer { o in
                r.process(input: i.baseAddress!, inputFrames: i.count, output: o.baseAddress!, outputFrames: o.count,
                          ratio: Double(captureRate) / Double(outputRate)) } }
            atMic = Array(y[0..<res.generated])
        }
        let delay = Int(delayMs * Double(captureRate) / 1000)
        let h = EchoSim.roomImpulseResponse(rate: captureRate, directDelay: delay, rt60: rt60,
                                            length: delay + Int(tailSeconds * Double(captureRate)), seed: seed + 10)
        var mic = EchoSim.convolve(atMic, h)
        if let j = jump {
            let extra = Int(j.extraMs * Double(captureRate) / 1000)
            // A shorter path (extra < 0): the response moved earlier.
            let h2 = extra >= 0 ? [Float](repeating: 0, count: extra) + h : Array(h[(-extra)...])
            let later = EchoSim.convolve(atMic, h2)
            let at = Int(j.atSeconds * Double(captureRate))
            for i in at..<mic.count { mic[i] = later[i] }
        }
        if micClockPpm != 0 { mic = EchoSim.resampled(mic, ppm: micClockPpm) }
        if let c = creep {
            mic = EchoSim.crept(mic, rate: captureRate, from: c.fromSeconds, to: c.toSeconds, ppm: c.ppm)
        }
        for i in 0..<min(mic.count, Int(echoFromSeconds * Double(captureRate))) { mic[i] = 0 }
        if let g = echoGap {
            for i in min(mic.count, Int(g.lowerBound * Double(captureRate)))..<min(mic.count, Int(g.upperBound * Double(captureRate))) {
                mic[i] = 0
            }
        }
        if echoGain != 1 { for i in 0..<mic.count { mic[i] *= echoGain } }
        var near = [Float](repeating: 0, count: mic.count)
        if nearEnd {
            let talker = EchoSim.speech(rate: captureRate, seconds: seconds, seed: seed + 99, pitchHz: nearPitchHz)
            let start = mic.count / 2
            for i in start..<mic.count { near[i] = nearGain * talker[i - start] }
            for i in 0..<mic.count { mic[i] += near[i] }
        }
        var noise = EchoSim.Noise(seed: seed + 77)
        for i in 0..<mic.count { mic[i] += 3e-4 * noise.next() }  // about -75 dBFS
        if micGain != 1 {
            for i in 0..<mic.count { mic[i] *= micGain }
            for i in 0..<near.count { near[i] *= micGain }
        }

        var config = EngineConfig()
        config.sampleRate = outputRate
        config.channels = 1
        config.captureRate = captureRate
        configure?(&config)
        let engine = try Engine(config)
        var source = SourceConfig.classic(domain: .media, sampleRate: outputRate, channels: 1)
        source.bufferFrames = 1 << 16
        let id = try engine.addSource(source)
        if let hint = hintMs { try engine.setStreamDelay(ms: hint) }
        try engine.setPublishGain(publishMedia, for: .media)
        var peakDrift: Float = 0
        var drift: [Float] = []
        let out = try DeviceRun(block: captureRate / 100, playoutRate: outputRate, captureRate: captureRate,
                                micClockPpm: acousticOnly ? 0 : micClockPpm, duplexJitterMs: duplexJitterMs,
                                jitterSeed: jitterSeed)
            .run(engine: engine, source: id, playout: played, mic: mic, onCapture: { _ in
                let ppm = engine.stats().capture.driftPpm
                peakDrift = max(peakDrift, abs(ppm))
                drift.append(ppm)
            })
        var events: [EngineEvent] = []
        while let e = engine.nextEvent() { events.append(e) }
        return Result(mic: Array(mic[0..<out.count]), out: out, near: Array(near[0..<out.count]),
                      stats: engine.stats().capture, events: events, peakDriftPpm: peakDrift, driftPpm: drift)
    }
}

/// Bounds below are set under what was measured (figures in comments,
/// from the run that set them).
final class CaptureTests: XCTestCase {
    func median(_ r: EchoScenario.Result, rate: Int, from: Int, to: Int? = nil) -> Double {
        EchoSim.medianErle(mic: r.mic, out: r.out, rate: rate, from: from, to: to ?? r.out.count / rate)
    }

    func testMixedStreamEchoIsCancelledWithHint() throws {
        let r = try EchoScenario(delayMs: 120, hintMs: 120).run()
        let erle = median(r, rate: 16_000, from: 2)
        let first = EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: 0, to: 1)
        print("mixed stream, hint: median ERLE \(erle) dB, first second \(first) dB, stats \(r.stats.erleDb)")
        // Per-bin suppression (issue 16): 29.5 dB measured; the broadband
        // gate it replaced reached > 40 here by muting, and cut talkers.
        XCTAssertGreaterThan(erle, 26)
        XCTAssertGreaterThan(first, 20)
        XCTAssertEqual(r.stats.delaySource, .hint)
    }

    func testMixedStreamAt48kOutputAnd48kCapture() throws {
        for (output, capture) in [(48_000, 16_000), (48_000, 48_000)] {
            let r = try EchoScenario(captureRate: capture, outputRate: output, seconds: 10, delayMs: 80).run()
            let erle = median(r, rate: capture, from: 3)
            print("\(output)->\(capture): median ERLE \(erle) dB, delay \(r.stats.delayMs) ms")
            // Measured 32.8 (16 kHz) / 26.9 dB (48 kHz) with per-bin suppression.
            XCTAssertGreaterThan(erle, 24, "\(output)->\(capture)")
            XCTAssertEqual(Double(r.stats.delayMs), 80, accuracy: 4, "\(output)->\(capture)")
        }
    }

    /// Judged on the linear canceller: it can only cancel what its
    /// reference holds. (With residual-echo suppression on, the echo-only
    /// state also takes out playout the reference lacks while nobody
    /// talks at the near end: 35.0 vs 46.8 dB, mixed vs voice only.)
    func testMixedStreamReferenceBeatsVoiceOnlyReference() throws {
        let linearOnly: (inout EngineConfig) -> Void = { $0.echoSuppression = false; $0.noiseSuppression = false }
        let mixed = try EchoScenario(seconds: 10, hintMs: 120).run(configure: linearOnly)
        let voiceOnly = try EchoScenario(seconds: 10, hintMs: 120, voiceOnlyReference: true).run(configure: linearOnly)
        let a = median(mixed, rate: 16_000, from: 2), b = median(voiceOnly, rate: 16_000, from: 2)
        print("linear ERLE with the whole mix as reference \(a) dB, voice only \(b) dB")
        // Measured 17.2 vs 0.5 dB.
        XCTAssertGreaterThan(a - b, 12)
    }

    func testDelayIsEstimatedWithoutHint() throws {
        for delay in [0.0, 35, 120, 280, 480] {
            let r = try EchoScenario(seconds: 12, delayMs: delay).run()
            let erle = median(r, rate: 16_000, from: 5)
            print("auto delay \(delay) ms: estimate \(r.stats.delayMs) ms (\(r.stats.delaySource)), ERLE \(erle) dB")
            XCTAssertEqual(Double(r.stats.delayMs), delay, accuracy: 4, "delay \(delay)")
            // Measured 27.9–33.1 dB with per-bin suppression.
            XCTAssertGreaterThan(erle, 25, "delay \(delay)")
        }
    }

    func testWrongHintIsReplacedByTheEstimate() throws {
        let r = try EchoScenario(seconds: 12, delayMs: 200, hintMs: 60).run()
        print("hint 60 ms, truth 200 ms: now \(r.stats.delayMs) ms (\(r.stats.delaySource))")
        XCTAssertEqual(r.stats.delaySource, .estimator)
        XCTAssertEqual(Double(r.stats.delayMs), 200, accuracy: 4)
        XCTAssertGreaterThan(median(r, rate: 16_000, from: 6), 30)
    }

    func testDelayJumpIsFollowedWithinTwoSeconds() throws {
        let r = try EchoScenario(seconds: 16, delayMs: 60, jump: (atSeconds: 8, extraMs: 100)).run()
        var line = ""
        for s in 6..<16 { line += String(format: " %.0f", EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: Double(s), to: Double(s + 1))) }
        var quarters = ""
        var worstFromThreeQuarters = Double.infinity, worst = Double.infinity
        for q in 0..<12 {
            let t = 8 + 0.25 * Double(q)
            let e = EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: t, to: t + 0.25)
            quarters += String(format: " %.0f", e)
            if q >= 3 { worstFromThreeQuarters = min(worstFromThreeQuarters, e) }
            worst = min(worst, e)
        }
        print("delay jump +100 ms at 8 s: ERLE per second from 6 s:\(line); per 0.25 s from 8 s:\(quarters); delay now \(r.stats.delayMs) ms")
        XCTAssertEqual(Double(r.stats.delayMs), 160, accuracy: 4)
        XCTAssertGreaterThan(median(r, rate: 16_000, from: 10), 30)
        // From 0.75 s after the jump every 0.25 s window keeps the echo out
        // (measured: 61 dB at worst; the code before single hops gave 53:
        // on this simulation the averaged estimate is as quick as two single
        // hops, the evaluation's recorded scenes show the difference,
        // docs/capture.md).
        XCTAssertGreaterThan(worstFromThreeQuarters, 30)
        // And from the jump on, no 0.25 s window under 20 dB (the issue's
        // goal): the linear filter's error turns against its own estimate
        // in the first frames (`EchoFilterCheck`), and the suppressor
        // falls back on the reference and the path gain until the delay
        // tracker has moved the reference. Measured: 45 40 28 dB in the
        // first three windows (twelfth session; 50 46 68 since the
        // suppressor also looks ahead after a suspicion); without the
        // check 4 0 10.
        XCTAssertGreaterThan(worst, 20)
        XCTAssertTrue(r.events.contains { $0.kind == .echoPathChanged && abs(Double($0.value) / 1000 - 160) < 4 })
        XCTAssertGreaterThanOrEqual(r.stats.delayChanges, 1)
    }

    /// A talker who starts with a +100 ms move of the echo path (a student
    /// answers while the laptop is being moved). Until the delay tracker
    /// moves the reference the talker is read partly as echo; once it has,
    /// the filter, kept, models the echo again, the filter check finds it
    /// right in double talk from its slope (`EchoFilterCheck.realigned`)
    /// and the suppressor gets back the trust it had earned. Before that,
    /// every realignment distrusted the filter (its leak taken as 0 dB and
    /// falling 0.1 dB a frame) and the talker lost whole words for seconds.
    /// Measured: 41 of 105 frames muted (39.0 %, longest run 300 ms), 35
    /// of 99 from 1.5 s after the move (35.4 %); with every realignment
    /// distrusted 54 of 105 (51.4 %) and 48 of 99 (48.5 %). The moved
    /// echo and the new talker look alike until then (issue 16 stays
    /// open on this: docs/capture.md).
    func testATalkerStartingWithAMovedEchoPathIsKeptOnceTheReferenceFollows() throws {
        let r = try EchoScenario(seconds: 16, delayMs: 60, jump: (atSeconds: 8, extraMs: 100), nearEnd: true).run()
        let (muted, active, share, longest) = mutedTalkerFrames(r)
        let late = mutedTalkerFrames(r, fromSeconds: 9.5)
        print("talker starting with a +100 ms move: \(muted) of \(active) frames muted (\(share * 100) %), longest run "
              + "\(longest * 20) ms; from 1.5 s after the move \(late.0) of \(late.1) (\(late.2 * 100) %), longest run "
              + "\(late.3 * 20) ms; delay now \(r.stats.delayMs) ms")
        XCTAssertEqual(Double(r.stats.delayMs), 160, accuracy: 4)
        XCTAssertGreaterThan(active, 100)
        XCTAssertLessThan(late.2, 0.42)
        XCTAssertLessThan(share, 0.45)
    }

    /// The echo path getting 100 ms shorter (160 → 60 ms, a route from a
    /// far loudspeaker to a near one): the echo now comes from reference
    /// that the canceller, still aligned 160 ms back, has not been fed
    /// yet. The filter check sees the filter wrong in the first frames and
    /// the suppressor takes in the reference already played ahead of the
    /// aligned frame (`CaptureProcessor.startLookingAhead`) until the delay
    /// tracker has moved the reference. Measured: 0.25 s windows from the
    /// jump 51 66 63 dB, then 66–70; without the look-ahead
    /// (`aheadMs` 0) 40 37 17; with it ended when the filter check finds
    /// the filter right again 51 65 17, and with the echo-only state's
    /// path weight left at 0.5 while looking ahead 51 65 21.
    func testAShorterEchoPathIsSuppressedFromTheReferenceAhead() throws {
        let r = try EchoScenario(seconds: 16, delayMs: 160, jump: (atSeconds: 8, extraMs: -100)).run()
        var quarters = ""
        var worst = Double.infinity
        for q in 0..<12 {
            let t = 8 + 0.25 * Double(q)
            let e = EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: t, to: t + 0.25)
            quarters += String(format: " %.0f", e)
            worst = min(worst, e)
        }
        print("delay jump -100 ms at 8 s: ERLE per 0.25 s from 8 s:\(quarters); delay now \(r.stats.delayMs) ms")
        XCTAssertEqual(Double(r.stats.delayMs), 60, accuracy: 4)
        XCTAssertGreaterThan(median(r, rate: 16_000, from: 10), 30)
        XCTAssertGreaterThan(worst, 35)
    }

    /// A small shift of the echo path (3.4 ms, as PulseAudio's loopback
    /// moved under load), under the 4 ms a move needs to be adopted: three
    /// agreeing estimates 2–4 ms away move the reference and start the
    /// canceller afresh, where it used to re-learn the shift in place for
    /// about 5 s. Judged on the canceller alone (the suppressor would hide
    /// it). Measured: seconds 2–5 after the shift 13.8 dB linear ERLE median
    /// (7.8 dB without the rule, whose delay stays at 60.0 ms), the delay in
    /// use 63.4 ms.
    func testSmallEchoPathShiftIsFollowed() throws {
        let linearOnly: (inout EngineConfig) -> Void = { $0.echoSuppression = false; $0.noiseSuppression = false }
        let r = try EchoScenario(seconds: 14, delayMs: 60, jump: (atSeconds: 6, extraMs: 3.4)).run(configure: linearOnly)
        var line = ""
        for s in 4..<14 { line += String(format: " %.1f", EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: Double(s), to: Double(s + 1))) }
        let after = median(r, rate: 16_000, from: 8, to: 11)
        print("small shift +3.4 ms at 6 s: linear ERLE per second from 4 s:\(line); 8-11 s median \(after) dB; delay now \(r.stats.delayMs) ms")
        XCTAssertEqual(Double(r.stats.delayMs), 63.4, accuracy: 1.5)
        XCTAssertGreaterThan(after, 11)
    }

    /// Drift is judged on the canceller's own (linear) cancellation: the
    /// residual-echo stages would hide a misaligned reference.
    /// ±200 ppm between the microphone's and the loudspeaker's clocks with
    /// the calls in lockstep (no clock information): the echo's slide is
    /// followed from the signal (`EchoSlideTracker`, issue 16 item 3).
    /// Measured (linear canceller only, eleventh session): estimates
    /// −201.8 / +201.1 ppm, ERLE 35.2 / 35.4 dB against 38.9 without drift
    /// (the same drift with paced calls, followed from their timing: 33.2 /
    /// 33.8 dB). Each fit taken at 0.8 with no settling after a correction
    /// (until the eleventh session): 30.4 / 30.4 dB; taken whole without
    /// settling: 23.8 / 21.0 dB (the fit over the filter's catch-up
    /// overshoots); without the tracker 0 ppm and 7.8 / 7.7 dB. With the
    /// suppressor (aec_eval scenario d) the lockstep rows come within
    /// 2 dB of no drift.
    func testDriftWithoutClockInformationIsFollowedFromTheSignal() throws {
        let linearOnly: (inout EngineConfig) -> Void = { $0.echoSuppression = false; $0.noiseSuppression = false }
        let base = try EchoScenario(seconds: 40, hintMs: 120).run(configure: linearOnly)
        let reference = median(base, rate: 16_000, from: 20)
        for ppm in [200.0, -200.0] {
            let r = try EchoScenario(seconds: 40, hintMs: 120, micClockPpm: ppm, acousticOnly: true)
                .run(configure: linearOnly)
            let erle = median(r, rate: 16_000, from: 20)
            print("lockstep, mic clock \(ppm) ppm: drift estimate \(r.stats.driftPpm) ppm, ERLE \(erle) dB "
                  + "(no drift \(reference) dB)")
            XCTAssertEqual(Double(r.stats.driftPpm), -ppm, accuracy: 20)
            XCTAssertGreaterThan(erle, 33)
        }
    }

    /// The echo path lengthening at 500 ppm for 10 s, then standing still
    /// (PulseAudio's loopback after a resume: docs/capture.md), calls in
    /// lockstep: the delay estimator's trend shows the slide within a few
    /// seconds and the reference follows it (`EchoSlideTracker.estimate`);
    /// when the slide stops the correction goes back to 0 and the canceller
    /// starts afresh. Linear canceller only. Measured: 13–18 s 15.9 dB
    /// (31.8 without the creep; 5.6 before the estimates were followed,
    /// drift −3 ppm), 24–32 s 26.0 dB (39.0; 28.1 before), correction −569
    /// to −372 ppm at 15–18 s and 0 over the last 5 s.
    func testAFastSlideOfTheEchoIsFollowedAndLetGo() throws {
        let linearOnly: (inout EngineConfig) -> Void = { $0.echoSuppression = false; $0.noiseSuppression = false }
        let r = try EchoScenario(seconds: 32, hintMs: 120, creep: (fromSeconds: 8, toSeconds: 18, ppm: 500))
            .run(configure: linearOnly)
        let during = median(r, rate: 16_000, from: 13, to: 18)
        let after = median(r, rate: 16_000, from: 24, to: 32)
        let callsPerSecond = 100
        let midCreep = r.driftPpm[15 * callsPerSecond..<18 * callsPerSecond]
        let atEnd = r.driftPpm.suffix(5 * callsPerSecond)
        print("creep 500 ppm 8-18 s: linear ERLE 13-18 s \(during) dB, 24-32 s \(after) dB; drift 15-18 s "
              + "\(midCreep.min()!)...\(midCreep.max()!) ppm, last 5 s \(atEnd.min()!)...\(atEnd.max()!)")
        XCTAssertGreaterThan(during, 12)
        XCTAssertGreaterThan(after, 20)
        XCTAssertLessThan(midCreep.max()!, -300)
        XCTAssertLessThan(atEnd.map { abs($0) }.max()!, 30)
    }

    /// A faster creep at 48 kHz (900 ppm for 8 s, then still: 43 samples a
    /// second, as PulseAudio's loopback did in one recorded run), the whole
    /// capture path (default config): the correction follows within 4 s and
    /// is let go from the last second's estimates about 1.5 s after the
    /// stop (`EchoSlideTracker.stopped`). Measured: let go at 12.5 s;
    /// ERLE from 13 s median 47.6 dB (no creep 63.6; the 3 s line alone let
    /// go at 16.7 s, 26.3 dB).
    func testAFastCreepAt48kIsLetGoSoonAfterItStops() throws {
        let r = try EchoScenario(captureRate: 48_000, outputRate: 48_000, seconds: 30, hintMs: 120,
                                 creep: (fromSeconds: 3, toSeconds: 11, ppm: 900)).run()
        let after = median(r, rate: 48_000, from: 13, to: 30)
        let callsPerSecond = 100
        let following = r.driftPpm[8 * callsPerSecond..<11 * callsPerSecond]
        let letGo = r.driftPpm[(13 * callsPerSecond)...]
        print("creep 900 ppm 3-11 s at 48 kHz: ERLE 13-30 s \(after) dB; drift 8-11 s "
              + "\(following.min()!)...\(following.max()!) ppm, from 13 s \(letGo.map { abs($0) }.max()!)")
        XCTAssertLessThan(following.max()!, -600)
        XCTAssertLessThan(letGo.map { abs($0) }.max()!, 30)
        XCTAssertGreaterThan(after, 40)
    }

    /// The same at 48 kHz, where 200 ppm is 9.6 samples a second, past
    /// `EchoSlideTracker.fastBandSamplesPerSecond`: the delay estimates see
    /// the slide too, but while the main tap moves with it the slide is the
    /// main tap's, and the two must not fight. Before the estimates checked
    /// the main tap they did (+200 ppm: −161, −259, 0, −282, −200, 0, −215,
    /// −315 … ppm over 20 s). Measured (linear canceller only): corrections
    /// −221, −299, −196 (the estimates, at 12.2 s), then the main tap's to
    /// −201 ppm, ERLE from 20 s 30.4 dB; −200 ppm: 131, 268 … 191 ppm,
    /// 22.0 dB (no drift 36.2 dB; the main tap alone: 23.3 / 22.0 dB).
    /// With each main-tap fit taken whole after a second's settling
    /// (eleventh session): +200 ppm −277 (the first fit overshoots here),
    /// −294, −156 … −210, 22.9 dB; −200 ppm 163, 217 … 194, 27.8 dB.
    func testDriftWithoutClockInformationAt48kIsNotFought() throws {
        let linearOnly: (inout EngineConfig) -> Void = { $0.echoSuppression = false; $0.noiseSuppression = false }
        let base = try EchoScenario(captureRate: 48_000, outputRate: 48_000, seconds: 40, hintMs: 120)
            .run(configure: linearOnly)
        let reference = median(base, rate: 48_000, from: 20)
        for ppm in [200.0, -200.0] {
            let r = try EchoScenario(captureRate: 48_000, outputRate: 48_000, seconds: 40, hintMs: 120,
                                     micClockPpm: ppm, acousticOnly: true).run(configure: linearOnly)
            let erle = median(r, rate: 48_000, from: 20)
            var changes: [(t: Double, ppm: Float)] = []
            for i in 1..<r.driftPpm.count where r.driftPpm[i] != r.driftPpm[i - 1] {
                changes.append((Double(i) / 100, r.driftPpm[i]))
            }
            print("48 kHz lockstep, mic clock \(ppm) ppm: corrections (s:ppm)"
                  + changes.map { String(format: " %.2f:%.0f", $0.t, $0.ppm) }.joined()
                  + "; ERLE from 20 s \(erle) dB (no drift \(reference) dB)")
            XCTAssertEqual(Double(r.stats.driftPpm), -ppm, accuracy: 20)
            // Once a correction of 100 ppm or more is in use, the drift is
            // never let go of, nor turned the other way.
            let first = try XCTUnwrap(changes.firstIndex { abs($0.ppm) >= 100 })
            XCTAssertTrue(changes[first...].allSatisfy { abs($0.ppm) >= 100 && Double($0.ppm) * ppm < 0 },
                          "the estimates and the main tap fought")
            XCTAssertGreaterThan(erle, 18)
        }
    }

    /// ±200 ppm with the calls paced as two devices on those clocks: the
    /// follower finds the drift from the calls' timing. Measured (linear
    /// canceller only, 2026-11-26, sixth session): from 20 s 38.5 / 38.5 dB
    /// against 38.9 without drift, 10–20 s 32.0 / 31.0 against 32.1. Before
    /// the follower took the drift its acquisition shows (its PI loop
    /// overshot to ~300 ppm): 33.2 / 33.8 dB from 20 s and 19.8 / 19.7 dB in
    /// 10–20 s, which fails both bounds.
    func testClockDriftIsFollowed() throws {
        let linearOnly: (inout EngineConfig) -> Void = { $0.echoSuppression = false; $0.noiseSuppression = false }
        let base = try EchoScenario(seconds: 40, hintMs: 120).run(configure: linearOnly)
        let reference = median(base, rate: 16_000, from: 20)
        let referenceEarly = median(base, rate: 16_000, from: 10, to: 20)
        for ppm in [200.0, -200.0] {
            let r = try EchoScenario(seconds: 40, hintMs: 120, micClockPpm: ppm).run(configure: linearOnly)
            let erle = median(r, rate: 16_000, from: 20)
            let early = median(r, rate: 16_000, from: 10, to: 20)
            print("mic clock \(ppm) ppm: drift estimate \(r.stats.driftPpm) ppm, ERLE \(erle) dB from 20 s, "
                  + "\(early) dB in 10-20 s (no drift \(reference) / \(referenceEarly) dB)")
            XCTAssertEqual(Double(r.stats.driftPpm), -ppm, accuracy: 20)
            XCTAssertGreaterThan(erle, reference - 2)
            XCTAssertGreaterThan(early, referenceEarly - 4)
        }
    }

    /// One clock (a duplex callback) whose capture half runs 0–3 ms after
    /// the render half, as the render's compute time varies: the follower
    /// must say 0 ppm and leave the alignment still (issue 16; it showed
    /// −2…−7 ppm on the PulseAudio loopback before its dead band).
    /// Render and capture on one clock, capture calls 0–3 ms after their
    /// render call: the follower says 0 and moves nothing, whatever phase
    /// it locked on. Seeds 1–4 locked on unlucky phases and, before the
    /// follower held the mean of its first 4 s, reported peaks of 66–417
    /// ppm (seed 1234 passed by luck).
    func testOneClockWithCallbackJitterInventsNoDrift() throws {
        for seed: UInt64 in [1234, 1, 2, 3, 4] {
            let r = try EchoScenario(seconds: 30, hintMs: 120, duplexJitterMs: 3, jitterSeed: seed).run()
            let erle = median(r, rate: 16_000, from: 10)
            print("one clock, 0–3 ms callback jitter, seed \(seed): peak drift \(r.peakDriftPpm) ppm, ERLE \(erle) dB")
            XCTAssertEqual(r.peakDriftPpm, 0, "the follower steered on one clock (seed \(seed))")
            XCTAssertEqual(r.stats.delayChanges, 0)
            XCTAssertGreaterThan(erle, 30)
        }
    }

    /// Full-scale noise at the microphone against a full-scale reference,
    /// stereo 48 kHz: the capture output stays within ±1 (the suppressor's
    /// comfort noise and overlap-add can exceed its input; FuzzEngineC found
    /// 3.71 on 2026-11-26).
    func testCaptureOutputStaysWithinFullScale() throws {
        var config = EngineConfig()
        config.sampleRate = 48_000
        config.channels = 2
        config.captureRate = 48_000
        config.captureChannels = 2
        let engine = try Engine(config)
        var source = SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2)
        source.bufferFrames = 1 << 16
        let id = try engine.addSource(source)
        var noise = EchoSim.Noise(seed: 77)
        var play = [Float](repeating: 0, count: 960), rendered = [Float](repeating: 0, count: 960)
        var mic = [Float](repeating: 0, count: 960), out = [Float](repeating: 0, count: 960)
        var worst: Float = 0
        for block in 0..<500 {
            for i in 0..<960 { play[i] = noise.next() }
            for i in 0..<960 {
                // Noise, then full-scale squares, then noise again.
                let v = noise.next()
                mic[i] = (block / 100) % 2 == 0 ? v : ((i / 16) % 2 == 0 ? 1 : -1) * (v > 0 ? 1 : 0.9)
            }
            _ = try play.withUnsafeBufferPointer { try engine.push($0, to: id, channels: 2) }
            try rendered.withUnsafeMutableBufferPointer { try engine.render(into: $0, frames: 480) }
            try mic.withUnsafeBufferPointer { m in
                try out.withUnsafeMutableBufferPointer { o in
                    try engine.processCapture(mic: m, out: o, frames: 480)
                }
            }
            for v in out { worst = max(worst, v.isFinite ? abs(v) : .infinity) }
        }
        print("full-scale capture: largest |out| \(worst)")
        XCTAssertLessThanOrEqual(worst, 1)
    }

    func testDoubleTalkKeepsTheNearEndTalker() throws {
        let r = try EchoScenario(seconds: 16, hintMs: 120, nearEnd: true).run()
        let half = r.out.count / 2
        let out = EchoSim.nearEndQuality(out: r.out, near: r.near, rate: 16_000, from: half, to: r.out.count,
                                         maxLag: 800)
        let mic = EchoSim.nearEndQuality(out: r.mic, near: r.near, rate: 16_000, from: half, to: r.out.count,
                                         maxLag: 10)
        print("double talk: near-end segmental SNR \(out.segmentalSnr) dB at lag \(out.lag) (mic \(mic.segmentalSnr) dB); double-talk frames \(r.stats.doubleTalkFrames)")
        XCTAssertGreaterThan(out.segmentalSnr, mic.segmentalSnr + 3)
        XCTAssertGreaterThan(r.stats.doubleTalkFrames, 0)
        // Far end alone, 2–8 s: 15.4 dB measured with per-bin suppression
        // (the gate muted it to > 40 dB; the talker paid for that).
        XCTAssertGreaterThan(median(r, rate: 16_000, from: 2, to: 8), 12)
    }

    /// The talker in double talk is not cut: share of its active 20 ms
    /// frames whose output is more than 10 dB below it (the broadband gate
    /// this replaced cut whole words: see docs/capture.md).
    func testDoubleTalkMutesFewOfTheTalkersFrames() throws {
        let r = try EchoScenario(seconds: 16, hintMs: 120, nearEnd: true).run()
        let (muted, active, share, longest) = mutedTalkerFrames(r)
        print("double talk: \(muted) of \(active) talker frames muted (\(share * 100) %), longest run \(longest * 20) ms")
        XCTAssertGreaterThan(active, 100)
        XCTAssertLessThan(share, 0.03)
        XCTAssertLessThanOrEqual(longest, 5)
    }

    /// A microphone with 20 dB less gain (everything it hears: the echo,
    /// the talker, the noise) keeps the talker as the usual level does.
    /// speexdsp's filter converges less far on the quieter microphone, and
    /// the near-end detector, fitted at one level, read the talker as echo;
    /// it now also sees the echo's coupling and was fitted at three gains
    /// (docs/capture.md, "The microphone's gain"). 16 s, a 197 Hz talker
    /// from 8 s, playout at 48 kHz. Measured (2026-11-29), 16 / 48 kHz
    /// capture: muted 5.7 / 8.9 % (longest 60 / 40 ms); with the detector
    /// before, 29.5 / 26.7 % (260 / 180 ms); at the usual gain today
    /// 11.4 / 5.0 % (before 19.0 / 8.9 %). Far-end seconds 2–8: 48.6 /
    /// 41.0 dB (48.5 / 41.0 before).
    func testAQuieterMicrophonesTalkerIsKept() throws {
        for rate in [16_000, 48_000] {
            let r = try EchoScenario(captureRate: rate, outputRate: 48_000, seconds: 16, nearEnd: true, micGain: 0.1,
                                     nearPitchHz: 197).run()
            let (muted, active, share, longest) = mutedTalkerFrames(r, rate: rate)
            let erle = median(r, rate: rate, from: 2, to: 8)
            print("microphone 20 dB down, \(rate) Hz: \(muted) of \(active) talker frames muted (\(share * 100) %), "
                  + "longest \(longest * 20) ms; ERLE 2–8 s \(erle) dB")
            XCTAssertGreaterThan(active, 90)
            XCTAssertLessThan(share, 0.15, "\(rate) Hz")
            XCTAssertLessThanOrEqual(longest, 5, "\(rate) Hz")
            XCTAssertGreaterThan(erle, 35, "\(rate) Hz")
        }
    }

    /// No echo at the microphone (a headset, a device that cancels its own):
    /// the far end plays throughout, a talker talks in the second half
    /// (30 s, from 15 s; 197 Hz, not on the far end's harmonics). The
    /// linear filter never removes anything, so the suppressor never
    /// trusted it, and its fallback (the reference times a path gain
    /// learnt from the talker's own power) took the talker down; now the
    /// echo is taken as absent after 5 s of far end (`EchoAbsence`).
    /// Measured (2026-11-28), 48 / 16 kHz: frames more than 3 dB under the
    /// talker 0 / 0 % (before 25.9 / 8.2 %), mean level −0.21 / −0.17 dB
    /// (before −2.16 / −1.12), muted (10 dB) 0 / 0 % (before 2.2 / 0.5 %).
    func testATalkerWithNoEchoAtTheMicrophonePassesUntouched() throws {
        for rate in [48_000, 16_000] {
            let r = try EchoScenario(captureRate: rate, outputRate: 48_000, seconds: 30, nearEnd: true,
                                     echoFromSeconds: 30, nearGain: 0.2, nearPitchHz: 197).run()
            let (muted, active, share, longest) = mutedTalkerFrames(r, rate: rate)
            let (down3, down6, meanDb) = talkerLoss(r, rate: rate)
            print("no echo, \(rate) Hz: \(muted) of \(active) talker frames muted (\(share * 100) %), longest run \(longest * 20) ms; more than 3 dB down \(down3 * 100) %, 6 dB \(down6 * 100) %, mean \(meanDb) dB")
            XCTAssertGreaterThan(active, 150)
            XCTAssertLessThan(down3, 0.03)
            XCTAssertGreaterThan(meanDb, -1)
            XCTAssertEqual(muted, 0)
        }
    }

    /// The echo appears after 8 s without any (the headset taken off): the
    /// echo is taken as absent from about 5 s, and the first frames in
    /// which the filter removes it end that; the suppressor starts over as
    /// after a reset (`echoReturned`). Measured (2026-11-28): ERLE median
    /// over 10–16 s 63.2 dB, the same scene with the echo from the start
    /// 67.7 dB; 22.0 dB before (the path gain learnt without echo, −0.1 dB
    /// a frame down but +0.02 up, left the fallback far under the echo).
    /// Its first second passes 9.5 dB down (the microphone itself goes on
    /// until the delay is found and the filter takes 6 dB out), the next
    /// 68.2 dB.
    func testAnEchoThatAppearsAfterSecondsWithoutIsSuppressed() throws {
        let late = try EchoScenario(seconds: 16, echoFromSeconds: 8).run()
        let always = try EchoScenario(seconds: 16).run()
        let lateErle = median(late, rate: 16_000, from: 10, to: 16)
        let alwaysErle = median(always, rate: 16_000, from: 10, to: 16)
        let first = (8..<12).map { EchoSim.erle(mic: late.mic, out: late.out, rate: 16_000, from: Double($0), to: Double($0) + 1) }
        print("echo from 8 s: ERLE median 10–16 s \(lateErle) dB (echo from the start: \(alwaysErle) dB); 8–12 s by second \(first)")
        XCTAssertGreaterThan(lateErle, 50)
        XCTAssertGreaterThan(alwaysErle, 50)
    }

    /// An echo heard, then gone for 6.2 s (a loudspeaker muted: taken as
    /// absent after 5 s of far end), then back: the suppressor starts over
    /// with the path gain it had while the echo was heard
    /// (`ResidualEchoSuppressor.echoHeard`), and the echo is suppressed
    /// again. Measured (2026-11-28): ERLE 67.9, 69.4, 50.6, 64.0, 61.6 dB
    /// by second over 15–20 s. Kept as it was, the path gain had fallen to
    /// the silence's: 14.8–42.1 dB.
    func testAnEchoBackSoonAfterItWasTakenAsAbsentIsSuppressed() throws {
        let r = try EchoScenario(seconds: 20, echoGap: 8..<14.2).run()
        let windows = (13..<20).map { EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: Double($0), to: Double($0) + 1) }
        print("echo gone 8–14.2 s: ERLE by second 13–20 s \(windows.map { ($0 * 10).rounded() / 10 })")
        XCTAssertGreaterThan(windows[2...].min() ?? 0, 45)
    }

    /// A weak echo (a quiet loudspeaker: the room's echo 40 dB down, about
    /// 20 dB over the microphone's noise) that the linear filter seldom
    /// takes 6 dB out of over the microphone's floor: the delay estimator
    /// still finds it where the reference is aligned
    /// (`DelayTracker.Hop.confirms`), so it is not taken as absent and stays
    /// suppressed. Measured (2026-11-28): ERLE 29–30 dB in every second of
    /// 8–20 s; taken as absent (without the estimator's confirmation) 3–4 dB.
    func testAWeakEchoIsNotTakenAsAbsent() throws {
        let r = try EchoScenario(seconds: 20, echoGain: 0.01).run()
        let windows = (8..<20).map { EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: Double($0), to: Double($0) + 1) }
        print("weak echo: ERLE by second 8–20 s \(windows.map { ($0 * 10).rounded() / 10 })")
        XCTAssertGreaterThan(windows.min() ?? 0, 20)
    }

    /// A quiet loudspeaker (the echo 40 dB down, the talker about 35 dB
    /// over it at the microphone): speexdsp's filter adapts on the talker
    /// and its residual-echo suppression took the talker's words down;
    /// with the talker that far over the echo (`TalkerOverEcho`) it pauses
    /// in the talk frames of a near-end state. 16 s, a 197 Hz talker from
    /// 8 s, playout at 48 kHz. Measured (2026-12-03), 16 / 48 kHz capture:
    /// talker frames more than 3 dB down 3.8 / 4.0 %, mean level −0.55 /
    /// −0.59 dB; without the pause 5.7 / 9.9 %, −0.80 / −1.11 dB. None
    /// more than 10 dB down but one frame at 48 kHz, either way.
    func testAQuietLoudspeakersTalkerKeepsItsLevel() throws {
        for rate in [16_000, 48_000] {
            let r = try EchoScenario(captureRate: rate, outputRate: 48_000, seconds: 16, nearEnd: true, echoGain: 0.01,
                                     nearPitchHz: 197).run()
            let (muted, active, share, longest) = mutedTalkerFrames(r, rate: rate)
            let (down3, _, meanDb) = talkerLoss(r, rate: rate)
            print("echo 40 dB down, \(rate) Hz: \(muted) of \(active) talker frames muted (\(share * 100) %), longest "
                  + "\(longest * 20) ms; 3 dB down \(down3 * 100) %, mean \(meanDb) dB")
            XCTAssertGreaterThan(active, 90)
            XCTAssertLessThan(share, 0.03, "\(rate) Hz")
            XCTAssertLessThan(down3, 0.05, "\(rate) Hz")
            XCTAssertGreaterThan(meanDb, -0.7, "\(rate) Hz")
        }
    }

    /// The talker's active 20 ms frames in the second half of `r` (as
    /// `mutedTalkerFrames`, at `rate`): the shares more than 3 and 6 dB
    /// below it, and the mean of output over talker power (dB).
    func talkerLoss(_ r: EchoScenario.Result, rate: Int) -> (Double, Double, Double) {
        let lag = r.stats.latencyFrames
        let f = rate / 50
        var ratios: [Double] = []
        var level = 0.0
        var i = r.out.count / 2
        var pairs: [(Double, Double)] = []
        while i + f + lag <= r.out.count {
            let p = (EchoSim.power(r.near[i..<(i + f)]), EchoSim.power(r.out[(i + lag)..<(i + lag + f)]))
            pairs.append(p)
            level = max(level, p.0)
            i += f
        }
        for p in pairs where p.0 > level * 1e-3 { ratios.append(p.1 / p.0) }
        let n = Double(max(1, ratios.count))
        let mean = ratios.map { 10 * log10(max($0, 1e-10)) }.reduce(0, +) / n
        return (Double(ratios.filter { $0 < 0.5 }.count) / n, Double(ratios.filter { $0 < 0.25 }.count) / n, mean)
    }

    /// The talker's active 20 ms frames in the second half of `r` (double
    /// talk; from `fromSeconds` when given; at `rate`) whose output is more than 10 dB below it: count, frames
    /// counted, share, longest run (frames).
    func mutedTalkerFrames(_ r: EchoScenario.Result, fromSeconds: Double? = nil, rate: Int = 16_000) -> (Int, Int, Double, Int) {
        let lag = r.stats.latencyFrames
        let f = rate / 50
        var powers: [(near: Double, out: Double)] = []
        var i = fromSeconds.map { Int($0 * Double(rate)) } ?? r.out.count / 2
        while i + f + lag <= r.out.count {
            powers.append((EchoSim.power(r.near[i..<(i + f)]), EchoSim.power(r.out[(i + lag)..<(i + lag + f)])))
            i += f
        }
        let level = powers.map(\.near).max() ?? 0
        let active = powers.filter { $0.near > level * 1e-3 }
        var muted = 0, run = 0, longest = 0
        for p in active {
            if p.out < 0.1 * p.near { muted += 1; run += 1; longest = max(longest, run) } else { run = 0 }
        }
        return (muted, active.count, Double(muted) / Double(max(1, active.count)), longest)
    }

    /// The room's reverberation past the linear filter's tail, with the far
    /// end alone (`ResidualEchoSuppressor`'s `tailSum` / `tailGain`): the
    /// same room, 20 s of far end only. After the far end's words the
    /// reverberation past the canceller's 200 ms passed the echo-only
    /// state's held estimates: the seconds that hold such ends read 42–50
    /// dB (lowest quarter 49.6 dB, median 64.8); with the room's summed
    /// reference 51–63 dB (55.3, 65.8). The bounds fail without it.
    func testReverberantRoomsTailIsTakenOutWithTheFarEndAlone() throws {
        let r = try EchoScenario(seconds: 20, hintMs: 120, nearEnd: false, rt60: 0.7, tailSeconds: 0.9).run()
        let windows = (4..<20).map { EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: Double($0), to: Double($0 + 1)) }
        let sorted = windows.sorted()
        print("reverberant room, far end alone: ERLE per second \(windows.map { (($0 * 10).rounded() / 10) }), "
              + "lowest quarter \(sorted[3]) dB, median \(sorted[8]) dB")
        XCTAssertGreaterThan(sorted[3], 52)
        XCTAssertGreaterThan(sorted[0], 30)
        XCTAssertGreaterThan(sorted[8], 60)
    }

    /// A reverberant room (RT60 0.7 s, impulse response 0.9 s) whose echo
    /// goes on past the 200 ms the linear filter models: echo removed in
    /// the far end's seconds 3–8 (1 s windows) and the talker kept in the
    /// second half. The suppressor holds the reference 60 dB over 800 ms
    /// (150 ms until 2026-11-26, when the microphone's reverberant tail
    /// after far-end words stood above the echo the reference explained).
    /// Measured: ERLE median 48.4 dB, worst window 27.3 dB, talker 3 of 105
    /// frames muted (2.9 %, longest run 40 ms); with the 150 ms hold 47.9 /
    /// 39.3 dB and 5 of 105 muted (4.8 %): the muted share fails.
    func testReverberantRoomEchoPastTheFiltersTail() throws {
        let r = try EchoScenario(seconds: 16, hintMs: 120, nearEnd: true, rt60: 0.7, tailSeconds: 0.9).run()
        let windows = (3..<8).map { EchoSim.erle(mic: r.mic, out: r.out, rate: 16_000, from: Double($0), to: Double($0 + 1)) }
        let sorted = windows.sorted()
        let (muted, active, share, longest) = mutedTalkerFrames(r)
        print("reverberant room: ERLE per second \(windows.map { (($0 * 10).rounded() / 10) }), median \(sorted[2]) dB; "
              + "talker \(muted) of \(active) frames muted (\(share * 100) %), longest run \(longest * 20) ms")
        XCTAssertGreaterThan(sorted[2], 40)
        XCTAssertGreaterThan(sorted[0], 20)
        XCTAssertLessThan(share, 0.03)
        XCTAssertLessThanOrEqual(longest, 5)
    }
}
