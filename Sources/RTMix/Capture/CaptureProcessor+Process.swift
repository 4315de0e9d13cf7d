import Synchronization

/// The capture call itself: the stages in order. Real-time safe: no
/// locks, allocation or reference counting (`@_noLocks` checks it).
extension CaptureProcessor {
    /// Processes `frames` microphone frames (`channels` interleaved, already
    /// float) from `mic` into `out` (same layout; may alias `mic`).
    @_noLocks
    mutating func process(mic: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, frames: Int,
                          link: borrowing CaptureLink) {
        metrics.beginCall(captured: framer.captured)
        let publishing = link.publishGain.load() > 0 || publisher.mixing

        // 0. reference: what the renderer handed over, up to its latest
        // timing stamp, into the history through the drift resampler.
        if reference.discardIfStale(ring: link.ring, overflow: link.referenceOverflow.read(), maxBacklog: rate / 4) {
            clock.unlock()  // the delay in use is kept: alignment is restored at once
        }
        let stamp = link.readStamp()
        let drained = reference.drain(ring: link.ring, renderedFrames: stamp?.frames, step: clock.step,
                                      media: publishing, estimator: &delay.estimator)
        if let st = stamp, drained.reachedStamp {
            clock.timeCall(now: link.now(), renderedNs: st.ns, hostClock: link.hostClock)
        } else {
            clock.untimed()
        }

        // 1. microphone into the framer
        let mono = framer.append(mic, frames: frames)
        metrics.nonfinite(mono.nonfinite, link: link)
        delay.estimator.appendMic(mono.samples, count: frames)

        // 2. clocks
        switch clock.follow(c: Int(reference.appended - framer.captured), arrived: drained.taken, frames: frames) {
        case .none: break
        case .locked:
            delay.relock(cTarget: clock.cTarget, h: reference.appended, n: framer.captured)
            slide.restartEstimates()
        case .steered(let correction, let alarm): metrics.drift(correction: correction, alarm: alarm, link: link)
        }

        // 3. the host's delay hint
        if let change = delay.applyHint(link.delayHintMs.load(ordering: .relaxed),
                                        h: reference.appended, n: framer.captured) {
            delayChanged(change, link: link)
        }

        // 4–7. frame by frame
        var missing = 0
        while framer.hasFrame {
            // Wait (up to 3 frames) for the reference this frame is aligned
            // to: with very short echo delays it is still on its way (the
            // output is then delayed instead of cancelled badly).
            if clock.locked && framer.framed + Int64(delay.kFeed) + Int64(frameSize) > reference.appended
                && framer.micQueued < 4 * frameSize { break }
            missing += processFrame(link: link)
            if let hop = delay.hop(locked: clock.locked, alignWindows: !slide.fastCorrection) {
                metrics.estimate(hop, link: link)
                if hop.confirms { absence.echoFound() }
                if hop.moved {
                    suppressor.echoMoved(within: delay.singleHopSpan / frameSize)
                } else if hop.distrust {
                    suppressor.suspectFilter()
                }
                if let change = hop.change { delayChanged(change, link: link) }
                if hop.trusted, let correction = slide.estimate(hop.estimate, hostTiming: clock.timingInUse) {
                    // 4b. a fast slide of the echo: the reference follows it.
                    // When it stops, the filter, which learnt the echo while
                    // it slid, starts afresh: re-learnt in place, its main
                    // tap moved and the main-tap fit took that for 10–14 ppm
                    // of slide (the creep test in CaptureTests).
                    clock.setSignalCorrection(correction)
                    if correction == 0 {
                        canceller.reset()
                        filterRestarted()
                        slide.restart()
                    }
                }
            }
        }
        metrics.endFrames(missing: missing, link: link)
        framer.emit(into: out, frames: frames)
        metrics.latency(framer.latency + (canceller.preprocess != nil ? frameSize : 0) + (suppressing ? frameSize : 0),
                        link: link)
    }

