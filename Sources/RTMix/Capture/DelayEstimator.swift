import CRTMixSupport

/// Estimates how far the echo in the microphone lags the reference:
/// GCC-PHAT on both signals decimated to about 2 kHz.
///
/// Every hop (512 decimated samples, ~256 ms; 512 ms while the caller
/// says the delay is settled) the last 768 decimated mic
/// samples are correlated with the last 2048 reference samples through one
/// 2048-point complex FFT (mic in the real part, reference in the
/// imaginary part). The cross-spectrum, normalised per hop, is averaged
/// with a 0.5 s time constant (turned to each new hop's windows when they
/// moved, `alignAverage`), whitened (PHAT: each bin divided by its
/// magnitude, which makes the correlation peak sharp in reverberant rooms)
/// and transformed back; the highest peak within the lag range, refined by
/// a parabola, is the estimate. Hops in which either signal is silent are
/// skipped (no far-end: nothing to learn). The work of one hop is split
/// over two calls so no capture call does two transforms.
///
/// Range: about −30 ms … +600 ms of delay (lags −32 … +608 ms, shifted
/// by the 32 ms the mic window ends early); resolution 1 decimated sample (0.5 ms
/// at 2 kHz), refined below that by the parabola. `init` allocates;
/// everything else is real-time safe.
struct DelayEstimator: ~Copyable {
    static var fftSize: Int { @_noLocks get { 2048 } }
    static var micWindow: Int { @_noLocks get { 768 } }
    /// Negative lags searched (reference arriving after the echo).
    static var guardLags: Int { @_noLocks get { 64 } }
    static var hop: Int { @_noLocks get { 512 } }
    static var micLag: Int { @_noLocks get { 64 } }
    /// Time constant of the cross-spectrum average.
    static var averageSeconds: Double { @_noLocks get { 0.5 } }
    static var historyCapacity: Int { @_noLocks get { 4096 } }

    /// Input samples per decimated sample.
    let factor: Int
    let fft: FFT
    let micD: UnsafeMutablePointer<Float>
    let refD: UnsafeMutablePointer<Float>
    var micCount = 0
    var refCount = 0
    /// Anti-aliasing low-pass before decimation (4th-order Butterworth at
    /// 0.4 × the decimated rate, two biquads), one per signal.
    var micFilter: Decimator
    var refFilter: Decimator
    let re: UnsafeMutablePointer<Float>
    let im: UnsafeMutablePointer<Float>
    let accRe: UnsafeMutablePointer<Float>
    let accIm: UnsafeMutablePointer<Float>
    /// This hop's normalised cross-spectrum alone.
    let hopRe: UnsafeMutablePointer<Float>
    let hopIm: UnsafeMutablePointer<Float>
    /// Smoothing factor per hop (`averageSeconds` time constant).
    let alpha: Float
    let alphaTracking: Float
    var nextHopAt: Int
    /// Set by the caller while the delay in use agrees with the estimates:
    /// hops come half as often (512 ms), halving the estimator's cost.
    var tracking = false
    /// Set by the caller before `step`: also find the peak of the hop
    /// alone (`Estimate.hopOffset`); off, those fields are 0 / false and the
    /// hop costs what it did before.
    var singleHop = false
    /// `singleHop` as it was when the pending hop was accumulated.
    var pendingSingle = false
    /// 0: idle; 1: spectrum accumulated, transform back on the next call.
    var stage = 0
    var hopsAccumulated = 0
    /// `refEnd − micEnd` of the hops in the average (decimated samples).
    /// It moves when the reference history grows faster or slower than the
    /// microphone (the drift resampler following a slide lets the
    /// alignment move with it, one decimated sample every 24 input samples
    /// at 48 kHz); the average is then turned to the new windows
    /// (`alignAverage`).
    var averageShift = 0
    /// Set by the caller before `step`: whether the average is turned when
    /// the windows move (`alignAverage`). Off while a fast correction is in
    /// use (`EchoSlideTracker.fastCorrection`): there the stop of a creep is
    /// what the estimates must show, and the slide tracker's let-go
    /// (`EchoSlideTracker.stopped`) is tuned on the average as it was
    /// (turned there too, 2 of 5 replayed loaded loopback creeps lost 5.1
    /// and 12.1 dB of ERLE, and CaptureTests' 48 kHz creep was let go 2 s
    /// late; docs/capture.md).
    var alignWindows = true
    /// Window ends (decimated indices) of the hop being processed.
    var pendingRefEnd = 0
    var pendingMicEnd = 0

