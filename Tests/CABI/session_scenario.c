/*
 * session_scenario.c — drives one audio-session scenario end to end through
 * the C ABI (rtmix_session_*) and asserts the exact actions and alarms.
 *
 * Scenario (a classroom RTC call): the call starts before the microphone
 * permission is known; permission is granted; AirPods switch to HFP; a media
 * player joins; the WebView courseware sets playback without mixWithOthers;
 * a VoIP app interrupts, the first reactivation fails, the second works;
 * the microphone is muted (back to A2DP); everybody leaves.
 *
 * Build and run (see README.md ("Audio session policy engine")):
 *   swift build --product rtmix
 *   clang -std=c99 -Wall -Wextra -Werror -I include Tests/CABI/session_scenario.c \
 *     -L .build/debug -lrtmix -Wl,-rpath,$PWD/.build/debug -o /tmp/session_scenario
 *   /tmp/session_scenario
 */
#include "rtmix.h"

#include <stdio.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_OK(expr) CHECK((expr) == RTMIX_OK)

/* Expected action: kind plus the fields that matter for that kind. */
typedef struct expected_action {
    uint32_t kind;
    uint64_t time_ms;
    uint32_t a; /* category | attempt | flag | sample_rate | module */
    uint32_t b; /* options  | channels */
} expected_action;

static void expect_actions(rtmix_session *s, const expected_action *want, int n,
                           int line) {
    int i;
    for (i = 0; i < n; i++) {
        rtmix_session_action got;
        int ok;
        rtmix_session_action_init(&got);
        if (rtmix_session_next_action(s, &got) != RTMIX_OK) {
            failed++;
            fprintf(stderr, "line %d: action %d missing (want %s)\n", line, i,
                    rtmix_session_action_name(want[i].kind));
            return;
        }
        ok = got.kind == want[i].kind && got.time_ms == want[i].time_ms;
        switch (got.kind) {
        case RTMIX_SESSION_ACTION_SET_CONFIGURATION:
            ok = ok && got.category == want[i].a && got.options == want[i].b &&
                 got.mode == RTMIX_SESSION_MODE_DEFAULT;
            break;
        case RTMIX_SESSION_ACTION_ACTIVATE:
            ok = ok && got.attempt == want[i].a;
            break;
        case RTMIX_SESSION_ACTION_DEACTIVATE:
        case RTMIX_SESSION_ACTION_SET_CALL_HELD:
        case RTMIX_SESSION_ACTION_SECONDARY_AUDIO_HINT:
            ok = ok && (uint32_t)got.flag == want[i].a;
            break;
        case RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE:
            ok = ok && got.sample_rate == want[i].a && got.channels == want[i].b;
            break;
        case RTMIX_SESSION_ACTION_START_RECORDING:
        case RTMIX_SESSION_ACTION_STOP_RECORDING:
            ok = ok && got.module == want[i].a;
            break;
        default:
            break;
        }
        if (ok) {
            passed++;
        } else {
            failed++;
            fprintf(stderr,
                    "line %d: action %d: got %s t=%llu cat=%u opt=0x%x att=%u "
                    "flag=%d rate=%u ch=%u mod=%u; want %s t=%llu a=%u b=0x%x\n",
                    line, i, rtmix_session_action_name(got.kind),
                    (unsigned long long)got.time_ms, got.category, got.options,
                    got.attempt, got.flag, got.sample_rate, got.channels, got.module,
                    rtmix_session_action_name(want[i].kind),
                    (unsigned long long)want[i].time_ms, want[i].a, want[i].b);
        }
    }
    {
        rtmix_session_action extra;
        rtmix_session_action_init(&extra);
        if (rtmix_session_next_action(s, &extra) == RTMIX_ERR_NOT_FOUND) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "line %d: unexpected extra action %s\n", line,
                    rtmix_session_action_name(extra.kind));
        }
    }
}

#define EXPECT_ACTIONS(s, ...)                                                 \
    do {                                                                       \
        static const expected_action want_[] = {__VA_ARGS__};                  \
        expect_actions((s), want_, (int)(sizeof want_ / sizeof want_[0]),      \
                       __LINE__);                                              \
    } while (0)

static void expect_no_actions(rtmix_session *s, int line) {
    rtmix_session_action a;
    rtmix_session_action_init(&a);
    if (rtmix_session_next_action(s, &a) == RTMIX_ERR_NOT_FOUND) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "line %d: unexpected action %s\n", line,
                rtmix_session_action_name(a.kind));
    }
}

