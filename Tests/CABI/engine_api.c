/*
 * engine_api.c — exercises the whole engine part of include/rtmix.h through
 * the built shared library (or the Embedded Swift objects).
 *
 * Build: cc -std=c99 -Wall -Wextra -Werror -pedantic -I include \
 *           Tests/CABI/engine_api.c -L<dir> -lrtmix -Wl,-rpath,<dir> -lm
 * Prints one line per failed check and ends with
 *   "engine_api: N passed, M failed"; exits 1 when M > 0.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep for the idle-retire check */
#include "rtmix.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_passed = 0;
static int g_failed = 0;
static const char *g_section = "";

static void check_impl(int ok, const char *expr, int line) {
    if (ok) {
        g_passed++;
    } else {
        g_failed++;
        printf("FAIL [%s] line %d: %s\n", g_section, line, expr);
    }
}
#define CHECK(cond) check_impl((cond) ? 1 : 0, #cond, __LINE__)
/* Status check that prints the actual status on failure. */
#define CHECK_ST(call, want)                                                   \
    do {                                                                       \
        int32_t st_ = (call);                                                  \
        if (st_ == (want)) {                                                   \
            g_passed++;                                                        \
        } else {                                                               \
            g_failed++;                                                        \
            printf("FAIL [%s] line %d: %s returned %d (%s), want %d (%s)\n",   \
                   g_section, __LINE__, #call, (int)st_,                       \
                   rtmix_status_string(st_), (int)(want),                      \
                   rtmix_status_string(want));                                 \
        }                                                                      \
    } while (0)
#define CHECK_U64(actual, want)                                                \
    do {                                                                       \
        unsigned long long a_ = (unsigned long long)(actual);                  \
        unsigned long long w_ = (unsigned long long)(want);                    \
        if (a_ == w_) {                                                        \
            g_passed++;                                                        \
        } else {                                                               \
            g_failed++;                                                        \
            printf("FAIL [%s] line %d: %s == %llu, want %llu\n", g_section,    \
                   __LINE__, #actual, a_, w_);                                 \
        }                                                                      \
    } while (0)

#define SECTION(name) (g_section = (name))

/* ---------------------------------------------------------------- helpers */

static rtmix_engine *make_engine(uint32_t rate, uint32_t channels, uint32_t max_frames,
                                 uint32_t max_sources) {
    rtmix_engine_config cfg;
    rtmix_engine *e = NULL;
    rtmix_engine_config_init(&cfg);
    cfg.sample_rate = rate;
    cfg.channels = channels;
    cfg.max_frames = max_frames;
    cfg.max_sources = max_sources;
    if (rtmix_engine_create(&cfg, &e) != RTMIX_OK) {
        printf("FATAL: cannot create engine %u Hz %u ch\n", rate, channels);
        exit(2);
    }
    return e;
}

/* The timing of a source before drift compensation and priming became the
 * defaults (no drift control, start with the first audio, refuse what does
 * not fit): the mixing, format and bypass sections use it so that their
 * figures do not depend on timing; the source_timing sections test the
 * defaults themselves. */
static void classic_timing(rtmix_source_config *sc) {
    sc->target_buffer_ms = 0;
    sc->start_threshold_ms = 0;
    sc->overrun_policy = RTMIX_OVERRUN_REJECT;
}

/* As make_engine, with ducking off (tests of the plain sum at full level). */
static rtmix_engine *make_engine_no_duck(uint32_t rate, uint32_t channels, uint32_t max_frames,
                                         uint32_t max_sources) {
    rtmix_engine_config cfg;
    rtmix_engine *e = NULL;
    rtmix_engine_config_init(&cfg);
    cfg.sample_rate = rate;
    cfg.channels = channels;
    cfg.max_frames = max_frames;
    cfg.max_sources = max_sources;
    cfg.duck_depth_db = 0.0f;
    if (rtmix_engine_create(&cfg, &e) != RTMIX_OK) {
        printf("FATAL: cannot create engine %u Hz %u ch\n", rate, channels);
        exit(2);
    }
    return e;
}

static rtmix_source_id add_source(rtmix_engine *e, rtmix_domain d, uint32_t rate, uint32_t ch,
                                  uint32_t buffer_frames) {
    rtmix_source_config sc;
    rtmix_source_id id = 0;
    int32_t st;
    rtmix_source_config_init(&sc, d, rate, ch);
    classic_timing(&sc);
    sc.buffer_frames = buffer_frames;
    st = rtmix_source_add(e, &sc, &id);
    if (st != RTMIX_OK) {
        printf("FAIL [%s]: rtmix_source_add(%u Hz, %u ch) = %d\n", g_section, rate, ch, (int)st);
        g_failed++;
        return 0;
    }
    return id;
}

static rtmix_engine_stats engine_stats(rtmix_engine *e) {
    rtmix_engine_stats s;
    rtmix_engine_stats_init(&s);
    if (rtmix_engine_get_stats(e, &s) != RTMIX_OK) {
        printf("FAIL [%s]: rtmix_engine_get_stats\n", g_section);
        g_failed++;
    }
    return s;
}

static rtmix_source_stats source_stats(rtmix_engine *e, rtmix_source_id id) {
    rtmix_source_stats s;
    rtmix_source_stats_init(&s);
    if (rtmix_source_get_stats(e, id, &s) != RTMIX_OK) {
        printf("FAIL [%s]: rtmix_source_get_stats(%u)\n", g_section, (unsigned)id);
        g_failed++;
    }
    return s;
}

static int all_finite_in_range(const float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (!(x[i] >= -1.0f && x[i] <= 1.0f)) return 0; /* also false for NaN */
    }
    return 1;
}

static void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* Render `frames` frames in blocks of at most `block`, discarding output. */
static void render_discard(rtmix_engine *e, uint32_t channels, uint32_t frames, uint32_t block) {
    static float buf[4096 * 2];
    while (frames > 0) {
        uint32_t n = frames < block ? frames : block;
        if (rtmix_render_f32(e, buf, n) != RTMIX_OK) {
            printf("FAIL [%s]: render_discard\n", g_section);
            g_failed++;
            return;
        }
        (void)channels;
        frames -= n;
    }
}

/* ------------------------------------------------------------------ tests */

static void test_version_and_status(void) {
    static const int32_t codes[] = {
        RTMIX_OK, RTMIX_ERR_INVALID_ARGUMENT, RTMIX_ERR_UNSUPPORTED_FORMAT,
        RTMIX_ERR_NOT_FOUND, RTMIX_ERR_BUFFER_FULL, RTMIX_ERR_TOO_MANY_FRAMES,
        RTMIX_ERR_LIMIT, RTMIX_ERR_NO_MEMORY, RTMIX_ERR_BAD_STATE};
    static const int32_t unknown[] = {1, -9, 100, -1000, 2147483647, (-2147483647 - 1)};
    const char *unknown_text;
    size_t i, j;

    SECTION("version");
    CHECK(rtmix_version() ==
          (((uint32_t)RTMIX_VERSION_MAJOR << 16) | ((uint32_t)RTMIX_VERSION_MINOR << 8) |
           (uint32_t)RTMIX_VERSION_PATCH));

    SECTION("status_string");
    /* The codes are the documented values and never renumbered. */
    CHECK(RTMIX_OK == 0 && RTMIX_ERR_INVALID_ARGUMENT == -1 && RTMIX_ERR_UNSUPPORTED_FORMAT == -2 &&
          RTMIX_ERR_NOT_FOUND == -3 && RTMIX_ERR_BUFFER_FULL == -4 &&
          RTMIX_ERR_TOO_MANY_FRAMES == -5 && RTMIX_ERR_LIMIT == -6 &&
          RTMIX_ERR_NO_MEMORY == -7 && RTMIX_ERR_BAD_STATE == -8);
    unknown_text = rtmix_status_string(-9999);
    CHECK(unknown_text != NULL && strcmp(unknown_text, "unknown status") == 0);
    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = rtmix_status_string(codes[i]);
        CHECK(s != NULL && s[0] != '\0');
        CHECK(s != NULL && strcmp(s, "unknown status") != 0);
        for (j = 0; j < i; j++) {
            const char *t = rtmix_status_string(codes[j]);
            CHECK(s != NULL && t != NULL && strcmp(s, t) != 0); /* distinct texts */
        }
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = rtmix_status_string(unknown[i]);
        CHECK(s != NULL && strcmp(s, "unknown status") == 0);
    }
    /* The texts cover capture too (issue 18: a capture rate of 96000 was
     * told "8000..192000 Hz", a 5,000-frame capture "one render call"). */
    CHECK(strstr(rtmix_status_string(RTMIX_ERR_UNSUPPORTED_FORMAT), "capture 8000..48000 Hz") != NULL);
    CHECK(strstr(rtmix_status_string(RTMIX_ERR_TOO_MANY_FRAMES), "capture") != NULL);
}

static void test_config_init(void) {
    rtmix_engine_config cfg;
    rtmix_source_config sc;
    rtmix_engine_stats es;
    rtmix_source_stats ss;

    SECTION("config_init");
    memset(&cfg, 0xA5, sizeof cfg);
    CHECK_ST(rtmix_engine_config_init(&cfg), RTMIX_OK);
    CHECK_U64(cfg.size, sizeof(rtmix_engine_config));
    CHECK_U64(cfg.sample_rate, 48000);
    CHECK_U64(cfg.channels, 2);
    CHECK_U64(cfg.max_frames, 4096);
    CHECK_U64(cfg.max_sources, 32);
    CHECK(fabsf(cfg.call_gain_floor - 0.1f) < 1e-6f);
    CHECK(cfg.gain_ramp_ms == 10.0f);
    CHECK(cfg.limiter_threshold_db == -1.0f);
    CHECK_U64(cfg.resampler_quality, RTMIX_RESAMPLER_SINC_FASTEST);
    CHECK(cfg.duck_depth_db == 0.0f); /* ducking is opt-in: media keeps its level */
    CHECK(cfg.duck_attack_ms == 20.0f);
    CHECK(cfg.duck_release_ms == 300.0f);
    CHECK_U64(cfg.call_audio_missing_ms, 2000);
    CHECK_ST(rtmix_engine_config_init(NULL), RTMIX_ERR_INVALID_ARGUMENT);

    memset(&sc, 0xA5, sizeof sc);
    CHECK_ST(rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 44100, 2), RTMIX_OK);
    CHECK_U64(sc.size, sizeof(rtmix_source_config));
    CHECK(sc.domain == RTMIX_DOMAIN_MEDIA);
    CHECK_U64(sc.sample_rate, 44100);
    CHECK_U64(sc.channels, 2);
    CHECK_U64(sc.buffer_frames, 0);
    CHECK(sc.gain == 1.0f);
    CHECK(sc.target_buffer_ms == 100.0f); /* drift compensation on: media 100 ms */
    CHECK(sc.start_threshold_ms == -1.0f);
    CHECK(sc.overrun_policy == RTMIX_OVERRUN_DOMAIN_DEFAULT);
    CHECK_ST(rtmix_source_config_init(&sc, RTMIX_DOMAIN_CALL, 16000, 1), RTMIX_OK);
    CHECK(sc.target_buffer_ms == 40.0f); /* call 40 ms */
    CHECK_ST(rtmix_source_config_init(NULL, RTMIX_DOMAIN_CALL, 16000, 1), RTMIX_ERR_INVALID_ARGUMENT);

    memset(&es, 0xA5, sizeof es);
    CHECK_ST(rtmix_engine_stats_init(&es), RTMIX_OK);
    CHECK_U64(es.size, sizeof(rtmix_engine_stats));
    CHECK_U64(es.render_calls, 0);
    CHECK_U64(es.sources_removed, 0);
    CHECK_ST(rtmix_engine_stats_init(NULL), RTMIX_ERR_INVALID_ARGUMENT);
    memset(&ss, 0xA5, sizeof ss);
    CHECK_ST(rtmix_source_stats_init(&ss), RTMIX_OK);
    CHECK_U64(ss.size, sizeof(rtmix_source_stats));
    CHECK_U64(ss.frames_pushed, 0);
    CHECK_U64(ss.muted, 0);
    CHECK_ST(rtmix_source_stats_init(NULL), RTMIX_ERR_INVALID_ARGUMENT);
}

/* Creates with one modified field; expects `want`, and *out NULL on error. */
static void expect_create(const rtmix_engine_config *cfg, int32_t want, const char *what) {
    rtmix_engine *e = (rtmix_engine *)(void *)&g_passed; /* non-NULL garbage */
    int32_t st = rtmix_engine_create(cfg, &e);
    if (st == want && (want != RTMIX_OK ? e == NULL : e != NULL)) {
        g_passed++;
    } else {
        g_failed++;
        printf("FAIL [create] %s: status %d (%s), want %d; *out %s\n", what, (int)st,
               rtmix_status_string(st), (int)want, e == NULL ? "NULL" : "non-NULL");
    }
    if (st == RTMIX_OK && e != NULL && e != (rtmix_engine *)(void *)&g_passed) rtmix_engine_destroy(e);
}