    /// The canceller restarted or its reference moved: neither the filter
    /// check's evidence nor what a suspicion put aside in the suppressor
    /// says anything about the filter now.
    @_noLocks
    mutating func filterRestarted() {
        check.restart()
        suppressor.forgetSuspicion()
    }

    /// The longest look-ahead: 300 ms (a route change from a Bluetooth
    /// headset to the device's loudspeaker shortens the echo path by more).
    static var aheadMs: Int { @_noLocks get { 300 } }
    /// Frames a look-ahead lasts from the last suspicion unless the delay
    /// tracker moves the reference first: 2 s, as a suspicion.
    static var aheadFrames: Int { @_noLocks get { 200 } }

    /// The filter is suspected (`EchoFilterCheck`): the echo path may have
    /// got shorter, and then the microphone carries the echo of reference
    /// the canceller has not been fed yet, which neither the filter nor
    /// the suppressor's held reference has seen (a −100 ms jump leaked for
    /// 0.75–1 s, until the delay tracker moved the reference). The
    /// reference already played, up to `aheadMs` past the aligned frame,
    /// is folded into the suppressor's held reference: all of it here (up
    /// to 30 real transforms in this frame), then each frame the newest
    /// window (one, `lookAheadOneFrame`), until the delay tracker moves the
    /// reference or `aheadFrames` pass since the last suspicion. Not
    /// ended when the filter check finds the filter right again: a filter
    /// that predicts tonal music from the reference it has can remove
    /// 6 dB for a few frames while the echo still runs ahead of it
    /// (`CaptureTests.testAShorterEchoPathIsSuppressedFromTheReferenceAhead`:
    /// 17 dB in the window before the move when it ended there, 63 now).
    @_noLocks
    mutating func startLookingAhead() {
        let aligned = framer.framed + Int64(delay.kFeed)
        let span = aheadSpan(aligned: aligned)
        guard span > 0 else { return }
        aheadLeft = CaptureProcessor.aheadFrames
        var offset = 0
        while offset < span {
            reference.mono(from: aligned + Int64(offset), count: 2 * frameSize, into: aheadWindow)
            suppressor.foldAhead(aheadWindow)
            offset += frameSize
        }
    }

    /// A frame of a look-ahead under way: the newest window, or the end.
    @_noLocks
    mutating func lookAheadOneFrame() {
        aheadLeft -= 1
        if aheadLeft <= 0 {
            stopLookingAhead()
            return
        }
        let aligned = framer.framed + Int64(delay.kFeed)
        let span = aheadSpan(aligned: aligned)
        guard span > 0 else { return }
        reference.mono(from: aligned + Int64(span - frameSize), count: 2 * frameSize, into: aheadWindow)
        suppressor.foldAhead(aheadWindow)
    }

    /// How far past the frame aligned at `aligned` the look-ahead reaches:
    /// `aheadMs`, or what the history holds, in whole frames.
    @_noLocks
    func aheadSpan(aligned: Int64) -> Int {
        min(CaptureProcessor.aheadMs * rate / 1000, reference.heldAhead(of: aligned, count: frameSize))
            / frameSize * frameSize
    }

    @_noLocks
    mutating func stopLookingAhead() {
        aheadLeft = 0
        suppressor.stopLookingAhead()
    }

    /// After the filter check finds the filter right at a new alignment
    /// (`EchoFilterCheck.realigned`), the suppressor gets back what it had
    /// earned, its leak taken at −15 dB at least (`leakAfterDistrust`: the
    /// filter may have misadapted while the reference was wrong; taken
    /// whole, scenario i's talkers lost 12.1 % instead of 15.3 % but 127
    /// echo windows fell under 20 dB instead of 107), and for
    /// `realignedHoldFrames` (1 s) its echo-only state still takes the
    /// echo the reference explains at the fallback's full weight
    /// (without it, CaptureTests' shorter-path scene left a 34 dB window
    /// where it leaves 68).
    static var realignedHoldFrames: Int { @_noLocks get { 100 } }

    /// How long speexdsp's residual-echo suppression pauses after the echo
    /// path moved or the canceller diverged (`filterLost`): 5 s.
    static var residualPauseSeconds: Int { @_noLocks get { 5 } }

