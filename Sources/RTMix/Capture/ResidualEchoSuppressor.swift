import CRTMixSupport

/// The capture path's residual-echo suppressor, per frequency bin. It
/// replaced the broadband gate, which removed whole words of a near-end
/// talker in double talk (issue 16). It runs after speexdsp's canceller and
/// preprocessor (whose own residual-echo suppression stays on: chained, the
/// two measured better than either alone; docs/capture.md).
///
/// Per 10 ms frame (`hop` samples), on a 2·hop sqrt-Hann window zero-padded
/// to a power-of-two transform (weighted overlap-add, hop/2·hop: the
/// output is one frame later than the input):
/// - `E` is the input signal (the preprocessor's output), `Ŷ = mic − E`
///   the linear filter's echo estimate (the caller passes mic = E + Ŷ),
///   `X` the reference fed to the canceller.
/// - Residual echo per bin `R = overdrive · leak · Ŷs`, where `Ŷs` is the
///   echo estimate's power held with a room-like decay (60 dB in 150 ms),
///   and `leak` a low quantile (≈ 17th percentile, +0.02/−0.1 dB per
///   frame) of |E|²/|Ŷ|² over frames with echo: how much of the estimated
///   echo is left. A low quantile rises only slowly while a talker fills
///   the output, so double talk does not teach it that the echo got louder.
/// - Fallback while the linear filter is not trusted in a bin (start,
///   reset, moved reference, divergence, or a bin it has never been shown:
///   a click or noise burst in bands speech and music leave empty):
///   `Rf = pathGain · Xs`, the reference's held power times a learnt
///   echo-path gain (a low quantile of |mic|²/Xs), weighted by `1 − trust`;
///   `trust` grows to 1 over ~1 s of far-end frames in which the filter
///   removes more than 3 dB (broadband), and a bin loses it when its
///   reference jumps 20 dB over its ~2 s average (something new there).
/// - Two states. Near end present (talk detected in `nearEndTrigger`
///   consecutive frames, held `nearEndHold` frames): the overdrive above
///   (3 dB), so a talker's bins pass. Echo only (otherwise, far end
///   active): the residual is taken `echoOnlyOverdrive` (25 dB) louder,
///   because the filter's leak varies from frame to frame far above its low
///   quantile while it converges or the path moves, and nothing needs to
///   pass; and at least the echo the reference explains (path gain × held
///   reference), which does not lag a moving path as the linear filter
///   does. AEC3 switches its suppressor tuning the same way (its dominant
///   near-end detector); the per-bin gain still lets a talker's strong
///   bins through in the frames before the switch. Talk counts only where
///   the microphone is 6 dB over what the reference explains (in at least
///   half the power kept): a filter misadapted by a moved path leaves
///   output the tuning would otherwise take for a talker.
/// - Gain: decision-directed Wiener gain from |E|²/R, smoothed over
///   neighbouring bins, falling at most 10 dB and rising at most 20 dB per
///   frame, floor −45 dB: bins where the talker is above the residual echo
///   pass, bins the echo explains are suppressed.
/// - Comfort noise: a minimum-tracking estimate of the background per bin
///   fills suppressed bins (random phase), so the background does not pump.
/// No allocation after `init`; the transforms are the project's radix-2 FFT
/// (two forward, one inverse per frame).
struct ResidualEchoSuppressor: ~Copyable {
    let hop: Int
    let size: Int
    let bins: Int
    let fft: FFT
    let window: UnsafeMutablePointer<Float>
    let micHistory: UnsafeMutablePointer<Float>
    let linHistory: UnsafeMutablePointer<Float>
    let refHistory: UnsafeMutablePointer<Float>
    let re: UnsafeMutablePointer<Float>
    let im: UnsafeMutablePointer<Float>
    let xr: UnsafeMutablePointer<Float>
    let xi: UnsafeMutablePointer<Float>
    let overlap: UnsafeMutablePointer<Float>
    // per bin
    let leak: UnsafeMutablePointer<Float>
    let echoHeld: UnsafeMutablePointer<Float>
    let refHeld: UnsafeMutablePointer<Float>
    let pathGain: UnsafeMutablePointer<Float>
    let noise: UnsafeMutablePointer<Float>
    let gain: UnsafeMutablePointer<Float>
    let target: UnsafeMutablePointer<Float>
    let cleanPrevious: UnsafeMutablePointer<Float>
    let phases: UnsafeMutablePointer<Float>  // 256 unit phasors (cos, sin)
    var seed: UInt32 = 0x1234_5678
    /// Per bin, 0 … 1: how far the linear filter's estimate is trusted in
    /// that bin (fallback weight 1 − trust). Per bin because a filter that
    /// has learnt the bands speech and music excite has not learnt those a
    /// rare broadband transient excites (a click, a noise burst): a bin
    /// whose reference jumps 20 dB over its average loses its trust.
    let trust: UnsafeMutablePointer<Float>
    /// Per bin, the reference's power averaged over ~2 s: a bin whose
    /// reference jumps 20 dB above it carries something new (a click, a
    /// noise burst, a new instrument) that the filter has not learnt.
    let refSlow: UnsafeMutablePointer<Float>
    /// Per bin, this frame's weight of the fallback estimate.
    let fallbackWeight: UnsafeMutablePointer<Float>
    var frames = 0
    /// Last frame: far end active and the output kept clearly more than the
    /// residual echo explains (near-end talk over the echo).
    var doubleTalk = false
    /// Last frame: the reference (held) was active.
    var farEnd = false