    /// The latest estimate.
    struct Estimate {
        /// Echo position minus mic position, in input samples: the echo
        /// in mic sample n is the reference sample n + offset (a reference
        /// index in the caller's reference-sample numbering).
        var offset: Double
        /// Peak over the RMS of the correlation within the lag range.
        var confidence: Float
        /// Hops accumulated so far (decays with the 1 s average).
        var hops: Int
        /// The peak is 1.25× above any other more than 2 ms away (periodic
        /// signals, such as a held tone, give several equal peaks: no
        /// delay can be told from them).
        var distinct: Bool
        /// The same from this hop alone (no average): it sees a moved echo
        /// path as soon as one mic window lies past the move, while the
        /// average still holds the old delay for about a second.
        var hopOffset: Double
        var hopConfidence: Float
        var hopDistinct: Bool
        init(offset: Double, confidence: Float, hops: Int, distinct: Bool,
             hopOffset: Double = 0, hopConfidence: Float = 0, hopDistinct: Bool = false) {
            self.offset = offset
            self.confidence = confidence
            self.hops = hops
            self.distinct = distinct
            self.hopOffset = hopOffset
            self.hopConfidence = hopConfidence
            self.hopDistinct = hopDistinct
        }
    }
    /// Set after each completed hop; the caller reads and clears it.
    var latest: Estimate? = nil

    /// Bytes this estimator allocated, its FFT included (engine memory
    /// accounting).
    let allocatedBytes: Int

    /// nil when an allocation fails.
    init?(sampleRate: Int) {
        let n = DelayEstimator.fftSize
        var batch = AllocationBatch()
        guard let f = FFT(size: n),
              let md = batch.allocate(repeating: Float(0), count: DelayEstimator.historyCapacity),
              let rd = batch.allocate(repeating: Float(0), count: DelayEstimator.historyCapacity),
              let r = batch.allocate(repeating: Float(0), count: n),
              let i = batch.allocate(repeating: Float(0), count: n),
              let ar = batch.allocate(repeating: Float(0), count: n / 2 + 1),
              let ai = batch.allocate(repeating: Float(0), count: n / 2 + 1),
              let hr = batch.allocate(repeating: Float(0), count: n / 2 + 1),
              let hi = batch.allocate(repeating: Float(0), count: n / 2 + 1) else { return nil }
        allocatedBytes = batch.commit() + f.allocatedBytes
        fft = consume f
        micD = md
        refD = rd
        re = r
        im = i
        accRe = ar
        accIm = ai
        hopRe = hr
        hopIm = hi
        factor = max(1, sampleRate / 2000)
        micFilter = Decimator(factor: factor, sampleRate: sampleRate)
        refFilter = Decimator(factor: factor, sampleRate: sampleRate)
        let hopSeconds = Double(DelayEstimator.hop * factor) / Double(sampleRate)
        alpha = Float(rtmix_support_exp(-hopSeconds / DelayEstimator.averageSeconds))
        alphaTracking = alpha * alpha  // the same time constant over hops twice as long
        nextHopAt = DelayEstimator.fftSize
    }

    deinit {
        Allocation.free(micD)
        Allocation.free(refD)
        Allocation.free(re)
        Allocation.free(im)
        Allocation.free(accRe)
        Allocation.free(accIm)
        Allocation.free(hopRe)
        Allocation.free(hopIm)
    }

