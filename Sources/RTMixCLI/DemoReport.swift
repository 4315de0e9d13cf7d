import RTMix

/// The demo's printed report.
struct DemoReportText {
    let run: DemoRun
    let shared: DemoShared
    let engine: EngineStats
    let voice: SourceStats?
    let media: SourceStats?
    let voiceProducer: ProducerReport
    let mediaProducer: ProducerReport
    let writer: DemoWriter
    let wallNs: UInt64
    let gainsChanged: Bool
    let events: [EngineEvent]

    var text: String {
        let frames = engine.framesRendered
        // Blocks the render loop went through (a simulated interruption
        // skips the render call but not the timeline).
        let seconds = Double(shared.renderedBlocks.load(ordering: .relaxed)) / 100
        let halfSeconds = Double(shared.totalBlocks / 2) / 100
        var lines: [String] = []
        func add(_ label: String, _ value: String) { lines.append("  " + padded(label) + value) }

        let mode: String
        if run.fast {
            mode = "fast (not paced)"
        } else {
            mode = "real time, render thread " + (shared.realtimeScheduling ? "SCHED_FIFO 80" : "SCHED_OTHER (SCHED_FIFO not permitted)")
        }
        if shared.renderedBlocks.load(ordering: .relaxed) < shared.totalBlocks {
            lines.append("rtmix-cli demo: stopped early")
        }
        lines.append("rtmix-cli demo: classroom scenario, \(fixed(seconds, 2)) s, \(mode), seed \(run.seed)" + (run.solo.map { ", solo \($0.rawValue)" } ?? ""))
        add("far-end voice", "call  16000 Hz mono,   20 ms frames, ±3 ms jitter, 60 ms prefill, sender clock "
            + "\(run.voiceDriftPpm >= 0 ? "+" : "")\(fixed(run.voiceDriftPpm, 0)) ppm")
        add("video soundtrack", "media 44100 Hz stereo, bursts of 1024–4096 frames, refill below 100 ms")
        add("output", "48000 Hz stereo, 10 ms render callbacks -> \(run.output) (WAV \(run.format.label))")
        add("at \(fixed(halfSeconds, 2)) s", "media gain 1.0 -> \(DemoRun.mediaDuck), call gain 1.0 -> \(DemoRun.callLevel)"
            + (gainsChanged ? "" : " (not reached: stopped early)"))
        lines.append("")
        add("frames rendered", "\(frames) in \(engine.renderCalls) calls; \(writer.blocksWritten * DemoShared.blockFrames) written, \(shared.droppedBlocks.load(ordering: .relaxed)) blocks dropped by the writer ring, \(shared.renderErrors.load(ordering: .relaxed)) render errors")
        add("underrun frames", "engine \(engine.underrunFrames); voice \(voice?.underrunFrames ?? 0) (\(voice?.underrunEvents ?? 0) events); media \(media?.underrunFrames ?? 0) (\(media?.underrunEvents ?? 0) events)")
        add("rejected frames", "\(engine.rejectedFrames) (voice \(voice?.framesRejected ?? 0), media \(media?.framesRejected ?? 0)); non-finite samples \(engine.nonfiniteSamples)")
        add("pushed", "voice \(voiceProducer.framesPushed) frames in \(voiceProducer.pushes) pushes; media \(mediaProducer.framesPushed) frames in \(mediaProducer.pushes) bursts")
        add("buffered (seen)", "voice \(range(voiceProducer)) ms; media \(range(mediaProducer)) ms")
        if let v = voice, v.targetMs > 0 {
            add("voice drift", "sender clock \(fixed(run.voiceDriftPpm, 0)) ppm; estimate \(fixed(Double(v.driftEstimatePpm), 1)) ppm, correction now \(fixed(Double(v.driftPpm), 0)) ppm; low-water \(fixed(Double(v.lowWaterMs), 1)) ms (target \(fixed(Double(v.targetMs), 0)) ms), buffered now \(fixed(Double(v.bufferedMs), 1)) ms")
        } else {
            add("voice drift", "compensation off; buffered now \(fixed(Double(voice?.bufferedMs ?? 0), 1)) ms")
        }
        if let m = media {
            add("media", "state \(m.phase), drift estimate \(fixed(Double(m.driftEstimatePpm), 1)) ppm, low-water \(fixed(Double(m.lowWaterMs), 1)) ms (target \(fixed(Double(m.targetMs), 0)) ms), flushed \(m.framesFlushed) frames")
        }
        add("engine events", eventSummary)
        if !run.timeline.description.isEmpty { add("incidents", run.timeline.description) }
        for line in eventLines { add("  event", line) }
        // The engine's percentiles are histogram bucket bounds: never show them above the max.
        add("render time", "p50 \(micros(min(engine.renderNsP50, engine.renderNsMax)))  p99 \(micros(min(engine.renderNsP99, engine.renderNsMax)))  max \(micros(engine.renderNsMax))  (budget 10000 µs)")
        if !run.fast {
            let h = shared.lateness
            add("wake-up lateness", "p50 \(h.percentileMicros(0.5)) µs  p99 \(h.percentileMicros(0.99)) µs  max \(micros(h.maxNs)); deadline misses \(shared.deadlineMisses.load(ordering: .relaxed))")
        }
        let limiterPct = frames > 0 ? 100 * Double(engine.limiterActiveFrames) / Double(frames) : 0
        add("limiter", "active \(engine.limiterActiveFrames) frames (\(fixed(limiterPct, 2)) %), min gain \(fixed(Double(engine.limiterMinGainDb), 2)) dB")
        add("output level", "peak \(decibels(Double(writer.whole.peak))), RMS \(decibels(writer.whole.rms)) (before change \(level(writer.firstHalf)), after \(level(writer.secondHalf)))")
        if let capture = shared.capture, let cw = writer.captureWriter { captureLines(capture, cw, &lines) }
        add("wall time", "\(fixed(Double(wallNs) / 1e9, 2)) s (\(fixed(seconds / max(1e-9, Double(wallNs) / 1e9), 1))× real time)")
        return lines.joined(separator: "\n")
    }

