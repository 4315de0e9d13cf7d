// ValidityTable.swift — which options and modes the platform accepts with
// which category (AVAudioSession documentation). Invalid combinations are
// reported (alarm or check result), never applied.

/// Problems found in a configuration. Values match RTMIX_SESSION_PROBLEM_*.
public struct ConfigurationProblems: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unknownCategory = ConfigurationProblems(rawValue: 0x1)
    public static let unknownMode = ConfigurationProblems(rawValue: 0x2)
    public static let modeNotAllowed = ConfigurationProblems(rawValue: 0x4)
    public static let optionNotAllowed = ConfigurationProblems(rawValue: 0x8)
    public static let unknownOptions = ConfigurationProblems(rawValue: 0x10)
}

/// Result of a validity check.
public struct ValidityReport: Equatable, Sendable {
    public var problems: ConfigurationProblems
    /// Option bits that are unknown or not allowed with the category.
    public var invalidOptions: SessionOptions
    public var isValid: Bool { problems.isEmpty }
}

public enum ValidityTable {
    /// Options that may be set with `category` (AVAudioSessionTypes.h, the
    /// "only valid with" line of each AVAudioSessionCategoryOptions value).
    ///
    /// - mixWithOthers, interruptSpokenAudioAndMixWithOthers: playback,
    ///   playAndRecord, multiRoute (ambient mixes implicitly).
    /// - duckOthers: ambient, playback, playAndRecord, multiRoute.
    /// - allowBluetooth (HFP): record, playAndRecord.
    /// - defaultToSpeaker, allowBluetoothA2DP, allowAirPlay: playAndRecord.
    /// - soloAmbient: none.
    public static func allowedOptions(for category: SessionCategory) -> SessionOptions {
        switch category {
        case .ambient: return .duckOthers
        case .soloAmbient: return []
        case .playback, .multiRoute: return SessionOptions(rawValue: 0x13)
        case .record: return .allowBluetooth
        case .playAndRecord: return .known
        }
    }

    /// True if `mode` may be used with `category`.
    ///
    /// - default: every category.
    /// - voiceChat, videoChat, gameChat: playAndRecord.
    /// - videoRecording: record, playAndRecord.
    /// - moviePlayback: playback.
    /// - measurement: playback, record, playAndRecord.
    /// - spokenAudio: playback, playAndRecord (decision: the platform does
    ///   not restrict it, but it only makes sense for spoken playback).
    public static func allows(mode: SessionMode, with category: SessionCategory) -> Bool {
        switch mode {
        case .default: return true
        case .voiceChat, .videoChat, .gameChat: return category == .playAndRecord
        case .videoRecording: return category == .record || category == .playAndRecord
        case .moviePlayback: return category == .playback
        case .measurement:
            return category == .playback || category == .record || category == .playAndRecord
        case .spokenAudio: return category == .playback || category == .playAndRecord
        }
    }

    /// Checks a typed configuration.
    public static func check(_ config: SessionConfiguration) -> ValidityReport {
        var problems: ConfigurationProblems = []
        let unknown = SessionOptions(rawValue: config.options.rawValue & ~SessionOptions.known.rawValue)
        let known = SessionOptions(rawValue: config.options.rawValue & SessionOptions.known.rawValue)
        let notAllowed = known.subtracting(allowedOptions(for: config.category))
        if !unknown.isEmpty { problems.insert(.unknownOptions) }
        if !notAllowed.isEmpty { problems.insert(.optionNotAllowed) }
        if !allows(mode: config.mode, with: config.category) { problems.insert(.modeNotAllowed) }
        return ValidityReport(problems: problems, invalidOptions: unknown.union(notAllowed))
    }

    /// Checks raw values as the C ABI receives them.
    public static func check(category: UInt32, mode: UInt32, options: UInt32) -> ValidityReport {
        let cat = SessionCategory(rawValue: category)
        let mod = SessionMode(rawValue: mode)
        if let cat = cat, let mod = mod {
            return check(SessionConfiguration(category: cat, mode: mod,
                                              options: SessionOptions(rawValue: options)))
        }
        var problems: ConfigurationProblems = []
        if cat == nil { problems.insert(.unknownCategory) }
        if mod == nil { problems.insert(.unknownMode) }
        let unknown = options & ~SessionOptions.known.rawValue
        if unknown != 0 { problems.insert(.unknownOptions) }
        var invalid = unknown
        if let cat = cat {
            let notAllowed = options & SessionOptions.known.rawValue & ~allowedOptions(for: cat).rawValue
            if notAllowed != 0 { problems.insert(.optionNotAllowed) }
            invalid |= notAllowed
        }
        if let mod = mod, let cat = cat, !allows(mode: mod, with: cat) {
            problems.insert(.modeNotAllowed)
        }
        return ValidityReport(problems: problems, invalidOptions: SessionOptions(rawValue: invalid))
    }
}
