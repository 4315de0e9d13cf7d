import CRTMixSupport

/// Media ducking: while call-domain voice is active, the media domain is
/// lowered by `depth` (default -12 dB) for local playout.
///
/// Detection runs on the call sum of the current block (call sources at
/// their source × call domain gains, before the media is added): with
/// ducking on and call sources present, the `MixBus` sums media sources on
/// its media bus, so the call sum is known before the media is scaled,
/// with no one-block lag (except a new call source's first block, see
/// `wantsCallSum`). Voice is active while
/// the block's RMS reaches `threshold` (-45 dBFS: above typical comfort
/// noise, far below speech), and stays active for `holdMs` after it falls
/// below (the gaps between words do not pump the music).
///
/// The gain moves linearly in amplitude: from 1 to the depth in `attack`
/// ms, back to 1 in `release` ms, per frame (no zipper). It multiplies the
/// media domain gain (the app's media volume) and is applied where the
/// media bus joins the local mix only: the published media (capture path)
/// keeps its publish gain, so the far end never hears the duck.
///
/// Render thread only; real-time safe.
struct Ducker {
    /// -45 dBFS RMS.
    static var threshold: Float { @_noLocks get { 0.005_623_413 } }
    static var holdMs: Float { @_noLocks get { 100 } }

    /// Linear depth (1: ducking off).
    let depth: Float
    let attackMs: Float
    let releaseMs: Float
    /// maxFrames: per-frame duck gains of the current block (nil when off).
    let curve: UnsafeMutablePointer<Float>?
    /// The gain now (1 = not ducked).
    var gain: Float = 1
    /// Output frames since voice was last detected (hold timer).
    var quietFrames = Int.max / 2
    /// The previous block mixed a call source.
    var callSeen = false

    /// `curve` (maxFrames floats) is allocated by the engine (failably,
    /// counted against its memory cap) when ducking is on
    /// (`config.duckDepthDb < 0`), nil otherwise; the engine frees it.
    init(config: EngineConfig, curve: UnsafeMutablePointer<Float>?) {
        depth = config.duckDepthDb < 0 ? rtmix_support_db_to_linear(config.duckDepthDb) : 1
        attackMs = config.duckAttackMs
        releaseMs = config.duckReleaseMs
        self.curve = depth < 1 ? curve : nil
    }

    var enabled: Bool { @_noLocks get { depth < 1 } }

    /// This block's call sum is needed (the `MixBus` then keeps media on
    /// its bus): only with ducking on, while there is something to duck
    /// for (a call source in the previous block) or the duck is still
    /// releasing. Without call sources, media is mixed exactly as with
    /// ducking off. A call source's first block is thus not examined: its
    /// voice is detected from its second block (one block later, within
    /// the attack time at 10 ms blocks).
    var wantsCallSum: Bool {
        @_noLocks get { enabled && (callSeen || gain < 1) }
    }

    /// Voice activity of one block of the call sum (`samples` interleaved
    /// samples).
    @_noLocks
    static func voiceActive(_ callSum: UnsafePointer<Float>, samples: Int) -> Bool {
        guard samples > 0 else { return false }
        var energy: Float = 0
        for i in 0..<samples { energy += callSum[i] * callSum[i] }
        return energy >= Ducker.threshold * Ducker.threshold * Float(samples)
    }

    /// Advances the gain over a block after `voice` was (or was not)
    /// detected in it. Returns the gain when it is constant over the
    /// block, or nil after writing per-frame gains into `curve`.
    @_noLocks
    mutating func advance(voice: Bool, frames: Int, sampleRate: Int, curve: UnsafeMutablePointer<Float>) -> Float? {
        let holdFrames = Int(Ducker.holdMs * Float(sampleRate) / 1000)
        if voice {
            quietFrames = 0
        } else {
            quietFrames = min(quietFrames &+ frames, Int.max / 2)
        }
        // Ducked while voice is active or within the hold time after it.
        let ducking = voice || quietFrames <= holdFrames
        let target = ducking ? depth : 1
        if gain == target { return gain }
        let ms = ducking ? attackMs : releaseMs
        let step = (1 - depth) / max(1, ms * Float(sampleRate) / 1000)
        var g = gain
        for i in 0..<frames {
            if g > target {
                g = max(target, g - step)
            } else if g < target {
                g = min(target, g + step)
            }
            curve[i] = g
        }
        gain = g
        return nil
    }
}
