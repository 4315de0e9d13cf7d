import CRTMixSupport
import Synchronization

/// The capture call itself. Real-time safe: no locks, allocation or
/// reference counting (`@_noLocks` checks it).
extension CaptureProcessor {
    /// Processes `frames` microphone frames (`channels` interleaved, already
    /// float) from `mic` into `out` (same layout; may alias `mic`).
    @usableFromInline @_noLocks
    mutating func process(mic: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, frames: Int,
                          link: borrowing CaptureLink) {
        eventTime = UInt64(n)  // events carry the frames captured before this call
        let publishing = link.publishGain.load() > 0 || !publishRamp.isSteady || publishRamp.current > 0
        let arrived = drainReference(link: link, both: publishing)
        lastCallFrames = frames
        appendMic(mic, frames: frames, link: link)
        followClocks(arrived: arrived, frames: frames, link: link)
        applyHint(link: link)
        var missing = 0
        while micQueued >= frameSize {
            // Wait (up to 3 frames) for the reference this frame is aligned
            // to: with very short echo delays it is still on its way (the
            // output is then delayed instead of cancelled badly).
            if locked && processed + Int64(kFeed) + Int64(frameSize) > h && micQueued < 4 * frameSize { break }
            missing += processFrame(link: link)
            estimator.step()
            considerEstimate(link: link)
        }
        if missing > 0 {
            link.callsWithoutReference.add(1)
            if !missingEpisode {
                missingEpisode = true
                link.events.post(.referenceMissing, source: 0, frameTime: eventTime, value: Int64(missing))
            }
        } else {
            missingEpisode = false
        }
        emit(into: out, frames: frames)
        link.latencyFrames.set(UInt64(latency + (canceller.preprocess != nil ? frameSize : 0)
                                      + (suppressing ? frameSize : 0)))
    }

    // MARK: reference

    /// Moves what the renderer handed over, up to its latest timing stamp,
    /// into the history through the drift follower. Returns the ring frames
    /// taken; sets `phaseSamples` (how long ago, in capture samples, the
    /// last of them was rendered: removes the render/capture callback phase
    /// from the clock measurement) or nil when unknown.
    @_noLocks
    mutating func drainReference(link: borrowing CaptureLink, both: Bool) -> Int {
        // Render ran while capture did not (the ring overflowed, or a
        // backlog of more than 250 ms built up): that audio is stale, and
        // draining it would make this call long. Drop it and lock anew
        // (the delay in use is kept, so alignment is restored at once).
        let overflow = link.referenceOverflow.read()
        if overflow != overflowSeen || link.ring.bufferedFrames() > rate / 4 {
            overflowSeen = overflow
            discardReference(link: link)
        }
        let stamp = link.readStamp()
        var limit = Int.max
        if let st = stamp { limit = Int(truncatingIfNeeded: st.frames &- ringRead) }
        var taken = 0
        let step = 1 / (1 - correction)
        while taken < limit {
            let room = follower.room
            if room == 0 { break }
            let regions = link.ring.readableRegions(maxFrames: min(room, limit - taken))
            if regions.frames == 0 { break }
            follower.append(interleaved: regions.first, frames: regions.firstFrames)
            if regions.secondFrames > 0 { follower.append(interleaved: regions.second, frames: regions.secondFrames) }
            link.ring.commitRead(regions.frames)
            taken += regions.frames
            let made = follower.produce(drained, outStride: chunk * 2, maxFrames: chunk * 2, step: step,
                                        computed: both ? referenceChannels + 1 : referenceChannels)
            appendHistory(made, both: both)
        }
        ringRead &+= UInt64(taken)
        phaseSamples = nil
        if let st = stamp, taken == limit {
            let now = link.now()
            // Calls much faster than real time (a file processed offline
            // with the default clock): the clock says nothing about the
            // audio's timing, and the counts alone are exact.
            let elapsed = lastCallNs == 0 || now < lastCallNs ? 0 : Double(now - lastCallNs) * 1e-9
            lastCallNs = now
            let audio = Double(lastCallFrames) / Double(rate)
            if audio > 0 { realTimeRatio += 0.05 * (elapsed / audio - realTimeRatio) }
            if link.hostClock || realTimeRatio > 0.5 {
                let ago = now >= st.ns ? Double(now - st.ns) * 1e-9 : 0
                phaseSamples = ago * Double(rate)
            } else {
                phaseSamples = 0
            }
        }
        return taken
    }