static void expect_no_alarms(rtmix_session *s, int line) {
    rtmix_session_alarm a;
    rtmix_session_alarm_init(&a);
    if (rtmix_session_next_alarm(s, &a) == RTMIX_ERR_NOT_FOUND) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "line %d: unexpected alarm %s\n", line,
                rtmix_session_alarm_name(a.code));
    }
}

static void report_route(rtmix_session *s, uint32_t reason, uint32_t output,
                         uint32_t rate, uint32_t options, uint64_t now) {
    rtmix_session_route r;
    rtmix_session_route_init(&r);
    r.reason = reason;
    r.output = output;
    r.sample_rate = rate;
    r.flags = RTMIX_SESSION_ROUTE_HAS_CONFIG;
    r.category = RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD;
    r.mode = RTMIX_SESSION_MODE_DEFAULT;
    r.options = options;
    CHECK_OK(rtmix_session_route_changed(s, &r, now));
}

int main(void) {
    const uint32_t PAR = RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD;
    const uint32_t MIC_ON = RTMIX_SESSION_OPTION_MIX_WITH_OTHERS |
                            RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER |
                            RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH; /* 0x0D */
    const uint32_t MIC_OFF = RTMIX_SESSION_OPTION_MIX_WITH_OTHERS |
                             RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER |
                             RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH_A2DP; /* 0x29 */
    rtmix_session_settings settings;
    rtmix_session *s = NULL;
    rtmix_session_module_id rtc = 0, web = 0, player = 0;
    rtmix_session_config cfg;
    rtmix_session_alarm alarm;
    rtmix_session_state state;
    uint64_t due = 0;
    char name[32];
    uint32_t name_len = 0;

    /* Bad input never crashes. */
    CHECK(rtmix_session_settings_init(NULL) == RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(rtmix_session_tick(NULL, 0) == RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_session_destroy(NULL);

    CHECK_OK(rtmix_session_settings_init(&settings));
    CHECK(settings.base_category == RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    CHECK(settings.mic_permission == RTMIX_SESSION_MIC_UNDETERMINED);
    CHECK_OK(rtmix_session_create(&settings, &s));
    CHECK(s != NULL);
    if (s == NULL) {
        printf("session_scenario: %d passed, %d failed\n", passed, failed);
        return 1;
    }

    CHECK_OK(rtmix_session_module_register(s, "rtc-sdk", &rtc));
    CHECK_OK(rtmix_session_module_register(s, "courseware-webview", &web));
    CHECK_OK(rtmix_session_module_register(s, "courseware-player", &player));
    CHECK(rtc == 1 && web == 2 && player == 3);
    CHECK_OK(rtmix_session_module_name(s, web, name, sizeof name, &name_len));
    CHECK(strcmp(name, "courseware-webview") == 0 && name_len == 18);

    /* t=0: the call starts; the microphone permission is not known yet, so
     * the call is configured without recording (A2DP allowed). */
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL | RTMIX_SESSION_NEED_RECORDING,
                                   RTMIX_SESSION_MODE_NONE, 0));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_REQUEST_MIC_PERMISSION, 0, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 0, PAR, MIC_OFF},
                   {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 10));

    /* t=1500: permission granted: HFP configuration, recording may start. */
    CHECK_OK(rtmix_session_set_mic_permission(s, RTMIX_SESSION_MIC_GRANTED, 1500));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 1500, PAR, MIC_ON},
                   {RTMIX_SESSION_ACTION_START_RECORDING, 1500, 1, 0});

    /* t=1600: the AirPods switch to HFP at 16 kHz: the mixer follows. */
    report_route(s, RTMIX_SESSION_ROUTE_REASON_CATEGORY_CHANGE, RTMIX_SESSION_PORT_BLUETOOTH_HFP,
                 16000, MIC_ON, 1600);
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 1600, 16000, 1});

    /* t=3000: a media player joins: already satisfied, nothing to do. */
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK,
                                   RTMIX_SESSION_MODE_NONE, 3000));
    expect_no_actions(s, __LINE__);

    /* t=4000: the WebView courseware sets playback without mixWithOthers. */
    CHECK_OK(rtmix_session_config_init(&cfg));
    cfg.category = RTMIX_SESSION_CATEGORY_PLAYBACK;
    CHECK_OK(rtmix_session_observe_config(s, web, &cfg, 4000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 4000, PAR, MIC_ON});
    CHECK_OK(rtmix_session_alarm_init(&alarm));
    CHECK_OK(rtmix_session_next_alarm(s, &alarm));
    CHECK(alarm.code == RTMIX_SESSION_ALARM_CONFIGURATION_OVERRIDDEN);
    CHECK(alarm.severity == RTMIX_SESSION_SEVERITY_WARNING);
    CHECK(alarm.module == web && alarm.related_module == rtc);
    CHECK(alarm.detail == MIC_ON && alarm.time_ms == 4000);
    expect_no_alarms(s, __LINE__);

    /* t=10000: a VoIP app interrupts. */
    CHECK_OK(rtmix_session_interruption_began(s, 10000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_PAUSE_OUTPUT, 10000, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CALL_HELD, 10000, 1, 0});

    /* t=20000: it ends; reactivation is due 500 ms later. */
    CHECK_OK(rtmix_session_interruption_ended(s, 1, 20000));
    expect_no_actions(s, __LINE__);
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 20500);
    CHECK_OK(rtmix_session_tick(s, due));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 20500, 1, 0});
    /* The first activation fails; the retry comes 250 ms later. */
    CHECK_OK(rtmix_session_activation_result(s, 0, 20510));
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 20760);
    CHECK_OK(rtmix_session_tick(s, due));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 20760, 2, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 20770));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RESUME_OUTPUT, 20770, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CALL_HELD, 20770, 0, 0},
                   {RTMIX_SESSION_ACTION_RESUME_MEDIA, 20770, 0, 0});
    CHECK(rtmix_session_activation_result(s, 1, 20780) == RTMIX_ERR_BAD_STATE);
    CHECK(rtmix_session_next_due(s, &due) == RTMIX_ERR_NOT_FOUND);

    /* t=30000: microphone muted: back to A2DP and the normal mixer format. */
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL, RTMIX_SESSION_MODE_NONE, 30000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 30000, PAR, MIC_OFF});
    report_route(s, RTMIX_SESSION_ROUTE_REASON_CATEGORY_CHANGE, RTMIX_SESSION_PORT_BLUETOOTH_A2DP,
                 48000, MIC_OFF, 30100);
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 30100, 48000, 2});

    /* Everybody leaves, the call first. */
    CHECK_OK(rtmix_session_release(s, rtc, 40000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 40000,
                       RTMIX_SESSION_CATEGORY_SOLO_AMBIENT, 0});
    CHECK_OK(rtmix_session_release(s, player, 41000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_DEACTIVATE, 41000, 1, 0});
    expect_no_alarms(s, __LINE__);

    CHECK_OK(rtmix_session_state_init(&state));
    CHECK_OK(rtmix_session_get_state(s, &state));
    CHECK(state.category == RTMIX_SESSION_CATEGORY_SOLO_AMBIENT && state.options == 0);
    CHECK(state.active == 0 && state.interrupted == 0 && state.active_modules == 0);
    CHECK(state.engine_sample_rate == 48000 && state.engine_channels == 2);

    CHECK(rtmix_session_request(s, 99, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 42000) ==
          RTMIX_ERR_NOT_FOUND);
    CHECK_OK(rtmix_session_module_unregister(s, web, 42000));
    CHECK(rtmix_session_module_unregister(s, web, 42000) == RTMIX_ERR_NOT_FOUND);

    /* ABI evolution: a newer caller's larger state struct gets our fields and
     * keeps its own; a struct smaller than the 0.1 layout is rejected. */
    {
        struct { rtmix_session_state st; uint32_t future_field; } newer;
        memset(&newer, 0x5A, sizeof newer);
        newer.st.size = (uint32_t)sizeof newer;
        CHECK_OK(rtmix_session_get_state(s, &newer.st));
        CHECK(newer.st.size == sizeof(rtmix_session_state)); /* size filled */
        CHECK(newer.st.category == RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
        CHECK(newer.future_field == 0x5A5A5A5Au);
        CHECK(sizeof(rtmix_session_state) >= 60 && sizeof(rtmix_session_route) >= 36);
        CHECK_OK(rtmix_session_state_init(&state));
        state.size = 59;
        CHECK(rtmix_session_get_state(s, &state) == RTMIX_ERR_INVALID_ARGUMENT);
    }

    rtmix_session_destroy(s);
    printf("session_scenario: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
