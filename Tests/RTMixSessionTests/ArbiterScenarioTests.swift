import XCTest
@testable import RTMixSession

/// Arbiter and enforcement scenarios, replayed step by step with explicit
/// host times; each step asserts the exact actions and alarms.
final class ArbiterScenarioTests: XCTestCase {

    // WebView courseware plays without mixWithOthers during a call.
    func testWebViewCoursewareWithoutMixDuringCallIsCorrected() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc-sdk")
        let web = try e.register(name: "courseware-webview")

        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 100)
        expect(e, actions: [at(100, .setConfiguration(callConfig)), at(100, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 120)
        expect(e, actions: [])

        // The WebView sets playback without mixWithOthers (host hook).
        try e.observe(SessionConfiguration(category: .playback), from: web, now: 2000)
        expect(e, actions: [at(2000, .setConfiguration(callConfig))],
               alarms: [SessionAlarm(.configurationOverridden, module: web, relatedModule: rtc,
                                     detail: 0x0D, timeMs: 2000)])

        // The hook then reports the engine's own correction: nothing to do.
        try e.observe(callConfig, from: .unknown, now: 2001)
        expect(e, actions: [])

        // A change that still satisfies the call (adds duckOthers) is adopted.
        let ducked = SessionConfiguration(category: .playAndRecord,
                                          options: [mix, speaker, hfp, .duckOthers])
        try e.observe(ducked, from: web, now: 3000)
        expect(e, actions: [])
        XCTAssertEqual(e.configuration, ducked)

        // An invalid combination is reported, not applied.
        try e.observe(SessionConfiguration(category: .playback, options: [speaker]), from: web,
                      now: 4000)
        expect(e, actions: [],
               alarms: [SessionAlarm(.invalidConfiguration, module: web,
                                     detail: ConfigurationProblems.optionNotAllowed.rawValue,
                                     timeMs: 4000)])
        XCTAssertEqual(e.configuration, ducked)

        // A categoryChange route notification: origin unknown, same check.
        e.routeChanged(RouteChange(reason: .categoryChange, route: RouteInfo(output: .builtInSpeaker)),
                       observed: SessionConfiguration(category: .ambient), now: 5000)
        expect(e, actions: [at(5000, .setConfiguration(callConfig))],
               alarms: [SessionAlarm(.configurationOverridden, module: .unknown,
                                     relatedModule: rtc, detail: 0x0D, timeMs: 5000)])

        // Unknown module ids are rejected and change nothing.
        XCTAssertThrowsError(try e.observe(.platformDefault, from: ModuleID(rawValue: 99), now: 6000))
        XCTAssertEqual(e.configuration, callConfig)
    }

    // A recorder changes the category and exits out of order with a player.
    func testRecorderAndPlayerPlayerReleasesFirst() throws {
        let e = makeEngine()
        let player = try e.register(name: "video-player")
        let rec = try e.register(name: "voice-recorder")
        let recordPlay = SessionConfiguration(category: .playAndRecord, options: [speaker])

        // soloAmbient (the platform default) is left for playback (issue 8, item 2).
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        expect(e, actions: [at(0, .setConfiguration(SessionConfiguration(category: .playback))),
                            at(0, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 5)

        // Recording uses playAndRecord (never record-only), speaker for media.
        try e.request(rec, SessionRequest(needs: [.recording]), now: 1000)
        expect(e, actions: [at(1000, .setConfiguration(recordPlay))])

        // The recorder's own code sets record-only: that silences the player.
        try e.observe(SessionConfiguration(category: .record), from: rec, now: 1010)
        expect(e, actions: [at(1010, .setConfiguration(recordPlay))],
               alarms: [SessionAlarm(.configurationOverridden, module: rec, relatedModule: player,
                                     detail: 0x8, timeMs: 1010)])

        // Out of order: the player leaves first; the recorder's needs remain.
        try e.release(player, now: 5000)
        expect(e, actions: [at(5000, .setConfiguration(SessionConfiguration(category: .playAndRecord)))])

        try e.release(rec, now: 6000)
        expect(e, actions: [at(6000, .setConfiguration(.platformDefault)),
                            at(6000, .deactivate(notifyOthers: true))])
        XCTAssertEqual(e.configuration, .platformDefault)
        XCTAssertFalse(e.state.sessionActive)
    }

    func testRecorderAndPlayerRecorderReleasesFirst() throws {
        let e = makeEngine()
        let player = try e.register(name: "video-player")
        let rec = try e.register(name: "voice-recorder")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        try e.activationResult(success: true, now: 5)
        try e.request(rec, SessionRequest(needs: [.recording]), now: 1000)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playback)), .activate(attempt: 1),
                   .setConfiguration(SessionConfiguration(category: .playAndRecord, options: [speaker]))])

        // The player still needs playback: playback (not soloAmbient).
        try e.release(rec, now: 2000)
        expect(e, actions: [at(2000, .setConfiguration(SessionConfiguration(category: .playback)))])
        // Releasing twice is a no-op.
        try e.release(rec, now: 2001)
        expect(e, actions: [])
        try e.release(player, now: 3000)
        expect(e, actions: [at(3000, .setConfiguration(.platformDefault)),
                            at(3000, .deactivate(notifyOthers: true))])
    }

    // Nested modules released in any order restore what the others need
    // (a single cached "previous configuration" would restore the wrong one).
    func testNestedReleaseRestoresWhatRemainingModulesNeed() throws {
        let base = SessionConfiguration(category: .playback, options: [mix])
        let e = makeEngine(base: base)
        let player = try e.register(name: "player")
        let rtc = try e.register(name: "rtc")
        let asr = try e.register(name: "speech-recognition")
        try e.request(player, SessionRequest(needs: [.playback, .mixWithOthers]), now: 0)
        expect(e, [.activate(attempt: 1)])           // base already satisfies
        try e.activationResult(success: true, now: 1)
        try e.request(rtc, SessionRequest(needs: [.call]), now: 10)
        expect(e, [.setConfiguration(listenConfig)])
        try e.request(asr, SessionRequest(needs: [.recording]), now: 20)
        expect(e, [.setConfiguration(callConfig)])   // HFP while recording, no A2DP
        try e.release(rtc, now: 30)                  // middle one leaves first
        expect(e, [.setConfiguration(SessionConfiguration(category: .playAndRecord,
                                                           options: [mix, speaker]))])
        try e.release(player, now: 40)
        // The recognizer alone: playAndRecord, the base's mixWithOthers kept.
        expect(e, [.setConfiguration(SessionConfiguration(category: .playAndRecord, options: [mix]))])
        try e.release(asr, now: 50)
        expect(e, [.setConfiguration(base), .deactivate(notifyOthers: true)])
    }

    func testSatisfiedRequestChangesNothing() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc")
        let sfx = try e.register(name: "sound-effects")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        try e.activationResult(success: true, now: 1)
        _ = e.takeActions()
        // Play-only in a category that already plays: no setCategory.
        try e.request(sfx, SessionRequest(needs: [.playback, .mixWithOthers]), now: 10)
        expect(e, actions: [])
        // Re-requesting the same needs: still nothing.
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 20)
        expect(e, actions: [])
    }

    func testPreferredModes() throws {
        let base = SessionConfiguration(category: .playback)
        let e = makeEngine(base: base)
        let player = try e.register(name: "movie-player")
        let rtc = try e.register(name: "rtc")
        try e.request(player, SessionRequest(needs: [.playback], preferredMode: .moviePlayback), now: 0)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playback, mode: .moviePlayback)),
                   .activate(attempt: 1)])
        try e.activationResult(success: true, now: 1)
        // The call's voiceChat wins; moviePlayback is not valid with playAndRecord.
        try e.request(rtc, SessionRequest(needs: [.call, .recording], preferredMode: .voiceChat), now: 10)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playAndRecord, mode: .voiceChat,
                                                           options: [mix, speaker, hfp])),
                   .voiceProcessing(enabled: true), .reconfigureEngine(sampleRate: 48000, channels: 1)])
        // A new request whose mode cannot apply raises modeNotApplied.
        try e.request(player, SessionRequest(needs: [.playback, .mixWithOthers],
                                             preferredMode: .moviePlayback), now: 20)
        expect(e, actions: [],
               alarms: [SessionAlarm(.modeNotApplied, module: player,
                                     detail: SessionMode.moviePlayback.rawValue, timeMs: 20)])
        try e.release(rtc, now: 30)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playback, mode: .moviePlayback,
                                                           options: [mix])),
                   .voiceProcessing(enabled: false), .reconfigureEngine(sampleRate: 48000, channels: 2)])
    }

    func testUnregisterReleasesAndIdsAreNotReused() throws {
        let e = makeEngine()
        let rec = try e.register(name: "recorder")
        try e.request(rec, SessionRequest(needs: [.recording]), now: 0)
        try e.activationResult(success: true, now: 1)
        _ = e.takeActions()
        try e.unregister(rec, now: 10)
        expect(e, [.setConfiguration(.platformDefault), .deactivate(notifyOthers: true)])
        XCTAssertThrowsError(try e.request(rec, SessionRequest(needs: [.playback]), now: 20)) {
            XCTAssertEqual($0 as? SessionError, .notFound)
        }
        let next = try e.register(name: "recorder")
        XCTAssertEqual(next.rawValue, 2)
        XCTAssertEqual(e.nameBytes(of: next), Array("recorder".utf8))
        XCTAssertThrowsError(try e.register(name: ""))
        XCTAssertThrowsError(try e.request(next, SessionRequest(needs: SessionNeeds(rawValue: 0x200)),
                                           now: 30))
    }

    func testModuleLimit() throws {
        let e = makeEngine { $0.maxModules = 2 }
        _ = try e.register(name: "a")
        _ = try e.register(name: "b")
        XCTAssertThrowsError(try e.register(name: "c")) {
            XCTAssertEqual($0 as? SessionError, .limit)
        }
    }

    func testInvalidBaseIsRejected() {
        var s = SessionSettings()
        s.base = SessionConfiguration(category: .ambient, options: [mix])
        XCTAssertThrowsError(try SessionEngine(settings: s))
        s.base = SessionConfiguration(category: .playback, mode: .voiceChat)
        XCTAssertThrowsError(try SessionEngine(settings: s))
    }
}