    @_noLocks
    mutating func appendHistory(_ count: Int, both: Bool) {
        let mask = historyCapacity - 1
        let plane = chunk * 2
        for ch in 0..<referenceChannels {
            let src = drained + ch * plane, dst = history + ch * historyCapacity
            for i in 0..<count { dst[Int(truncatingIfNeeded: h &+ Int64(i)) & mask] = src[i] }
        }
        let mediaSrc = drained + referenceChannels * plane
        let mediaDst = history + referenceChannels * historyCapacity
        for i in 0..<count { mediaDst[Int(truncatingIfNeeded: h &+ Int64(i)) & mask] = both ? mediaSrc[i] : 0 }
        if referenceChannels == 1 {
            estimator.appendReference(drained, count: count)
        } else {
            let r = drained + plane
            for i in 0..<count { drainedMono[i] = 0.5 * (drained[i] + r[i]) }
            estimator.appendReference(drainedMono, count: count)
        }
        h += Int64(count)
    }

    /// Discards what the ring holds and the follower's input (stale audio
    /// after an overflow); the next arrival locks anew.
    @_noLocks
    mutating func discardReference(link: borrowing CaptureLink) {
        let regions = link.ring.readableRegions(maxFrames: Int.max)
        link.ring.commitRead(regions.frames)
        ringRead &+= UInt64(regions.frames)
        follower.reset()
        locked = false
    }

    // MARK: microphone

    @_noLocks
    mutating func appendMic(_ mic: UnsafePointer<Float>, frames: Int, link: borrowing CaptureLink) {
        let dst = micQueue + micQueued
        var bad = 0
        if channels == 1 {
            for i in 0..<frames {
                let v = mic[i]
                if v.isFinite { dst[i] = v } else { dst[i] = 0; bad += 1 }
            }
        } else {
            for i in 0..<frames {
                var l = mic[2 * i], r = mic[2 * i + 1]
                if !l.isFinite { l = 0; bad += 1 }
                if !r.isFinite { r = 0; bad += 1 }
                dst[i] = 0.5 * (l + r)
            }
        }
        if bad > 0 { link.nonfinite.add(bad) }
        estimator.appendMic(dst, count: frames)
        micQueued += frames
        n += Int64(frames)
    }

    // MARK: clocks

    /// Locks onto `c = h − n` (corrected for the callback phase), then
    /// steers the drift follower to hold it.
    @_noLocks
    mutating func followClocks(arrived: Int, frames: Int, link: borrowing CaptureLink) {
        let c = Int(h - n)
        if arrived > largestArrival { largestArrival = arrived }
        if frames > largestArrival { largestArrival = frames }
        guard arrived > 0 || locked else { return }
        // c is measured at the capture call; the reference it counts was
        // rendered `phase` samples earlier: add that time back so that
        // callback timing does not look like drift.
        guard let phase = phaseSamples else { return }
        let corrected = Double(c) + phase
        let bound = Double(2 * largestArrival + rate / 50)
        if !locked || abs(corrected - cTargetExact) > bound {
            if locked && arrived == 0 { return }  // render stalled: wait for it
            lock(at: c, corrected: corrected, link: link)
            return
        }
        let a = min(1, Double(frames) / Double(rate))
        cSmoothed += a * (corrected - cSmoothed)
        let deviation = corrected - cSmoothed
        jitterVariance += 0.25 * a * (deviation * deviation - jitterVariance)
        // Dead band: an error inside it is timing noise, not drift. The
        // smoothed value keeps a(2 − a) of the raw jitter's variance.
        let variance = Float(jitterVariance * a / (2 - a))
        let sd = Double(_unsafePerformance { rtmix_support_sqrtf(variance) })
        let band = max(CaptureProcessor.minDeadBandSamples, CaptureProcessor.deadBandSigmas * sd)
        let raw = cSmoothed - cTargetExact
        let outside = raw > band ? raw - band : (raw < -band ? raw + band : 0)
        let error = outside / Double(rate)
        let dt = Double(frames) / Double(rate)
        let limit = CaptureProcessor.maxDriftPpm * 1e-6
        integral += error / (CaptureProcessor.followerSeconds * CaptureProcessor.integralSeconds) * dt
        integral = max(-limit, min(limit, integral))
        correction = max(-limit, min(limit, error / CaptureProcessor.followerSeconds + integral))
        link.driftPpm.store(Float(correction * 1e6))
        let saturated = abs(integral) >= limit * 0.999
        if saturated && !driftAlarm {
            link.events.post(.driftOutOfRange, source: 0, frameTime: eventTime, value: Int64(correction * 1e6))
        }
        driftAlarm = saturated
    }

