import XCTest
@testable import RTMixSession

/// Interruption scenarios (a WeChat-style VoIP call taking the session),
/// replayed with explicit host times.
final class InterruptionScenarioTests: XCTestCase {

    /// An RTC call (microphone on) and a media player, session active.
    private func callAndMedia(_ e: SessionEngine) throws -> (rtc: ModuleID, player: ModuleID) {
        let rtc = try e.register(name: "rtc-sdk")
        let player = try e.register(name: "courseware-player")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        try e.activationResult(success: true, now: 10)
        try e.request(player, SessionRequest(needs: [.playback]), now: 20)
        expect(e, [.setConfiguration(callConfig), .activate(attempt: 1)])
        return (rtc, player)
    }

    func testVoIPInterruptionEndedWithShouldResume() throws {
        let e = makeEngine()
        _ = try callAndMedia(e)

        e.interruptionBegan(now: 10_000)
        expect(e, actions: [at(10_000, .pauseOutput), at(10_000, .setCallHeld(true))])
        XCTAssertTrue(e.state.interrupted)
        XCTAssertFalse(e.state.sessionActive)
        e.interruptionBegan(now: 10_001)            // duplicate: ignored
        expect(e, actions: [])

        e.interruptionEnded(shouldResume: true, now: 40_000)
        expect(e, actions: [])                     // reactivation is delayed
        XCTAssertEqual(e.nextDueMs, 40_500)
        e.tick(now: 40_499)
        expect(e, actions: [])
        e.tick(now: 40_600)                        // a late tick: due time kept
        expect(e, actions: [at(40_500, .activate(attempt: 1))])
        XCTAssertNil(e.nextDueMs)

        try e.activationResult(success: true, now: 40_610)
        expect(e, actions: [at(40_610, .resumeOutput), at(40_610, .setCallHeld(false)),
                            at(40_610, .resumeMedia)])
        XCTAssertFalse(e.state.interrupted)
        XCTAssertTrue(e.state.sessionActive)
        XCTAssertFalse(e.state.callHeld)
    }

