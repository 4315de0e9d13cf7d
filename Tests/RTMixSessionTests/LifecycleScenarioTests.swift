import XCTest
@testable import RTMixSession

/// App background/foreground and microphone permission scenarios.
final class LifecycleScenarioTests: XCTestCase {

    // The app goes to the background and back during a call.
    func testBackgroundAndBackDuringCall() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc-sdk")
        let player = try e.register(name: "player")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        try e.activationResult(success: true, now: 10)
        try e.request(player, SessionRequest(needs: [.playback]), now: 20)
        _ = e.takeActions()

        e.enteredBackground(now: 1000)
        let playOnly = SessionConfiguration(category: .playback, options: [mix])
        expect(e, actions: [at(1000, .stopRecording(rtc)), at(1000, .setConfiguration(playOnly))])
        e.enteredBackground(now: 1001)                 // repeated: ignored
        expect(e, actions: [])
        XCTAssertFalse(e.state.foreground)

        e.enteredForeground(now: 60_000)
        // Configuration restored at once; recording restarts after a delay.
        expect(e, actions: [at(60_000, .setConfiguration(callConfig))])
        XCTAssertEqual(e.nextDueMs, 60_500)
        e.tick(now: 60_499)
        expect(e, actions: [])
        e.tick(now: 60_500)
        expect(e, actions: [at(60_500, .startRecording(rtc))])
    }

    func testQuickBackgroundCancelsPendingRestart() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        _ = e.takeActions()
        e.enteredBackground(now: 100)
        e.enteredForeground(now: 200)
        e.enteredBackground(now: 300)                 // before the restart was due
        e.tick(now: 10_000)
        let playOnly = SessionConfiguration(category: .playback, options: [mix])
        // No stopRecording at 300: the module had not restarted recording yet.
        expect(e, [.stopRecording(rtc), .setConfiguration(playOnly), .setConfiguration(callConfig),
                   .setConfiguration(playOnly)])
        e.enteredForeground(now: 20_000)
        e.tick(now: 20_500)
        expect(e, actions: [at(20_000, .setConfiguration(callConfig)),
                            at(20_500, .startRecording(rtc))])
    }

    func testRecordInBackgroundKeepsRecording() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "voip")
        try e.request(rtc, SessionRequest(needs: [.call, .recording, .recordInBackground]), now: 0)
        _ = e.takeActions()
        e.enteredBackground(now: 100)
        e.enteredForeground(now: 200)
        e.tick(now: 5000)
        expect(e, actions: [])
    }

    func testRecordingRequestedInBackgroundWaitsForForeground() throws {
        let e = makeEngine()
        let rec = try e.register(name: "recorder")
        e.enteredBackground(now: 0)
        try e.request(rec, SessionRequest(needs: [.recording]), now: 10)
        expect(e, [.activate(attempt: 1)])            // nothing to change yet
        e.enteredForeground(now: 100)
        e.tick(now: 600)
        expect(e, actions: [at(100, .setConfiguration(SessionConfiguration(category: .playAndRecord))),
                            at(600, .startRecording(rec))])
    }

    func testMicPermissionUndeterminedThenGranted() throws {
        let e = makeEngine(mic: .undetermined)
        let rec = try e.register(name: "speech-recognition")
        try e.request(rec, SessionRequest(needs: [.recording]), now: 0)
        // The recording need waits for permission; nothing to configure yet.
        expect(e, actions: [at(0, .requestMicPermission), at(0, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 1)
        e.setMicPermission(.granted, now: 2000)
        expect(e, actions: [at(2000, .setConfiguration(SessionConfiguration(category: .playAndRecord))),
                            at(2000, .startRecording(rec))])
    }

    func testMicPermissionDenied() throws {
        let e = makeEngine(mic: .undetermined)
        let rec = try e.register(name: "recorder")
        let other = try e.register(name: "voice-notes")
        try e.request(rec, SessionRequest(needs: [.recording, .playback]), now: 0)
        expect(e, [.requestMicPermission, .setConfiguration(SessionConfiguration(category: .playback)),
                   .activate(attempt: 1)])
        e.setMicPermission(.denied, now: 100)
        expect(e, actions: [], alarms: [SessionAlarm(.micPermissionDenied, module: rec, timeMs: 100)])
        // Later recording requests are refused with an alarm; playback applies.
        try e.request(other, SessionRequest(needs: [.recording, .mixWithOthers]), now: 200)
        expect(e, actions: [at(200, .setConfiguration(SessionConfiguration(category: .playback,
                                                                           options: [mix])))],
               alarms: [SessionAlarm(.micPermissionDenied, module: other, timeMs: 200)])
    }
}