static void test_create(void) {
    rtmix_engine_config base, c;
    rtmix_engine *e;

    SECTION("create");
    rtmix_engine_config_init(&base);

#define TRY_FIELD(field, value, want)                                          \
    do {                                                                       \
        c = base;                                                              \
        c.field = (value);                                                     \
        expect_create(&c, (want), #field " = " #value);                        \
    } while (0)

    TRY_FIELD(sample_rate, 7999, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_FIELD(sample_rate, 192001, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_FIELD(sample_rate, 0, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_FIELD(channels, 0, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_FIELD(channels, 3, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_FIELD(max_frames, 0, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(max_frames, 16385, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(max_sources, 0, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(max_sources, 257, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(call_gain_floor, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(call_gain_floor, -0.5f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(call_gain_floor, 1.5f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(call_gain_floor, INFINITY, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(gain_ramp_ms, 0.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(gain_ramp_ms, 1001.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(gain_ramp_ms, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(limiter_threshold_db, 1.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(limiter_threshold_db, -21.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(limiter_threshold_db, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(resampler_quality, 4, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_depth_db, 0.5f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_depth_db, -61.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_depth_db, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_attack_ms, 0.5f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_attack_ms, 1001.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_release_ms, 0.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_release_ms, 5001.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(duck_release_ms, INFINITY, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(call_audio_missing_ms, 99, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(call_audio_missing_ms, 60001, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_FIELD(size, 36u - 4, RTMIX_ERR_INVALID_ARGUMENT); /* below the v0 size */
    TRY_FIELD(size, 0, RTMIX_ERR_INVALID_ARGUMENT);

    /* Valid boundaries. */
    TRY_FIELD(sample_rate, 8000, RTMIX_OK);
    TRY_FIELD(sample_rate, 192000, RTMIX_OK);
    TRY_FIELD(channels, 1, RTMIX_OK);
    TRY_FIELD(max_frames, 1, RTMIX_OK);
    TRY_FIELD(max_frames, 16384, RTMIX_OK);
    TRY_FIELD(max_sources, 1, RTMIX_OK);
    TRY_FIELD(max_sources, 256, RTMIX_OK);
    TRY_FIELD(call_gain_floor, 0.0f, RTMIX_OK);
    TRY_FIELD(gain_ramp_ms, 1.0f, RTMIX_OK);
    TRY_FIELD(gain_ramp_ms, 1000.0f, RTMIX_OK);
    TRY_FIELD(resampler_quality, RTMIX_RESAMPLER_LINEAR, RTMIX_OK);
    TRY_FIELD(duck_depth_db, 0.0f, RTMIX_OK);
    TRY_FIELD(duck_depth_db, -60.0f, RTMIX_OK);
    TRY_FIELD(duck_attack_ms, 1.0f, RTMIX_OK);
    TRY_FIELD(duck_release_ms, 5000.0f, RTMIX_OK);
    TRY_FIELD(call_audio_missing_ms, 0, RTMIX_OK);
    TRY_FIELD(call_audio_missing_ms, 100, RTMIX_OK);
    TRY_FIELD(call_audio_missing_ms, 60000, RTMIX_OK);
#undef TRY_FIELD
    expect_create(&base, RTMIX_OK, "defaults");

    /* NULL cfg / NULL out. */
    e = (rtmix_engine *)(void *)&g_passed;
    CHECK_ST(rtmix_engine_create(NULL, &e), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(e == NULL);
    CHECK_ST(rtmix_engine_create(&base, NULL), RTMIX_ERR_INVALID_ARGUMENT);

    /* destroy(NULL) is a no-op. */
    rtmix_engine_destroy(NULL);
    CHECK(1);
}

static void test_get_config(void) {
    rtmix_engine_config c, got;
    rtmix_engine *e = NULL;

    SECTION("get_config");
    rtmix_engine_config_init(&c);
    c.sample_rate = 44100;
    c.channels = 1;
    c.max_frames = 1024;
    c.max_sources = 8;
    c.call_gain_floor = 0.25f;
    c.gain_ramp_ms = 5.0f;
    c.limiter_threshold_db = -3.0f;
    c.resampler_quality = RTMIX_RESAMPLER_SINC_MEDIUM;
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    if (e == NULL) return;
    rtmix_engine_config_init(&got);
    CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
    CHECK_U64(got.size, sizeof got);
    CHECK_U64(got.sample_rate, 44100);
    CHECK_U64(got.channels, 1);
    CHECK_U64(got.max_frames, 1024);
    CHECK_U64(got.max_sources, 8);
    CHECK(got.call_gain_floor == 0.25f);
    CHECK(got.gain_ramp_ms == 5.0f);
    CHECK(got.limiter_threshold_db == -3.0f);
    CHECK_U64(got.resampler_quality, RTMIX_RESAMPLER_SINC_MEDIUM);
    CHECK(memcmp(&got, &c, sizeof c) == 0);

    /* A struct smaller than the first published layout (36 bytes) is
     * rejected and left untouched. */
    memset(&got, 0x5A, sizeof got);
    got.size = 8;
    CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(got.sample_rate, 0x5A5A5A5Au);
    /* v0 fields never move; 0.2 appended the capture fields. */
    CHECK_U64(offsetof(rtmix_engine_config, resampler_quality), 32);
    CHECK_U64(offsetof(rtmix_engine_config, capture_rate), 36);
    CHECK_U64(offsetof(rtmix_engine_config, duck_depth_db), 64); /* 0.3: ducking, alarms */
    CHECK_U64(offsetof(rtmix_engine_config, max_memory_bytes), 80); /* 0.3: memory cap */
    CHECK_U64(sizeof(rtmix_engine_config), 88);
    CHECK_U64(offsetof(rtmix_engine_stats, sources_removed), 104);
    CHECK_U64(offsetof(rtmix_engine_stats, capture_calls), 112);
    CHECK_U64(offsetof(rtmix_engine_stats, duck_gain_db), 224);
    CHECK_U64(offsetof(rtmix_engine_stats, memory_bytes), 248);
    CHECK_U64(offsetof(rtmix_engine_stats, events_dropped), 256); /* 0.4 */
    CHECK_U64(sizeof(rtmix_engine_stats), 264);
    CHECK_U64(sizeof(rtmix_source_stats) >= 96, 1);
    CHECK_U64(sizeof(rtmix_source_config) >= 28, 1);
    /* A newer, larger caller struct: only the fields this library knows
     * are written, its extra fields are kept, and size says how much was
     * filled (the library's size). */
    {
        struct { rtmix_engine_config c; uint32_t future_field; } newer;
        memset(&newer, 0x5A, sizeof newer);
        newer.c.size = (uint32_t)sizeof newer;
        CHECK_ST(rtmix_engine_get_config(e, &newer.c), RTMIX_OK);
        CHECK_U64(newer.c.size, sizeof(rtmix_engine_config));
        CHECK_U64(newer.c.sample_rate, 44100);
        CHECK_U64(newer.future_field, 0x5A5A5A5Au);
    }

    CHECK_ST(rtmix_engine_get_config(NULL, &got), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_get_config(e, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    got.size = 0;
    CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_engine_destroy(e);
}

static int contains_id(const rtmix_source_id *ids, size_t n, rtmix_source_id id) {
    size_t i;
    for (i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}

static void test_sources(void) {
    static const uint32_t rates[] = {8000, 16000, 44100, 48000, 96000, 192000};
    rtmix_source_id ids[64];
    size_t nids = 0;
    rtmix_engine *e = make_engine(48000, 2, 4096, 32);
    rtmix_source_config sc;
    rtmix_source_id id;
    size_t r, i;
    int d;
    uint32_t ch;
    static float in[4096 * 2]; /* 20 ms at 192 kHz stereo = 7680 samples */
    static float out[4096 * 2];
    rtmix_engine_stats es;

    SECTION("source_add");
    for (d = 0; d < 2; d++) {
        for (r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            for (ch = 1; ch <= 2; ch++) {
                rtmix_source_stats ss;
                id = add_source(e, (rtmix_domain)d, rates[r], ch, 0);
                CHECK(id != 0);
                CHECK(!contains_id(ids, nids, id));
                ids[nids++] = id;
                ss = source_stats(e, id);
                CHECK(ss.domain == d);
                CHECK_U64(ss.sample_rate, rates[r]);
                CHECK_U64(ss.channels, ch);
                CHECK(ss.gain == 1.0f);
                CHECK_U64(ss.muted, 0);
                /* default ring: >= 400 ms, a power of two */
                CHECK(ss.capacity_frames >= rates[r] * 2 / 5);
                CHECK((ss.capacity_frames & (ss.capacity_frames - 1)) == 0);
                CHECK_U64(ss.buffered_frames, 0);
            }
        }
    }
    es = engine_stats(e);
    CHECK_U64(es.active_sources, 24);
    CHECK_U64(es.sources_added, 24);

    /* Every source renders: push a sine, render, output finite in range. */
    SECTION("all_formats_render");
    for (i = 0; i < nids; i++) {
        rtmix_source_stats ss = source_stats(e, ids[i]);
        uint32_t frames = ss.sample_rate / 50; /* 20 ms */
        uint32_t k, acc = 0;
        for (k = 0; k < frames * ss.channels; k++)
            in[k] = 0.05f * sinf((float)k * 0.01f);
        CHECK_ST(rtmix_source_push_f32(e, ids[i], in, frames, &acc), RTMIX_OK);
        CHECK_U64(acc, frames);
    }
    for (i = 0; i < 4; i++) {
        CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
        CHECK(all_finite_in_range(out, 480 * 2));
    }
    for (i = 0; i < nids; i++) {
        rtmix_source_stats ss = source_stats(e, ids[i]);
        CHECK(ss.frames_consumed > 0);
        CHECK(ss.frames_rendered > 0);
    }

    SECTION("source_add_invalid");
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 48000, 2);
    classic_timing(&sc);
    id = 12345;
#define TRY_SRC(field, value, want)                                            \
    do {                                                                       \
        rtmix_source_config c_ = sc;                                           \
        c_.field = (value);                                                    \
        CHECK_ST(rtmix_source_add(e, &c_, &id), (want));                       \
    } while (0)
    TRY_SRC(domain, 2, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(domain, -1, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(sample_rate, 7999, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_SRC(sample_rate, 192001, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_SRC(channels, 0, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_SRC(channels, 3, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_SRC(gain, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(gain, -0.5f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(gain, INFINITY, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(gain, RTMIX_MAX_GAIN * 2.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(buffer_frames, (1u << 22) + 1u, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(buffer_frames, 0xFFFFFFFFu, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(size, 24, RTMIX_ERR_INVALID_ARGUMENT); /* below the version-0 size (28) */
    TRY_SRC(target_buffer_ms, 4.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(target_buffer_ms, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(start_threshold_ms, -2.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(start_threshold_ms, 2001.0f, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(start_threshold_ms, NAN, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(overrun_policy, 3, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(overrun_policy, -1, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_SRC(size, 0, RTMIX_ERR_INVALID_ARGUMENT);
#undef TRY_SRC
    CHECK(id == 12345); /* *out_id untouched on failure */
    CHECK_ST(rtmix_source_add(NULL, &sc, &id), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_add(e, NULL, &id), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_add(e, &sc, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    es = engine_stats(e);
    CHECK_U64(es.active_sources, 24); /* nothing was added */
    CHECK_U64(es.sources_added, 24);

    SECTION("source_remove");
    CHECK_ST(rtmix_source_remove(e, 0), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_remove(e, 0xFFFFFFFFu), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_remove(NULL, ids[0]), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_remove(e, ids[0]), RTMIX_OK);
    CHECK_ST(rtmix_source_remove(e, ids[0]), RTMIX_ERR_NOT_FOUND);
    {
        rtmix_source_stats ss;
        rtmix_source_stats_init(&ss);
        CHECK_ST(rtmix_source_get_stats(e, ids[0], &ss), RTMIX_ERR_NOT_FOUND);
    }
    es = engine_stats(e);
    CHECK_U64(es.active_sources, 23);
    CHECK_U64(es.sources_removed, 1);
    rtmix_engine_destroy(e);
}

/* ids nonzero, unique, never reused across add/remove cycles; LIMIT. */
static void test_ids_and_limit(void) {
    rtmix_source_id all[200];
    rtmix_source_id live[4];
    size_t nall = 0;
    int round, k;
    rtmix_engine *e = make_engine(48000, 2, 1024, 4);
    rtmix_source_id id = 0;
    rtmix_source_config sc;
    static float buf[1024 * 2];

    SECTION("ids_unique");
    for (k = 0; k < 4; k++) {
        live[k] = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
        CHECK(live[k] != 0 && !contains_id(all, nall, live[k]));
        all[nall++] = live[k];
    }
    SECTION("limit");
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 48000, 2);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_LIMIT);

    SECTION("ids_never_reused");
    for (round = 0; round < 40; round++) {
        int victim = round % 4;
        rtmix_source_id old = live[victim];
        CHECK_ST(rtmix_source_remove(e, old), RTMIX_OK);
        /* Let the renderer finish the fade-out so the slot can be reclaimed. */
        CHECK_ST(rtmix_render_f32(e, buf, 1024), RTMIX_OK);
        CHECK_ST(rtmix_render_f32(e, buf, 1024), RTMIX_OK);
        id = 0;
        CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
        CHECK(id != 0);
        CHECK(!contains_id(all, nall, id));
        all[nall++] = id;
        live[victim] = id;
        /* The old id stays dead even though its slot is in use again. */
        CHECK_ST(rtmix_source_remove(e, old), RTMIX_ERR_NOT_FOUND);
        CHECK_ST(rtmix_source_set_gain(e, old, 0.5f), RTMIX_ERR_NOT_FOUND);
        CHECK_ST(rtmix_source_push_f32(e, old, (const float *)buf, 16, NULL), RTMIX_ERR_NOT_FOUND);
    }
    {
        rtmix_engine_stats es = engine_stats(e);
        CHECK_U64(es.sources_added, 44);
        CHECK_U64(es.sources_removed, 40);
        CHECK_U64(es.active_sources, 4);
    }

    /* Removed without any render afterwards: the control thread retires the
     * source itself after the renderer has been idle for a while. */
    SECTION("idle_retire");
    CHECK_ST(rtmix_source_remove(e, live[0]), RTMIX_OK);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_LIMIT); /* fade not finished */
    sleep_ms(250);
    id = 0;
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    CHECK(id != 0 && !contains_id(all, nall, id));
    rtmix_engine_destroy(e);
}

static void test_push(void) {
    /* max_frames 1024: a ring must hold one block's input (the 1024-frame
     * ring below). */
    rtmix_engine *e = make_engine(48000, 2, 1024, 8);
    rtmix_source_id s, mono, removed;
    static float f[4096 * 2];
    static int16_t s16[4096 * 2];
    uint32_t acc;
    rtmix_source_stats ss;
    rtmix_engine_stats es;
    int i;

    for (i = 0; i < 4096 * 2; i++) {
        f[i] = 0.25f;
        s16[i] = 1000;
    }
    SECTION("push_basic");
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 1024); /* ring: 1024 frames */
    mono = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    ss = source_stats(e, s);
    CHECK_U64(ss.capacity_frames, 1024);
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, s, f, 600, &acc), RTMIX_OK);
    CHECK_U64(acc, 600);
    acc = 999;
    CHECK_ST(rtmix_source_push_s16(e, s, s16, 300, &acc), RTMIX_OK);
    CHECK_U64(acc, 300);
    CHECK_ST(rtmix_source_push_f32(e, s, f, 1, NULL), RTMIX_OK); /* accepted may be NULL */
    ss = source_stats(e, s);
    CHECK_U64(ss.buffered_frames, 901);
    CHECK(fabsf(ss.buffered_ms - 901.0f * 1000.0f / 48000.0f) < 0.01f);
    CHECK_U64(ss.frames_pushed, 901);
    {
        uint32_t buffered = 0;
        CHECK_ST(rtmix_source_get_buffered(e, s, &buffered), RTMIX_OK);
        CHECK_U64(buffered, 901);
        CHECK_ST(rtmix_source_get_buffered(e, s, NULL), RTMIX_ERR_INVALID_ARGUMENT);
        CHECK_ST(rtmix_source_get_buffered(NULL, s, &buffered), RTMIX_ERR_INVALID_ARGUMENT);
        CHECK_ST(rtmix_source_get_buffered(e, 0, &buffered), RTMIX_ERR_NOT_FOUND);
    }

    SECTION("push_full");
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, s, f, 200, &acc), RTMIX_ERR_BUFFER_FULL);
    CHECK_U64(acc, 123); /* partial accept */
    acc = 999;
    CHECK_ST(rtmix_source_push_s16(e, s, s16, 50, &acc), RTMIX_ERR_BUFFER_FULL);
    CHECK_U64(acc, 0);
    CHECK_ST(rtmix_source_push_f32(e, s, f, 10, NULL), RTMIX_ERR_BUFFER_FULL);
    ss = source_stats(e, s);
    CHECK_U64(ss.buffered_frames, 1024);
    CHECK_U64(ss.frames_pushed, 1024);
    CHECK_U64(ss.frames_rejected, 77 + 50 + 10);
    CHECK(fabsf(ss.buffered_ms - 1024.0f * 1000.0f / 48000.0f) < 0.01f);
    es = engine_stats(e);
    CHECK_U64(es.rejected_frames, 137);
    /* After a render frees space, pushes fit again. */
    CHECK_ST(rtmix_render_f32(e, f + 4096, 256), RTMIX_OK); /* scratch output */
    for (i = 0; i < 4096 * 2; i++) f[i] = 0.25f;
    acc = 0;
    CHECK_ST(rtmix_source_push_f32(e, s, f, 256, &acc), RTMIX_OK);
    CHECK_U64(acc, 256);

    SECTION("push_invalid");
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, s, NULL, 10, &acc), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_s16(e, s, NULL, 10, &acc), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, mono, f, 0, &acc), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_s16(e, mono, s16, 0, &acc), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(NULL, mono, f, 10, &acc), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_s16(NULL, mono, s16, 10, &acc), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_U64(acc, 0);
    ss = source_stats(e, mono);
    CHECK_U64(ss.frames_pushed, 0);
    CHECK_U64(ss.frames_rejected, 0);

    SECTION("push_not_found");
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, 0, f, 10, &acc), RTMIX_ERR_NOT_FOUND);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, 777777, f, 10, &acc), RTMIX_ERR_NOT_FOUND);
    CHECK_U64(acc, 0);
    removed = add_source(e, RTMIX_DOMAIN_CALL, 8000, 1, 0);
    CHECK_ST(rtmix_source_push_f32(e, removed, f, 10, NULL), RTMIX_OK);
    CHECK_ST(rtmix_source_remove(e, removed), RTMIX_OK);
    acc = 999;
    CHECK_ST(rtmix_source_push_f32(e, removed, f, 10, &acc), RTMIX_ERR_NOT_FOUND);
    CHECK_U64(acc, 0);
    acc = 999;
    CHECK_ST(rtmix_source_push_s16(e, removed, s16, 10, &acc), RTMIX_ERR_NOT_FOUND);
    CHECK_U64(acc, 0);
    /* Engine totals never go down when a source is freed. */
    render_discard(e, 2, 4096, 1024);
    es = engine_stats(e);
    CHECK_U64(es.rejected_frames, 137);
    rtmix_engine_destroy(e);
}

static void test_gains(void) {
    rtmix_engine_config cfg;
    rtmix_engine *e = NULL;
    rtmix_source_id s, c;
    float g = -1.0f;
    rtmix_source_stats ss;
    static float in[4800 * 2];
    static float out[4800 * 2];
    int i;

    SECTION("gain_setters");
    rtmix_engine_config_init(&cfg);
    cfg.call_gain_floor = 0.25f;
    CHECK_ST(rtmix_engine_create(&cfg, &e), RTMIX_OK);
    if (e == NULL) return;
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
    c = add_source(e, RTMIX_DOMAIN_CALL, 48000, 1, 0);

    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, &g), RTMIX_OK);
    CHECK(g == 1.0f);
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 1.0f);

    CHECK_ST(rtmix_source_set_gain(e, s, 0.5f), RTMIX_OK);
    ss = source_stats(e, s);
    CHECK(ss.gain == 0.5f);
    CHECK_ST(rtmix_source_set_gain(e, s, NAN), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_gain(e, s, -0.1f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_gain(e, s, INFINITY), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_gain(e, s, -INFINITY), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_gain(e, s, RTMIX_MAX_GAIN + 1.0f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_gain(NULL, s, 0.5f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_gain(e, 0, 0.5f), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_set_gain(e, 999999, 0.5f), RTMIX_ERR_NOT_FOUND);
    ss = source_stats(e, s);
    CHECK(ss.gain == 0.5f); /* unchanged by the invalid calls */
    CHECK_ST(rtmix_source_set_gain(e, s, RTMIX_MAX_GAIN), RTMIX_OK);
    CHECK_ST(rtmix_source_set_gain(e, s, 0.0f), RTMIX_OK);
    CHECK_ST(rtmix_source_set_gain(e, s, 1.0f), RTMIX_OK);

    SECTION("mute");
    CHECK_ST(rtmix_source_set_muted(e, c, 1), RTMIX_OK);
    ss = source_stats(e, c);
    CHECK_U64(ss.muted, 1);
    CHECK(ss.gain == 1.0f); /* requested gain kept while muted */
    CHECK_ST(rtmix_source_set_muted(e, c, 0), RTMIX_OK);
    ss = source_stats(e, c);
    CHECK_U64(ss.muted, 0);
    CHECK_ST(rtmix_source_set_muted(NULL, c, 1), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_muted(e, 424242, 1), RTMIX_ERR_NOT_FOUND);

    SECTION("domain_gain");
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, 0.0f), RTMIX_OK); /* media may be 0 */
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.0f);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, 0.75f), RTMIX_OK);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, NAN), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, -1.0f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, INFINITY), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, RTMIX_MAX_GAIN * 2.0f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_gain(e, (rtmix_domain)2, 0.5f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_gain(e, (rtmix_domain)-1, 0.5f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_gain(NULL, RTMIX_DOMAIN_MEDIA, 0.5f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.75f); /* unchanged by the invalid calls */
    CHECK_ST(rtmix_domain_get_gain(e, (rtmix_domain)2, &g), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_MEDIA, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_get_gain(NULL, RTMIX_DOMAIN_MEDIA, &g), RTMIX_ERR_INVALID_ARGUMENT);

    SECTION("call_floor");
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_CALL, 0.0f), RTMIX_OK); /* clamped, not an error */
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, &g), RTMIX_OK);
    CHECK(g == 0.25f);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_CALL, 0.1f), RTMIX_OK);
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, &g), RTMIX_OK);
    CHECK(g == 0.25f);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_CALL, 0.5f), RTMIX_OK);
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, &g), RTMIX_OK);
    CHECK(g == 0.5f);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_CALL, -1.0f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, &g), RTMIX_OK);
    CHECK(g == 0.5f);

    /* Audible effect: media source (gain 1 x media 0.75) and call source
     * (gain 1 x call floor 0.25) after the 10 ms ramps. */
    SECTION("gain_audible");
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_CALL, 0.0f), RTMIX_OK);
    CHECK_ST(rtmix_source_remove(e, s), RTMIX_OK);
    render_discard(e, 2, 2048, 1024);
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
    for (i = 0; i < 4800; i++) {
        in[2 * i] = 0.4f;
        in[2 * i + 1] = -0.2f;
    }
    CHECK_ST(rtmix_source_push_f32(e, s, in, 4800, NULL), RTMIX_OK);
    render_discard(e, 2, 960, 960); /* ramps done after 480 frames */
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK(fabsf(out[0] - 0.3f) < 1e-6f && fabsf(out[1] + 0.15f) < 1e-6f);
    CHECK(fabsf(out[958] - 0.3f) < 1e-6f && fabsf(out[959] + 0.15f) < 1e-6f);
    /* mute the media source: silent after the ramp, and no step larger than
     * the ramp allows while it fades */
    CHECK_ST(rtmix_source_set_muted(e, s, 1), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 960), RTMIX_OK);
    {
        float max_step = 0.0f;
        for (i = 1; i < 960; i++) {
            float step = fabsf(out[2 * i] - out[2 * i - 2]);
            if (step > max_step) max_step = step;
        }
        CHECK(max_step <= 0.3f / 480.0f * 1.01f + 1e-6f);
        CHECK(out[2 * 959] == 0.0f && out[2 * 959 + 1] == 0.0f);
    }
    CHECK_ST(rtmix_source_set_muted(e, s, 0), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 960), RTMIX_OK);
    CHECK(fabsf(out[2 * 959] - 0.3f) < 1e-6f);
    CHECK_ST(rtmix_source_remove(e, s), RTMIX_OK);
    render_discard(e, 2, 2048, 1024);

    /* CALL voice at the floor: 0.4 x 0.25. */
    for (i = 0; i < 4800; i++) in[i] = 0.4f;
    CHECK_ST(rtmix_source_push_f32(e, c, in, 2400, NULL), RTMIX_OK);
    render_discard(e, 2, 960, 960);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK(fabsf(out[0] - 0.1f) < 1e-6f && fabsf(out[1] - 0.1f) < 1e-6f);
    rtmix_engine_destroy(e);
}

static void test_render_args(void) {
    rtmix_engine *e = make_engine(48000, 2, 512, 4);
    static float f[1024 * 2];
    static int16_t s16[1024 * 2];
    int i, untouched;
    rtmix_engine_stats es;

    SECTION("render_args");
    for (i = 0; i < 1024 * 2; i++) {
        f[i] = 123.0f;
        s16[i] = 12345;
    }
    CHECK_ST(rtmix_render_f32(e, f, 513), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_render_s16(e, s16, 513), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_render_f32(e, f, 0xFFFFFFFFu), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_render_f32(e, f, 0), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16(e, s16, 0), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_f32(e, NULL, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16(e, NULL, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_f32(NULL, f, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16(NULL, s16, 256), RTMIX_ERR_INVALID_ARGUMENT);
    /* On error the unchecked entries zero min(frames, max_frames) samples
     * (present whatever channel count the caller assumed) and nothing else. */
    untouched = 1;
    for (i = 0; i < 512; i++)
        if (f[i] != 0.0f || s16[i] != 0) untouched = 0;
    for (i = 512; i < 1024 * 2; i++)
        if (f[i] != 123.0f || s16[i] != 12345) untouched = 0;
    CHECK(untouched);
    /* A NULL engine zero-fills too: min(frames, 16384) samples (16384: the
     * largest max_frames; the caller promised frames x channels). */
    for (i = 0; i < 1024 * 2; i++) {
        f[i] = 123.0f;
        s16[i] = 12345;
    }
    CHECK_ST(rtmix_render_f32(NULL, f, 300), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16(NULL, s16, 300), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(f[0] == 0.0f && f[299] == 0.0f && f[300] == 123.0f);
    CHECK(s16[0] == 0 && s16[299] == 0 && s16[300] == 12345);
    /* size_t capacities above INT64_MAX (SIZE_MAX: "no limit") work: the
     * render succeeds, and an error zero-fills frames x 2 samples. */
    CHECK_ST(rtmix_render_f32_checked(e, f, SIZE_MAX, 256), RTMIX_OK);
    CHECK_ST(rtmix_render_s16_checked(e, s16, SIZE_MAX, 256), RTMIX_OK);
#if SIZE_MAX > INT64_MAX
    CHECK_ST(rtmix_render_f32_checked(e, f, (size_t)INT64_MAX + 1u, 256), RTMIX_OK);
#else /* 32-bit size_t (armhf): no capacity above INT64_MAX exists */
    CHECK_ST(rtmix_render_f32_checked(e, f, SIZE_MAX - 1u, 256), RTMIX_OK);
#endif
    CHECK(f[511] == 0.0f && f[512] == 123.0f && s16[511] == 0 && s16[512] == 12345);
    for (i = 0; i < 1024 * 2; i++) {
        f[i] = 123.0f;
        s16[i] = 12345;
    }
    CHECK_ST(rtmix_render_f32_checked(NULL, f, SIZE_MAX, 300), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16_checked(NULL, s16, SIZE_MAX, 300), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(f[599] == 0.0f && f[600] == 123.0f && s16[599] == 0 && s16[600] == 12345);
    CHECK_ST(rtmix_render_f32_checked(e, f, SIZE_MAX, 513), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK(f[1025] == 0.0f && f[1026] == 123.0f);
    es = engine_stats(e);
    CHECK_U64(es.render_calls, 3);
    rtmix_engine_destroy(e);
    e = make_engine(48000, 2, 512, 4);

    /* Checked entries: every bad input fails, zero-fills
     * min(capacity, frames x 2) samples and writes nothing past capacity. */
    for (i = 0; i < 1024 * 2; i++) {
        f[i] = 123.0f;
        s16[i] = 12345;
    }
    CHECK_ST(rtmix_render_f32_checked(e, f, 1023, 512), RTMIX_ERR_INVALID_ARGUMENT); /* 1 short */
    CHECK_ST(rtmix_render_s16_checked(e, s16, 1023, 512), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(f[1022] == 0.0f && f[1023] == 123.0f && s16[1022] == 0 && s16[1023] == 12345);
    CHECK_ST(rtmix_render_f32_checked(e, f, 2048, 513), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_render_s16_checked(e, s16, 2048, 513), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK(f[1025] == 0.0f && f[1026] == 123.0f && s16[1025] == 0 && s16[1026] == 12345);
    CHECK_ST(rtmix_render_f32_checked(e, f, 2048, 0xFFFFFFFFu), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_render_s16_checked(e, s16, 2048, 0xFFFFFFFFu), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK(f[2047] == 0.0f && s16[2047] == 0);
    for (i = 0; i < 1024 * 2; i++) {
        f[i] = 123.0f;
        s16[i] = 12345;
    }
    CHECK_ST(rtmix_render_f32_checked(e, f, 2048, 0), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16_checked(e, s16, 2048, 0), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_f32_checked(e, f, 0, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16_checked(e, s16, 0, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(f[0] == 123.0f && s16[0] == 12345); /* capacity 0: nothing written */
    CHECK_ST(rtmix_render_f32_checked(e, NULL, 2048, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16_checked(e, NULL, 2048, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_f32_checked(NULL, f, 100, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_render_s16_checked(NULL, s16, 100, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(f[99] == 0.0f && f[100] == 123.0f && s16[99] == 0 && s16[100] == 12345);
    /* After a format change the old capacity is refused, not overrun. */
    CHECK_ST(rtmix_engine_set_output_format(e, 48000, 1), RTMIX_OK);
    CHECK_ST(rtmix_render_f32_checked(e, f, 256, 256), RTMIX_OK);
    CHECK_ST(rtmix_engine_set_output_format(e, 48000, 2), RTMIX_OK);
    for (i = 0; i < 1024 * 2; i++) f[i] = 123.0f;
    CHECK_ST(rtmix_render_f32_checked(e, f, 256, 256), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(f[255] == 0.0f && f[256] == 123.0f);
    CHECK_ST(rtmix_render_f32_checked(e, f, 512, 256), RTMIX_OK);
    CHECK(f[511] == 0.0f && f[512] == 123.0f);
    es = engine_stats(e);
    CHECK_U64(es.render_calls, 2); /* failed calls do not count */
    CHECK_U64(es.frames_rendered, 512);
    for (i = 0; i < 1024 * 2; i++) {
        f[i] = 123.0f;
        s16[i] = 12345;
    }

    /* Exactly max_frames is fine, writes exactly frames x channels samples. */
    CHECK_ST(rtmix_render_f32(e, f, 512), RTMIX_OK);
    untouched = 1;
    for (i = 0; i < 512 * 2; i++)
        if (f[i] != 0.0f) untouched = 0;
    CHECK(untouched); /* silence with no sources */
    CHECK(f[1024] == 123.0f);
    CHECK_ST(rtmix_render_s16(e, s16, 1), RTMIX_OK);
    CHECK(s16[0] == 0 && s16[1] == 0 && s16[2] == 12345);
    es = engine_stats(e);
    CHECK_U64(es.render_calls, 4);
    CHECK_U64(es.frames_rendered, 1025);
    rtmix_engine_destroy(e);
}

static void test_bypass_bit_exact(void) {
    enum { N = 9600 };
    rtmix_engine *e = make_engine(48000, 2, 4096, 8);
    static float in[N * 2];
    static float out[N * 2];
    static const uint32_t blocks[] = {64, 441, 1000, 4096, 128, 480, 3391};
    rtmix_source_id s;
    uint32_t done = 0, acc = 0;
    size_t b = 0;
    int i, exact;
    uint32_t seed = 12345;
    rtmix_source_stats ss;

    SECTION("bypass_bit_exact");
    for (i = 0; i < N * 2; i++) {
        seed = seed * 1664525u + 1013904223u;
        in[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 1.7f; /* [-0.85, 0.85) */
        if (in[i] == 0.0f) in[i] = 0.125f;
    }
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, N);
    CHECK_ST(rtmix_source_push_f32(e, s, in, N, &acc), RTMIX_OK);
    CHECK_U64(acc, N);
    while (done < N) {
        uint32_t n = blocks[b++ % (sizeof blocks / sizeof blocks[0])];
        if (n > N - done) n = N - done;
        CHECK_ST(rtmix_render_f32(e, out + done * 2, n), RTMIX_OK);
        done += n;
    }
    exact = memcmp(in, out, sizeof in) == 0;
    CHECK(exact);
    if (!exact) {
        for (i = 0; i < N * 2; i++) {
            if (in[i] != out[i]) {
                printf("  first difference at sample %d: in %.9g out %.9g\n", i, in[i], out[i]);
                break;
            }
        }
    }
    ss = source_stats(e, s);
    CHECK_U64(ss.frames_consumed, N);
    CHECK_U64(ss.frames_rendered, N);
    CHECK_U64(ss.underrun_frames, 0);
    CHECK_U64(ss.underrun_events, 0);

    /* Drain: the source runs dry half way through the next block. */
    SECTION("underrun");
    CHECK_ST(rtmix_source_push_f32(e, s, in, 100, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 256), RTMIX_OK);
    {
        int silent = 1;
        /* After a 2 ms (96-frame) faded mirror tail, the gap is silence,
         * never stale audio. */
        for (i = (100 + 96) * 2; i < 256 * 2; i++)
            if (out[i] != 0.0f) silent = 0;
        CHECK(silent);
        CHECK(fabsf(out[100 * 2]) <= fabsf(out[99 * 2]) + 1e-6f); /* the tail starts where the audio stopped */
        CHECK(all_finite_in_range(out, 256 * 2));
    }
    ss = source_stats(e, s);
    CHECK_U64(ss.underrun_frames, 156);
    CHECK_U64(ss.underrun_events, 1);
    CHECK_ST(rtmix_render_f32(e, out, 256), RTMIX_OK);
    ss = source_stats(e, s);
    CHECK_U64(ss.underrun_frames, 156 + 256);
    CHECK_U64(ss.underrun_events, 1); /* still the same starvation */
    CHECK_U64(ss.buffered_frames, 0);
    {
        rtmix_engine_stats es = engine_stats(e);
        CHECK_U64(es.underrun_frames, 156 + 256);
    }
    /* A source that never got data counts no underrun. */
    {
        rtmix_source_id idle = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
        CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
        ss = source_stats(e, idle);
        CHECK_U64(ss.underrun_frames, 0);
        CHECK_U64(ss.underrun_events, 0);
    }
    rtmix_engine_destroy(e);
}

static void test_mono_resampled(void) {
    rtmix_engine *e = make_engine(48000, 2, 4096, 4);
    static float in[3200];
    static float out[4096 * 2];
    rtmix_source_id s;
    int i, lr_equal = 1;
    float peak = 0.0f;
    rtmix_source_stats ss;

    SECTION("mono_16k_to_stereo");
    for (i = 0; i < 3200; i++) in[i] = 0.5f * sinf(2.0f * 3.14159265f * 1000.0f * (float)i / 16000.0f);
    s = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    CHECK_ST(rtmix_source_push_f32(e, s, in, 3200, NULL), RTMIX_OK); /* 200 ms */
    CHECK_ST(rtmix_render_f32(e, out, 4096), RTMIX_OK);
    for (i = 0; i < 4096; i++) {
        if (out[2 * i] != out[2 * i + 1]) lr_equal = 0;
        if (fabsf(out[2 * i]) > peak) peak = fabsf(out[2 * i]);
    }
    CHECK(lr_equal);
    CHECK(peak > 0.4f && peak < 0.6f);
    CHECK(all_finite_in_range(out, 4096 * 2));
    ss = source_stats(e, s);
    CHECK(ss.frames_consumed > 1000);
    CHECK_U64(ss.frames_rendered, 4096);
    rtmix_engine_destroy(e);

    /* Stereo source into a mono engine averages the channels. */
    SECTION("stereo_to_mono");
    e = make_engine(48000, 1, 1024, 4);
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
    for (i = 0; i < 1024; i++) {
        in[2 * i] = 0.5f;
        in[2 * i + 1] = 0.25f;
    }
    CHECK_ST(rtmix_source_push_f32(e, s, in, 1024, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 1024), RTMIX_OK);
    CHECK(out[0] == 0.375f && out[1023] == 0.375f);
    rtmix_engine_destroy(e);
}

static void test_nonfinite(void) {
    rtmix_engine *e = make_engine(48000, 2, 1024, 4);
    static float in[1024 * 2];
    static float out[1024 * 2];
    static int16_t o16[1024 * 2];
    rtmix_source_id s, r;
    rtmix_source_stats ss;
    rtmix_engine_stats es;
    int i, bad = 0;

    SECTION("nonfinite");
    for (i = 0; i < 1024 * 2; i++) {
        in[i] = 0.5f;
        if (i % 7 == 0) {
            in[i] = NAN;
            bad++;
        } else if (i % 11 == 0) {
            in[i] = (i & 1) ? INFINITY : -INFINITY;
            bad++;
        }
    }
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
    r = add_source(e, RTMIX_DOMAIN_CALL, 44100, 2, 0); /* through the resampler */
    CHECK_ST(rtmix_source_push_f32(e, s, in, 1024, NULL), RTMIX_OK);
    CHECK_ST(rtmix_source_push_f32(e, r, in, 1024, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 512), RTMIX_OK);
    CHECK(all_finite_in_range(out, 512 * 2));
    CHECK_ST(rtmix_render_s16(e, o16, 512), RTMIX_OK);
    ss = source_stats(e, s);
    CHECK_U64(ss.nonfinite_samples, bad);
    ss = source_stats(e, r);
    CHECK_U64(ss.nonfinite_samples, bad);
    es = engine_stats(e);
    CHECK(es.nonfinite_samples >= (uint64_t)(2 * bad));
    rtmix_engine_destroy(e);
}

static void test_saturation(void) {
    enum { NSRC = 24, N = 2048 };
    /* Ducking off: a duck ramping within the block lowers the input the
     * limiter is releasing from, and this checks saturation at full level. */
    rtmix_engine *e = make_engine_no_duck(48000, 2, 4096, 32);
    static float in[N * 2];
    static int16_t o16[N * 2];
    static float of[N * 2];
    rtmix_source_id ids[NSRC];
    int i, k, sign_ok = 1, loud = 0;
    rtmix_engine_stats es;

    SECTION("s16_saturation");
    for (i = 0; i < N; i++) {
        float v = ((i / 37) & 1) ? -1.0f : 1.0f; /* full-scale square wave */
        in[2 * i] = v;
        in[2 * i + 1] = -v;
    }
    for (k = 0; k < NSRC; k++) {
        ids[k] = add_source(e, k & 1 ? RTMIX_DOMAIN_CALL : RTMIX_DOMAIN_MEDIA, 48000, 2, 2 * N);
        CHECK_ST(rtmix_source_set_gain(e, ids[k], RTMIX_MAX_GAIN), RTMIX_OK);
        CHECK_ST(rtmix_source_push_f32(e, ids[k], in, N, NULL), RTMIX_OK);
        CHECK_ST(rtmix_source_push_f32(e, ids[k], in, N, NULL), RTMIX_OK);
    }
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_CALL, RTMIX_MAX_GAIN), RTMIX_OK);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, RTMIX_MAX_GAIN), RTMIX_OK);
    CHECK_ST(rtmix_render_s16(e, o16, N), RTMIX_OK);
    for (i = 0; i < N * 2; i++) {
        int16_t o = o16[i];
        if ((in[i] > 0 && o < 0) || (in[i] < 0 && o > 0)) sign_ok = 0; /* wrapped */
        if (o > 29000 || o < -29000) loud++;
    }
    CHECK(sign_ok);
    CHECK(loud > N); /* saturated near full scale, not wrapped to small values */
    CHECK_ST(rtmix_render_f32(e, of, N), RTMIX_OK);
    CHECK(all_finite_in_range(of, N * 2));
    sign_ok = 1;
    for (i = 0; i < N * 2; i++)
        if ((in[i] > 0 && of[i] < 0) || (in[i] < 0 && of[i] > 0)) sign_ok = 0;
    CHECK(sign_ok);
    es = engine_stats(e);
    CHECK(es.limiter_active_frames > 0);
    CHECK(es.limiter_min_gain_db < 0.0f);
    CHECK(es.limiter_gain_db <= 0.0f);
    rtmix_engine_destroy(e);
}

static void test_stats(void) {
    rtmix_engine *e = make_engine(48000, 2, 1024, 4);
    static float in[1024 * 2];
    static float out[1024 * 2];
    rtmix_source_id s;
    rtmix_engine_stats es;
    rtmix_source_stats ss;
    int i;

    SECTION("stats");
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
    for (i = 0; i < 1024 * 2; i++) in[i] = 0.1f;
    for (i = 0; i < 200; i++) {
        CHECK_ST(rtmix_source_push_f32(e, s, in, 480, NULL), RTMIX_OK);
        CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    }
    CHECK_ST(rtmix_render_f32(e, out, 100), RTMIX_OK); /* drained: underrun */
    es = engine_stats(e);
    CHECK_U64(es.size, sizeof es);
    CHECK_U64(es.active_sources, 1);
    CHECK_U64(es.render_calls, 201);
    CHECK_U64(es.frames_rendered, 200 * 480 + 100);
    CHECK_U64(es.underrun_frames, 100);
    CHECK_U64(es.rejected_frames, 0);
    CHECK_U64(es.nonfinite_samples, 0);
    CHECK_U64(es.limiter_active_frames, 0);
    CHECK(es.limiter_gain_db == 0.0f);
    CHECK(es.limiter_min_gain_db == 0.0f);
    CHECK(es.render_ns_last > 0);
    CHECK(es.render_ns_max >= es.render_ns_last);
    CHECK(es.render_ns_p50 > 0);
    CHECK(es.render_ns_p50 <= es.render_ns_p99);
    CHECK(es.render_ns_p99 <= es.render_ns_max);
    if (es.render_ns_p99 > es.render_ns_max)
        printf("  p50 %llu p99 %llu max %llu ns\n", (unsigned long long)es.render_ns_p50,
               (unsigned long long)es.render_ns_p99, (unsigned long long)es.render_ns_max);
    /* documented resolution: a percentile is at most 12.5 % above a real sample */
    CHECK(es.render_ns_p99 <= es.render_ns_max + es.render_ns_max / 8 + 1);
    CHECK_U64(es.sources_added, 1);
    CHECK_U64(es.sources_removed, 0);
    ss = source_stats(e, s);
    CHECK_U64(ss.size, sizeof ss);
    CHECK_U64(ss.frames_pushed, 200 * 480);
    CHECK_U64(ss.frames_consumed, 200 * 480);
    CHECK_U64(ss.frames_rendered, 200 * 480);
    CHECK_U64(ss.underrun_frames, 100);
    CHECK_U64(ss.underrun_events, 1);
    CHECK_U64(ss.buffered_frames, 0);
    CHECK(ss.buffered_ms == 0.0f);

    /* With a single render call every percentile is that call's duration,
     * so none may exceed render_ns_max (= render_ns_last). */
    SECTION("stats_single_render");
    {
        rtmix_engine *e1 = make_engine(48000, 2, 1024, 4);
        rtmix_engine_stats one;
        CHECK_ST(rtmix_render_f32(e1, out, 480), RTMIX_OK);
        one = engine_stats(e1);
        CHECK_U64(one.render_calls, 1);
        CHECK(one.render_ns_max == one.render_ns_last);
        CHECK(one.render_ns_p50 <= one.render_ns_max);
        CHECK(one.render_ns_p99 <= one.render_ns_max);
        if (one.render_ns_p99 > one.render_ns_max)
            printf("  one render: last %llu max %llu p50 %llu p99 %llu ns\n",
                   (unsigned long long)one.render_ns_last, (unsigned long long)one.render_ns_max,
                   (unsigned long long)one.render_ns_p50, (unsigned long long)one.render_ns_p99);
        rtmix_engine_destroy(e1);
    }

    SECTION("stats_size");
    rtmix_engine_stats_init(&es);
    es.size = 112 - 8; /* below the v0 size */
    CHECK_ST(rtmix_engine_get_stats(e, &es), RTMIX_ERR_INVALID_ARGUMENT);
    es.size = 0;
    CHECK_ST(rtmix_engine_get_stats(e, &es), RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_source_stats_init(&ss);
    ss.size = 96 - 4; /* below the v0 size */
    CHECK_ST(rtmix_source_get_stats(e, s, &ss), RTMIX_ERR_INVALID_ARGUMENT);
    ss.size = 0;
    CHECK_ST(rtmix_source_get_stats(e, s, &ss), RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_engine_stats_init(&es);
    CHECK_ST(rtmix_engine_get_stats(NULL, &es), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_get_stats(e, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_source_stats_init(&ss);
    CHECK_ST(rtmix_source_get_stats(NULL, s, &ss), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_get_stats(e, s, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_get_stats(e, 0, &ss), RTMIX_ERR_NOT_FOUND);
    /* A larger (newer) caller struct: the known part is filled, size set
     * to the bytes filled. */
    {
        struct {
            rtmix_engine_stats s;
            uint32_t extra[4];
        } big;
        memset(&big, 0x77, sizeof big);
        big.s.size = (uint32_t)sizeof big;
        CHECK_ST(rtmix_engine_get_stats(e, &big.s), RTMIX_OK);
        CHECK_U64(big.s.size, sizeof(rtmix_engine_stats));
        CHECK_U64(big.s.render_calls, 201);
        CHECK_U64(big.extra[0], 0x77777777u);
    }
    rtmix_engine_destroy(e);
}

/* Producers that deliver exactly one render block's worth of source frames
 * per render call never starve after the resampler has primed. */
static void test_lockstep(void) {
    rtmix_engine *e = make_engine(48000, 2, 1024, 4);
    static float in[441 * 2];
    static float out[480 * 2];
    rtmix_source_id v, m;
    rtmix_source_stats a, b;
    int i, k, ok = 1;

    SECTION("lockstep_no_underrun");
    for (i = 0; i < 441 * 2; i++) in[i] = 0.1f * sinf((float)i * 0.05f);
    v = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    m = add_source(e, RTMIX_DOMAIN_MEDIA, 44100, 2, 0);
    for (k = 0; k < 300; k++) {
        if (rtmix_source_push_f32(e, v, in, 160, NULL) != RTMIX_OK) ok = 0;
        if (rtmix_source_push_f32(e, m, in, 441, NULL) != RTMIX_OK) ok = 0;
        if (rtmix_render_f32(e, out, 480) != RTMIX_OK) ok = 0;
    }
    CHECK(ok);
    a = source_stats(e, v);
    b = source_stats(e, m);
    CHECK_U64(a.frames_pushed, 300 * 160);
    CHECK_U64(b.frames_pushed, 300 * 441);
    CHECK(a.underrun_events <= 1 && a.underrun_frames < 480); /* priming only */
    CHECK(b.underrun_events <= 1 && b.underrun_frames < 480);
    CHECK(a.frames_rendered > 299 * 480);
    CHECK(b.frames_rendered > 299 * 480);
    rtmix_engine_destroy(e);
}

/* The next event that is not RENDER_SLOW. RENDER_SLOW reports a render call
 * that took more than half its block's audio time on CLOCK_MONOTONIC (real
 * CPU time, never the host clock): it can come between any two events on a
 * slow or loaded machine (seen under qemu-user: a first 10 ms block took
 * 12 ms), so sequence checks skip it. */
static int32_t next_event_not_slow(rtmix_engine *e, rtmix_event *ev) {
    int32_t st;
    do {
        st = rtmix_engine_next_event(e, ev);
    } while (st == RTMIX_OK && ev->type == RTMIX_EVENT_RENDER_SLOW);
    return st;
}

static void test_events(void) {
    rtmix_engine *e = make_engine(48000, 1, 4096, 4);
    rtmix_source_id s;
    static float f[1024];
    static float out[4096];
    rtmix_event ev;
    int i;

    SECTION("events");
    for (i = 0; i < 1024; i++) f[i] = 0.2f;
    s = add_source(e, RTMIX_DOMAIN_CALL, 48000, 1, 0);
    CHECK_ST(rtmix_event_init(&ev), RTMIX_OK);
    CHECK_U64(ev.size, sizeof ev);
    CHECK_U64(sizeof ev, 48);
    CHECK_ST(rtmix_engine_next_event(e, &ev), RTMIX_OK);
    CHECK_U64(ev.type, RTMIX_EVENT_NONE);
    CHECK(ev.domain == RTMIX_EVENT_DOMAIN_NONE);
    CHECK_ST(rtmix_source_push_f32(e, s, f, 600, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK); /* 120 frames, 360 missing */
    CHECK_ST(rtmix_source_push_f32(e, s, f, 480, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK); /* resumes */
    CHECK_ST(next_event_not_slow(e, &ev), RTMIX_OK);
    CHECK_U64(ev.type, RTMIX_EVENT_SOURCE_STARTED);
    CHECK_U64(ev.source, s);
    CHECK_U64(ev.value, 600); /* frames it held when it started */
    CHECK_ST(next_event_not_slow(e, &ev), RTMIX_OK);
    CHECK_U64(ev.type, RTMIX_EVENT_UNDERRUN_BEGAN);
    CHECK_U64(ev.source, s);
    CHECK_U64(ev.frame_time, 480);
    CHECK_U64(ev.value, 360);
    CHECK(ev.domain == RTMIX_DOMAIN_CALL);
    CHECK(ev.time_ns > 0); /* CLOCK_MONOTONIC */
    CHECK_U64(ev.suppressed, 0);
    {
        /* A caller with the 0.2 struct (32 bytes) gets the first 32 bytes
         * and nothing past them. */
        unsigned char raw[64];
        rtmix_event *old = (rtmix_event *)(void *)raw;
        memset(raw, 0xA5, sizeof raw);
        old->size = 32;
        CHECK_ST(next_event_not_slow(e, old), RTMIX_OK);
        CHECK_U64(old->size, 32);
        CHECK_U64(old->type, RTMIX_EVENT_UNDERRUN_ENDED);
        CHECK_U64(old->value, 360);
        CHECK(raw[32] == 0xA5 && raw[47] == 0xA5);
    }
    CHECK_ST(next_event_not_slow(e, &ev), RTMIX_OK);
    CHECK_U64(ev.type, RTMIX_EVENT_NONE);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_UNDERRUN_BEGAN), "underrun_began") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_EVENTS_DROPPED), "events_dropped") == 0);
    CHECK(strcmp(rtmix_event_name(99), "unknown") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_RENDER_STALLED), "render_stalled") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_CALL_AUDIO_MISSING), "call_audio_missing") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_LIMITER_HEAVY), "limiter_heavy") == 0);
    /* Bad input. */
    CHECK_ST(rtmix_event_init(NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_next_event(NULL, &ev), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_next_event(e, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    ev.size = 16;
    CHECK_ST(rtmix_engine_next_event(e, &ev), RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_engine_destroy(e);
}

/* ------------------------------------------------------- source timing */

static int pull_calls = 0;
static int32_t pull_frames_seen = 0;
static int32_t test_pull(void *user, float *out, int32_t frames, int32_t channels) {
    float v = *(const float *)user;
    int32_t i;
    pull_calls++;
    pull_frames_seen = frames;
    if (pull_calls > 3) return -1; /* end of stream */
    for (i = 0; i < frames * channels; i++) out[i] = v;
    return frames;
}

static int drain_events(rtmix_engine *e, int32_t type) {
    rtmix_event ev;
    int found = 0;
    rtmix_event_init(&ev);
    for (;;) {
        rtmix_engine_next_event(e, &ev);
        if (ev.type == RTMIX_EVENT_NONE) break;
        if (ev.type == type) found++;
    }
    return found;
}

static void test_source_timing(void) {
    rtmix_engine *e = make_engine_no_duck(48000, 1, 4096, 8); /* levels without ducking (test_ducking) */
    rtmix_source_config sc;
    rtmix_source_id s = 0, p = 0, v = 0;
    rtmix_source_position pos;
    rtmix_source_stats ss;
    uint32_t frames = 0, acc = 0;
    static float in[48000], out[4800];
    float pull_value = 0.25f;
    int i, silent;

    SECTION("source_timing_args");
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 48000, 1);
    CHECK_ST(rtmix_source_add(e, &sc, &s), RTMIX_OK);
    CHECK_ST(rtmix_source_set_paused(NULL, s, 1), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_set_paused(e, 9999, 1), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_flush(NULL, s), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_flush(e, 0), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_end(NULL, s), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_end(e, 9999), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_writable_frames(NULL, s, &frames), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_writable_frames(e, s, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_writable_frames(e, 9999, &frames), RTMIX_ERR_NOT_FOUND);
    CHECK_ST(rtmix_source_position_init(NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_position_init(&pos), RTMIX_OK);
    CHECK_U64(pos.size, sizeof pos);
    CHECK_U64(sizeof pos, 40);
    CHECK_ST(rtmix_source_get_position(NULL, s, &pos), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_get_position(e, s, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_get_position(e, 9999, &pos), RTMIX_ERR_NOT_FOUND);
    pos.size = 39;
    CHECK_ST(rtmix_source_get_position(e, s, &pos), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_set_output_latency_ns(NULL, 1), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_set_interrupted(NULL, 1), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_add_pull(e, &sc, NULL, NULL, &p), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_add_pull(NULL, &sc, test_pull, &pull_value, &p), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_add_pull(e, NULL, test_pull, &pull_value, &p), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_source_add_pull(e, &sc, test_pull, &pull_value, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(p == 0); /* untouched on failure */

    SECTION("source_timing_defaults");
    /* Defaults: media primes to 100 ms before it starts. */
    for (i = 0; i < 48000; i++) in[i] = 0.5f;
    CHECK_ST(rtmix_source_writable_frames(e, s, &frames), RTMIX_OK);
    CHECK_U64(frames, 32768); /* 400 ms rounded up to a power of two */
    CHECK_ST(rtmix_source_push_f32(e, s, in, 2400, &acc), RTMIX_OK);
    render_discard(e, 1, 480, 480);
    ss = source_stats(e, s);
    CHECK_U64(ss.state, RTMIX_SOURCE_STATE_PRIMING);
    CHECK_U64(ss.underrun_frames, 0);
    CHECK(ss.target_ms == 100.0f);
    CHECK(ss.effective_target_ms == 100.0f); /* no delivery jitter seen */
    CHECK_ST(rtmix_source_push_f32(e, s, in, 4800, &acc), RTMIX_OK);
    render_discard(e, 1, 480, 480);
    ss = source_stats(e, s);
    CHECK_U64(ss.state, RTMIX_SOURCE_STATE_PLAYING);
    CHECK(drain_events(e, RTMIX_EVENT_SOURCE_STARTED) == 1);

    SECTION("source_position");
    CHECK_ST(rtmix_engine_set_output_latency_ns(e, 20000000), RTMIX_OK);
    rtmix_source_position_init(&pos);
    CHECK_ST(rtmix_source_get_position(e, s, &pos), RTMIX_OK);
    CHECK_U64(pos.sample_rate, 48000);
    CHECK(pos.frames_played > 0 && pos.frames_played <= 480);
    CHECK(pos.render_time_ns > 0);
    /* A frame pushed now waits behind ~6700 buffered frames + the block. */
    CHECK(pos.latency_ns > 130000000ull && pos.latency_ns < 160000000ull);
    CHECK_U64(pos.output_latency_ns, 20000000);

    SECTION("source_pause");
    CHECK_ST(rtmix_source_set_paused(e, s, 1), RTMIX_OK);
    ss = source_stats(e, s);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    silent = 1;
    for (i = 96; i < 480; i++) if (out[i] != 0.0f) silent = 0;
    CHECK(silent); /* after the 2 ms fade */
    {
        rtmix_source_stats after = source_stats(e, s);
        CHECK_U64(after.buffered_frames, ss.buffered_frames); /* ring untouched */
        CHECK_U64(after.state, RTMIX_SOURCE_STATE_PAUSED);
        CHECK_U64(after.paused, 1);
        CHECK_U64(after.underrun_frames, 0);
    }
    CHECK_ST(rtmix_source_set_paused(e, s, 0), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK(out[0] < 0.1f && fabsf(out[479] - 0.5f) < 0.001f); /* fades back in */

    SECTION("source_flush");
    CHECK_ST(rtmix_source_flush(e, s), RTMIX_OK);
    render_discard(e, 1, 480, 480);
    ss = source_stats(e, s);
    CHECK(ss.frames_flushed > 5000);
    CHECK_U64(ss.buffered_frames, 0);
    CHECK_U64(ss.state, RTMIX_SOURCE_STATE_PRIMING);

    SECTION("source_end");
    CHECK_ST(rtmix_source_push_f32(e, s, in, 1000, &acc), RTMIX_OK);
    CHECK_ST(rtmix_source_end(e, s), RTMIX_OK);
    CHECK_ST(rtmix_source_push_f32(e, s, in, 10, &acc), RTMIX_ERR_BAD_STATE);
    CHECK_U64(acc, 0);
    render_discard(e, 1, 4800, 480);
    ss = source_stats(e, s);
    CHECK_U64(ss.state, RTMIX_SOURCE_STATE_DRAINED);
    CHECK_U64(ss.ended, 1);
    CHECK_U64(ss.underrun_events, 0);
    CHECK(drain_events(e, RTMIX_EVENT_SOURCE_DRAINED) == 1);

    SECTION("source_drop_oldest");
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_CALL, 16000, 1);
    sc.buffer_frames = 4096;
    CHECK_ST(rtmix_source_add(e, &sc, &v), RTMIX_OK);
    for (i = 0; i < 10; i++) {
        CHECK_ST(rtmix_source_push_f32(e, v, in, 3200, &acc), RTMIX_OK);
        CHECK_U64(acc, 3200); /* call: every push is taken */
    }
    render_discard(e, 1, 480, 480);
    ss = source_stats(e, v);
    CHECK(ss.buffered_ms <= 61.0f && ss.buffered_ms >= 40.0f); /* dropped to the 40 ms target + one push (<= 20 ms) */
    CHECK(ss.frames_dropped > 20000);
    CHECK_U64(ss.frames_rejected, 0);
    CHECK(drain_events(e, RTMIX_EVENT_AUDIO_DROPPED) >= 1);
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_CALL, 16000, 1);
    sc.overrun_policy = RTMIX_OVERRUN_REJECT;
    sc.buffer_frames = 4096;
    CHECK_ST(rtmix_source_remove(e, v), RTMIX_OK);
    CHECK_ST(rtmix_source_add(e, &sc, &v), RTMIX_OK);
    CHECK_ST(rtmix_source_push_f32(e, v, in, 5000, &acc), RTMIX_ERR_BUFFER_FULL);
    CHECK_U64(acc, 4096);

    SECTION("source_pull");
    CHECK_ST(rtmix_source_remove(e, s), RTMIX_OK);
    CHECK_ST(rtmix_source_remove(e, v), RTMIX_OK);
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_CALL, 48000, 1);
    CHECK_ST(rtmix_source_add_pull(e, &sc, test_pull, &pull_value, &p), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK(pull_calls == 1 && pull_frames_seen == 480); /* exactly the block */
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK); /* (the removed sources faded out) */
    CHECK(pull_calls == 2 && pull_frames_seen == 480);
    CHECK(fabsf(out[100] - 0.25f) < 1e-6f);
    CHECK_ST(rtmix_source_push_f32(e, p, in, 10, &acc), RTMIX_ERR_BAD_STATE);
    CHECK_ST(rtmix_source_flush(e, p), RTMIX_ERR_BAD_STATE);
    CHECK_ST(rtmix_source_end(e, p), RTMIX_ERR_BAD_STATE);
    render_discard(e, 1, 480 * 3, 480);
    ss = source_stats(e, p);
    CHECK_U64(ss.pull, 1);
    CHECK_U64(ss.state, RTMIX_SOURCE_STATE_DRAINED); /* the callback ended it */
    CHECK_U64(ss.underrun_frames, 0);

    SECTION("interrupted");
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 48000, 1);
    CHECK_ST(rtmix_source_add(e, &sc, &s), RTMIX_OK);
    CHECK_ST(rtmix_source_push_f32(e, s, in, 24000, &acc), RTMIX_OK);
    render_discard(e, 1, 4800, 480);
    CHECK_ST(rtmix_engine_set_interrupted(e, 1), RTMIX_OK);
    ss = source_stats(e, s);
    /* Silence from the first render on: no fade-out tail (issue 18). */
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    silent = 1;
    for (i = 0; i < 480; i++) if (out[i] != 0.0f) silent = 0;
    CHECK(silent);
    render_discard(e, 1, 4800, 480); /* a host that keeps rendering: silence */
    {
        rtmix_source_stats after = source_stats(e, s);
        CHECK_U64(after.frames_consumed, ss.frames_consumed); /* nothing consumed */
    }
    CHECK_ST(rtmix_engine_set_interrupted(e, 0), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK(out[0] < 0.1f && fabsf(out[479] - 0.5f) < 0.01f); /* media resumes, fading in */
    rtmix_engine_destroy(e);
}

/* Ducking: media lowered by duck_depth_db while call voice is active,
 * composed with the media volume; depth 0 = off, bit-exact. */
static rtmix_engine *make_duck_engine(float depth_db) {
    rtmix_engine_config cfg;
    rtmix_engine *e = NULL;
    rtmix_engine_config_init(&cfg);
    cfg.sample_rate = 48000;
    cfg.channels = 1;
    cfg.max_frames = 480;
    cfg.max_sources = 4;
    cfg.duck_depth_db = depth_db;
    if (rtmix_engine_create(&cfg, &e) != RTMIX_OK) {
        printf("FATAL: cannot create engine (duck %g dB)\n", (double)depth_db);
        exit(2);
    }
    return e;
}

static void test_ducking(void) {
    static float c[480], m[480], out[480];
    rtmix_engine *e = make_duck_engine(-12.0f);
    rtmix_engine *off = make_duck_engine(0.0f);
    rtmix_source_id ce, me, co, mo;
    rtmix_engine_stats es;
    int i, k, exact = 1;
    float g, before = 0;

    SECTION("ducking");
    for (i = 0; i < 480; i++) { c[i] = 0.1f; m[i] = 0.5f; }
    ce = add_source(e, RTMIX_DOMAIN_CALL, 48000, 1, 0);
    me = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 1, 0);
    co = add_source(off, RTMIX_DOMAIN_CALL, 48000, 1, 0);
    mo = add_source(off, RTMIX_DOMAIN_MEDIA, 48000, 1, 0);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, 0.5f), RTMIX_OK);
    for (k = 0; k < 100; k++) { /* 1 s of call voice over media */
        CHECK_ST(rtmix_source_push_f32(e, ce, c, 480, NULL), RTMIX_OK);
        CHECK_ST(rtmix_source_push_f32(e, me, m, 480, NULL), RTMIX_OK);
        CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
        if (k == 0) before = out[0];
        CHECK_ST(rtmix_source_push_f32(off, co, c, 480, NULL), RTMIX_OK);
        CHECK_ST(rtmix_source_push_f32(off, mo, m, 480, NULL), RTMIX_OK);
        CHECK_ST(rtmix_render_f32(off, out + 0, 480), RTMIX_OK);
        for (i = 0; i < 480; i++) exact &= out[i] == 0.1f + 0.5f;
        CHECK_ST(rtmix_render_f32(e, out, 0), RTMIX_ERR_INVALID_ARGUMENT); /* bad input: nothing changes */
    }
    CHECK(exact); /* depth 0: the plain sum, bit for bit */
    /* The last block of `e` again, to read its level. */
    CHECK_ST(rtmix_source_push_f32(e, ce, c, 480, NULL), RTMIX_OK);
    CHECK_ST(rtmix_source_push_f32(e, me, m, 480, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    g = (out[479] - 0.1f) / (0.5f * 0.5f); /* media share / (media x volume) */
    CHECK(fabsf(20.0f * log10f(g) + 12.0f) < 0.5f);
    CHECK(before > 0.1f + 0.25f * 0.99f); /* the first frame: the duck only starts */
    es = engine_stats(e);
    CHECK(fabsf(es.duck_gain_db + 12.0f) < 0.01f);
    CHECK(es.ducked_frames >= 48000);
    es = engine_stats(off);
    CHECK(es.duck_gain_db == 0.0f);
    CHECK_U64(es.ducked_frames, 0);
    rtmix_engine_destroy(off);
    rtmix_engine_destroy(e);
}

/* Alarms on a host clock: render stalled/resumed, call audio missing, the
 * limiter heavily engaged, and the rate limit of an event storm. */
static uint64_t alarm_now_ns = 0;
static uint64_t alarm_clock(void *user) {
    (void)user;
    return alarm_now_ns;
}

static int drain_count(rtmix_engine *e, int32_t type, rtmix_event *last) {
    rtmix_event ev;
    int n = 0;
    rtmix_event_init(&ev);
    while (rtmix_engine_next_event(e, &ev) == RTMIX_OK && ev.type != RTMIX_EVENT_NONE) {
        if (ev.type == type) {
            n++;
            if (last) *last = ev;
        }
    }
    return n;
}

static void alarm_render(rtmix_engine *e, rtmix_source_id s, const float *f, uint32_t push, int blocks) {
    static float out[480];
    int k;
    for (k = 0; k < blocks; k++) {
        if (push) rtmix_source_push_f32(e, s, f, push, NULL);
        CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
        alarm_now_ns += 10000000ull;
    }
}

static void test_alarms(void) {
    static float f[480], loud[480];
    rtmix_engine *e = make_engine(48000, 1, 480, 4);
    rtmix_source_id s, media;
    rtmix_event ev;
    rtmix_engine_stats es;
    uint64_t last_render;
    int i;

    SECTION("alarms");
    for (i = 0; i < 480; i++) { f[i] = 0.3f * (i % 2 ? 1.0f : -1.0f); loud[i] = 3.0f; }
    alarm_now_ns = 1000000000ull;
    CHECK_ST(rtmix_engine_set_clock(e, alarm_clock, NULL), RTMIX_OK);
    s = add_source(e, RTMIX_DOMAIN_CALL, 48000, 1, 0);

    /* Render stalled (control side) and resumed (render side). */
    alarm_render(e, s, f, 480, 100);
    CHECK(drain_count(e, RTMIX_EVENT_RENDER_STALLED, NULL) == 0);
    last_render = alarm_now_ns - 10000000ull;
    alarm_now_ns = last_render + 90000000ull; /* a burst gap (the floor is 100 ms) */
    CHECK(drain_count(e, RTMIX_EVENT_RENDER_STALLED, NULL) == 0);
    alarm_now_ns = last_render + 110000000ull;
    CHECK(drain_count(e, RTMIX_EVENT_RENDER_STALLED, &ev) == 1);
    CHECK_U64(ev.value, 110000000);
    CHECK_U64(ev.time_ns, alarm_now_ns);
    CHECK(ev.domain == RTMIX_EVENT_DOMAIN_NONE);
    CHECK(drain_count(e, RTMIX_EVENT_RENDER_STALLED, NULL) == 0); /* once */
    alarm_now_ns += 190000000ull;
    alarm_render(e, s, f, 480, 1);
    CHECK(drain_count(e, RTMIX_EVENT_RENDER_RESUMED, &ev) == 1);
    CHECK_U64(ev.value, 300000000);

    /* Call audio missing: the host stops feeding the call source. */
    alarm_render(e, s, f, 480, 50);
    alarm_render(e, s, f, 0, 199);
    CHECK(drain_count(e, RTMIX_EVENT_CALL_AUDIO_MISSING, NULL) == 0);
    alarm_render(e, s, f, 0, 2);
    CHECK(drain_count(e, RTMIX_EVENT_CALL_AUDIO_MISSING, &ev) == 1);
    CHECK_U64(ev.value, RTMIX_CALL_MISSING_NOT_FED);
    CHECK_U64(ev.source, s);
    CHECK(ev.domain == RTMIX_DOMAIN_CALL);
    /* Muted while fed: cause MUTED, after re-arming on audible audio. */
    alarm_render(e, s, f, 480, 10);
    CHECK_ST(rtmix_source_set_muted(e, s, 1), RTMIX_OK);
    alarm_render(e, s, f, 480, 210);
    CHECK(drain_count(e, RTMIX_EVENT_CALL_AUDIO_MISSING, &ev) == 1);
    CHECK_U64(ev.value, RTMIX_CALL_MISSING_MUTED);
    CHECK_ST(rtmix_source_set_muted(e, s, 0), RTMIX_OK);

    /* Limiter heavily engaged: once per episode. */
    media = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 1, 0);
    alarm_render(e, media, loud, 480, 20);
    CHECK(drain_count(e, RTMIX_EVENT_LIMITER_HEAVY, &ev) == 1);
    CHECK(ev.value < -600);
    CHECK(ev.source == 0);
    CHECK_ST(rtmix_source_remove(e, media), RTMIX_OK);

    /* A storm (an underrun every block for 3 s) is rate-limited. */
    alarm_render(e, s, f, 240, 300);
    CHECK(drain_count(e, RTMIX_EVENT_UNDERRUN_BEGAN, &ev) <= 41);
    es = engine_stats(e);
    CHECK(es.events_suppressed >= 200);
    CHECK(ev.suppressed > 0);
    CHECK_ST(rtmix_engine_set_clock(e, NULL, NULL), RTMIX_OK);
    rtmix_engine_destroy(e);
}

static void test_output_format(void) {
    rtmix_engine *e = make_engine(48000, 2, 4096, 4);
    rtmix_engine_config got;
    rtmix_source_id s;
    static float f[4800 * 2];
    static float out[4096 * 2];
    int i;

    SECTION("output_format");
    for (i = 0; i < 4800 * 2; i++) f[i] = 0.25f;
    s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
    CHECK_ST(rtmix_source_push_f32(e, s, f, 4800, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    /* Route change to Bluetooth HFP: 16 kHz mono. */
    CHECK_ST(rtmix_engine_set_output_format(e, 16000, 1), RTMIX_OK);
    rtmix_engine_config_init(&got);
    CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
    CHECK_U64(got.sample_rate, 16000);
    CHECK_U64(got.channels, 1);
    for (i = 0; i < 5; i++) CHECK_ST(rtmix_render_f32(e, out, 160), RTMIX_OK); /* 4320 frames left: enough */
    CHECK(fabsf(out[100] - 0.25f) < 0.001f); /* a constant survives resampling */
    /* Bad input changes nothing. */
    CHECK_ST(rtmix_engine_set_output_format(e, 7999, 1), RTMIX_ERR_UNSUPPORTED_FORMAT);
    CHECK_ST(rtmix_engine_set_output_format(e, 16000, 3), RTMIX_ERR_UNSUPPORTED_FORMAT);
    CHECK_ST(rtmix_engine_set_output_format(NULL, 16000, 1), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
    CHECK_U64(got.sample_rate, 16000);
    /* And back. */
    CHECK_ST(rtmix_engine_set_output_format(e, 48000, 2), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK); /* drains the rest */
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK_ST(rtmix_engine_set_output_format(e, 16000, 2), RTMIX_OK); /* restart: no fade-in pending */
    CHECK_ST(rtmix_engine_set_output_format(e, 48000, 2), RTMIX_OK);
    CHECK_ST(rtmix_source_push_f32(e, s, f, 480, NULL), RTMIX_OK);
    CHECK_ST(rtmix_render_f32(e, out, 480), RTMIX_OK);
    CHECK(out[0] == 0.25f && out[1] == 0.25f); /* bypass again: bit-exact */
    rtmix_engine_destroy(e);
}

/* ---------------------------------------------------------------- capture */

static rtmix_engine *make_capture_engine(uint32_t rate, uint32_t channels, uint32_t max_frames,
                                         uint32_t capture_rate, uint32_t capture_channels,
                                         uint32_t aec_tail_ms, int suppression) {
    rtmix_engine_config cfg;
    rtmix_engine *e = NULL;
    int32_t st;
    rtmix_engine_config_init(&cfg);
    cfg.sample_rate = rate;
    cfg.channels = channels;
    cfg.max_frames = max_frames;
    cfg.max_sources = 8;
    cfg.capture_rate = capture_rate;
    cfg.capture_channels = capture_channels;
    cfg.aec_tail_ms = aec_tail_ms;
    cfg.noise_suppression = suppression;
    cfg.echo_suppression = suppression;
    cfg.agc = 0;
    st = rtmix_engine_create(&cfg, &e);
    if (st != RTMIX_OK) {
        printf("FATAL: cannot create capture engine %u Hz/%u ch, capture %u Hz/%u ch: %d\n", rate,
               channels, capture_rate, capture_channels, (int)st);
        exit(2);
    }
    return e;
}

static void test_capture_config(void) {
    rtmix_engine_config base, c, got;
    rtmix_engine *e = NULL;

    SECTION("capture_config");
    rtmix_engine_config_init(&base);
    /* Defaults: capture off, mono, 200 ms tail, suppression on, no AGC. */
    CHECK_U64(base.capture_rate, 0);
    CHECK_U64(base.capture_channels, 1);
    CHECK_U64(base.aec_tail_ms, 200);
    CHECK_U64(base.noise_suppression, 1);
    CHECK_U64(base.echo_suppression, 1);
    CHECK_U64(base.agc, 0);
    base.capture_rate = 16000;

#define TRY_CAPTURE(field, value, want)                                        \
    do {                                                                       \
        c = base;                                                              \
        c.field = (value);                                                     \
        expect_create(&c, (want), "capture: " #field " = " #value);            \
    } while (0)

    TRY_CAPTURE(capture_rate, 7999, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_rate, 48001, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_rate, 22, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_rate, 96000, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_rate, 0xFFFFFFFFu, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_channels, 0, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_channels, 3, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(aec_tail_ms, 5, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_CAPTURE(aec_tail_ms, 9, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_CAPTURE(aec_tail_ms, 1001, RTMIX_ERR_INVALID_ARGUMENT);
    TRY_CAPTURE(aec_tail_ms, 0xFFFFFFFFu, RTMIX_ERR_INVALID_ARGUMENT);
    /* 2^31 and up: Int(UInt32) traps on a 32-bit target (armhf under qemu
     * died here with an illegal instruction before CConversion.int). */
    TRY_CAPTURE(capture_rate, 0x80000000u, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_channels, 0x80000000u, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(capture_channels, 0xFFFFFFFFu, RTMIX_ERR_UNSUPPORTED_FORMAT);
    TRY_CAPTURE(aec_tail_ms, 0x80000000u, RTMIX_ERR_INVALID_ARGUMENT);
    /* Valid boundaries and switches. */
    TRY_CAPTURE(capture_rate, 8000, RTMIX_OK);
    TRY_CAPTURE(capture_rate, 11025, RTMIX_OK);
    TRY_CAPTURE(capture_rate, 44100, RTMIX_OK);
    TRY_CAPTURE(capture_rate, 48000, RTMIX_OK);
    TRY_CAPTURE(capture_channels, 2, RTMIX_OK);
    TRY_CAPTURE(aec_tail_ms, 0, RTMIX_OK);
    TRY_CAPTURE(aec_tail_ms, 10, RTMIX_OK);
    TRY_CAPTURE(aec_tail_ms, 1000, RTMIX_OK);
    TRY_CAPTURE(noise_suppression, 0, RTMIX_OK);
    TRY_CAPTURE(echo_suppression, 0, RTMIX_OK);
    TRY_CAPTURE(agc, 1, RTMIX_OK);
#undef TRY_CAPTURE
    /* Extreme output rates with capture: the tap converts 8..192 kHz. */
    c = base;
    c.sample_rate = 8000;
    c.capture_rate = 48000;
    expect_create(&c, RTMIX_OK, "capture: 8 kHz output, 48 kHz capture");
    c.sample_rate = 192000;
    c.capture_rate = 8000;
    expect_create(&c, RTMIX_OK, "capture: 192 kHz output, 8 kHz capture");

    /* get_config reports the capture fields. */
    c = base;
    c.capture_rate = 32000;
    c.capture_channels = 2;
    c.aec_tail_ms = 300;
    c.noise_suppression = 0;
    c.echo_suppression = 1;
    c.agc = 1;
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    if (e != NULL) {
        rtmix_engine_config_init(&got);
        CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
        CHECK_U64(got.capture_rate, 32000);
        CHECK_U64(got.capture_channels, 2);
        CHECK_U64(got.aec_tail_ms, 300);
        CHECK_U64(got.noise_suppression, 0);
        CHECK_U64(got.echo_suppression, 1);
        CHECK_U64(got.agc, 1);
        /* A v0 (36-byte) caller gets the v0 fields only. */
        memset(&got, 0x5A, sizeof got);
        got.size = 36;
        CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
        CHECK_U64(got.sample_rate, 48000);
        CHECK_U64(got.capture_rate, 0x5A5A5A5Au);
        rtmix_engine_destroy(e);
        e = NULL;
    }

    /* A v0 (36-byte) config: the capture fields past its size are not
     * read, capture stays off even if the memory behind says 16000. */
    SECTION("capture_v0_config");
    c = base;
    c.size = 36;
    c.capture_rate = 16000; /* beyond size: must be ignored */
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    if (e != NULL) {
        float mic[160] = {0}, out[160];
        rtmix_engine_stats es;
        int i, zero = 1;
        for (i = 0; i < 160; i++) out[i] = 0.5f;
        CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_ERR_BAD_STATE);
        for (i = 0; i < 160; i++) zero &= out[i] == 0.0f;
        CHECK(zero);
        CHECK_ST(rtmix_set_stream_delay_ms(e, 40), RTMIX_ERR_BAD_STATE);
        CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, 0.5f), RTMIX_ERR_BAD_STATE);
        rtmix_engine_config_init(&got);
        CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
        CHECK_U64(got.capture_rate, 0);
        es = engine_stats(e);
        CHECK_U64(es.capture_calls, 0);
        CHECK_U64(es.capture_rate, 0);
        rtmix_engine_destroy(e);
        e = NULL;
    }

    /* Capture off with an out-of-range capture_channels: either create
     * refuses it, or a refused capture call writes no more than the
     * largest legal layout (frames x 2). Today create accepts it and the
     * BAD_STATE zero-fill writes frames x capture_channels samples. */
    SECTION("capture_off_channels");
    c = base;
    c.capture_rate = 0;
    c.capture_channels = 3;
    {
        int32_t st = rtmix_engine_create(&c, &e);
        CHECK(st == RTMIX_OK || st == RTMIX_ERR_UNSUPPORTED_FORMAT);
        if (st == RTMIX_OK && e != NULL) {
            float mic[64] = {0}, out[64];
            int i, beyond = 0;
            for (i = 0; i < 64; i++) out[i] = 7.0f;
            CHECK_ST(rtmix_capture_process_f32(e, mic, out, 16), RTMIX_ERR_BAD_STATE);
            for (i = 32; i < 64; i++) beyond += out[i] != 7.0f;
            if (beyond != 0) printf("  capture off, capture_channels 3: %d samples written past frames x 2\n", beyond);
            CHECK(beyond == 0);
            rtmix_engine_destroy(e);
            e = NULL;
        }
    }
}

static uint64_t fake_now_ns = 0;
static int fake_clock_calls = 0;
static uint64_t fake_clock(void *user) {
    fake_clock_calls += user == (void *)&fake_now_ns;
    return fake_now_ns;
}

/* rtmix_engine_set_clock: bad inputs, and the host clock is what both
 * sides read. */
static void test_capture_clock(void) {
    rtmix_engine *e = make_capture_engine(16000, 1, 480, 16000, 1, 200, 1);
    rtmix_engine *off = make_engine(16000, 1, 480, 4);
    rtmix_source_id s = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    static float f[160], play[160], out[160];
    int k;

    SECTION("capture_clock");
    CHECK_ST(rtmix_engine_set_clock(NULL, fake_clock, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_engine_set_clock(off, fake_clock, NULL), RTMIX_OK); /* the engine clock (stall detection, positions) */
    CHECK_ST(rtmix_engine_set_clock(off, NULL, NULL), RTMIX_OK);
    CHECK_ST(rtmix_engine_set_clock(e, fake_clock, &fake_now_ns), RTMIX_OK);
    for (k = 0; k < 50; k++) {
        fake_now_ns = 1000000000ull + (uint64_t)k * 10000000ull;
        rtmix_source_push_f32(e, s, f, 160, NULL);
        CHECK_ST(rtmix_render_f32(e, play, 160), RTMIX_OK);
        CHECK_ST(rtmix_capture_process_f32(e, f, out, 160), RTMIX_OK);
    }
    CHECK(fake_clock_calls >= 50); /* read with its user pointer */
    CHECK_ST(rtmix_engine_set_clock(e, NULL, NULL), RTMIX_OK); /* back to CLOCK_MONOTONIC */
    k = fake_clock_calls;
    rtmix_source_push_f32(e, s, f, 160, NULL);
    CHECK_ST(rtmix_render_f32(e, play, 160), RTMIX_OK);
    CHECK_ST(rtmix_capture_process_f32(e, f, out, 160), RTMIX_OK);
    CHECK(fake_clock_calls == k);
    rtmix_engine_destroy(off);
    rtmix_engine_destroy(e);
}

static void test_capture_args(void) {
    rtmix_engine *e = make_capture_engine(48000, 2, 480, 16000, 1, 200, 1);
    rtmix_engine *off = make_engine(48000, 2, 480, 4);
    static float mic[1024], out[1024];
    static int16_t mic16[1024], out16[1024];
    rtmix_engine_stats es;
    float g;
    int i, ok;

    SECTION("capture_args");
    for (i = 0; i < 1024; i++) {
        mic[i] = 0.1f;
        mic16[i] = 1000;
    }
    /* NULL engine / mic / out. */
    CHECK_ST(rtmix_capture_process_f32(NULL, mic, out, 160), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_f32(e, NULL, out, 160), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_f32(e, mic, NULL, 160), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_s16(NULL, mic16, out16, 160), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_s16(e, NULL, out16, 160), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_s16(e, mic16, NULL, 160), RTMIX_ERR_INVALID_ARGUMENT);
    /* frames 0. */
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 0), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_s16(e, mic16, out16, 0), RTMIX_ERR_INVALID_ARGUMENT);
    /* frames > max_frames: out untouched. */
    for (i = 0; i < 1024; i++) out[i] = 0.75f;
    for (i = 0; i < 1024; i++) out16[i] = 1234;
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 481), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_capture_process_s16(e, mic16, out16, 481), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 0xFFFFFFFFu), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 0x80000000u), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_capture_process_s16(e, mic16, out16, 0xFFFFFFFFu), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_capture_process_s16(e, mic16, out16, 0x80000000u), RTMIX_ERR_TOO_MANY_FRAMES);
    ok = 1;
    for (i = 0; i < 1024; i++) ok &= out[i] == 0.75f && out16[i] == 1234;
    CHECK(ok);
    /* Nothing was counted. */
    es = engine_stats(e);
    CHECK_U64(es.capture_calls, 0);
    CHECK_U64(es.capture_frames, 0);
    CHECK_U64(es.capture_rate, 16000);
    /* The largest legal call works. */
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 480), RTMIX_OK);
    CHECK(all_finite_in_range(out, 480));

    /* Capture off: BAD_STATE, out zero-filled (f32 and s16). */
    SECTION("capture_off");
    for (i = 0; i < 1024; i++) out[i] = 0.75f;
    for (i = 0; i < 1024; i++) out16[i] = 1234;
    CHECK_ST(rtmix_capture_process_f32(off, mic, out, 160), RTMIX_ERR_BAD_STATE);
    CHECK_ST(rtmix_capture_process_s16(off, mic16, out16, 160), RTMIX_ERR_BAD_STATE);
    ok = 1;
    for (i = 0; i < 160; i++) ok &= out[i] == 0.0f && out16[i] == 0;
    CHECK(ok);
    ok = 1; /* and nothing past frames x capture_channels (1) */
    for (i = 160; i < 1024; i++) ok &= out[i] == 0.75f && out16[i] == 1234;
    CHECK(ok);
    CHECK_ST(rtmix_capture_process_f32(off, mic, out, 481), RTMIX_ERR_TOO_MANY_FRAMES);
    CHECK_ST(rtmix_capture_process_f32(off, mic, out, 0), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_set_stream_delay_ms(off, 40), RTMIX_ERR_BAD_STATE);
    CHECK_ST(rtmix_set_stream_delay_ms(off, -2), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(off, RTMIX_DOMAIN_MEDIA, 0.5f), RTMIX_ERR_BAD_STATE);
    CHECK_ST(rtmix_domain_set_publish_gain(off, RTMIX_DOMAIN_CALL, 0.5f), RTMIX_ERR_INVALID_ARGUMENT);
    g = -1.0f;
    CHECK_ST(rtmix_domain_get_publish_gain(off, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.0f);
    es = engine_stats(off);
    CHECK_U64(es.capture_calls, 0);
    CHECK_U64(es.capture_rate, 0);
    CHECK(es.aec_delay_source == RTMIX_DELAY_SOURCE_NONE);

    /* Stream delay: range -1..1000; bad values change nothing. */
    SECTION("stream_delay");
    CHECK_ST(rtmix_set_stream_delay_ms(NULL, 40), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_set_stream_delay_ms(e, 40), RTMIX_OK);
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK); /* applies the hint */
    es = engine_stats(e);
    CHECK(es.aec_delay_source == RTMIX_DELAY_SOURCE_HINT);
    CHECK(fabsf(es.aec_delay_ms - 40.0f) < 0.01f);
    CHECK_ST(rtmix_set_stream_delay_ms(e, -2), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_set_stream_delay_ms(e, 1001), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_set_stream_delay_ms(e, INT32_MIN), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_set_stream_delay_ms(e, INT32_MAX), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK);
    es = engine_stats(e);
    CHECK(es.aec_delay_source == RTMIX_DELAY_SOURCE_HINT);
    CHECK(fabsf(es.aec_delay_ms - 40.0f) < 0.01f);
    CHECK_U64(es.aec_delay_changes, 0);
    /* Within 4 ms of the applied hint: no change. */
    CHECK_ST(rtmix_set_stream_delay_ms(e, 43), RTMIX_OK);
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK);
    es = engine_stats(e);
    CHECK(fabsf(es.aec_delay_ms - 40.0f) < 0.01f);
    /* Boundaries are accepted; a new hint moves the delay (and counts). */
    CHECK_ST(rtmix_set_stream_delay_ms(e, 1000), RTMIX_OK);
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK);
    es = engine_stats(e);
    CHECK(fabsf(es.aec_delay_ms - 1000.0f) < 0.01f);
    CHECK_U64(es.aec_delay_changes, 1);
    CHECK_ST(rtmix_set_stream_delay_ms(e, 0), RTMIX_OK);
    CHECK_ST(rtmix_set_stream_delay_ms(e, -1), RTMIX_OK); /* unknown */

    /* Publish gain: MEDIA only, 0..RTMIX_MAX_GAIN. */
    SECTION("publish_gain");
    g = -1.0f;
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.0f); /* default */
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, 0.5f), RTMIX_OK);
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.5f);
    CHECK_ST(rtmix_domain_set_publish_gain(NULL, RTMIX_DOMAIN_MEDIA, 0.25f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_CALL, 0.25f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_CALL, 0.0f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, (rtmix_domain)2, 0.25f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, (rtmix_domain)-1, 0.25f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, NAN), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, INFINITY), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, -INFINITY), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, -0.01f), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, RTMIX_MAX_GAIN * 1.001f),
             RTMIX_ERR_INVALID_ARGUMENT);
    g = -1.0f;
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.5f); /* unchanged by every refused call */
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_CALL, &g), RTMIX_OK);
    CHECK(g == 0.0f);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, RTMIX_MAX_GAIN), RTMIX_OK);
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == RTMIX_MAX_GAIN);
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, 0.0f), RTMIX_OK);
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_MEDIA, &g), RTMIX_OK);
    CHECK(g == 0.0f);
    CHECK_ST(rtmix_domain_get_publish_gain(NULL, RTMIX_DOMAIN_MEDIA, &g), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_get_publish_gain(e, RTMIX_DOMAIN_MEDIA, NULL), RTMIX_ERR_INVALID_ARGUMENT);
    CHECK_ST(rtmix_domain_get_publish_gain(e, (rtmix_domain)2, &g), RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_engine_destroy(e);
    rtmix_engine_destroy(off);
}

/* Canceller and suppression off: the capture path is a pass-through (the
 * int16 conversion is the only change), so s16 round-trips bit-exact. */
static void test_capture_passthrough(void) {
    rtmix_engine *e = make_capture_engine(48000, 2, 1024, 16000, 1, 0, 0);
    rtmix_engine *st2 = make_capture_engine(16000, 1, 1024, 16000, 2, 0, 0);
    static int16_t mic16[1024 * 2], out16[1024 * 2];
    static float mic[1024 * 2], out[1024 * 2];
    rtmix_engine_stats es;
    rtmix_event ev;
    int i, k, ok;

    SECTION("capture_s16_roundtrip");
    ok = 1;
    {
        int near = 1, first_bad = -1;
        for (k = 0; k < 20; k++) {
            for (i = 0; i < 160; i++) mic16[i] = (int16_t)((k * 160 + i) * 37 % 65536 - 32768);
            mic16[0] = -32768;
            mic16[1] = 32767;
            CHECK_ST(rtmix_capture_process_s16(e, mic16, out16, 160), RTMIX_OK);
            for (i = 0; i < 160; i++) {
                if (out16[i] != mic16[i] && first_bad < 0) {
                    first_bad = i;
                    printf("  s16 round trip: in %d -> out %d\n", mic16[i], out16[i]);
                }
                ok &= out16[i] == mic16[i];
                near &= abs(out16[i] - mic16[i]) <= 1;
            }
        }
        CHECK(near); /* within 1 LSB */
    }
    CHECK(ok); /* bit-exact: in is /32768, out must be x32768 (not x32767) */
    es = engine_stats(e);
    CHECK_U64(es.capture_calls, 20);
    CHECK_U64(es.capture_frames, 20 * 160);
    CHECK_U64(es.capture_rate, 16000);
    CHECK_U64(es.capture_latency_frames, 0); /* 10 ms calls, no preprocessor */
    CHECK_U64(es.capture_nonfinite_samples, 0);
    CHECK_U64(es.capture_calls_without_reference, 20); /* render never ran */
    CHECK(es.aec_delay_source == RTMIX_DELAY_SOURCE_NONE);

    /* Events: render never ran -> one REFERENCE_MISSING for the episode. */
    SECTION("capture_events");
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_ECHO_PATH_CHANGED), "echo_path_changed") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_CANCELLER_RESET), "canceller_reset") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_REFERENCE_MISSING), "reference_missing") == 0);
    CHECK(strcmp(rtmix_event_name(RTMIX_EVENT_DRIFT_OUT_OF_RANGE), "drift_out_of_range") == 0);
    CHECK(strcmp(rtmix_event_name(12), "source_started") == 0);
    CHECK(strcmp(rtmix_event_name(19), "limiter_heavy") == 0);
    CHECK(strcmp(rtmix_event_name(1000), "unknown") == 0);
    CHECK(strcmp(rtmix_event_name(-1), "unknown") == 0);
    rtmix_event_init(&ev);
    CHECK_ST(rtmix_engine_next_event(e, &ev), RTMIX_OK);
    CHECK_U64(ev.type, RTMIX_EVENT_REFERENCE_MISSING);
    CHECK_U64(ev.source, 0);
    CHECK_U64(ev.frame_time, 0); /* header: capture frames processed before the (first) call */
    CHECK(ev.value > 0);
    CHECK_ST(rtmix_engine_next_event(e, &ev), RTMIX_OK);
    CHECK_U64(ev.type, RTMIX_EVENT_NONE); /* once per episode */

    /* f32 in place (out == mic): the int16 quantisation only. */
    SECTION("capture_f32_in_place");
    ok = 1;
    for (i = 0; i < 160; i++) mic[i] = 0.5f * sinf((float)i * 0.1f);
    memcpy(out, mic, 160 * sizeof(float));
    CHECK_ST(rtmix_capture_process_f32(e, out, out, 160), RTMIX_OK);
    for (i = 0; i < 160; i++) ok &= fabsf(out[i] - mic[i]) <= 1.0f / 32768.0f;
    CHECK(ok);

    /* A call size that is not a multiple of 10 ms adds one 10 ms frame of
     * latency, once; the output is the input delayed by exactly that. */
    SECTION("capture_latency");
    {
        static int16_t sent[16000];
        int16_t got[100];
        int n = 0, lat;
        ok = 1;
        for (k = 0; k < 40; k++) {
            for (i = 0; i < 100; i++) {
                sent[n + i] = (int16_t)((n + i) * 13 % 20000 - 10000);
            }
            CHECK_ST(rtmix_capture_process_s16(e, sent + n, got, 100), RTMIX_OK);
            es = engine_stats(e);
            lat = (int)es.capture_latency_frames;
            if (lat != 160) ok = 0;
            for (i = 0; i < 100; i++) {
                int src = n + i - lat;
                if (src >= 0 && got[i] != sent[src]) ok = 0;
            }
            n += 100;
        }
        CHECK(ok);
        CHECK_U64(es.capture_latency_frames, 160);
    }

    /* Stereo capture: every output channel carries the (mono) voice. */
    SECTION("capture_stereo");
    ok = 1;
    for (k = 0; k < 5; k++) {
        for (i = 0; i < 160; i++) {
            mic16[2 * i] = (int16_t)(i * 100 - 8000);
            mic16[2 * i + 1] = (int16_t)(i * 100 - 8000);
        }
        CHECK_ST(rtmix_capture_process_s16(st2, mic16, out16, 160), RTMIX_OK);
        for (i = 0; i < 160; i++) ok &= out16[2 * i] == mic16[2 * i] && out16[2 * i + 1] == mic16[2 * i];
    }
    CHECK(ok);
    rtmix_engine_destroy(e);
    rtmix_engine_destroy(st2);
}