    /// The next hop half a hop sooner than scheduled (128 ms after the
    /// last at the full rate): a single hop saw the echo move and the next
    /// is to confirm it.
    @_noLocks
    mutating func hopSooner() {
        nextHopAt -= DelayEstimator.hop / 2
    }

    /// Forgets everything learnt (the echo path changed beyond recognition,
    /// or the streams restarted).
    @_noLocks
    mutating func reset() {
        micCount = 0
        refCount = 0
        micFilter.reset()
        refFilter.reset()
        stage = 0
        hopsAccumulated = 0
        tracking = false
        nextHopAt = DelayEstimator.fftSize
        accRe.update(repeating: 0, count: DelayEstimator.fftSize / 2 + 1)
        accIm.update(repeating: 0, count: DelayEstimator.fftSize / 2 + 1)
        latest = nil
    }

    @_noLocks
    mutating func appendMic(_ x: UnsafePointer<Float>, count: Int) {
        micCount = micFilter.run(x, count: count, into: micD, at: micCount,
                                 mask: DelayEstimator.historyCapacity - 1)
    }

    @_noLocks
    mutating func appendReference(_ x: UnsafePointer<Float>, count: Int) {
        refCount = refFilter.run(x, count: count, into: refD, at: refCount,
                                 mask: DelayEstimator.historyCapacity - 1)
    }

    /// The decimated sample counters grow for the life of the capture path;
    /// on a 32-bit target an `Int` would trap at 2³¹ (about 50 hours of
    /// capture). Past `rebaseThreshold` every counter and window end moves
    /// down by `rebaseStep`, a multiple of `historyCapacity`: differences
    /// and ring slots (`& mask`) stay exactly the same.
    static var rebaseThreshold: Int { @_noLocks get { 1 << 30 } }
    static var rebaseStep: Int { @_noLocks get { 1 << 29 } }

    @_noLocks
    mutating func rebaseIfLarge() {
        guard micCount > DelayEstimator.rebaseThreshold && refCount > DelayEstimator.rebaseThreshold else { return }
        let d = DelayEstimator.rebaseStep
        micCount -= d
        refCount -= d
        nextHopAt -= d
        pendingRefEnd -= d
        pendingMicEnd -= d
    }

    /// Does at most one stage of the hop work when it is due. Call once per
    /// capture frame, after appending that frame's samples.
    @_noLocks
    mutating func step() {
        rebaseIfLarge()
        if stage == 1 {
            finishHop()
            stage = 0
            return
        }
        guard micCount >= nextHopAt, refCount >= DelayEstimator.fftSize else { return }
        nextHopAt = micCount + (tracking ? 2 * DelayEstimator.hop : DelayEstimator.hop)
        // The mic window ends `micLag` samples before the newest mic
        // sample: the newest reference can be behind the newest mic sample
        // (callback order, the drift follower's look-ahead), and a delay
        // near 0 must stay inside the searched lags.
        let micEnd = micCount - DelayEstimator.micLag
        if accumulateHop(refEnd: refCount, micEnd: micEnd) {
            pendingRefEnd = refCount
            pendingMicEnd = micEnd
            pendingSingle = singleHop
            stage = 1
        }
    }

