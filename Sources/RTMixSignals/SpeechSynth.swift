import Glibc

/// A two-pole resonator (Klatt style, unity gain at DC).
public struct Resonator {
    public init() {}

    private var a: Float = 1, b: Float = 0, c: Float = 0
    private var y1: Float = 0, y2: Float = 0

    public mutating func tune(frequency: Float, bandwidth: Float, sampleRate: Float) {
        let r = expf(-Float.pi * bandwidth / sampleRate)
        b = 2 * r * cosf(2 * Float.pi * frequency / sampleRate)
        c = -r * r
        a = 1 - b - c
    }

    @inline(__always)
    public mutating func process(_ x: Float) -> Float {
        let y = a * x + b * y1 + c * y2
        y2 = y1
        y1 = y
        return y
    }
}

/// Speech-like synthetic voice: a Rosenberg glottal pulse train at a slowly
/// varying pitch (phrase declination + syllable accents) through three
/// formant resonators gliding between vowel targets, with noise onsets for
/// fricatives, shaped into syllables, words and phrase pauses.
/// Deterministic for a given seed; no allocation after init.
public struct SpeechSynth {
    private enum Segment { case pause, fricative, vowel }

    /// (F1, F2, F3) in Hz: a, i, u, e, o, ae.
    private static let vowels: [(Float, Float, Float)] = [
        (730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240),
        (530, 1840, 2480), (570, 840, 2410), (660, 1720, 2410),
    ]

    public let sampleRate: Float
    private var rng: SplitMix64

    private var segment = Segment.pause
    private var remaining = 0
    private var syllablesLeft = 0          // in the current word
    private var wordsLeft = 0              // in the current phrase
    private var phraseSample = 0           // samples since phrase start
    private var phraseLength: Float = 1    // samples (for declination)

    private var envelope: Float = 0, envelopeTarget: Float = 0
    private var noiseLevel: Float = 0, noiseTarget: Float = 0
    private var formants: (Float, Float, Float) = (500, 1500, 2500)
    private var formantTargets: (Float, Float, Float) = (500, 1500, 2500)
    private var pitch: Float = 180, pitchAccent: Float = 0, accentTarget: Float = 0
    private var phase: Float = 0
    private var previousFlow: Float = 0
    private var r1 = Resonator(), r2 = Resonator(), r3 = Resonator(), fricativeColour = Resonator()
    private var retuneCounter = 0

    /// Pitch multiplier (1 = the default voice, about 155–240 Hz; 0.6 gives a
    /// lower voice). Used to make a second, distinguishable talker.
    public let pitchScale: Float
    /// Formant multiplier (1 = default; about 1.15 for a shorter vocal tract).
    public let formantScale: Float

    public init(sampleRate: Int, seed: UInt64, pitchScale: Float = 1, formantScale: Float = 1) {
        self.sampleRate = Float(sampleRate)
        self.pitchScale = pitchScale
        self.formantScale = formantScale
        rng = SplitMix64(seed: seed ^ 0x5EE_C4)
        fricativeColour.tune(frequency: min(4_500, self.sampleRate * 0.3), bandwidth: 1_800,
                             sampleRate: self.sampleRate)
        remaining = ms(150)
    }

    private func ms(_ v: Float) -> Int { Int(v * sampleRate / 1000) }

    private mutating func nextSegment() {
        switch segment {
        case .fricative:
            startVowel()
        case .pause:
            if wordsLeft == 0 {                        // new phrase
                wordsLeft = rng.int(3, 6)
                phraseSample = 0
                phraseLength = Float(wordsLeft) * 0.45 * sampleRate
            }
            if syllablesLeft == 0 {
                syllablesLeft = rng.int(1, 3)
                wordsLeft -= 1
            }
            startSyllable()
        case .vowel:
            envelopeTarget = 0
            if syllablesLeft > 0 {
                if rng.unit() < 0.5 { startSyllable() } else { pause(rng.uniform(20, 45)) }
            } else if wordsLeft > 0 {
                pause(rng.uniform(60, 130))
            } else {
                pause(rng.uniform(300, 700))
            }
        }
    }

    private mutating func pause(_ milliseconds: Float) {
        segment = .pause
        envelopeTarget = 0
        noiseTarget = 0
        remaining = ms(milliseconds)
    }

    private mutating func startSyllable() {
        syllablesLeft -= 1
        accentTarget = rng.uniform(-10, 35)
        if rng.unit() < 0.45 {
            segment = .fricative
            envelopeTarget = 0
            noiseTarget = rng.uniform(0.08, 0.18)
            remaining = ms(rng.uniform(35, 80))
        } else {
            startVowel()
        }
    }

    private mutating func startVowel() {
        segment = .vowel
        let v = SpeechSynth.vowels[rng.int(0, SpeechSynth.vowels.count - 1)]
        formantTargets = formantScale == 1 ? v : (v.0 * formantScale, v.1 * formantScale, v.2 * formantScale)
        envelopeTarget = rng.uniform(0.65, 1.0)
        noiseTarget = 0.015                            // a little breath
        remaining = ms(rng.uniform(110, 240))
    }

    /// Rosenberg glottal flow for phase in [0, 1).
    @inline(__always)
    private static func glottalFlow(_ p: Float) -> Float {
        let open: Float = 0.55, close: Float = 0.15
        if p < open { return 0.5 * (1 - cosf(Float.pi * p / open)) }
        if p < open + close { return cosf(0.5 * Float.pi * (p - open) / close) }
        return 0
    }

    @inline(__always)
    public mutating func nextSample() -> Float {
        if remaining <= 0 { nextSegment() }
        remaining -= 1
        phraseSample += 1

        // Smooth controls (~8 ms envelope, ~25 ms formant glides).
        envelope += (envelopeTarget - envelope) * (1 / (0.008 * sampleRate))
        noiseLevel += (noiseTarget - noiseLevel) * (1 / (0.006 * sampleRate))
        pitchAccent += (accentTarget - pitchAccent) * (1 / (0.05 * sampleRate))
        let k = 1 / (0.025 * sampleRate)
        formants.0 += (formantTargets.0 - formants.0) * k
        formants.1 += (formantTargets.1 - formants.1) * k
        formants.2 += (formantTargets.2 - formants.2) * k
        retuneCounter -= 1
        if retuneCounter <= 0 {
            retuneCounter = 32
            r1.tune(frequency: formants.0, bandwidth: 80, sampleRate: sampleRate)
            r2.tune(frequency: formants.1, bandwidth: 110, sampleRate: sampleRate)
            r3.tune(frequency: min(formants.2, sampleRate * 0.45), bandwidth: 160, sampleRate: sampleRate)
        }

        // Pitch: declination over the phrase, accents, a slow wobble.
        let progress = min(1, Float(phraseSample) / phraseLength)
        pitch = 205 - 50 * progress + pitchAccent + 3 * sinf(Float(phraseSample) * 2 * Float.pi * 5 / sampleRate)
        if pitchScale != 1 { pitch *= pitchScale }
        phase += pitch / sampleRate
        if phase >= 1 { phase -= 1 }

        // Glottal flow derivative (lip radiation) as the voiced excitation.
        let flow = SpeechSynth.glottalFlow(phase)
        let excitation = (flow - previousFlow) * envelope
        previousFlow = flow

        var y = r3.process(r2.process(r1.process(excitation)))
        y *= 1.6
        if noiseLevel > 0.0005 {
            y += fricativeColour.process(rng.uniform(-1, 1)) * noiseLevel * 0.15
        }
        return y
    }

    public mutating func render(into out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = nextSample() }
    }
}