    @_noLocks
    mutating func lock(at c: Int, corrected: Double, link: borrowing CaptureLink) {
        locked = true
        cTarget = c
        cTargetExact = corrected
        cSmoothed = corrected
        // The estimator's history belongs to the old timing.
        restartEstimator()
        updateFeed()
    }

    /// kFeed from the delay in use; never past the newest reference.
    @_noLocks
    mutating func updateFeed() {
        // The history runs `followerLag` samples ahead of the ring (the
        // follower's first output is its input sample taps/2 − 1), and c is
        // counted one sample after the newest: see considerEstimate.
        if delaySource == 0 {
            // No delay known yet: the newest reference (what is available
            // when a duplex callback captures), so the canceller's tail
            // covers echoes from 0 to ~190 ms until the estimator speaks.
            kFeed = cTarget
            return
        }
        kFeed = cTarget - Int(delay + 0.5) + CaptureProcessor.followerLag + 1 + leadSamples
    }

    // MARK: delay

    @_noLocks
    mutating func applyHint(link: borrowing CaptureLink) {
        let hint = link.delayHintMs.load(ordering: .relaxed)
        guard hint != appliedHintMs else { return }
        let previous = appliedHintMs
        appliedHintMs = hint
        // Hosts repeat their estimate every call with a little jitter:
        // only a change of more than 4 ms (or a first hint) counts.
        guard hint >= 0, previous < 0 || abs(Int(hint) - Int(previous)) > 4 else { return }
        setDelay(Double(Int(hint) * rate) / 1000, source: 1, link: link)
        // The host says the path changed (a route change): what the
        // estimator accumulated describes the old one.
        restartEstimator()
    }

    @_noLocks
    mutating func restartEstimator() {
        estimator.reset()
        estimatorBaseH = h
        estimatorBaseN = n
        candidateHits = 0
    }

    @_noLocks
    mutating func setDelay(_ samples: Double, source: Int32, link: borrowing CaptureLink) {
        let moved = abs(samples - delay) > Double(rate) / 1000
        let changed = delaySource != 0 && moved
        if source == 2 && delaySource != 2 && (moved || delaySource == 0) {
            // The delay was unknown or the hint was wrong: the canceller
            // adapted to a misaligned reference, so moving the reference
            // would not keep it valid (unlike a measured path change, where
            // it does). Start it afresh.
            canceller.reset()
            suppressor.distrust()
        }
        if moved {
            // Right after the reference moves, the canceller's estimate
            // may be wrong: suppress from the fallback until it converges.
            suppressor.distrust()
        }
        delay = samples
        delaySource = source
        updateFeed()
        link.delayMs.store(Float(samples * 1000 / Double(rate)))
        link.delaySource.set(UInt64(source))
        if changed {
            link.delayChanges.add(1)
            link.events.post(.echoPathChanged, source: 0, frameTime: eventTime,
                             value: Int64(samples * 1_000_000 / Double(rate)))
        }
    }