    /// FFT of both windows; adds the normalised cross-spectrum into the
    /// average. Returns false (nothing added) when either window is silent.
    @_noLocks
    mutating func accumulateHop(refEnd: Int, micEnd: Int) -> Bool {
        let n = DelayEstimator.fftSize, m = DelayEstimator.micWindow, g = DelayEstimator.guardLags
        let mask = DelayEstimator.historyCapacity - 1
        var micEnergy: Float = 0, refEnergy: Float = 0
        let micStart = n - g - m
        for t in 0..<n {
            let r = refD[(refEnd - n + t) & mask]
            im[t] = r
            refEnergy += r * r
            if t >= micStart && t < n - g {
                let v = micD[(micEnd - (n - g) + t) & mask]
                re[t] = v
                micEnergy += v * v
            } else {
                re[t] = 0
            }
        }
        // Silence (per decimated sample, full scale = factor²): −70 dBFS.
        let floor: Float = 1e-7  // silence: below −70 dBFS
        guard micEnergy > floor * Float(m), refEnergy > floor * Float(n) else { return false }
        fft.forward(re, im)
        let product = micEnergy * refEnergy
        let norm: Float = 1 / _unsafePerformance { rtmix_support_sqrtf(product) }
        let a = tracking ? alphaTracking : alpha
        if alignWindows && hopsAccumulated > 0 && refEnd - micEnd != averageShift {
            alignAverage(by: refEnd - micEnd - averageShift)
        }
        averageShift = refEnd - micEnd
        for k in 0...n / 2 {
            let j = (n - k) & (n - 1)
            // Z = FFT(mic + i·ref): MIC(k) = (Z(k) + Z*(N−k))/2,
            // REF(k) = (Z(k) − Z*(N−k))/(2i).
            let mr = (re[k] + re[j]) * 0.5, mi = (im[k] - im[j]) * 0.5
            let rr = (im[k] + im[j]) * 0.5, ri = (re[j] - re[k]) * 0.5
            // MIC · conj(REF)
            let cr = mr * rr + mi * ri
            let ci = mi * rr - mr * ri
            if singleHop {
                hopRe[k] = cr * norm
                hopIm[k] = ci * norm
            }
            accRe[k] = a * accRe[k] + cr * norm
            accIm[k] = a * accIm[k] + ci * norm
        }
        hopsAccumulated += 1
        return true
    }

    /// The hops averaged so far correlated windows `shift` decimated samples
    /// closer together than this hop's: the same echo shows `shift` lags
    /// further in this hop's correlation (`peak`: the offset is
    /// `refEnd − micEnd − g − lag`). Each bin of the average is turned by
    /// that delay, so that the average correlates as if all its hops had
    /// had this hop's windows. Without it the average held two peaks a
    /// decimated sample apart after each move, and its estimate dipped by up
    /// to 20 input samples at 48 kHz and came back over a second: once
    /// every 24 samples the reference moved, 2–4 s apart at 200 ppm, and
    /// the slide tracker's line through those estimates asked for
    /// corrections 50–170 ppm off (docs/capture.md). Unchanged windows (one
    /// clock, no correction, lockstep calls) never come here, nor a hop
    /// while `alignWindows` is off. A twiddle recurrence in
    /// double: 1025 complex products, only on a hop whose windows moved.
    @_noLocks
    mutating func alignAverage(by shift: Int) {
        let n = DelayEstimator.fftSize
        let angle = -2 * Double.pi * Double(shift) / Double(n)
        let stepRe = _unsafePerformance { rtmix_support_cos(angle) }
        let stepIm = _unsafePerformance { rtmix_support_sin(angle) }
        var wr: Double = 1, wi: Double = 0
        for k in 0...n / 2 {
            let ar = Double(accRe[k]), ai = Double(accIm[k])
            accRe[k] = Float(ar * wr - ai * wi)
            accIm[k] = Float(ar * wi + ai * wr)
            let nr = wr * stepRe - wi * stepIm
            wi = wr * stepIm + wi * stepRe
            wr = nr
        }
    }