/* NaN/Inf microphone samples never reach `out` and are counted. */
static void test_capture_nonfinite(void) {
    static const uint32_t chans[2] = {1, 2};
    static float mic[480 * 2], out[480 * 2];
    static int16_t out16[480 * 2];
    int c, k, i, ok;

    SECTION("capture_nonfinite");
    for (c = 0; c < 2; c++) {
        uint32_t ch = chans[c];
        rtmix_engine *e = make_capture_engine(48000, 2, 480, 48000, ch, 200, 1);
        rtmix_source_id s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 0);
        static float src[480 * 2], play[480 * 2];
        unsigned long long bad = 0;
        rtmix_engine_stats es;
        CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, RTMIX_MAX_GAIN), RTMIX_OK);
        ok = 1;
        for (k = 0; k < 100; k++) {
            for (i = 0; i < 480 * 2; i++) src[i] = 0.9f * sinf((float)(k * 960 + i) * 0.01f);
            rtmix_source_push_f32(e, s, src, 480, NULL);
            CHECK_ST(rtmix_render_f32(e, play, 480), RTMIX_OK);
            for (i = 0; i < (int)(480 * ch); i++) {
                switch ((k * 7 + i) % 11) {
                case 0: mic[i] = NAN; bad++; break;
                case 1: mic[i] = INFINITY; bad++; break;
                case 2: mic[i] = -INFINITY; bad++; break;
                case 3: mic[i] = FLT_MAX; break;
                case 4: mic[i] = -FLT_MAX; break;
                case 5: mic[i] = 1e30f; break;
                default: mic[i] = play[i % 960]; break;
                }
            }
            if (k % 2 == 0) {
                if (rtmix_capture_process_f32(e, mic, out, 480) != RTMIX_OK) ok = 0;
                if (!all_finite_in_range(out, 480 * ch)) ok = 0;
            } else {
                if (rtmix_capture_process_f32(e, mic, mic, 480) != RTMIX_OK) ok = 0; /* in place */
                if (!all_finite_in_range(mic, 480 * ch)) ok = 0;
            }
        }
        CHECK(ok);
        es = engine_stats(e);
        CHECK_U64(es.capture_nonfinite_samples, bad);
        CHECK(isfinite(es.aec_erle_db) && isfinite(es.aec_delay_ms) && isfinite(es.aec_drift_ppm));
        CHECK(isfinite(es.aec_estimated_delay_ms) && isfinite(es.aec_estimate_confidence));
        /* s16 after the abuse: still fine. */
        {
            static int16_t m16[480 * 2];
            for (i = 0; i < (int)(480 * ch); i++) m16[i] = (int16_t)(i % 2 ? 32767 : -32768);
            CHECK_ST(rtmix_capture_process_s16(e, m16, out16, 480), RTMIX_OK);
        }
        rtmix_engine_destroy(e);
    }
}