    /// The capture report: what was simulated and how the canceller did.
    private func captureLines(_ capture: DemoCapture, _ cw: DemoCaptureWriter, _ lines: inout [String]) {
        func add(_ label: String, _ value: String) { lines.append("  " + padded(label) + value) }
        let o = capture.options, m = capture.mic, cs = engine.capture
        let rate = Double(m.rate)
        lines.append("capture (duplex: processCapture right after each render)")
        add("microphone", "\(m.rate) Hz mono -> \(run.micOutput); published -> \(run.publishOutput) (media publish gain \(fixed(Double(o.publishGain), 2)))")
        add("echo path", "device delay \(fixed(Double(m.deviceDelaySamples) * 1000 / rate, 2)) ms + direct path \(fixed(m.directPathMs, 2)) ms = \(fixed(m.trueDelayMs, 2)) ms (truth); room RT60 \(fixed(o.rt60, 2)) s (measured \(fixed(m.measuredRT60, 2)) s), response \(fixed(Double(m.irLength) * 1000 / rate, 0)) ms")
        add("near end", "second voice \(fixed(Double(m.nearStart) / rate, 2))–\(fixed(Double(m.nearEnd) / rate, 2)) s (mic \(cw.nearBlocks > 0 ? decibels((cw.nearMicPower / Double(cw.nearBlocks * capture.block)).squareRoot()) : "n/a") there); noise \(fixed(o.noiseDbfs, 0)) dBFS; mic peak \(decibels(Double(cw.micLevel.peak))), RMS \(decibels(cw.micLevel.rms))")
        if cw.measuring {
            let total = DemoCaptureWriter.erle(cw.micBefore + cw.micAfter, cw.outBefore + cw.outAfter)
            let before = DemoCaptureWriter.erle(cw.micBefore, cw.outBefore), after = DemoCaptureWriter.erle(cw.micAfter, cw.outAfter)
            func show(_ v: Double?) -> String { v.map { fixed($0, 1) + " dB" } ?? "n/a" }
            add("ERLE (demo)", "\(show(total)) over \(fixed(Double(cw.blocksBefore + cw.blocksAfter) / 100, 2)) s far-end only (before the near end \(show(before)), after \(show(after))): mic / published power, near end silent, from \(fixed(o.settleSeconds, 1)) s and \(fixed(o.afterTalkSeconds, 1)) s after the talk")
        } else {
            add("ERLE (demo)", "not measured: publish.wav carries the media at \(fixed(Double(o.publishGain), 2)) (run with --publish-gain 0)")
        }
        add("ERLE (engine)", "\(fixed(Double(cs.erleDb), 1)) dB (last 1 s window)")
        let err = Double(cs.delayMs) - m.trueDelayMs
        add("delay", "\(fixed(Double(cs.delayMs), 2)) ms in use (\(cs.delaySource)\(o.delayHintMs.map { ", hint \($0) ms" } ?? ", no hint")), estimator \(fixed(Double(cs.estimatedDelayMs), 2)) ms (confidence \(fixed(Double(cs.estimateConfidence), 1))); truth \(fixed(m.trueDelayMs, 2)) ms, error \(err >= 0 ? "+" : "")\(fixed(err, 2)) ms; \(cs.delayChanges) changes")
        add("drift", "\(fixed(Double(cs.driftPpm), 1)) ppm (one device: truth 0)")
        add("double talk", "\(cs.doubleTalkFrames) frames (\(fixed(Double(cs.doubleTalkFrames) / rate, 2)) s; the near end talks \(fixed(Double(m.nearEnd - m.nearStart) / rate, 2)) s)\(cs.doubleTalk ? ", active now" : "")")
        add("canceller", "resets \(cs.resets), calls without reference \(cs.callsWithoutReference), reference overflow frames \(cs.referenceOverflowFrames), capture latency \(cs.latencyFrames) frames (\(fixed(Double(cs.latencyFrames) * 1000 / rate, 1)) ms)")
        let h = capture.timing
        add("capture time", "p50 \(h.percentileMicros(0.5)) µs  p99 \(h.percentileMicros(0.99)) µs  max \(micros(h.maxNs)) in \(cs.calls) calls, \(capture.errors.load(ordering: .relaxed)) errors (processCapture, measured in the callback)")
        let kinds: [EngineEventKind] = [.echoPathChanged, .cancellerReset, .referenceMissing, .driftOutOfRange]
        let ce = events.filter { kinds.contains($0.kind) }
        var shown = ce.prefix(6).map { e -> String in
            let t = fixed(Double(e.frameTime) / rate, 2)
            switch e.kind {
            case .echoPathChanged: return "echoPathChanged at \(t) s (\(fixed(Double(e.value) / 1000, 2)) ms)"
            case .driftOutOfRange: return "driftOutOfRange at \(t) s (\(e.value) ppm)"
            default: return "\(e.kind) at \(t) s (\(e.value))"
            }
        }.joined(separator: ", ")
        if ce.count > 6 { shown += ", … (\(ce.count) in all)" }
        add("capture events", ce.isEmpty ? "none" : shown)
    }