    /// PHAT weighting, inverse FFT, peak search; for the average and, when
    /// `singleHop` was set, in the same transform for this hop alone.
    @_noLocks
    mutating func finishHop() {
        let n = DelayEstimator.fftSize
        // PHAT whitens every bin; bins 60 dB below the strongest carry no
        // signal (only noise or window leakage) and are left out, so that
        // a narrowband far end (a held tone) gives the periodic
        // correlation it really has instead of a random peak.
        var strongest: Float = 0
        for k in 0...n / 2 { strongest = max(strongest, accRe[k] * accRe[k] + accIm[k] * accIm[k]) }
        let floor = max(strongest * 1e-6, 1e-30)
        // Both correlations are real: one complex inverse transform of
        // A + i·B gives the average's in the real part and, when asked for,
        // the hop's in the imaginary part (B(n−k) = conj B(k), so i·B adds
        // −Bi + i·Br at k and +Bi + i·Br at n − k; B = 0 otherwise).
        var strongestHop: Float = 0
        if pendingSingle {
            for k in 0...n / 2 { strongestHop = max(strongestHop, hopRe[k] * hopRe[k] + hopIm[k] * hopIm[k]) }
        }
        let floorHop = max(strongestHop * 1e-6, 1e-30)
        for k in 0...n / 2 {
            let power = accRe[k] * accRe[k] + accIm[k] * accIm[k]
            let mag: Float = _unsafePerformance { rtmix_support_sqrtf(power) }
            let w: Float = power > floor ? 1 / mag : 0
            let ar = accRe[k] * w, ai = accIm[k] * w
            var br: Float = 0, bi: Float = 0
            if pendingSingle {
                let powerHop = hopRe[k] * hopRe[k] + hopIm[k] * hopIm[k]
                let magHop: Float = _unsafePerformance { rtmix_support_sqrtf(powerHop) }
                let wHop: Float = powerHop > floorHop ? 1 / magHop : 0
                br = hopRe[k] * wHop
                bi = hopIm[k] * wHop
            }
            re[k] = ar - bi
            im[k] = ai + br
            if k > 0 && k < n / 2 {
                re[n - k] = ar + bi
                im[n - k] = br - ai
            }
        }
        re[0] = 0; im[0] = 0  // DC says nothing about delay
        fft.inverse(re, im)
        let average = DelayEstimator.peak(re, pendingRefEnd: pendingRefEnd, pendingMicEnd: pendingMicEnd)
        var e = Estimate(offset: average.offset * Double(factor), confidence: average.confidence,
                         hops: hopsAccumulated, distinct: average.distinct)
        if pendingSingle {
            let single = DelayEstimator.peak(im, pendingRefEnd: pendingRefEnd, pendingMicEnd: pendingMicEnd)
            e.hopOffset = single.offset * Double(factor)
            e.hopConfidence = single.confidence
            e.hopDistinct = single.distinct
        }
        latest = e
    }

    /// The highest peak of a correlation within the lag range: the offset
    /// (decimated samples), its height over the range's RMS, and whether
    /// it stands 1.25× above any other more than 2 ms away.
    @_noLocks
    static func peak(_ c: UnsafeMutablePointer<Float>, pendingRefEnd: Int, pendingMicEnd: Int)
        -> (offset: Double, confidence: Float, distinct: Bool) {
        let n = DelayEstimator.fftSize, m = DelayEstimator.micWindow, g = DelayEstimator.guardLags
        // Lags L in [−g, n − g − m]: circular index (L + n) & (n − 1).
        var best: Float = -Float.greatestFiniteMagnitude
        var bestLag = 0
        var sumSquares: Float = 0
        let maxLag = n - g - m
        var lag = -g
        while lag <= maxLag {
            let v = c[(lag + n) & (n - 1)]
            sumSquares += v * v
            if v > best {
                best = v
                bestLag = lag
            }
            lag += 1
        }
        // The best peak more than 2 ms (4 decimated samples) away.
        var second: Float = -Float.greatestFiniteMagnitude
        lag = -g
        while lag <= maxLag {
            if lag < bestLag - 4 || lag > bestLag + 4 { second = max(second, c[(lag + n) & (n - 1)]) }
            lag += 1
        }
        let count = Float(maxLag + g + 1)
        let meanSquare = sumSquares / count
        let rms: Float = _unsafePerformance { rtmix_support_sqrtf(meanSquare) }
        let left = c[(bestLag - 1 + n) & (n - 1)], right = c[(bestLag + 1 + n) & (n - 1)]
        let curvature = left - 2 * best + right
        var fine = Double(bestLag)
        if curvature < 0 { fine += Double(max(-0.5, min(0.5, 0.5 * (left - right) / curvature))) }
        // Mic decimated index j ↔ reference index j + refEnd − micEnd − g − L.
        let offsetD = Double(pendingRefEnd - pendingMicEnd - g) - fine
        return (offsetD, rms > 0 ? best / rms : 0, best > 1.25 * max(second, 0))
    }
}