/* Far end: `kind` 0 = white noise (pushed at 16 kHz), 1 = a 440 Hz tone.
 * The room: the engine's (left) output, delayed by `delay_ms` and halved,
 * reaches a 16 kHz microphone (taken as every r-th output sample: the
 * played signal is band-limited to 8 kHz). Render and capture run in
 * lockstep (10 ms each, render first, as a duplex callback). Returns the
 * measured ERLE in dB over the last second; fills *stats. `hint_ms` < 0:
 * no hint; `move_at` > 0: at that 10 ms block the room delay changes to
 * `delay2_ms` and (if hint_ms >= 0) the hint follows. */
/* echo_run's engine clock: advanced by exactly the audio of each block, so
 * that render/capture timing is the same on every machine. With the default
 * clock the capture side reads CLOCK_MONOTONIC once calls take more than
 * half of real time (under qemu-user emulation, or on a loaded CI machine),
 * and the wall-clock jitter of emulation then reads as clock drift. */
static uint64_t echo_clock_ns(void *user) { return *(const uint64_t *)user; }

static double echo_run(uint32_t rate, uint32_t channels, int kind, int hint_ms, int delay_ms,
                       int blocks, int move_at, int delay2_ms, rtmix_engine_stats *stats) {
    rtmix_engine *e = make_capture_engine(rate, channels, 1024, 16000, 1, 200, 1);
    rtmix_source_id s = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    uint32_t r = rate / 16000, rb = rate / 100;
    static float line[48 * 1000 * 20]; /* 20 s of output at 48 kHz */
    static float src[160], play[480 * 2], mic[160], out[160];
    double pin = 0, pout = 0;
    long played = 0, heard = 0;
    unsigned lcg = 12345u;
    int k, i, d = delay_ms, ok = 1;
    static uint64_t now_ns;

    now_ns = 1000000000u;
    CHECK_ST(rtmix_engine_set_clock(e, echo_clock_ns, &now_ns), RTMIX_OK);
    if (hint_ms >= 0) CHECK_ST(rtmix_set_stream_delay_ms(e, hint_ms), RTMIX_OK);
    for (k = 0; k < blocks; k++) {
        now_ns += 10000000u; /* each block is 10 ms of audio */
        if (move_at > 0 && k == move_at) {
            d = delay2_ms;
            if (hint_ms >= 0) CHECK_ST(rtmix_set_stream_delay_ms(e, delay2_ms), RTMIX_OK);
        }
        for (i = 0; i < 160; i++) {
            if (kind == 0) {
                lcg = lcg * 1664525u + 1013904223u;
                src[i] = 0.25f * ((float)(lcg >> 8) / 8388608.0f - 1.0f);
            } else {
                src[i] = 0.3f * (float)sin(2.0 * 3.14159265358979 * 440.0 * (double)(k * 160 + i) / 16000.0);
            }
        }
        if (rtmix_source_push_f32(e, s, src, 160, NULL) != RTMIX_OK) ok = 0;
        if (rtmix_render_f32(e, play, rb) != RTMIX_OK) ok = 0;
        for (i = 0; i < (int)rb && played + i < (long)(sizeof line / sizeof line[0]); i++)
            line[played + i] = play[i * (int)channels];
        played += rb;
        for (i = 0; i < 160; i++) {
            long at = (long)r * (heard + i - (long)d * 16);
            mic[i] = at >= 0 ? 0.5f * line[at] : 0.0f;
        }
        if (rtmix_capture_process_f32(e, mic, out, 160) != RTMIX_OK) ok = 0;
        if (!all_finite_in_range(out, 160)) ok = 0;
        heard += 160;
        if (k >= blocks - 100) {
            for (i = 0; i < 160; i++) {
                pin += (double)mic[i] * mic[i];
                pout += (double)out[i] * out[i];
            }
        }
    }
    CHECK(ok);
    *stats = engine_stats(e);
    rtmix_engine_destroy(e);
    return 10.0 * log10(pin / (pout + 1e-20));
}

