import RTMix

/// `rtmix-cli live`'s closing report and, with --check, its checks.
struct LiveReport {
    let run: LiveRun
    let host: LiveHost
    let writer: LiveWriter
    let engine: EngineStats
    let samples: [LiveSample]
    let events: [(t: Double, event: EngineEvent)]
    let markers: [LiveMarker]
    let stalls: [LiveStall]
    let wallSeconds: Double
    let streamDied: Bool
    let duplex: Bool
    let outputLatency: Double, inputLatency: Double
    let voice: SourceStats?, media: SourceStats?, marker: SourceStats?
    let names: [SourceID: String]

    /// Checks that failed (empty without --check).
    var failures: [String] { checks.filter { !$0.ok }.map(\.what) }

    private var o: Live { run.o }

    /// The nominal callback period in µs (the median callback size when the host chooses).
    var nominalMicros: Double {
        let frames = o.period > 0 ? o.period : max(1, host.maxFrames.load(ordering: .relaxed))
        return Double(frames) * 1e6 / Double(o.rate)
    }

    /// Host-measured ERLE windows outside the settle time and outside stalls + recovery.
    var steadyErle: [Double] {
        writer.erleWindows.filter { steady(Double($0.start) / Double(o.rate), length: 1) }.map(\.db)
    }

    /// Whether time t (s) is outside the settle time and outside every stall and its recovery.
    func steady(_ t: Double, length: Double = 0) -> Bool {
        t >= o.settleSeconds && !stalls.contains { s in t + length > s.startT && t < (s.endT ?? .infinity) + o.recoverySeconds }
    }

    /// The engine's ERLE statistic sampled every 100 ms at steady times (after it first reported one).
    var steadyEngineErle: [Double] {
        samples.filter { steady($0.t) && $0.erleDb != 0 }.map { Double($0.erleDb) }
    }

