import CRTMixSupport

/// The capture call itself. Real-time safe: no locks, allocation or
/// reference counting (`@_noLocks` checks it).
extension CaptureProcessor {
    /// Processes `frames` microphone frames (`channels` interleaved, already
    /// float) from `mic` into `out` (same layout; may alias `mic`).
    @usableFromInline @_noLocks
    mutating func process(mic: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, frames: Int,
                          link: borrowing CaptureLink) {
        let publishing = link.publishGain.load() > 0 || !publishRamp.isSteady || publishRamp.current > 0
        let arrived = drainReference(link: link, both: publishing)
        appendMic(mic, frames: frames, link: link)
        followClocks(arrived: arrived, frames: frames, link: link)
        applyHint(link: link)
        var missing = 0
        while micQueued >= frameSize {
            missing += processFrame(link: link)
            estimator.step()
            considerEstimate(link: link)
        }
        if missing > 0 {
            link.callsWithoutReference.add(1)
            if !missingEpisode {
                missingEpisode = true
                link.events.post(.referenceMissing, source: 0, frameTime: UInt64(n), value: Int64(missing))
            }
        } else {
            missingEpisode = false
        }
        emit(into: out, frames: frames)
        link.latencyFrames.set(UInt64(latency + (canceller.preprocess != nil ? frameSize : 0)))
    }

    // MARK: reference

    /// Moves everything the renderer handed over into the history, through
    /// the drift follower. Returns the ring frames taken.
    @_noLocks
    mutating func drainReference(link: borrowing CaptureLink, both: Bool) -> Int {
        var taken = 0
        let step = 1 / (1 - correction)
        while true {
            let room = follower.room
            if room == 0 { break }
            let regions = link.ring.readableRegions(maxFrames: room)
            if regions.frames == 0 { break }
            follower.append(interleaved: regions.first, frames: regions.firstFrames)
            if regions.secondFrames > 0 { follower.append(interleaved: regions.second, frames: regions.secondFrames) }
            link.ring.commitRead(regions.frames)
            taken += regions.frames
            let made = follower.produce(drained0, drained1, maxFrames: chunk * 2, step: step, both: both)
            appendHistory(made, both: both)
        }
        return taken
    }

    @_noLocks
    mutating func appendHistory(_ count: Int, both: Bool) {
        let mask = historyCapacity - 1
        for i in 0..<count {
            historyRef[(h + i) & mask] = drained0[i]
            historyMedia[(h + i) & mask] = both ? drained1[i] : 0
        }
        estimator.appendReference(drained0, count: count)
        h += count
    }

    /// Discards what the ring holds and the follower's input (stale audio
    /// after an overflow); the next arrival locks anew.
    @_noLocks
    mutating func discardReference(link: borrowing CaptureLink) {
        let regions = link.ring.readableRegions(maxFrames: Int.max)
        link.ring.commitRead(regions.frames)
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
        n += frames
    }

    // MARK: clocks

    /// Locks onto `c = h − n`, then steers the drift follower to hold it.
    @_noLocks
    mutating func followClocks(arrived: Int, frames: Int, link: borrowing CaptureLink) {
        let c = h - n
        if arrived > largestArrival { largestArrival = arrived }
        if frames > largestArrival { largestArrival = frames }
        // Running minimum of c over ~1 s windows (kFeed must stay below it).
        cMinWindow = min(cMinWindow, c)
        cMinWindowCalls += frames
        if cMinWindowCalls >= rate {
            cMin = cMinWindow
            cMinWindow = Int.max
            cMinWindowCalls = 0
        }
        guard arrived > 0 || locked else { return }
        let bound = 2 * largestArrival + rate / 50
        if !locked || abs(c - cTarget) > bound {
            if locked && arrived == 0 { return }  // render stalled: wait for it
            lock(at: c, link: link)
            return
        }
        let a = min(1, Double(frames) / Double(rate))
        cSmoothed += a * (Double(c) - cSmoothed)
        let error = (cSmoothed - Double(cTarget)) / Double(rate)
        let dt = Double(frames) / Double(rate)
        let limit = CaptureProcessor.maxDriftPpm * 1e-6
        integral += error / (CaptureProcessor.followerSeconds * CaptureProcessor.integralSeconds) * dt
        integral = max(-limit, min(limit, integral))
        correction = max(-limit, min(limit, error / CaptureProcessor.followerSeconds + integral))
        link.driftPpm.store(Float(correction * 1e6))
        let saturated = abs(integral) >= limit * 0.999
        if saturated && !driftAlarm {
            link.events.post(.driftOutOfRange, source: 0, frameTime: UInt64(n), value: Int64(correction * 1e6))
        }
        driftAlarm = saturated
    }