static void test_capture_echo(void) {
    rtmix_engine_stats es;
    double erle;

    /* 48 kHz stereo output (the tap resamples to 16 kHz), noise far end,
     * 40 ms echo, correct hint: > 20 dB after 6 s. */
    SECTION("capture_echo_noise_hint");
    erle = echo_run(48000, 2, 0, 40, 40, 600, 0, 0, &es);
    printf("  echo noise 48k->16k, hint 40 ms: measured ERLE %.1f dB, stats %.1f dB, delay %.1f ms (source %d)\n",
           erle, es.aec_erle_db, es.aec_delay_ms, (int)es.aec_delay_source);
    CHECK(erle > 20.0);
    CHECK(es.aec_erle_db > 20.0f);
    CHECK(es.aec_delay_source == RTMIX_DELAY_SOURCE_HINT);
    CHECK(fabsf(es.aec_delay_ms - 40.0f) < 0.01f);
    CHECK_U64(es.capture_calls, 600);
    CHECK_U64(es.capture_frames, 600 * 160);
    CHECK(es.capture_calls_without_reference <= 5); /* start-up: the hint puts the feed before the first reference */
    CHECK_U64(es.capture_reference_overflow_frames, 0);
    CHECK(fabsf(es.aec_drift_ppm) < 50.0f);
    CHECK_U64(es.aec_resets, 0);
    CHECK(es.capture_ns_max > 0);

    /* The same at 16 kHz output (no tap resampler). */
    SECTION("capture_echo_noise_16k");
    erle = echo_run(16000, 1, 0, 40, 40, 600, 0, 0, &es);
    printf("  echo noise 16k, hint 40 ms: measured ERLE %.1f dB, stats %.1f dB\n", erle, es.aec_erle_db);
    CHECK(erle > 20.0);
    CHECK(es.aec_erle_db > 20.0f);

    /* Route change: the room delay and the hint move together from 40 to
     * 100 ms after 5 s; the adapted canceller is kept (header: "Moving
     * the delay keeps the adapted canceller"), so the last second is
     * still well cancelled. */
    SECTION("capture_echo_route_change");
    erle = echo_run(48000, 2, 0, 40, 40, 600, 500, 100, &es);
    printf("  echo route change 40 -> 100 ms with hint: measured ERLE %.1f dB, delay %.1f ms\n", erle,
           es.aec_delay_ms);
    CHECK(erle > 20.0);
    CHECK(fabsf(es.aec_delay_ms - 100.0f) < 0.01f);
    CHECK_U64(es.aec_delay_changes, 1);

    /* A tone far end (the brief's functional check: render a tone, the mic
     * hears it 40 ms later, the host gives the right hint). */
    SECTION("capture_echo_tone_hint");
    erle = echo_run(16000, 1, 1, 40, 40, 600, 0, 0, &es);
    printf("  echo tone 440 Hz, hint 40 ms: measured ERLE %.1f dB, stats %.1f dB, delay %.1f ms (source %d), "
           "estimate %.1f ms (confidence %.1f)\n",
           erle, es.aec_erle_db, es.aec_delay_ms, (int)es.aec_delay_source, es.aec_estimated_delay_ms,
           es.aec_estimate_confidence);
    CHECK(erle > 20.0);
    /* The estimator's own range is 0..600 ms (header). */
    CHECK(es.aec_delay_ms >= 0.0f && es.aec_delay_ms <= 600.0f);

    /* No hint: the estimator finds the delay; > 20 dB after 6 s. */
    SECTION("capture_echo_no_hint");
    erle = echo_run(48000, 2, 0, -1, 40, 600, 0, 0, &es);
    printf("  echo noise, no hint: measured ERLE %.1f dB, stats %.1f dB, delay %.1f ms (source %d)\n", erle,
           es.aec_erle_db, es.aec_delay_ms, (int)es.aec_delay_source);
    CHECK(es.aec_delay_source == RTMIX_DELAY_SOURCE_ESTIMATOR);
    CHECK(fabsf(es.aec_delay_ms - 40.0f) < 4.0f);
    CHECK(erle > 20.0);
}