/// Low-pass and keep every `factor`-th sample: with an even factor, pairs
/// of samples are averaged first (a zero at the input's Nyquist, 20 dB
/// down at 15/16 of it) so the two biquads (a 4th-order Butterworth at 0.4
/// × the output rate) run at half the input rate.
struct Decimator {
    let factor: Int
    /// 2 when pairs are averaged first, else 1.
    let pre: Int
    var b0: (Float, Float), b1: (Float, Float), b2: (Float, Float)
    var a1: (Float, Float), a2: (Float, Float)
    var z: (Float, Float, Float, Float) = (0, 0, 0, 0)
    var phase = 0
    var pending: Float = 0
    var pendingCount = 0

    init(factor: Int, sampleRate: Int) {
        self.factor = factor
        pre = factor % 2 == 0 ? 2 : 1
        let filterRate = Double(sampleRate) / Double(pre)
        let cutoff = 0.4 * Double(sampleRate) / Double(factor)
        let w = 2 * Double.pi * min(cutoff, 0.45 * filterRate) / filterRate
        let cosW = rtmix_support_cos(w), sinW = rtmix_support_sin(w)
        func section(_ q: Double) -> (Float, Float, Float, Float, Float) {
            let alpha = sinW / (2 * q)
            let a0 = 1 + alpha
            return (Float((1 - cosW) / 2 / a0), Float((1 - cosW) / a0), Float((1 - cosW) / 2 / a0),
                    Float(-2 * cosW / a0), Float((1 - alpha) / a0))
        }
        let s1 = section(0.5412), s2 = section(1.3066)
        b0 = (s1.0, s2.0); b1 = (s1.1, s2.1); b2 = (s1.2, s2.2); a1 = (s1.3, s2.3); a2 = (s1.4, s2.4)
    }

    @_noLocks
    mutating func reset() {
        z = (0, 0, 0, 0)
        phase = 0
        pending = 0
        pendingCount = 0
    }

    /// Filters `count` samples and stores every `factor`-th into the ring
    /// `out` from index `at`; returns the new index.
    @_noLocks
    mutating func run(_ x: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>,
                      at start: Int, mask: Int) -> Int {
        var index = start
        var state = z
        var ph = phase
        let keep = factor / pre
        if pre == 2 {
            // Pairs averaged: a sample left over from the last call pairs
            // with this call's first.
            var i = 0
            if pendingCount == 1 && count > 0 {
                step(0.5 * (pending + x[0]), &state, &ph, keep, out, &index, mask)
                pendingCount = 0
                i = 1
            }
            while i &+ 1 < count {
                step(0.5 * (x[i] + x[i &+ 1]), &state, &ph, keep, out, &index, mask)
                i &+= 2
            }
            if i < count {
                pending = x[i]
                pendingCount = 1
            }
        } else {
            for i in 0..<count { step(x[i], &state, &ph, keep, out, &index, mask) }
        }
        z = state
        phase = ph
        return index
    }

    /// One filtered sample; every `keep`-th goes into the ring.
    @_noLocks @inline(__always)
    func step(_ v: Float, _ z: inout (Float, Float, Float, Float), _ phase: inout Int, _ keep: Int,
              _ out: UnsafeMutablePointer<Float>, _ index: inout Int, _ mask: Int) {
        // Transposed direct form II, two sections.
        let y1 = b0.0 * v + z.0
        z.0 = b1.0 * v - a1.0 * y1 + z.1
        z.1 = b2.0 * v - a2.0 * y1
        let y2 = b0.1 * y1 + z.2
        z.2 = b1.1 * y1 - a1.1 * y2 + z.3
        z.3 = b2.1 * y1 - a2.1 * y2
        phase &+= 1
        if phase == keep {
            phase = 0
            out[index & mask] = y2
            index &+= 1
        }
    }
}