    /// Seconds of far end in which the linear filter removes no echo before
    /// the echo is taken as absent (`EchoAbsence`).
    static var absenceSeconds: Int { @_noLocks get { 5 } }

    /// The filter in use is lost: a delay known before moved (the echo
    /// path changed) or the canceller diverged and was reset, after the
    /// filter had converged (`EchoFilterCheck.hasConverged`), with a talker
    /// in the room (the suppressor in a near-end state). speexdsp's
    /// own residual-echo suppression, which takes the residual as one
    /// leak estimate for all bands times its filter's estimate, cuts a
    /// talker while that filter re-learns (an onset 34 dB down for 60 ms,
    /// 3.4 s after a move in double talk): it pauses for
    /// `residualPauseSeconds`, and the residual-echo suppressor, which
    /// meanwhile falls back on the reference and the path gain and keeps
    /// a talker who was there first, carries the frames alone. Not when
    /// the filter had not converged (the first delay adopted, a wrong hint
    /// replaced: nothing had been learnt; a pause at the first adoption
    /// moved the recorded rooms' far-end single talk and the talker's
    /// first seconds), nor with the far end alone (there is no talker to
    /// keep, and the live-loopback replays lost up to 22 dB of echo
    /// removal; docs/capture.md). Call before `filterRestarted`.
    @_noLocks
    mutating func filterLost() {
        guard check.hasConverged && suppressor.nearEndFrames > 0 else { return }
        canceller.pauseResidualSuppression(frames: CaptureProcessor.residualPauseSeconds * rate / frameSize)
    }

    /// speexdsp's own residual-echo suppression paused for two frames
    /// while the suppressor asks (`wantsPreprocessorPaused`): under a
    /// diverged estimate and a loud talker (it takes the same estimate as
    /// echo), so that the suppressor's `mic` is the microphone, and in a
    /// word's tail, which it cut. A longer pause under way (`filterLost`)
    /// is left as it is.
    @_noLocks
    mutating func pauseSuppressionIfAsked() {
        if suppressor.wantsPreprocessorPaused && canceller.pauseLeft[0] < 2 {
            canceller.pauseResidualSuppression(frames: 2)
        }
    }

    /// A new delay in use: what it means for the canceller and suppressor.
    @_noLocks
    mutating func delayChanged(_ change: DelayTracker.Change, link: borrowing CaptureLink) {
        if change.pathChanged { filterLost() }
        if change.pathChanged && !change.restartCanceller {
            // The reference moved under a kept filter: it may model the
            // echo again at once (only the delay changed). The suppressor
            // falls back meanwhile, what it had learnt put aside, and the
            // filter check judges the filter afresh (`realigned`).
            check.realigned(tailFrames: canceller.tailSamples / frameSize)
            suppressor.suspectFilter()
        } else {
            if change.restartCanceller { canceller.reset() }
            filterRestarted()
            if change.distrust { suppressor.distrust() }
        }
        stopLookingAhead()
        slide.restart()
        metrics.delay(change, link: link)
    }