/* Publish: MEDIA at its publish gain (not its local volume), CALL never. */
static void test_capture_publish(void) {
    rtmix_engine *e = make_capture_engine(16000, 1, 1024, 16000, 1, 0, 0);
    rtmix_source_id m, v;
    static float f[160], play[160], mic[160], out[160];
    int i, k;
    float last = 0;

    SECTION("capture_publish");
    for (i = 0; i < 160; i++) f[i] = 0.25f;
    m = add_source(e, RTMIX_DOMAIN_MEDIA, 16000, 1, 0);
    v = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    CHECK_ST(rtmix_domain_set_gain(e, RTMIX_DOMAIN_MEDIA, 0.0f), RTMIX_OK); /* local volume 0 */
    CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, 1.0f), RTMIX_OK);
    for (k = 0; k < 100; k++) {
        rtmix_source_push_f32(e, m, f, 160, NULL);
        CHECK_ST(rtmix_render_f32(e, play, 160), RTMIX_OK);
        CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK);
    }
    last = out[159];
    CHECK(fabsf(play[159]) < 1e-6f);     /* not heard locally */
    CHECK(fabsf(last - 0.25f) < 0.01f); /* but published */
    /* Only CALL playing: nothing published. */
    CHECK_ST(rtmix_source_remove(e, m), RTMIX_OK);
    for (k = 0; k < 100; k++) {
        rtmix_source_push_f32(e, v, f, 160, NULL);
        CHECK_ST(rtmix_render_f32(e, play, 160), RTMIX_OK);
        CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK);
    }
    CHECK(fabsf(play[159] - 0.25f) < 0.01f); /* heard locally */
    CHECK(fabsf(out[159]) < 1e-4f);          /* never published */
    rtmix_engine_destroy(e);
}