    @_noLocks
    mutating func lock(at c: Int, link: borrowing CaptureLink) {
        locked = true
        cTarget = c
        cSmoothed = Double(c)
        cMin = c
        cMinWindow = c
        cMinWindowCalls = 0
        // The estimator's history belongs to the old timing.
        estimator.reset()
        estimatorBaseH = h
        estimatorBaseN = n
        candidateHits = 0
        updateFeed()
    }

    /// kFeed from the delay in use; never past the newest reference.
    @_noLocks
    mutating func updateFeed() {
        let wanted = cTarget - Int(delay + 0.5) + leadSamples
        kFeed = min(wanted, cMin)
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
    }

    @_noLocks
    mutating func setDelay(_ samples: Double, source: Int32, link: borrowing CaptureLink) {
        let changed = delaySource != 0 && abs(samples - delay) > Double(rate) / 1000
        delay = samples
        delaySource = source
        updateFeed()
        link.delayMs.store(Float(samples * 1000 / Double(rate)))
        link.delaySource.set(UInt64(source))
        if changed {
            link.delayChanges.add(1)
            link.events.post(.echoPathChanged, source: 0, frameTime: UInt64(n),
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
        let estimate = Double(cTarget) - kEcho + 1
        link.estimatedDelayMs.store(Float(estimate * 1000 / Double(rate)))
        link.estimateConfidence.store(e.confidence)
        guard locked, e.confidence >= 6, e.hops >= 3 else {
            candidateHits = 0
            return
        }
        let tolerance = Double(rate) * 0.004
        if abs(estimate - delay) <= tolerance && delaySource != 0 {
            candidateHits = 0
            return
        }
        if candidateHits > 0 && abs(estimate - candidate) <= tolerance {
            candidateHits += 1
        } else {
            candidate = estimate
            candidateHits = 1
        }
        if candidateHits >= 2 {
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
        let start = processed + kFeed
        var missing = 0
        for i in 0..<size {
            let index = start + i
            if index < h && index >= h - historyCapacity && index >= 0 {
                frameRef[i] = historyRef[index & mask]
                frameMedia[i] = historyMedia[index & mask]
            } else {
                frameRef[i] = 0
                frameMedia[i] = 0
                missing += 1
            }
        }
        let powers = canceller.process(mic: micQueue, reference: frameRef, out: frameOut)
        updateStatistics(powers, link: link)
        // Publish: the processed voice plus the media at the publish gain.
        publishRamp.setTarget(link.publishGain.load())
        let dst = outQueue + outQueued
        if publishRamp.isSteady && publishRamp.current == 0 {
            for i in 0..<size { dst[i] = frameOut[i] }
        } else {
            for i in 0..<size {
                let v = frameOut[i] + frameMedia[i] * publishRamp.next()
                dst[i] = max(-1, min(1, v))
            }
        }
        outQueued += size
        let rest = micQueued - size
        for i in 0..<rest { micQueue[i] = micQueue[i + size] }
        micQueued = rest
        processed += size
        return missing
    }

    @_noLocks
    mutating func updateStatistics(_ p: EchoCanceller.FramePowers, link: borrowing CaptureLink) {
        let farEnd = p.reference > 1e-6
        // Double talk: the output is well above the residual echo the
        // measured ERLE predicts.
        if farEnd && erleDb > 10 {
            let db = erleDb
            let amplitude: Float = _unsafePerformance { rtmix_support_db_to_linear(-db) }
            let expected = p.mic * amplitude * amplitude
            if p.output > 10 * expected && p.output > 1e-7 { doubleTalkHangover = 10 }
        }
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
            divergentFrames = 0
            link.resets.add(1)
            link.events.post(.cancellerReset, source: 0, frameTime: UInt64(n), value: 1)
        }
    }

    // MARK: output

    /// Hands `frames` processed frames to the caller (each channel the
    /// same). When the queue is short (a call size that is not a multiple
    /// of the canceller frame), the output is delayed by one frame, once.
    @_noLocks
    mutating func emit(into out: UnsafeMutablePointer<Float>, frames: Int) {
        if outQueued < frames {
            let pad = frameSize
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
