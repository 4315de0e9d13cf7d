/// Capture stage 6, publish: the processed voice plus the media at the
/// publish gain (ramped over 10 ms), hard-limited to ±1 either way (the
/// suppressor's overlap-add and comfort noise can exceed its int16-bounded
/// input: FuzzEngineC found 3.71) and NaN to 0. Plain values: no
/// allocation.
struct CapturePublisher {
    private var ramp: GainRamp

    init(sampleRate rate: Int) {
        ramp = GainRamp(initial: 0, rampFrames: max(1, rate / 100))
    }

    /// The media is still audible in the output (or fading out): it must be
    /// resampled even when the gain asked for is 0.
    var mixing: Bool { @_noLocks get { !ramp.isSteady || ramp.current > 0 } }

    /// Writes `count` samples of `voice` plus `media` at `gain` (the
    /// target; ramped) into `out`.
    @_noLocks
    mutating func publish(voice: UnsafePointer<Float>, media: UnsafePointer<Float>, gain: Float,
                          into out: UnsafeMutablePointer<Float>, count: Int) {
        ramp.setTarget(gain)
        if ramp.isSteady && ramp.current == 0 {
            for i in 0..<count {
                let v = voice[i]
                out[i] = v.isFinite ? max(-1, min(1, v)) : 0
            }
        } else {
            for i in 0..<count {
                let v = voice[i] + media[i] * ramp.next()
                out[i] = v.isFinite ? max(-1, min(1, v)) : 0
            }
        }
    }
}