    /// The first events, one line each: output time, kind, source, value.
    private var eventLines: [String] {
        let rate = Double(DemoShared.outputRate)
        var lines = events.prefix(16).map { e -> String in
            let who = e.source == nil ? "engine" : (e.source == shared.voice ? "voice" : (e.source == shared.media ? "media" : "source \(e.source!.rawValue)"))
            return "\(fixed(Double(e.frameTime) / rate, 2)) s  \(e.kind)  \(who)  value \(e.value)"
        }
        if events.count > 16 { lines.append("… \(events.count - 16) more") }
        return lines
    }

    /// Event counts by kind, e.g. "underrunBegan ×2, limiterEngaged ×1".
    private var eventSummary: String {
        if events.isEmpty { return "none (no underrun, overflow, NaN input, limiting or slow render)" }
        var counts: [(EngineEventKind, Int)] = []
        for e in events {
            if let i = counts.firstIndex(where: { $0.0 == e.kind }) { counts[i].1 += 1 } else { counts.append((e.kind, 1)) }
        }
        return counts.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ")
    }

    private func level(_ m: LevelMeter) -> String { m.samples > 0 ? decibels(m.rms) : "n/a" }

    private func range(_ p: ProducerReport) -> String {
        p.minBufferedMs.isFinite ? "\(fixed(Double(p.minBufferedMs), 0))–\(fixed(Double(p.maxBufferedMs), 0))" : "n/a"
    }
}