    /// Adopts the estimator's delay when it is confident and, twice in a
    /// row, more than 4 ms away from the delay in use.
    @_noLocks
    mutating func considerEstimate(link: borrowing CaptureLink) {
        guard let e = estimator.latest else { return }
        estimator.latest = nil
        // Echo in mic sample i is history sample i + kEcho.
        let kEcho = e.offset + Double(estimatorBaseH - estimatorBaseN)
        let estimate = Double(cTarget) - kEcho + Double(CaptureProcessor.followerLag + 1)
        link.estimatedDelayMs.store(Float(estimate * 1000 / Double(rate)))
        link.estimateConfidence.store(e.confidence)
        guard locked, e.confidence >= 6, e.distinct, e.hops >= 3,
              estimate >= -Double(rate) * 0.03, estimate <= Double(rate) * 0.6 else {
            candidateHits = 0
            return
        }
        let tolerance = Double(rate) * 0.004
        if abs(estimate - delay) <= tolerance && delaySource != 0 {
            candidateHits = 0
            estimator.tracking = true  // settled: estimate half as often
            return
        }
        estimator.tracking = false
        if candidateHits > 0 && abs(estimate - candidate) <= tolerance {
            candidateHits += 1
        } else {
            candidate = estimate
            candidateHits = 1
        }
        if delaySource == 2 {
            // The echo moved: until the reference is realigned and the
            // canceller has recovered, its estimate is not to be trusted.
            suppressor.distrust()
        }
        // Two agreeing hops (~0.5 s) replace an estimate or nothing; a
        // host's hint needs four (~1 s of data gathered after it was set).
        if candidateHits >= (delaySource == 1 ? 4 : 2) {
            setDelay(max(0, estimate), source: 2, link: link)
            candidateHits = 0
        }
    }

    // MARK: canceller

    /// Cancels one frame from the head of the mic queue into the output
    /// queue. Returns the reference samples that were missing.
    @_noLocks
    mutating func processFrame(link: borrowing CaptureLink) -> Int {
        let size = frameSize
        let mask = historyCapacity - 1
        let start = processed + Int64(kFeed)
        var missing = 0
        let refs = referenceChannels
        let media = history + refs * historyCapacity
        for i in 0..<size {
            let index = start + Int64(i)
            let slot = Int(truncatingIfNeeded: index) & mask
            if index < 0 && overflowSeen == 0 {
                // Before the first reference sample of a stream that never
                // lost any (its start): silence, not missing.
                for ch in 0..<refs { frameRef[i * refs + ch] = 0 }
                frameMedia[i] = 0
            } else if index < h && index >= h - Int64(historyCapacity) {
                for ch in 0..<refs { frameRef[i * refs + ch] = history[ch * historyCapacity + slot] }
                frameMedia[i] = media[slot]
            } else {
                for ch in 0..<refs { frameRef[i * refs + ch] = 0 }
                frameMedia[i] = 0
                missing += 1
            }
        }
        var talking = false
        var powers: EchoCanceller.FramePowers
        if suppressing {
            // The preprocessor's output is one frame late: the suppressor
            // gets it with the previous frame's linear echo estimate, and
            // "mic" = that output + that estimate.
            for i in 0..<size { frameEcho[i] = frameEcho[size + i] }
            powers = canceller.process(mic: micQueue, reference: frameRef, out: frameOut,
                                       echoEstimate: frameEcho + size)
            let micSeen = frameEcho + 2 * size
            for i in 0..<size { micSeen[i] = frameOut[i] + frameEcho[i] }
            suppressor.process(mic: micSeen, linear: frameOut, reference: frameRef, stride: refs)
            var sum: Float = 0
            for i in 0..<size { sum += frameOut[i] * frameOut[i] }
            powers.output = sum / Float(size)
            talking = suppressor.doubleTalk
            // Near-end talk or a moved echo path: estimate at the full
            // rate again.
            if talking { estimator.tracking = false }
        } else {
            powers = canceller.process(mic: micQueue, reference: frameRef, out: frameOut)
        }
        updateStatistics(powers, doubleTalk: talking, link: link)
        // Publish: the processed voice plus the media at the publish gain.
        publishRamp.setTarget(link.publishGain.load())
        let dst = outQueue + outQueued
        // Hard-limited to ±1 either way: the suppressor's overlap-add and
        // comfort noise can exceed its int16-bounded input (FuzzEngineC
        // found 3.71).
        if publishRamp.isSteady && publishRamp.current == 0 {
            for i in 0..<size {
                let v = frameOut[i]
                dst[i] = v.isFinite ? max(-1, min(1, v)) : 0
            }
        } else {
            for i in 0..<size {
                let v = frameOut[i] + frameMedia[i] * publishRamp.next()
                dst[i] = v.isFinite ? max(-1, min(1, v)) : 0
            }
        }
        outQueued += size
        let rest = micQueued - size
        for i in 0..<rest { micQueue[i] = micQueue[i + size] }
        micQueued = rest
        processed += Int64(size)
        return missing
    }