    var text: String {
        var lines: [String] = []
        func add(_ label: String, _ value: String) { lines.append("  " + padded(label, 20) + value) }
        let cs = engine.capture
        lines.append("rtmix-cli live: \(fixed(wallSeconds, 1)) s" + (o.benchmark ? " (benchmark)" : "")
                     + (streamDied ? " — the stream stopped by itself (device gone?)" : ""))
        add("devices", "out '\(run.outDevice.name)' \(run.outChannels) ch, in '\(run.inDevice.name)' mono, \(o.rate) Hz, "
            + (duplex ? "one duplex stream" : "separate output and input streams"))
        add("PortAudio latency", "output \(fixed(outputLatency * 1000, 1)) ms, input \(fixed(inputLatency * 1000, 1)) ms (not told to the engine"
            + (o.delayHintMs.map { "; hint \($0) ms given" } ?? "") + ")")
        let cb = host.callbacks.load(ordering: .relaxed)
        add("callbacks", "\(cb), \(host.framesOut.load(ordering: .relaxed)) frames out, \(host.framesIn.load(ordering: .relaxed)) in; "
            + "frames per callback \(host.minFrames.load(ordering: .relaxed) == .max ? 0 : host.minFrames.load(ordering: .relaxed))–\(host.maxFrames.load(ordering: .relaxed)) "
            + "(\(host.sizeChanges.load(ordering: .relaxed)) size changes)")
        let iv = host.interval
        add("callback interval", "p50 \(iv.percentileMicros(0.5)) µs  p99 \(iv.percentileMicros(0.99)) µs  max \(micros(iv.maxNs))  "
            + "(nominal \(fixed(nominalMicros, 0)) µs)")
        for (label, h) in [("render compute", host.renderTime), ("capture compute", host.captureTime), ("callback total", host.callbackTime)] {
            add(label, "p50 \(h.percentileMicros(0.5)) µs  p99 \(h.percentileMicros(0.99)) µs  p99.9 \(h.percentileMicros(0.999)) µs  "
                + "max \(micros(h.maxNs))")
        }
        let ct = host.callbackTime
        add("share of period", "p50 \(fixed(100 * Double(ct.percentileMicros(0.5)) / nominalMicros, 1)) %  "
            + "p99 \(fixed(100 * Double(ct.percentileMicros(0.99)) / nominalMicros, 1)) %  "
            + "p99.9 \(fixed(100 * Double(ct.percentileMicros(0.999)) / nominalMicros, 1)) %  "
            + "max \(fixed(100 * Double(ct.maxNs) / 1000 / nominalMicros, 1)) %")
        add("device xruns", "output underflow \(host.outputUnderflows.load(ordering: .relaxed)), input overflow \(host.inputOverflows.load(ordering: .relaxed)), "
            + "input underflow \(host.inputUnderflows.load(ordering: .relaxed)), output overflow \(host.outputOverflows.load(ordering: .relaxed)), "
            + "priming \(host.primingCallbacks.load(ordering: .relaxed)); callbacks without input \(host.missingInput.load(ordering: .relaxed))")
        add("engine", "\(engine.renderCalls) render calls, underrun frames \(engine.underrunFrames) (voice \(voice?.underrunFrames ?? 0) in "
            + "\(voice?.underrunEvents ?? 0) events, media \(media?.underrunFrames ?? 0) in \(media?.underrunEvents ?? 0)"
            + (marker.map { ", the marker source idle between markers \($0.underrunFrames)" } ?? "") + "); errors render "
            + "\(host.renderErrors.load(ordering: .relaxed)) capture \(host.captureErrors.load(ordering: .relaxed)); writer ring drops "
            + "\(host.playRing.dropped.load(ordering: .relaxed) + host.capRing.dropped.load(ordering: .relaxed)) frames")
        add("capture", "delay \(fixed(Double(cs.delayMs), 2)) ms in use (\(cs.delaySource)), estimator \(fixed(Double(cs.estimatedDelayMs), 2)) ms "
            + "(confidence \(fixed(Double(cs.estimateConfidence), 1))), \(cs.delayChanges) changes; ERLE \(fixed(Double(cs.erleDb), 1)) dB; "
            + "drift \(fixed(Double(cs.driftPpm), 1)) ppm; double talk \(fixed(Double(cs.doubleTalkFrames) / Double(o.rate), 1)) s; resets \(cs.resets); calls without reference \(cs.callsWithoutReference)")
        let erle = steadyErle.sorted()
        if o.publishGain == 0, !erle.isEmpty {
            add("ERLE (host)", "mic / publish power per second at steady times: median \(fixed(erle[erle.count / 2], 1)) dB, "
                + "min \(fixed(erle.first!, 1)) dB, max \(fixed(erle.last!, 1)) dB over \(erle.count) s")
        }
        let ee = steadyEngineErle.sorted()
        if !ee.isEmpty {
            add("ERLE (engine)", "statistic sampled every 100 ms at steady times: median \(fixed(ee[ee.count / 2], 1)) dB, "
                + "10th percentile \(fixed(ee[ee.count / 10], 1)) dB over \(ee.count) samples")
        }
        add("levels", "played peak \(decibels(Double(writer.playLevel.peak))) rms \(decibels(writer.playLevel.rms)); mic peak "
            + "\(decibels(Double(writer.micLevel.peak))) rms \(decibels(writer.micLevel.rms)); publish rms \(decibels(writer.pubLevel.rms))")
        add("non-finite samples", "played \(writer.playLevel.nonFinite), mic \(writer.micLevel.nonFinite), publish \(writer.pubLevel.nonFinite); "
            + "engine \(engine.nonfiniteSamples), capture \(cs.nonfiniteSamples)")
        for m in markers {
            add(String(format: "marker at %.1f s", m.t), m.measuredMs.map {
                "loopback \(fixed($0, 2)) ms (correlation \(fixed(m.correlation, 3))); engine delay then \(m.engineDelayMs.map { fixed(Double($0), 2) } ?? "?") ms"
            } ?? "not found in the recordings")
        }
        for s in stalls {
            add("callbacks absent", "\(fixed(s.startT, 2)) s → " + (s.endT.map { "\(fixed($0, 2)) s (\(fixed($0 - s.startT, 2)) s)" } ?? "end of run"))
        }
        var counts: [String: Int] = [:]
        for e in events { counts["\(e.event.kind)", default: 0] += 1 }
        add("engine events", counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        if o.check {
            lines.append("")
            for c in checks {
                lines.append("live: check \(c.ok ? "ok" : "FAIL"): \(c.what)")
            }
            lines.append("live: \(checks.filter(\.ok).count) passed, \(failures.count) failed")
        }
        return lines.joined(separator: "\n")
    }

    /// The functional checks of --check (never timings).
    var checks: [(ok: Bool, what: String)] {
        guard o.check else { return [] }
        var r: [(Bool, String)] = []
        let cs = engine.capture
        let cb = host.callbacks.load(ordering: .relaxed)
        r.append((cb > 0 && !streamDied, "the device called back (\(cb) callbacks) and the stream ran to the end"))
        r.append((host.renderErrors.load(ordering: .relaxed) == 0 && host.captureErrors.load(ordering: .relaxed) == 0,
                  "no render or capture errors"))
        let nonFinite = writer.playLevel.nonFinite + writer.micLevel.nonFinite + writer.pubLevel.nonFinite
        r.append((nonFinite == 0 && engine.nonfiniteSamples == 0 && cs.nonfiniteSamples == 0 && writer.pubLevel.samples > 0,
                  "no non-finite samples (played, mic, publish: \(nonFinite); engine \(engine.nonfiniteSamples), capture \(cs.nonfiniteSamples))"))
        r.append((writer.micLevel.rms > 1e-3, "the input returned the playout (mic rms \(decibels(writer.micLevel.rms)))"))
        // Delay: every measured marker outside the settle time and stall recovery.
        let judged = markers.filter { steady($0.t, length: 1) }
        let measured = judged.compactMap { m -> (Double, Float)? in
            guard let l = m.measuredMs, m.correlation >= 0.9, let d = m.engineDelayMs else { return nil }
            return (l, d)
        }
        let worst = measured.map { abs(Double($0.1) - $0.0) }.max() ?? .infinity
        r.append((!measured.isEmpty && measured.count == judged.count && worst <= o.delayToleranceMs,
                  "engine delay vs marker-measured loopback latency within \(fixed(o.delayToleranceMs, 1)) ms at \(measured.count) of "
                  + "\(judged.count) markers (worst \(worst.isFinite ? fixed(worst, 2) : "-") ms; "
                  + measured.map { "\(fixed($0.0, 2)) vs \(fixed(Double($0.1), 2))" }.joined(separator: ", ") + ")"))
        r.append((cs.delaySource == .estimator || o.delayHintMs != nil, "the delay in use comes from the engine's estimator (\(cs.delaySource))"))
        let erle = steadyErle.sorted()
        let median = erle.isEmpty ? -Double.infinity : erle[erle.count / 2]
        let engineErle = steadyEngineErle.sorted()
        let engineMedian = engineErle.isEmpty ? -Double.infinity : engineErle[engineErle.count / 2]
        r.append((engineErle.count >= 10 && engineMedian >= o.minErleDb,
                  "engine ERLE statistic (every 100 ms at steady times) median \(engineMedian.isFinite ? fixed(engineMedian, 1) : "-") dB "
                  + "≥ \(fixed(o.minErleDb, 0)) dB over \(engineErle.count) samples (at the end: \(fixed(Double(cs.erleDb), 1)) dB)"))
        if o.publishGain == 0 {
            r.append((erle.count >= 3 && median >= o.minErleDb,
                      "host-measured ERLE (mic / publish per second, after \(fixed(o.settleSeconds, 0)) s and outside stalls) median "
                      + "\(median.isFinite ? fixed(median, 1) : "-") dB ≥ \(fixed(o.minErleDb, 0)) dB over \(erle.count) s"))
        }
        if o.expectStall {
            let stall = stalls.first { s in s.endT.map { $0 - s.startT >= 1 } ?? false }
            r.append((stall != nil, "the callbacks stopped for ≥ 1 s and resumed ("
                      + (stalls.map { "\(fixed($0.startT, 2))→\($0.endT.map { fixed($0, 2) } ?? "end") s" }.joined(separator: ", ")) + ")"))
            if let stall, let resume = stall.endT {
                // Delay back: the first marker pushed after the resume, measured, and the engine agreeing within the window.
                let after = markers.first { $0.t > resume + 0.5 && $0.measuredMs != nil && $0.correlation >= 0.9 }
                var delayBack: Double?
                if let m = after, let l = m.measuredMs {
                    delayBack = samples.first { $0.t > resume && $0.t >= m.t && $0.delaySource == .estimator
                        && abs(Double($0.delayMs) - l) <= o.delayToleranceMs }.map { $0.t - resume }
                }
                r.append((delayBack.map { $0 <= o.recoverySeconds } ?? false,
                          "after the resume the engine's delay matches the next marker (\(after?.measuredMs.map { fixed($0, 2) } ?? "-") ms) "
                          + "within \(fixed(o.recoverySeconds, 0)) s (" + (delayBack.map { "after \(fixed($0, 1)) s" } ?? "never") + ")"))
                let firstGood = writer.erleWindows.first { w in
                    let t = Double(w.start) / Double(o.rate)
                    return t >= resume && w.db >= o.minErleDb
                }.map { Double($0.start) / Double(o.rate) - resume }
                if o.publishGain == 0 {
                    r.append((firstGood.map { $0 <= o.recoverySeconds } ?? false,
                              "after the resume the host-measured ERLE is ≥ \(fixed(o.minErleDb, 0)) dB again within "
                              + "\(fixed(o.recoverySeconds, 0)) s (" + (firstGood.map { "window starting \(fixed($0, 1)) s after" } ?? "never") + ")"))
                }
            }
            if o.expectStallEvents {
                let stalled = events.contains { $0.event.kind == .renderStalled }
                let resumed = events.contains { $0.event.kind == .renderResumed }
                r.append((stalled && resumed, "the engine reported RENDER_STALLED (\(stalled)) and RENDER_RESUMED (\(resumed))"))
            }
        }
        return r
    }
}