    /// One frame from the head of the framer through the canceller,
    /// suppressor and publisher into the framer's output. Returns the
    /// reference samples that were missing.
    @_noLocks
    mutating func processFrame(link: borrowing CaptureLink) -> Int {
        let size = frameSize
        let missing = reference.gather(from: framer.framed + Int64(delay.kFeed), count: size)
        let refs = reference.channels
        var talking = false
        var powers: EchoCanceller.FramePowers
        if suppressing {
            // The preprocessor's output is one frame late: the suppressor
            // gets it with the previous frame's linear echo estimate, and
            // "mic" = that output + that estimate.
            let echoNow = frameEcho + size, micSeen = frameEcho + 2 * size
            var i = 0
            while i &+ 4 <= size {
                (frameEcho + i).storeFloat4((echoNow + i).loadFloat4())
                i &+= 4
            }
            while i < size {
                frameEcho[i] = echoNow[i]
                i &+= 1
            }
            powers = canceller.process(mic: framer.frame, reference: reference.frameReference, out: frameOut,
                                       echoEstimate: echoNow, passMicrophone: absence.absent)
            // 4a. is the filter's estimate still the echo? Decided before
            // the suppressor runs, so that a moved echo path is suppressed
            // from the frame it is seen in.
            var started = false
            switch check.frame(powers, echoOnly: suppressor.nearEndFrames == 0) {
            case .none: break
            case .wrong:
                suppressor.suspectFilter()
                if aheadLeft == 0 {
                    startLookingAhead()
                    started = true
                } else {
                    aheadLeft = CaptureProcessor.aheadFrames + 1  // this frame's step takes one
                }
            case .right:
                suppressor.trustFilterAgain()
            case .lapsed: suppressor.forgetSuspicion()
            case .realignedRight:
                suppressor.trustFilterAgain(leakAtLeast: suppressor.leakAfterDistrust, holdFrames: CaptureProcessor.realignedHoldFrames)
            }
            // 4c. no echo heard for seconds of far end (a headset)?
            absence.frame(farEnd: powers.reference > 1e-6, mic: powers.mic, linear: powers.linear)
            if absence.justLost { suppressor.echoHeard() }
            if suppressor.echoAbsent && !absence.absent { suppressor.echoReturned() }
            suppressor.echoAbsent = absence.absent
            if absence.absent && canceller.pauseLeft[0] < 2 { canceller.pauseResidualSuppression(frames: 2) }
            if aheadLeft > 0 && !started { lookAheadOneFrame() }
            // While it is suspected, the delay estimator hops at its full
            // rate: the echo may be at a new delay.
            if check.suspect { delay.talkerActive() }
            i = 0
            while i &+ 4 <= size {
                (micSeen + i).storeFloat4((frameOut + i).loadFloat4() + (frameEcho + i).loadFloat4())
                i &+= 4
            }
            while i < size {
                micSeen[i] = frameOut[i] + frameEcho[i]
                i &+= 1
            }
            // 4d. the suppressor, then speexdsp's own suppression paused
            // for the next frames if it asks.
            suppressor.preprocessorPaused = canceller.pauseLeft[0] > 0
            suppressor.process(mic: micSeen, linear: frameOut, reference: reference.frameReference, stride: refs)
            // 4e. how far the talker stands over the echo
            balance.frame(mic: powers.mic, echoOnly: powers.reference > 1e-6 && suppressor.nearEndFrames == 0,
                          talk: suppressor.doubleTalk)
            suppressor.talkerFarOverEcho = balance.holds
            pauseSuppressionIfAsked()
            var sums = SIMD4<Float>(0, 0, 0, 0)
            i = 0
            while i &+ 4 <= size {
                let v = (frameOut + i).loadFloat4()
                sums += v * v
                i &+= 4
            }
            var sum = sums.sum()
            while i < size {
                sum += frameOut[i] * frameOut[i]
                i &+= 1
            }
            powers.output = sum / Float(size)
            talking = suppressor.doubleTalk
            // Near-end talk or a moved echo path: estimate at the full
            // rate again.
            if talking { delay.talkerActive() }
        } else {
            powers = canceller.process(mic: framer.frame, reference: reference.frameReference, out: frameOut)
        }
        if powers.reference > 1e-6 { delay.linearFrame(mic: powers.mic, linear: powers.linear) }
        if metrics.frame(powers, doubleTalk: talking, linearActive: canceller.echo != nil, link: link) {
            filterLost()
            canceller.reset()
            filterRestarted()
            suppressor.distrust()
            slide.restart()
            slide.advance()
        } else if let correction = slide.frame(canceller: canceller,
                                                echo: !talking && powers.reference > 1e-6 && powers.mic > 1e-7,
                                                hostTiming: clock.timingInUse) {
            // 4b. the echo's slide: the reference follows it
            clock.setSignalCorrection(correction)
        }
        publisher.publish(voice: frameOut, media: reference.frameMedia, gain: link.publishGain.load(),
                          into: framer.output, count: size)
        framer.advance()
        return missing
    }
}
