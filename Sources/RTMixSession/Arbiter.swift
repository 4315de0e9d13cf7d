// Arbiter.swift — pure functions: which configuration satisfies a set of
// active modules, and does a given configuration satisfy them.
//
// Rules (see README.md ("Audio session policy engine") for the full table):
// - Recording (and an RTC call in the foreground) uses playAndRecord, never
//   record-only (record-only silences playback).
// - Play-only keeps the base category when it already plays.
// - An RTC call adds mixWithOthers, defaultToSpeaker and Bluetooth.
// - Bluetooth is HFP (allowBluetooth) when some module records, A2DP
//   (allowBluetoothA2DP) otherwise; A2DP is never set while recording.
// - With no active module the result is the base configuration.

/// One active module as the arbiter sees it: its effective needs (after
/// permission / app-state gating) and mode preference.
struct ArbiterInput: Equatable {
    var id: ModuleID
    var needs: SessionNeeds
    var preferredMode: SessionMode?
    /// Higher = newer request; breaks mode-preference ties.
    var sequence: UInt64
}

/// Context the arbiter needs to turn requested needs into effective ones.
struct GatingContext {
    var foreground: Bool
    var micPermission: MicPermission
}

enum Arbiter {
    /// Needs a module effectively has in this context.
    /// - Playback implies speakerByDefault.
    /// - An RTC call in the foreground (or allowed to record in the
    ///   background) implies playback, mixWithOthers, speakerByDefault and
    ///   bluetooth; in the background it becomes play-only with mixing.
    /// - Recording is dropped without permission, or in the background
    ///   unless the module may record there.
    static func effectiveNeeds(_ needs: SessionNeeds, _ ctx: GatingContext) -> SessionNeeds {
        var n = needs
        // Decision: media in playAndRecord without defaultToSpeaker comes out
        // of the quiet receiver ("media too quiet"), so playback implies the
        // speaker by default (a no-op in the other playing categories).
        if n.contains(.playback) { n.insert(.speakerByDefault) }
        let backgroundOK = ctx.foreground || n.contains(.recordInBackground)
        if n.contains(.call) {
            n.formUnion([.playback, .mixWithOthers, .speakerByDefault, .bluetooth])
            if !backgroundOK { n.remove(.call) }
        }
        if n.contains(.recording) && (ctx.micPermission != .granted || !backgroundOK) {
            n.remove(.recording)
        }
        return n
    }

    static func union(_ inputs: [ArbiterInput]) -> SessionNeeds {
        var u: SessionNeeds = []
        for i in inputs { u.formUnion(i.needs) }
        return u
    }

    private static func priority(_ n: SessionNeeds) -> Int {
        if n.contains(.call) { return 2 }
        if n.contains(.recording) { return 1 }
        return 0
    }

    /// The module whose preferred mode applies with `category`: calls first,
    /// then recorders, then others; newest request first within a rank.
    /// Preferences that are not valid with the category are skipped.
    static func modeWinner(_ inputs: [ArbiterInput], category: SessionCategory) -> ArbiterInput? {
        var best: ArbiterInput? = nil
        for i in inputs {
            guard let mode = i.preferredMode, ValidityTable.allows(mode: mode, with: category) else {
                continue
            }
            if let b = best {
                let pi = priority(i.needs), pb = priority(b.needs)
                if pi > pb || (pi == pb && i.sequence > b.sequence) { best = i }
            } else {
                best = i
            }
        }
        return best
    }

    /// True if `config` gives one module (with effective needs `n`) what it
    /// needs. `anyRecording` says whether some active module records.
    static func satisfies(_ config: SessionConfiguration, _ n: SessionNeeds,
                          anyRecording: Bool) -> Bool {
        let c = config.category, o = config.options
        if n.contains(.playback) && !c.plays { return false }
        if (n.contains(.recording) || n.contains(.call)) && c != .playAndRecord { return false }
        if n.contains(.recording) && o.contains(.allowBluetoothA2DP) { return false }
        if n.contains(.mixWithOthers) && !config.mixesWithOthers { return false }
        if n.contains(.duckOthers) && !o.contains(.duckOthers) { return false }
        if n.contains(.speakerByDefault) && c == .playAndRecord && !o.contains(.defaultToSpeaker) {
            return false
        }
        if n.contains(.bluetooth) {
            if c == .playAndRecord {
                if anyRecording {
                    if !o.contains(.allowBluetooth) || o.contains(.allowBluetoothA2DP) { return false }
                } else if !o.contains(.allowBluetooth) && !o.contains(.allowBluetoothA2DP) {
                    return false
                }
            } else if c == .record && !o.contains(.allowBluetooth) {
                return false
            }
        }
        return true
    }

    /// The first module `config` does not satisfy (calls are checked first,
    /// then registration order), or nil if it satisfies all of them. An
    /// invalid configuration fails the first module.
    static func firstUnsatisfied(_ config: SessionConfiguration,
                                 _ inputs: [ArbiterInput]) -> ModuleID? {
        if inputs.isEmpty { return nil }
        let u = union(inputs)
        let anyRecording = u.contains(.recording)
        let winner = modeWinner(inputs, category: config.category)
        let valid = ValidityTable.check(config).isValid
        for pass in 0..<2 {
            for i in inputs where (pass == 0) == i.needs.contains(.call) {
                if !valid || !satisfies(config, i.needs, anyRecording: anyRecording) { return i.id }
            }
        }
        if let w = winner, let mode = w.preferredMode, config.mode != mode { return w.id }
        return nil
    }

    /// The configuration the active modules need, derived from `base`.
    /// Deterministic: depends only on the inputs and the base.
    static func target(_ inputs: [ArbiterInput], base: SessionConfiguration) -> SessionConfiguration {
        if inputs.isEmpty { return base }
        let u = union(inputs)
        let anyRecording = u.contains(.recording)
        var cat = base.category
        if anyRecording || u.contains(.call) {
            cat = .playAndRecord
        } else {
            let canMix = cat == .ambient || cat == .playback || cat == .playAndRecord || cat == .multiRoute
            let canDuck = cat == .playback || cat == .playAndRecord || cat == .multiRoute
            if (u.contains(.playback) && !cat.plays)
                || (u.contains(.mixWithOthers) && !canMix)
                || (u.contains(.duckOthers) && !canDuck)
                || ((u.contains(.speakerByDefault) || u.contains(.bluetooth)) && cat == .record) {
                cat = .playback
            }
        }
        var opts = base.options.intersection(ValidityTable.allowedOptions(for: cat))
        if u.contains(.mixWithOthers) && cat != .ambient { opts.insert(.mixWithOthers) }
        if u.contains(.duckOthers) { opts.insert(.duckOthers) }
        if cat == .playAndRecord {
            if u.contains(.speakerByDefault) { opts.insert(.defaultToSpeaker) }
            if anyRecording { opts.remove(.allowBluetoothA2DP) }
            if u.contains(.bluetooth) {
                if anyRecording {
                    opts.insert(.allowBluetooth)
                } else {
                    opts.insert(.allowBluetoothA2DP)
                    opts.remove(.allowBluetooth)
                }
            }
        }
        var mode: SessionMode = .default
        if let w = modeWinner(inputs, category: cat), let m = w.preferredMode {
            mode = m
        } else if cat == base.category {
            mode = base.mode
        }
        return SessionConfiguration(category: cat, mode: mode, options: opts)
    }
}