    func testVoIPInterruptionEndedWithoutShouldResumeDuringCall() throws {
        let e = makeEngine()
        _ = try callAndMedia(e)
        e.interruptionBegan(now: 10_000)
        _ = e.takeActions()
        // The call must continue: reactivate anyway, but keep media paused.
        e.interruptionEnded(shouldResume: false, now: 30_000)
        expect(e, actions: [])
        e.tick(now: 30_500)
        expect(e, actions: [at(30_500, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 30_520)
        expect(e, actions: [at(30_520, .resumeOutput), at(30_520, .setCallHeld(false)),
                            at(30_520, .pauseMedia)])
    }

    func testInterruptionWithoutShouldResumeMediaOnlyWaitsForPlay() throws {
        let e = makeEngine()
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        try e.activationResult(success: true, now: 5)
        _ = e.takeActions()

        e.interruptionBegan(now: 1000)
        expect(e, actions: [at(1000, .pauseOutput)])   // no call: nothing held
        e.interruptionEnded(shouldResume: false, now: 2000)
        expect(e, actions: [])
        XCTAssertNil(e.nextDueMs)                      // no automatic reactivation
        e.tick(now: 60_000)
        expect(e, actions: [])

        e.userRequestedPlayback(now: 61_000)
        expect(e, actions: [at(61_000, .activate(attempt: 1))])   // no alarm: "ended" came
        try e.activationResult(success: true, now: 61_010)
        expect(e, actions: [at(61_010, .resumeOutput), at(61_010, .resumeMedia)])
    }

    func testMissingEndedRecoveredByUserPlay() throws {
        let e = makeEngine()
        _ = try callAndMedia(e)
        e.interruptionBegan(now: 10_000)
        _ = e.takeActions()
        // No "ended" ever arrives.
        e.tick(now: 300_000)
        expect(e, actions: [])
        e.userRequestedPlayback(now: 300_100)
        expect(e, actions: [at(300_100, .activate(attempt: 1))],
               alarms: [SessionAlarm(.interruptionEndMissing, timeMs: 300_100)])
        try e.activationResult(success: true, now: 300_110)
        expect(e, actions: [at(300_110, .resumeOutput), at(300_110, .setCallHeld(false)),
                            at(300_110, .resumeMedia)])
    }

    func testMissingEndedRecoveredByForeground() throws {
        let e = makeEngine()
        let (rtc, _) = try callAndMedia(e)
        e.interruptionBegan(now: 10_000)
        _ = e.takeActions()
        e.enteredBackground(now: 10_100)
        expect(e, actions: [at(10_100, .stopRecording(rtc)),
                            at(10_100, .setConfiguration(SessionConfiguration(category: .playback,
                                                                              options: [mix])))])
        e.enteredForeground(now: 90_000)
        expect(e, actions: [at(90_000, .setConfiguration(callConfig))],
               alarms: [SessionAlarm(.interruptionEndMissing, timeMs: 90_000)])
        // The reactivation waits reactivation_delay_ms (issue 8 decision).
        e.tick(now: 90_500)
        expect(e, actions: [at(90_500, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 90_510)
        expect(e, actions: [at(90_510, .resumeOutput), at(90_510, .setCallHeld(false)),
                            at(90_510, .pauseMedia)])
        // Recording restarts recording_restart_delay_ms after the
        // reactivation (not after the foreground, before it succeeded).
        e.tick(now: 91_000)
        expect(e, actions: [])
        e.tick(now: 91_010)
        expect(e, actions: [at(91_010, .startRecording(rtc))])
    }

    func testActivationFailsTwiceThenSucceeds() throws {
        let e = makeEngine()
        _ = try callAndMedia(e)
        e.interruptionBegan(now: 10_000)
        e.interruptionEnded(shouldResume: true, now: 20_000)
        _ = e.takeActions()

        e.tick(now: 20_500)
        expect(e, actions: [at(20_500, .activate(attempt: 1))])
        try e.activationResult(success: false, now: 20_510)
        expect(e, actions: [])
        XCTAssertEqual(e.nextDueMs, 20_760)                 // +250 ms
        e.tick(now: 20_760)
        expect(e, actions: [at(20_760, .activate(attempt: 2))])
        try e.activationResult(success: false, now: 20_770)
        XCTAssertEqual(e.nextDueMs, 21_270)                 // +500 ms
        e.tick(now: 21_270)
        expect(e, actions: [at(21_270, .activate(attempt: 3))])
        try e.activationResult(success: true, now: 21_280)
        expect(e, actions: [at(21_280, .resumeOutput), at(21_280, .setCallHeld(false)),
                            at(21_280, .resumeMedia)])
        XCTAssertTrue(e.state.sessionActive)
    }

    func testActivationGivesUpAfterLimitThenUserPlayRetries() throws {
        let e = makeEngine { $0.maxActivationAttempts = 3 }
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        expect(e, actions: [at(0, .setConfiguration(SessionConfiguration(category: .playback))),
                            at(0, .activate(attempt: 1))])
        try e.activationResult(success: false, now: 1)
        e.tick(now: 251)
        try e.activationResult(success: false, now: 260)
        e.tick(now: 760)
        expect(e, actions: [at(251, .activate(attempt: 2)), at(760, .activate(attempt: 3))])
        try e.activationResult(success: false, now: 770)
        expect(e, actions: [], alarms: [SessionAlarm(.activationFailed, detail: 3, timeMs: 770)])
        XCTAssertNil(e.nextDueMs)
        XCTAssertThrowsError(try e.activationResult(success: true, now: 780)) {
            XCTAssertEqual($0 as? SessionError, .badState)
        }
        e.userRequestedPlayback(now: 5000)
        expect(e, actions: [at(5000, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 5001)
        XCTAssertTrue(e.state.sessionActive)
    }

    func testBackoffIsCapped() throws {
        let e = makeEngine { $0.maxActivationAttempts = 10; $0.retryBaseMs = 1000; $0.retryMaxMs = 3000 }
        XCTAssertEqual(e.retryDelay(afterAttempt: 1), 1000)
        XCTAssertEqual(e.retryDelay(afterAttempt: 2), 2000)
        XCTAssertEqual(e.retryDelay(afterAttempt: 3), 3000)
        XCTAssertEqual(e.retryDelay(afterAttempt: 9), 3000)
    }

    func testInterruptionLeavesUnpickedHFPProposesSpeaker() throws {
        let e = makeEngine()
        _ = try callAndMedia(e)
        e.routeChanged(RouteChange(reason: .override, route: RouteInfo(output: .builtInSpeaker,
                                                                        sampleRate: 48000)), now: 50)
        e.interruptionBegan(now: 1000)
        // The phone call was answered on a Bluetooth headset; it stays there.
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 16000)),
                       now: 2000)
        e.interruptionEnded(shouldResume: true, now: 3000)
        e.tick(now: 3500)
        try e.activationResult(success: true, now: 3510)
        expect(e, [.pauseOutput, .setCallHeld(true), .reconfigureEngine(sampleRate: 16000, channels: 1),
                   .activate(attempt: 1), .resumeOutput, .setCallHeld(false), .resumeMedia,
                   .routeToSpeaker])
    }

    func testInterruptionKeepsUserPickedHFP() throws {
        let e = makeEngine()
        _ = try callAndMedia(e)
        e.interruptionBegan(now: 1000)
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 8000,
                                                    userSelected: true)), now: 2000)
        e.interruptionEnded(shouldResume: true, now: 3000)
        e.tick(now: 3500)
        try e.activationResult(success: true, now: 3510)
        expect(e, [.pauseOutput, .setCallHeld(true), .reconfigureEngine(sampleRate: 8000, channels: 1),
                   .activate(attempt: 1), .resumeOutput, .setCallHeld(false), .resumeMedia])
    }

    func testSecondaryAudioHintIsReported() throws {
        let e = makeEngine()
        e.secondaryAudioHint(silence: true, now: 10)
        e.secondaryAudioHint(silence: false, now: 20)
        expect(e, actions: [at(10, .secondaryAudioHint(silence: true)),
                            at(20, .secondaryAudioHint(silence: false))])
    }
}