/* The v0 stats struct (112 bytes) works with a capture engine; the
 * capture fields past its size are not written. */
static void test_capture_v0_stats(void) {
    rtmix_engine *e = make_capture_engine(48000, 2, 480, 16000, 1, 200, 1);
    static float mic[160], out[160];
    rtmix_engine_stats es;

    SECTION("capture_v0_stats");
    CHECK_ST(rtmix_capture_process_f32(e, mic, out, 160), RTMIX_OK);
    memset(&es, 0x77, sizeof es);
    es.size = 112;
    CHECK_ST(rtmix_engine_get_stats(e, &es), RTMIX_OK);
    CHECK_U64(es.size, 112);
    CHECK_U64(es.sources_removed, 0);
    CHECK_U64(es.capture_calls, 0x7777777777777777ull);
    es = engine_stats(e);
    CHECK_U64(es.capture_calls, 1);
    rtmix_engine_destroy(e);
}

/* The output format changes while capture is running (HFP route): the tap
 * is rebuilt, capture keeps going, output stays finite. */
static void test_capture_output_format(void) {
    rtmix_engine *e = make_capture_engine(48000, 2, 1024, 16000, 1, 200, 1);
    rtmix_source_id s = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
    static float f[160], play[1024 * 2], mic[160], out[160];
    rtmix_engine_stats es;
    int i, k, ok = 1;

    SECTION("capture_output_format");
    for (i = 0; i < 160; i++) f[i] = 0.2f * sinf((float)i * 0.3f);
    for (k = 0; k < 300; k++) {
        uint32_t rate = k < 100 ? 48000 : k < 200 ? 16000 : 44100;
        uint32_t ch = k < 100 ? 2 : 1;
        if (k == 100) CHECK_ST(rtmix_engine_set_output_format(e, 16000, 1), RTMIX_OK);
        if (k == 200) CHECK_ST(rtmix_engine_set_output_format(e, 44100, 1), RTMIX_OK);
        rtmix_source_push_f32(e, s, f, 160, NULL);
        if (rtmix_render_f32(e, play, rate / 100) != RTMIX_OK) ok = 0;
        if (!all_finite_in_range(play, rate / 100 * ch)) ok = 0;
        for (i = 0; i < 160; i++) mic[i] = 0.5f * f[i];
        if (rtmix_capture_process_f32(e, mic, out, 160) != RTMIX_OK) ok = 0;
        if (!all_finite_in_range(out, 160)) ok = 0;
    }
    CHECK(ok);
    es = engine_stats(e);
    CHECK_U64(es.capture_calls, 300);
    CHECK(es.capture_calls_without_reference <= 2);
    rtmix_engine_destroy(e);
}

