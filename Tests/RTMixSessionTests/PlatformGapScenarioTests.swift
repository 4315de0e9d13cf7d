import XCTest
@testable import RTMixSession

/// Issue 8: scenarios replaying the documented AVAudioSession behaviour
/// through the Swift API, one per gap (items 1–7). Each failed before its fix.
final class PlatformGapScenarioTests: XCTestCase {

    // 1. A classroom app records in the foreground and keeps only a player in
    // the background: SoloAmbient is silenced by screen lock and the ringer
    // switch, so the background needs Playback.
    func testItem1BackgroundPlaybackUsesPlaybackCategory() throws {
        let e = makeEngine()
        let rec = try e.register(name: "read-along-recorder")
        let player = try e.register(name: "lesson-player")
        try e.request(rec, SessionRequest(needs: [.recording]), now: 0)
        try e.activationResult(success: true, now: 5)
        try e.request(player, SessionRequest(needs: [.playback]), now: 10)
        _ = e.takeActions()
        XCTAssertEqual(e.configuration.category, .playAndRecord)

        e.enteredBackground(now: 1000)
        expect(e, [.stopRecording(rec), .setConfiguration(SessionConfiguration(category: .playback))])

        // Back in the foreground: the recording configuration again.
        e.enteredForeground(now: 2000)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playAndRecord, options: [speaker]))])
        e.tick(now: 2500)
        expect(e, [.startRecording(rec)])

        // An app whose base is Ambient also gets Playback in the background,
        // keeping Ambient's mixing (mixWithOthers).
        let a = makeEngine(base: SessionConfiguration(category: .ambient))
        let p = try a.register(name: "sfx-player")
        try a.request(p, SessionRequest(needs: [.playback]), now: 0)
        expect(a, [.activate(attempt: 1)])
        a.enteredBackground(now: 100)
        expect(a, [.setConfiguration(SessionConfiguration(category: .playback, options: [mix]))])
        a.enteredForeground(now: 200)
        expect(a, [.setConfiguration(SessionConfiguration(category: .ambient))])
    }

    // 2. A play-only module on SoloAmbient (the platform default) moves to a
    // category that plays and restores afterwards.
    func testItem2PlayOnlyOnSoloAmbientMovesToPlayback() throws {
        let e = makeEngine()
        let player = try e.register(name: "video-player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playback)), .activate(attempt: 1)])
        try e.activationResult(success: true, now: 5)
        try e.release(player, now: 100)
        expect(e, [.setConfiguration(.platformDefault), .deactivate(notifyOthers: true)])

        // Ambient, Playback and PlayAndRecord are left alone.
        for cat in [SessionCategory.ambient, .playback, .playAndRecord] {
            let b = makeEngine(base: SessionConfiguration(category: cat))
            let m = try b.register(name: "player")
            try b.request(m, SessionRequest(needs: [.playback]), now: 0)
            let changed = b.takeActions().contains { if case .setConfiguration(let c) = $0 { return c.category != cat } else { return false } }
            XCTAssertFalse(changed, "\(cat)")
        }
    }

    // 3. Ambient + DuckOthers is a valid configuration (AVAudioSessionTypes.h:
    // "DuckOthers is only valid with Ambient, PlayAndRecord, Playback, and
    // MultiRoute").
    func testItem3AmbientDuckOthersIsValid() throws {
        let ambientDuck = SessionConfiguration(category: .ambient, options: [.duckOthers])
        XCTAssertTrue(ValidityTable.check(ambientDuck).isValid)

        let e = makeEngine(base: SessionConfiguration(category: .ambient))
        let nav = try e.register(name: "navigation-prompts")
        try e.request(nav, SessionRequest(needs: [.playback]), now: 0)
        _ = e.takeActions()
        // The platform reports Ambient + DuckOthers: adopted, no alarm.
        try e.observe(ambientDuck, from: nav, now: 100)
        expect(e, [])
        XCTAssertEqual(e.configuration, ambientDuck)

        // A ducking module on an Ambient base stays Ambient.
        let b = makeEngine(base: SessionConfiguration(category: .ambient))
        let m = try b.register(name: "coach")
        try b.request(m, SessionRequest(needs: [.playback, .duckOthers]), now: 0)
        expect(b, [.setConfiguration(ambientDuck), .activate(attempt: 1)])
    }

    // 4. A2DP output while recording (built-in microphone): a wake-word
    // recorder with music-quality playback asks for it through its needs;
    // a module is never reported for overriding itself.
    func testItem4A2DPWhileRecording() throws {
        let a2dpNeed = SessionNeeds.bluetoothA2DP
        let e = makeEngine()
        let ww = try e.register(name: "wake-word")
        try e.request(ww, SessionRequest(needs: [.recording, .playback, a2dpNeed]), now: 0)
        let musicRec = SessionConfiguration(category: .playAndRecord, options: [speaker, a2dp])
        expect(e, [.setConfiguration(musicRec), .activate(attempt: 1)])
        try e.activationResult(success: true, now: 5)
        // The module's own report of that configuration changes nothing.
        try e.observe(musicRec, from: ww, now: 10)
        expect(e, [])

        // A call that records needs HFP: it wins over the A2DP preference.
        let rtc = try e.register(name: "rtc")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 20)
        expect(e, [.setConfiguration(callConfig)])
        try e.release(rtc, now: 30)
        expect(e, [.setConfiguration(musicRec)])

        // A module setting a configuration against its own needs is never
        // reported for overriding itself (the correction carries no alarm).
        let f = makeEngine()
        let rec = try f.register(name: "recorder")
        try f.request(rec, SessionRequest(needs: [.recording]), now: 0)
        _ = f.takeActions()
        try f.observe(SessionConfiguration(category: .playAndRecord, options: [a2dp]), from: rec, now: 10)
        expect(f, [.setConfiguration(SessionConfiguration(category: .playAndRecord))], alarms: [])
    }
}
