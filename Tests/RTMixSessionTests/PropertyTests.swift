import XCTest
@testable import RTMixSession

/// Property-style tests over seeded random sequences (xorshift64*, no
/// dependency): every step must leave a valid configuration that satisfies
/// every active module, never issue a redundant setConfiguration, restore
/// exactly what the remaining modules need on release, and return to the
/// base configuration when everything is released.
final class PropertyTests: XCTestCase {

    static let needBits: [SessionNeeds] = [.playback, .recording, .mixWithOthers, .speakerByDefault,
                                           .bluetooth, .call, .duckOthers, .recordInBackground]

    static func randomNeeds(_ r: inout XorShift64) -> SessionNeeds {
        var n: SessionNeeds = []
        for bit in needBits where r.chance(bit == .call || bit == .recordInBackground ? 15 : 35) {
            n.insert(bit)
        }
        return n
    }

    static func randomMode(_ r: inout XorShift64) -> SessionMode? {
        r.chance(75) ? nil : SessionMode(rawValue: UInt32(r.below(8)))!
    }

    /// Every valid configuration (the bases the engine accepts).
    static let validConfigurations: [SessionConfiguration] = {
        var out: [SessionConfiguration] = []
        for c in 0..<6 {
            for m in 0..<8 {
                for o in 0..<128 {
                    let cfg = SessionConfiguration(category: SessionCategory(rawValue: UInt32(c))!,
                                                   mode: SessionMode(rawValue: UInt32(m))!,
                                                   options: SessionOptions(rawValue: UInt32(o)))
                    if ValidityTable.check(cfg).isValid { out.append(cfg) }
                }
            }
        }
        return out
    }()

    func testValidConfigurationsExist() {
        // Sanity: the table neither rejects everything nor accepts everything.
        XCTAssertGreaterThan(Self.validConfigurations.count, 50)
        XCTAssertLessThan(Self.validConfigurations.count, 6 * 8 * 128 / 4)
    }

    /// Pure arbiter: for random bases, contexts and module sets, the target
    /// is valid and satisfies every module, and with no module it is the base.
    func testTargetAlwaysSatisfiesAllModules() {
        var r = XorShift64(seed: 0xC0FFEE)
        let bases = Self.validConfigurations
        for _ in 0..<20_000 {
            let base = bases[r.below(bases.count)]
            let ctx = GatingContext(foreground: r.chance(70),
                                    micPermission: MicPermission(rawValue: UInt32(r.below(3)))!)
            var inputs: [ArbiterInput] = []
            for i in 0..<r.below(6) {
                inputs.append(ArbiterInput(id: ModuleID(rawValue: UInt32(i + 1)),
                                           needs: Arbiter.effectiveNeeds(Self.randomNeeds(&r), ctx),
                                           preferredMode: Self.randomMode(&r),
                                           sequence: UInt64(r.below(100))))
            }
            let t = Arbiter.target(inputs, base: base)
            XCTAssertTrue(ValidityTable.check(t).isValid, "invalid target \(t) for \(inputs)")
            XCTAssertNil(Arbiter.firstUnsatisfied(t, inputs), "target \(t) fails \(inputs) base \(base)")
            if inputs.contains(where: { $0.needs.contains(.recording) }) {
                XCTAssertEqual(t.category, .playAndRecord)
                XCTAssertFalse(t.options.contains(.allowBluetoothA2DP))
            }
            if inputs.isEmpty { XCTAssertEqual(t, base) }
            if inputs.contains(where: { $0.needs.contains(.call) }) {
                XCTAssertTrue(t.options.isSuperset(of: [.mixWithOthers, .defaultToSpeaker]))
                XCTAssertTrue(t.options.contains(.allowBluetooth) || t.options.contains(.allowBluetoothA2DP))
            }
        }
    }

    /// The whole engine under random events.
    func testRandomSequencesKeepEveryModuleSatisfied() throws {
        for seed in UInt64(1)...120 {
            try runRandomSequence(seed: seed, steps: 250)
        }
    }

