// Enforcement.swift — the host reports every session change it observes
// (from its hooks, or a categoryChange route notification) with the module
// it came from. A change that leaves an active module unsatisfied (e.g. a
// WebView setting playback without mixWithOthers during a call) is undone
// with a corrective setConfiguration and an alarm naming the culprit.
// A module is never reported for overriding itself: a change that only
// contradicts the reporting module's own needs is corrected without an
// alarm (its needs are the contract; it updates them with a new request).

extension SessionEngine {
    /// Reports a configuration observed on the platform session.
    /// - `module`: the module that made the change, or `.unknown`.
    /// An invalid configuration raises `invalidConfiguration` and is not
    /// adopted. An observed copy of the engine's own configuration does
    /// nothing. Throws `.notFound` for an unregistered module id.
    public func observe(_ config: SessionConfiguration, from module: ModuleID,
                        now: UInt64) throws(SessionError) {
        try observeRaw(category: config.category.rawValue, mode: config.mode.rawValue,
                       options: config.options.rawValue, from: module, now: now)
    }

    /// As `observe`, with the platform's raw values (unknown values are
    /// reported as an invalid configuration).
    public func observeRaw(category: UInt32, mode: UInt32, options: UInt32,
                           from module: ModuleID, now: UInt64) throws(SessionError) {
        if module != .unknown { _ = try indexOf(module) }
        advance(to: now)
        enforce(category: category, mode: mode, options: options, from: module)
    }

    func enforce(category: UInt32, mode: UInt32, options: UInt32, from module: ModuleID) {
        let report = ValidityTable.check(category: category, mode: mode, options: options)
        guard report.isValid, let cat = SessionCategory(rawValue: category),
              let mod = SessionMode(rawValue: mode) else {
            raise(.invalidConfiguration, module: module, detail: report.problems.rawValue)
            return
        }
        let observed = SessionConfiguration(category: cat, mode: mod,
                                            options: SessionOptions(rawValue: options))
        if observed == configuration { return }
        configuration = observed
        let inputs = arbiterInputs
        if Arbiter.firstUnsatisfied(observed, inputs) != nil {
            let target = Arbiter.target(inputs, base: settings.base)
            let culprit: ModuleID? = module == .unknown ? nil : module
            if let victim = Arbiter.firstUnsatisfied(observed, inputs, excluding: culprit) {
                let added = target.options.subtracting(observed.options)
                raise(.configurationOverridden, module: module, related: victim, detail: added.rawValue)
            }
            apply(target)
        }
        updateVoiceProcessing()
        checkCarKitAdvisory()
    }
}