    let decay: Float
    let ddWeight: Float
    let leakUp: Float
    let leakDown: Float
    let floorGain: Float
    let overdrive: Float
    /// Overdrive while no near-end talk has been seen for `nearEndHold`
    /// frames (echo-only state): the linear filter's leak varies from frame
    /// to frame far above its low quantile while it converges, so with the
    /// far end alone the residual is taken as that much louder.
    let echoOnlyOverdrive: Float
    /// In the echo-only state the residual is also at least this times
    /// the echo the reference explains (path gain × held reference): an
    /// estimate that does not depend on the linear filter, which lags
    /// while the path moves.
    let echoOnlyPathWeight: Float
    /// Near-end talk needs the microphone this much (power ratio) above
    /// the echo the reference explains, in the bins that carry it.
    let talkMicMargin: Float
    let nearEndHold: Int
    /// Frames since near-end talk was last detected (saturates).
    var sinceNearEnd = Int.max / 2
    /// Consecutive frames with near-end talk detected; the echo-only state
    /// is left after `nearEndTrigger` of them (a transient the linear
    /// filter has not learnt looks like talk for a frame or two).
    var talkRun = 0
    let nearEndTrigger: Int
    /// A bin's reference this much (power ratio) over its ~2 s average
    /// makes the bin untrusted (0: never).
    let novelty: Float
    /// The fallback's gain is a low quantile of the echo path's: 10 dB
    /// over it (used only while the linear filter is not trusted).
    let fallbackOverdrive: Float
    let fallLimit: Float
    let riseLimit: Float
    let activity: Float
    /// Frames for `trust` to go from 0 to 1 once the filter removes echo.
    let trustFrames: Float

    let allocatedBytes: Int