    private func runRandomSequence(seed: UInt64, steps: Int) throws {
        var r = XorShift64(seed: seed)
        let bases = Self.validConfigurations
        let base = bases[r.below(bases.count)]
        let e = makeEngine(base: base, mic: MicPermission(rawValue: UInt32(r.below(3)))!)
        var ids: [ModuleID] = []
        for i in 0..<5 { ids.append(try e.register(name: "module-\(i)")) }
        var now: UInt64 = 0

        for step in 0..<steps {
            now += UInt64(r.below(700))
            let before = e.configuration
            let inputsBefore = e.arbiterInputs
            let id = ids[r.below(ids.count)]
            let roll = r.below(100)
            var kind = ""
            var wasSatisfiedIncrease = false
            // The platform's configuration just before the engine's actions.
            var platform = before
            switch roll {
            case 0..<40:
                kind = "request"
                let req = SessionRequest(needs: Self.randomNeeds(&r), preferredMode: Self.randomMode(&r))
                let old = e.request(of: id)
                // Would the current configuration already satisfy everyone?
                if old == nil || req.needs.isSuperset(of: old!.needs) {
                    var probe = e.modules
                    let idx = probe.firstIndex { $0.id == id }!
                    probe[idx].request = req
                    let ctx = e.gating
                    let inputs = probe.compactMap { m -> ArbiterInput? in
                        guard let q = m.request else { return nil }
                        return ArbiterInput(id: m.id, needs: Arbiter.effectiveNeeds(q.needs, ctx),
                                            preferredMode: q.preferredMode, sequence: m.id == id ? .max : m.sequence)
                    }
                    wasSatisfiedIncrease = Arbiter.firstUnsatisfied(before, inputs) == nil
                }
                try e.request(id, req, now: now)
            case 40..<65:
                kind = "release"
                try e.release(id, now: now)
            case 65..<72:
                kind = "observe"
                let cfg = r.chance(80) ? bases[r.below(bases.count)]
                    : SessionConfiguration(category: .ambient, options: [.defaultToSpeaker])
                if ValidityTable.check(cfg).isValid { platform = cfg }
                try e.observe(cfg, from: r.chance(50) ? id : .unknown, now: now)
            case 72..<77:
                kind = "lifecycle"
                if r.chance(50) { e.enteredBackground(now: now) } else { e.enteredForeground(now: now) }
            case 77..<80:
                kind = "permission"
                e.setMicPermission(MicPermission(rawValue: UInt32(r.below(3)))!, now: now)
            case 80..<84:
                kind = "interruption"
                if r.chance(50) { e.interruptionBegan(now: now) }
                else { e.interruptionEnded(shouldResume: r.chance(50), now: now) }
            case 84..<92:
                kind = "activation"
                _ = try? e.activationResult(success: r.chance(70), now: now)
            case 92..<96:
                kind = "route"
                let port = RoutePort(rawValue: UInt32(r.below(12)))!
                let reason = UInt32(r.below(9))
                let observed: SessionConfiguration? = r.chance(50) ? bases[r.below(bases.count)] : nil
                if let o = observed, reason == RouteChangeReason.categoryChange.rawValue { platform = o }
                e.routeChanged(RouteChange(reasonRaw: reason,
                                           route: RouteInfo(output: port, sampleRate: 16000,
                                                            isCarKit: r.chance(20))),
                               observed: observed, now: now)
            default:
                kind = "tick"
                if r.chance(50) { e.userRequestedPlayback(now: now) } else { e.tick(now: now) }
            }
            let context = "seed \(seed) step \(step) \(kind)"

            // 1. Valid and satisfying every active module.
            let inputs = e.arbiterInputs
            XCTAssertTrue(ValidityTable.check(e.configuration).isValid, context)
            XCTAssertNil(Arbiter.firstUnsatisfied(e.configuration, inputs),
                         "\(context): \(e.configuration) fails \(inputs)")

            // 2. No redundant setConfiguration; the last one is the state.
            var current = platform
            var sawSet = false
            for a in e.drainActions() {
                if case .setConfiguration(let c) = a.action {
                    XCTAssertNotEqual(c, current, "\(context): redundant setConfiguration")
                    XCTAssertTrue(ValidityTable.check(c).isValid, context)
                    current = c
                    sawSet = true
                }
                XCTAssertLessThanOrEqual(a.timeMs, now, context)
            }
            XCTAssertEqual(current, e.configuration, context)

            // 3. A request the configuration already satisfied changes nothing.
            if wasSatisfiedIncrease { XCTAssertFalse(sawSet, "\(context): change for a satisfied request") }

            // 4. Release restores exactly what the remaining modules need.
            if kind == "release" && inputsBefore.contains(where: { $0.id == id }) {
                XCTAssertEqual(e.configuration, Arbiter.target(inputs, base: base), context)
            }
            _ = e.drainAlarms()
        }

        // 5. Releasing everything, in a random order, returns to the base.
        var order = ids
        while !order.isEmpty {
            now += 10
            try e.release(order.remove(at: r.below(order.count)), now: now)
        }
        XCTAssertEqual(e.configuration, base, "seed \(seed): not back to base")
        XCTAssertEqual(e.state.activeModules, 0)
    }

    /// Determinism: the same seed gives the same action stream.
    func testSameSeedSameActions() throws {
        func record(_ seed: UInt64) throws -> [IssuedAction] {
            var r = XorShift64(seed: seed)
            let e = makeEngine()
            let a = try e.register(name: "a"), b = try e.register(name: "b")
            var out: [IssuedAction] = []
            for t in 0..<300 {
                let id = r.chance(50) ? a : b
                if r.chance(60) {
                    try e.request(id, SessionRequest(needs: Self.randomNeeds(&r)), now: UInt64(t * 10))
                } else {
                    try e.release(id, now: UInt64(t * 10))
                }
                _ = try? e.activationResult(success: r.chance(50), now: UInt64(t * 10 + 1))
                out += e.drainActions()
            }
            return out
        }
        let first = try record(42)
        XCTAssertEqual(first, try record(42))
        XCTAssertNotEqual(first, try record(43))
        XCTAssertGreaterThan(first.count, 20)
    }
}