/* Extreme formats: 192 kHz output -> 8 kHz capture and 8 kHz output ->
 * 48 kHz stereo capture, with max_frames blocks. */
static void test_capture_extremes(void) {
    static const uint32_t fmt[3][3] = {{192000, 8000, 1}, {8000, 48000, 2}, {44100, 44100, 2}};
    static float play[16384 * 2], mic[16384 * 2], out[16384 * 2];
    int t, k, i, ok = 1;

    SECTION("capture_extremes");
    for (t = 0; t < 3; t++) {
        rtmix_engine *e = make_capture_engine(fmt[t][0], 2, 16384, fmt[t][1], fmt[t][2], 1000, 1);
        /* 1 << 17: one 16384-frame block at 8 kHz output takes 98304
         * frames of this 48 kHz source. */
        rtmix_source_id s = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 1 << 17);
        CHECK_ST(rtmix_domain_set_publish_gain(e, RTMIX_DOMAIN_MEDIA, 2.0f), RTMIX_OK);
        for (k = 0; k < 6; k++) {
            uint32_t rf = k % 2 ? 16384 : 1 + (uint32_t)k * 1000;
            uint32_t cf = k % 3 ? 16384 : 7 + (uint32_t)k * 333;
            for (i = 0; i < 16384 * 2; i++) play[i] = 0.5f * sinf((float)i * 0.02f);
            rtmix_source_push_f32(e, s, play, 16384, NULL);
            if (rtmix_render_f32(e, play, rf) != RTMIX_OK) ok = 0;
            for (i = 0; i < (int)(cf * fmt[t][2]); i++) mic[i] = 0.3f * sinf((float)i * 0.05f);
            if (rtmix_capture_process_f32(e, mic, out, cf) != RTMIX_OK) ok = 0;
            if (!all_finite_in_range(out, cf * fmt[t][2])) ok = 0;
        }
        rtmix_engine_destroy(e);
    }
    CHECK(ok);
}

/* Two threads in a capture call at once: one gets BAD_STATE and a
 * zero-filled `out`. Both threads hammer one engine with the largest
 * blocks for up to 3 s and stop once each outcome was seen. */
struct capture_race {
    rtmix_engine *e;
    volatile int stop;
    int ok_calls;
    int busy_calls;
    int bad_fill;
    int other_status;
};

static void *capture_race_thread(void *arg) {
    struct capture_race *r = (struct capture_race *)arg;
    static float mic[2][8192 * 2];
    float *out = (float *)malloc(8192 * 2 * sizeof(float));
    int me = r->ok_calls < 0 ? 1 : 0; /* unused: each thread has its own out */
    int i;
    (void)me;
    if (out == NULL) return NULL;
    while (!r->stop) {
        int32_t st;
        for (i = 0; i < 8192 * 2; i++) out[i] = 0.5f;
        st = rtmix_capture_process_f32(r->e, mic[0], out, 8192);
        if (st == RTMIX_OK) {
            __atomic_add_fetch(&r->ok_calls, 1, __ATOMIC_RELAXED);
        } else if (st == RTMIX_ERR_BAD_STATE) {
            int zero = 1;
            for (i = 0; i < 8192 * 2; i++) zero &= out[i] == 0.0f;
            __atomic_add_fetch(&r->busy_calls, 1, __ATOMIC_RELAXED);
            if (!zero) __atomic_add_fetch(&r->bad_fill, 1, __ATOMIC_RELAXED);
        } else {
            __atomic_add_fetch(&r->other_status, 1, __ATOMIC_RELAXED);
        }
    }
    free(out);
    return NULL;
}

static void test_capture_concurrent(void) {
    struct capture_race r;
    pthread_t t1, t2;
    int waited = 0;

    SECTION("capture_concurrent");
    memset(&r, 0, sizeof r);
    r.e = make_capture_engine(48000, 2, 8192, 48000, 2, 1000, 1);
    if (pthread_create(&t1, NULL, capture_race_thread, &r) != 0 ||
        pthread_create(&t2, NULL, capture_race_thread, &r) != 0) {
        printf("FAIL [%s]: pthread_create\n", g_section);
        g_failed++;
        return;
    }
    while (waited < 3000 && (__atomic_load_n(&r.busy_calls, __ATOMIC_RELAXED) < 3 ||
                             __atomic_load_n(&r.ok_calls, __ATOMIC_RELAXED) < 3)) {
        sleep_ms(10);
        waited += 10;
    }
    r.stop = 1;
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("  concurrent capture: %d ok, %d BAD_STATE in %d ms\n", r.ok_calls, r.busy_calls, waited);
    CHECK(r.ok_calls > 0);
    CHECK(r.busy_calls > 0); /* the second thread was refused at least once */
    CHECK_U64(r.bad_fill, 0);
    CHECK_U64(r.other_status, 0);
    {
        rtmix_engine_stats es = engine_stats(r.e);
        CHECK_U64(es.capture_calls, (unsigned long long)r.ok_calls);
    }
    rtmix_engine_destroy(r.e);
}

/* Issue 11 defect 6: every allocation of create, add and format change can
 * fail (rtmix_testing_fail_allocation drives each in turn) and returns
 * RTMIX_ERR_NO_MEMORY with nothing changed (leaks: scripts/asan-check and
 * AllocationFailureTests); the memory cap; configurations that can never
 * work. */
static void test_memory(void) {
    rtmix_engine_config c;
    rtmix_engine_stats st, st2;
    rtmix_source_config sc;
    rtmix_engine *e = NULL;
    rtmix_source_id id = 0;
    int64_t n, i;
    uint64_t base;

    SECTION("memory");
    rtmix_engine_config_init(&c);
    CHECK_U64(c.max_memory_bytes, 64u << 20);
    c.capture_rate = 16000;
    c.max_frames = 960;

    /* Every failure point of create. */
    rtmix_testing_fail_allocation(0);
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    n = rtmix_testing_fail_allocation(0);
    CHECK(n >= 30);
    rtmix_engine_destroy(e);
    for (i = 1; i <= n; i++) {
        e = (rtmix_engine *)(void *)&g_passed;
        rtmix_testing_fail_allocation(i);
        CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_ERR_NO_MEMORY);
        CHECK(e == NULL);
    }
    rtmix_testing_fail_allocation(0);

    /* Every failure point of add (a resampled, drift-compensated source). */
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    rtmix_engine_stats_init(&st);
    CHECK_ST(rtmix_engine_get_stats(e, &st), RTMIX_OK);
    CHECK(st.memory_bytes > 0);
    base = st.memory_bytes;
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 44100, 2);
    sc.target_buffer_ms = 60;
    rtmix_testing_fail_allocation(0);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    n = rtmix_testing_fail_allocation(0);
    CHECK(n >= 5);
    CHECK_ST(rtmix_engine_get_stats(e, &st), RTMIX_OK);
    CHECK(st.memory_bytes > base + 32768u * 2 * 4); /* at least the ring */
    for (i = 1; i <= n; i++) {
        rtmix_source_id other = 77;
        rtmix_testing_fail_allocation(i);
        CHECK_ST(rtmix_source_add(e, &sc, &other), RTMIX_ERR_NO_MEMORY);
        rtmix_testing_fail_allocation(0);
        CHECK(other == 77);
        rtmix_engine_stats_init(&st2);
        CHECK_ST(rtmix_engine_get_stats(e, &st2), RTMIX_OK);
        CHECK_U64(st2.active_sources, 1);
        CHECK_U64(st2.memory_bytes, st.memory_bytes);
    }

    /* Every failure point of a format change: the format stays. */
    rtmix_testing_fail_allocation(0);
    CHECK_ST(rtmix_engine_set_output_format(e, 16000, 1), RTMIX_OK);
    n = rtmix_testing_fail_allocation(0);
    CHECK(n >= 1);
    for (i = 1; i <= n; i++) {
        rtmix_engine_config got;
        rtmix_testing_fail_allocation(i);
        CHECK_ST(rtmix_engine_set_output_format(e, 48000, 2), RTMIX_ERR_NO_MEMORY);
        rtmix_testing_fail_allocation(0);
        rtmix_engine_config_init(&got);
        CHECK_ST(rtmix_engine_get_config(e, &got), RTMIX_OK);
        CHECK_U64(got.sample_rate, 16000);
        CHECK_U64(got.channels, 1);
    }
    CHECK_ST(rtmix_engine_set_output_format(e, 48000, 2), RTMIX_OK);
    rtmix_engine_destroy(e);

    /* The cap. Before it, 256 sources of 2^22 stereo frames (8 GiB of
     * rings) were all accepted; with the default 64 MiB the second fails. */
    rtmix_engine_config_init(&c);
    c.max_sources = 256;
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 48000, 2);
    sc.buffer_frames = 1u << 22;
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_LIMIT);
    rtmix_engine_stats_init(&st);
    CHECK_ST(rtmix_engine_get_stats(e, &st), RTMIX_OK);
    CHECK_U64(st.active_sources, 1);
    CHECK(st.memory_bytes > (1u << 22) * 2u * 4u && st.memory_bytes <= 64u << 20);
    rtmix_engine_destroy(e);
    c.max_memory_bytes = 0; /* no cap: the second fits */
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    rtmix_engine_destroy(e);
    c.max_memory_bytes = 4096; /* below the engine's own buffers */
    e = (rtmix_engine *)(void *)&g_passed;
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_ERR_LIMIT);
    CHECK(e == NULL);
    /* A v0-size config (no max_memory_bytes field) gets the default cap. */
    rtmix_engine_config_init(&c);
    c.size = 36;
    c.max_memory_bytes = 1; /* past the caller's size: ignored */
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    rtmix_engine_destroy(e);

    /* Configurations that can never work. */
    rtmix_engine_config_init(&c);
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK); /* max_frames 4096 */
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_CALL, 48000, 1);
    sc.buffer_frames = 2048; /* smaller than one block's input */
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_INVALID_ARGUMENT);
    sc.buffer_frames = 4096;
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    sc.target_buffer_ms = 200; /* 9600 frames > an explicit 8192 */
    sc.buffer_frames = 8192;
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_INVALID_ARGUMENT);
    sc.buffer_frames = 9600;
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    rtmix_engine_stats_init(&st);
    CHECK_ST(rtmix_engine_get_stats(e, &st), RTMIX_OK);
    CHECK_U64(st.active_sources, 2);
    rtmix_engine_destroy(e);
    /* A config that can never work is INVALID_ARGUMENT even when no slot is
     * free (found by FuzzEngineC: it was RTMIX_ERR_LIMIT). */
    rtmix_engine_config_init(&c);
    c.max_sources = 1;
    CHECK_ST(rtmix_engine_create(&c, &e), RTMIX_OK);
    rtmix_source_config_init(&sc, RTMIX_DOMAIN_MEDIA, 12000, 2);
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_OK);
    sc.buffer_frames = 480; /* a 4096-frame block at 48 kHz needs 1026 */
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_INVALID_ARGUMENT);
    sc.buffer_frames = 0;
    CHECK_ST(rtmix_source_add(e, &sc, &id), RTMIX_ERR_LIMIT);
    rtmix_engine_destroy(e);
}

int main(void) {
    test_version_and_status();
    test_config_init();
    test_create();
    test_get_config();
    test_sources();
    test_ids_and_limit();
    test_push();
    test_gains();
    test_render_args();
    test_bypass_bit_exact();
    test_mono_resampled();
    test_nonfinite();
    test_saturation();
    test_stats();
    test_lockstep();
    test_events();
    test_source_timing();
    test_ducking();
    test_alarms();
    test_output_format();
    test_capture_config();
    test_capture_args();
    test_capture_clock();
    test_capture_passthrough();
    test_capture_nonfinite();
    test_capture_echo();
    test_capture_publish();
    test_capture_v0_stats();
    test_capture_output_format();
    test_capture_extremes();
    test_capture_concurrent();
    test_memory();
    printf("engine_api: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