    init?(frameSize: Int, sampleRate: Int, floorDb: Float = -45, overdriveDb: Float = 3,
          echoOnlyOverdriveDb: Float = 25, nearEndHoldMs: Int = 300, nearEndTrigger: Int = 2,
          noveltyDb: Float = 20, echoOnlyPathWeight: Float = 1, talkMicMargin: Float = 4) {
        var p = 2
        while p < 2 * frameSize { p <<= 1 }
        let bins = p / 2 + 1
        var batch = AllocationBatch()
        guard let fft = FFT(size: p),
              let w = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let mh = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let lh = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let rh = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let re = batch.allocate(repeating: Float(0), count: p),
              let im = batch.allocate(repeating: Float(0), count: p),
              let xr = batch.allocate(repeating: Float(0), count: p),
              let xi = batch.allocate(repeating: Float(0), count: p),
              let ov = batch.allocate(repeating: Float(0), count: frameSize),
              let leak = batch.allocate(repeating: Float(1), count: bins),
              let eh = batch.allocate(repeating: Float(0), count: bins),
              let xh = batch.allocate(repeating: Float(0), count: bins),
              let pg = batch.allocate(repeating: Float(1), count: bins),
              let nz = batch.allocate(repeating: Float(0), count: bins),
              let g = batch.allocate(repeating: Float(1), count: bins),
              let t = batch.allocate(repeating: Float(1), count: bins),
              let cp = batch.allocate(repeating: Float(0), count: bins),
              let ph = batch.allocate(repeating: Float(0), count: 512),
              let tr = batch.allocate(repeating: Float(0), count: bins),
              let rs = batch.allocate(repeating: Float(0), count: bins),
              let fw = batch.allocate(repeating: Float(1), count: bins)
        else { return nil }
        hop = frameSize
        size = p
        self.bins = bins
        allocatedBytes = batch.commit() + fft.allocatedBytes
        self.fft = consume fft
        window = w
        micHistory = mh
        linHistory = lh
        refHistory = rh
        self.re = re
        self.im = im
        self.xr = xr
        self.xi = xi
        overlap = ov
        self.leak = leak
        echoHeld = eh
        refHeld = xh
        pathGain = pg
        noise = nz
        gain = g
        target = t
        cleanPrevious = cp
        phases = ph
        trust = tr
        refSlow = rs
        fallbackWeight = fw
        let n2 = 2 * frameSize
        for i in 0..<n2 {
            // periodic sqrt-Hann: w²(i) + w²(i + hop) = 1
            let c = rtmix_support_cos(2 * Double.pi * Double(i) / Double(n2))
            w[i] = Float((0.5 - 0.5 * c).squareRoot())
        }
        for i in 0..<256 {
            let a = 2 * Double.pi * (Double(i) + 0.5) / 256
            ph[2 * i] = Float(rtmix_support_cos(a))
            ph[2 * i + 1] = Float(rtmix_support_sin(a))
        }
        // Echo held with a room's decay (60 dB in 150 ms).
        decay = rtmix_support_exp_f(-6 * 2.302585 * Float(frameSize) / (0.15 * Float(sampleRate)))
        floorGain = rtmix_support_db_to_linear(floorDb) * rtmix_support_db_to_linear(floorDb)
        overdrive = rtmix_support_db_to_linear(overdriveDb) * rtmix_support_db_to_linear(overdriveDb)
        echoOnlyOverdrive = rtmix_support_db_to_linear(echoOnlyOverdriveDb) * rtmix_support_db_to_linear(echoOnlyOverdriveDb)
        self.nearEndTrigger = max(1, nearEndTrigger)
        self.echoOnlyPathWeight = echoOnlyPathWeight
        self.talkMicMargin = talkMicMargin
        novelty = noveltyDb > 0 ? rtmix_support_db_to_linear(noveltyDb) * rtmix_support_db_to_linear(noveltyDb) : Float.infinity
        nearEndHold = max(1, nearEndHoldMs * sampleRate / (1000 * frameSize))
        ddWeight = 0.9
        fallbackOverdrive = 10
        leakUp = 1.0046     // +0.02 dB
        leakDown = 0.9772   // −0.1 dB
        fallLimit = 0.1   // −10 dB per frame (power)
        riseLimit = 100   // +20 dB per frame
        // A bin's echo estimate counts when above −90 dBFS-equivalent white
        // noise (E|X[k]|² = σ²·Σw² = σ²·hop).
        activity = Float(frameSize) * 1e-9
        trustFrames = 100
    }

    deinit {
        Allocation.free(window)
        Allocation.free(micHistory)
        Allocation.free(linHistory)
        Allocation.free(refHistory)
        Allocation.free(re)
        Allocation.free(im)
        Allocation.free(xr)
        Allocation.free(xi)
        Allocation.free(overlap)
        Allocation.free(leak)
        Allocation.free(echoHeld)
        Allocation.free(refHeld)
        Allocation.free(pathGain)
        Allocation.free(noise)
        Allocation.free(gain)
        Allocation.free(target)
        Allocation.free(cleanPrevious)
        Allocation.free(phases)
        Allocation.free(trust)
        Allocation.free(refSlow)
        Allocation.free(fallbackWeight)
    }

    /// The linear filter was reset or its reference moved: rely on the
    /// fallback estimate until it has converged again.
    @_noLocks
    mutating func distrust() {
        for k in 0..<bins { trust[k] = 0 }
        // What the filter used to leave says nothing about the new one:
        // assume it leaves all of its estimate until learnt again.
        for k in 0..<bins { leak[k] = 1 }
    }