    @_noLocks
    mutating func updateStatistics(_ p: EchoCanceller.FramePowers, doubleTalk: Bool, link: borrowing CaptureLink) {
        let farEnd = p.reference > 1e-6
        if doubleTalk { doubleTalkHangover = 10 }
        let talking = doubleTalkHangover > 0
        if talking {
            doubleTalkHangover -= 1
            link.doubleTalkFrames.add(frameSize)
        }
        link.doubleTalk.set(talking ? 1 : 0)
        windowFrames += 1
        if farEnd && !talking {
            windowMic += p.mic
            windowOut += p.output
            windowUsed += 1
        }
        if windowFrames >= 100 {
            if windowUsed >= 50 && windowMic > 1e-9 {
                let ratio = windowMic / max(windowOut, 1e-13)
                erleDb = min(100, 10 * _unsafePerformance { rtmix_support_log10f(ratio) })
                link.erleDb.store(erleDb)
            }
            windowFrames = 0
            windowUsed = 0
            windowMic = 0
            windowOut = 0
        }
        // Divergence: the linear stage adds energy for half a second.
        if canceller.echo != nil && p.mic > 1e-7 && p.linear > 2 * p.mic {
            divergentFrames += 1
        } else if divergentFrames > 0 {
            divergentFrames -= 1
        }
        link.diverged.set(divergentFrames > 10 ? 1 : 0)
        if divergentFrames >= 50 {
            canceller.reset()
            suppressor.distrust()
            divergentFrames = 0
            link.resets.add(1)
            link.events.post(.cancellerReset, source: 0, frameTime: eventTime, value: 1)
        } else if p.trouble {
            // speexdsp would reset itself soon and print from this thread
            // (EchoCanceller.watch): do it first, quietly. Value 2.
            canceller.reset()
            suppressor.distrust()
            divergentFrames = 0
            link.resets.add(1)
            link.events.post(.cancellerReset, source: 0, frameTime: eventTime, value: 2)
        }
    }

    // MARK: output

    /// Hands `frames` processed frames to the caller (each channel the
    /// same). When the queue is short (a call size that is not a multiple
    /// of the canceller frame, or frames waiting for their reference), the
    /// output is delayed by whole frames (the latency only ever grows, by
    /// at most 4 frames in all).
    @_noLocks
    mutating func emit(into out: UnsafeMutablePointer<Float>, frames: Int) {
        if outQueued < frames {
            let pad = (frames - outQueued + frameSize - 1) / frameSize * frameSize
            var i = outQueued - 1
            while i >= 0 {
                outQueue[i + pad] = outQueue[i]
                i -= 1
            }
            for j in 0..<pad { outQueue[j] = 0 }
            outQueued += pad
            latency += pad
        }
        if channels == 1 {
            for i in 0..<frames { out[i] = outQueue[i] }
        } else {
            for i in 0..<frames {
                out[2 * i] = outQueue[i]
                out[2 * i + 1] = outQueue[i]
            }
        }
        let rest = outQueued - frames
        for i in 0..<rest { outQueue[i] = outQueue[i + frames] }
        outQueued = rest
    }
}