    /// One frame: `mic` (hop samples, what the canceller got), `linear`
    /// (the canceller's output, replaced by the suppressed output of the
    /// previous frame's window: one frame of latency), `reference`
    /// (`stride` interleaved channels, averaged).
    @_noLocks
    mutating func process(mic: UnsafePointer<Float>, linear: UnsafeMutablePointer<Float>,
                          reference: UnsafePointer<Float>, stride: Int) {
        let n = hop, n2 = 2 * hop, p = size
        for i in 0..<n {
            micHistory[i] = micHistory[i + n]
            linHistory[i] = linHistory[i + n]
            refHistory[i] = refHistory[i + n]
            micHistory[i + n] = mic[i]
            linHistory[i + n] = linear[i]
            var r: Float = 0
            for c in 0..<stride { r += reference[i * stride + c] }
            refHistory[i + n] = r / Float(stride)
        }
        // One complex transform for two real signals: z = e + i·ŷ.
        for i in 0..<n2 {
            let w = window[i]
            let e = linHistory[i]
            re[i] = w * e
            im[i] = w * (micHistory[i] - e)
            xr[i] = w * refHistory[i]
            xi[i] = 0
        }
        for i in n2..<p {
            re[i] = 0; im[i] = 0; xr[i] = 0; xi[i] = 0
        }
        fft.forward(re, im)
        fft.forward(xr, xi)

        var sumE: Float = 0, sumR: Float = 0, sumKept: Float = 0, sumY: Float = 0
        var anyFar = false
        var sumTalk: Float = 0
        let up: Float = leakUp, down: Float = leakDown  // +0.02 / −0.1 dB
        for k in 0..<bins {
            let j = (p - k) & (p - 1)
            // E[k] = (Z[k] + conj Z[p−k]) / 2, Ŷ[k] = (Z[k] − conj Z[p−k]) / 2i
            let er = 0.5 * (re[k] + re[j]), ei = 0.5 * (im[k] - im[j])
            let yr = 0.5 * (im[k] + im[j]), yi = -0.5 * (re[k] - re[j])
            let pE = er * er + ei * ei
            let pY = yr * yr + yi * yi
            let pX = xr[k] * xr[k] + xi[k] * xi[k]
            let micR = er + yr, micI = ei + yi
            let pMic = micR * micR + micI * micI
            let held = max(pY, echoHeld[k] * decay)
            echoHeld[k] = held
            let xHeld = max(pX, refHeld[k] * decay)
            refHeld[k] = xHeld
            // Learn how much of the estimated echo the filter leaves.
            if pY > activity {
                let ratio = pE / pY
                var l = leak[k] * (ratio > leak[k] ? up : down)
                l = max(1e-5, min(4, l))
                leak[k] = l
            }
            // Learn the echo path's gain (mic over held reference).
            if xHeld > activity {
                anyFar = true
                let ratio = pMic / xHeld
                var g = pathGain[k] * (ratio > pathGain[k] ? up : down)
                g = max(1e-6, min(1e3, g))
                pathGain[k] = g
            }
            // Background: minimum tracking, fast down; up 5 dB/s without
            // echo in the bin, 0.2 dB/s with (the residual echo is no
            // background).
            let nz = noise[k]
            let rise: Float = xHeld > activity ? 1.00046 : 1.0116
            noise[k] = max(activity * 1e-3, pE < nz ? nz + 0.2 * (pE - nz) : nz * rise)
            let linearR = overdrive * leak[k] * held
            let fallbackR = fallbackOverdrive * pathGain[k] * xHeld
            // New in this bin: the filter has not shown it removes echo at
            // this level here; trust it again once it has.
            // (Read once into a local: the form that updated refSlow[k] in
            // place crashed Swift 6.3.1's compiler in the -O TSan build,
            // LLVM "Invalid bitcast".)
            let slow = refSlow[k]
            refSlow[k] = slow + 0.005 * (pX - slow)
            let fresh = pX > novelty * slow + activity
            let weight: Float = fresh ? 1 : 1 - trust[k]
            if fresh { trust[k] = 0 }
            fallbackWeight[k] = weight
            let r = max(linearR, weight * fallbackR)
            // Decision-directed signal-to-residual ratio (last frame's kept
            // power, this frame's excess), Wiener amplitude gain ξ/(1+ξ).
            let rr = max(r, 1e-20)
            let xi = ddWeight * cleanPrevious[k] / rr + (1 - ddWeight) * max(pE / rr - 1, 0)
            let amp = xi / (1 + xi)
            let t = max(floorGain, amp * amp)
            target[k] = t
            sumE += pE
            sumY += pY
            sumR += min(r, pE)
            sumKept += t * pE
            if pMic > talkMicMargin * pathGain[k] * xHeld { sumTalk += t * pE }
        }
        farEnd = anyFar
        // Trust the linear filter once it removes echo: its broadband echo
        // estimate above its residual (more than 3 dB removed). Per bin
        // only the distrust (a novel bin); trust itself is earned
        // broadband, since a bin where near-end sound (a talker, a fan,
        // music the reference lacks) dominates never shows the filter
        // removing anything, and must not be suppressed for it.
        if anyFar && sumY > sumE {
            for k in 0..<bins { trust[k] = min(1, trust[k] + 1 / trustFrames) }
        }
        // Near-end talk over the echo: the output keeps clearly more than
        // the residual echo explains, and within 10 dB of the linear echo
        // estimate (after the canceller and preprocessor the echo alone is
        // left far below it).
        let audible = anyFar && sumE > activity * Float(bins) && sumKept > 0.1 * sumY
        doubleTalk = audible && sumKept > 4 * sumR && (talkMicMargin <= 0 || sumTalk > 0.5 * sumKept)
        // The state follows the same evidence. Tried and dropped: also
        // counting bins that stand 10 dB clear of the residual for three
        // frames (finds a soft narrowband talker, but the live loopback's
        // misadapted bursts pass it too: 8–10 dB less echo removed).
        talkRun = doubleTalk ? talkRun + 1 : 0
        sinceNearEnd = talkRun >= nearEndTrigger ? 0 : min(sinceNearEnd + 1, Int.max / 2)
        // Echo-only state: no near-end talk for the hold time. The same
        // Wiener gain against a residual taken `echoOnlyOverdrive` louder.
        if anyFar && sinceNearEnd >= nearEndHold && echoOnlyOverdrive > overdrive {
            let od = echoOnlyOverdrive
            for k in 0..<bins {
                let j = (p - k) & (p - 1)
                let er = 0.5 * (re[k] + re[j]), ei = 0.5 * (im[k] - im[j])
                let pE = er * er + ei * ei
                let linearR = od * leak[k] * echoHeld[k]
                let fallbackR = fallbackOverdrive * pathGain[k] * refHeld[k]
                let pathR = pathGain[k] * refHeld[k]
                let rr = max(max(linearR, fallbackWeight[k] * fallbackR), max(echoOnlyPathWeight * pathR, 1e-20))
                let xi = ddWeight * cleanPrevious[k] / rr + (1 - ddWeight) * max(pE / rr - 1, 0)
                let amp = xi / (1 + xi)
                target[k] = max(floorGain, amp * amp)
            }
        }
        // Smooth over neighbouring bins, limit the slew, apply, add comfort noise.
        var previous = target[0]
        for k in 0..<bins {
            let next = k + 1 < bins ? target[k + 1] : target[k]
            let smoothed = 0.25 * previous + 0.5 * target[k] + 0.25 * next
            previous = target[k]
            var g = gain[k]
            g = smoothed < g ? max(smoothed, g * fallLimit) : min(smoothed, g * riseLimit)
            gain[k] = g
            let a = _unsafePerformance { rtmix_support_sqrtf(g) }  // amplitude gain
            let j = (p - k) & (p - 1)
            let er = 0.5 * (re[k] + re[j]), ei = 0.5 * (im[k] - im[j])
            cleanPrevious[k] = g * (er * er + ei * ei)
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let idx = Int(seed >> 24) * 2
            let cnPower = noise[k] * max(0, 1 - g)
            let cn = _unsafePerformance { rtmix_support_sqrtf(cnPower) }
            xr[k] = a * er + cn * phases[idx]
            xi[k] = a * ei + cn * phases[idx + 1]
        }
        xi[0] = 0
        xi[bins - 1] = 0
        for k in bins..<p {
            xr[k] = xr[p - k]
            xi[k] = -xi[p - k]
        }
        fft.inverse(xr, xi)
        for i in 0..<n {
            linear[i] = overlap[i] + xr[i] * window[i]
            overlap[i] = xr[i + n] * window[i + n]
        }
        frames += 1
    }
}
