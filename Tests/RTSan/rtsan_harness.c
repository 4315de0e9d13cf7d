/*
 * rtsan_harness.c — RealtimeSanitizer proof that render and push are
 * real-time safe.
 *
 * Built by scripts/rtsan-check with the toolchain's clang:
 *   clang -std=c2x -fsanitize=realtime -I include rtsan_harness.c \
 *         -L<libdir> -lrtmix -Wl,-rpath,<libdir> -lpthread -lm
 *
 * Every call to rtmix_render_f32 / rtmix_render_s16 (and their _checked
 * variants) / rtmix_source_push_f32 / rtmix_source_push_s16, and to every
 * other function rtmix.h calls real-time safe (rt_misc: version, names,
 * *_init, get_config, domain_get_gain, get_buffered, session struct
 * helpers), happens inside a function marked
 * [[clang::nonblocking]]: RTSan intercepts malloc/free/locks/blocking system
 * calls made anywhere below it, including inside librtmix.so, and aborts
 * with exit code 43 (RTSAN_OPTIONS=halt_on_error=false lists them all).
 *
 * Engine setup, one warm-up push + render (first use of generic metadata or
 * lazy globals may allocate once) and every control call (add/remove,
 * gain/mute/domain, stats) happen outside the real-time region; the control
 * thread runs them while the render and producer threads are working.
 *
 * Modes:
 *   (none)            the proof; ends with "rtsan_harness: N passed, M failed"
 *   --negative-malloc a nonblocking function calls malloc: RTSan must abort (43)
 *   --negative-lib    a nonblocking function calls rtmix_engine_get_stats,
 *                     which takes the control lock inside librtmix.so: RTSan
 *                     must abort (43), proving it sees into the library.
 */
#define _POSIX_C_SOURCE 200809L
#include "rtmix.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Calling the (un-annotated) library from nonblocking functions is exactly
 * what we want RTSan to check at run time; silence the compile-time
 * function-effect analysis for that. */
#pragma clang diagnostic ignored "-Wfunction-effects"
#if defined(__has_warning)
#if __has_warning("-Wperf-constraint-implies-noexcept")
#pragma clang diagnostic ignored "-Wperf-constraint-implies-noexcept"
#endif
#endif

enum {
    RENDER_ITERATIONS = 4000,
    MAX_FRAMES = 1024,
    CHANNELS = 2,
};

static int g_passed, g_failed;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            g_passed++;                                                        \
        } else {                                                               \
            g_failed++;                                                        \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                     \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------ real-time region */

/* C23 attribute syntax; it applies to the function type, so it follows the
 * parameter list. */
#define NONBLOCKING [[clang::nonblocking]]

static int32_t rt_render_f32(rtmix_engine *e, float *out, uint32_t frames) NONBLOCKING {
    return rtmix_render_f32(e, out, frames);
}

static int32_t rt_render_s16(rtmix_engine *e, int16_t *out, uint32_t frames) NONBLOCKING {
    return rtmix_render_s16(e, out, frames);
}

static int32_t rt_push_f32(rtmix_engine *e, rtmix_source_id id, const float *pcm,
                                                  uint32_t frames, uint32_t *accepted) NONBLOCKING {
    return rtmix_source_push_f32(e, id, pcm, frames, accepted);
}

static int32_t rt_push_s16(rtmix_engine *e, rtmix_source_id id, const int16_t *pcm,
                                                  uint32_t frames, uint32_t *accepted) NONBLOCKING {
    return rtmix_source_push_s16(e, id, pcm, frames, accepted);
}

/* One "device callback": renders f32 or s16 depending on the block,
 * through the checked entry points (capacity MAX_FRAMES x CHANNELS) when
 * `checked`. The output-level check runs inside the region too (plain
 * arithmetic). */
static int32_t rt_callback(rtmix_engine *e, float *outf, int16_t *outs, uint32_t frames,
                                                  int use_s16, int checked, int *out_of_range) NONBLOCKING {
    int32_t st;
    uint32_t i;
    if (use_s16)
        return checked ? rtmix_render_s16_checked(e, outs, (size_t)MAX_FRAMES * CHANNELS, frames)
                       : rt_render_s16(e, outs, frames);
    st = checked ? rtmix_render_f32_checked(e, outf, (size_t)MAX_FRAMES * CHANNELS, frames)
                 : rt_render_f32(e, outf, frames);
    if (st == RTMIX_OK) {
        for (i = 0; i < frames * CHANNELS; i++)
            if (!(outf[i] >= -1.0f && outf[i] <= 1.0f)) *out_of_range = 1;
    }
    return st;
}

/* Every other function rtmix.h calls real-time safe, once each. Returns a
 * bit mask of unexpected results (0 = all as documented). Plain function:
 * called once outside the region as a warm-up, then through rt_misc. */
static int misc_calls(rtmix_engine *e, rtmix_source_id fixed, float *outf, int16_t *outs) {
    int bad = 0;
    int32_t st;
    rtmix_engine_config cfg;
    rtmix_source_config sc;
    rtmix_engine_stats es;
    rtmix_source_stats ss;
    rtmix_event ev;
    rtmix_session_config scfg;
    rtmix_session_settings sset;
    rtmix_session_route sroute;
    rtmix_session_action saction;
    rtmix_session_alarm salarm;
    rtmix_session_state sstate;
    uint32_t buffered = 0, problems = 0, invalid = 0;
    float gain = 0.0f;

    if (rtmix_version() != ((RTMIX_VERSION_MAJOR << 16) | (RTMIX_VERSION_MINOR << 8) | RTMIX_VERSION_PATCH))
        bad |= 1 << 0;
    if (rtmix_status_string(RTMIX_ERR_LIMIT)[0] == '\0') bad |= 1 << 1;
    if (strcmp(rtmix_event_name(RTMIX_EVENT_RENDER_SLOW), "render_slow") != 0) bad |= 1 << 2;
    if (rtmix_engine_config_init(&cfg) != RTMIX_OK) bad |= 1 << 3;
    if (rtmix_engine_get_config(e, &cfg) != RTMIX_OK || cfg.channels != CHANNELS) bad |= 1 << 4;
    if (rtmix_source_config_init(&sc, RTMIX_DOMAIN_CALL, 16000, 1) != RTMIX_OK) bad |= 1 << 5;
    if (rtmix_engine_stats_init(&es) != RTMIX_OK || rtmix_source_stats_init(&ss) != RTMIX_OK ||
        rtmix_event_init(&ev) != RTMIX_OK)
        bad |= 1 << 6;
    if (rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, &gain) != RTMIX_OK) bad |= 1 << 7;
    if (rtmix_source_get_buffered(e, fixed, &buffered) != RTMIX_OK) bad |= 1 << 8;
    /* Too small a buffer: refused (or BAD_STATE while the intruder renders). */
    st = rtmix_render_f32_checked(e, outf, 1, 256);
    if (st != RTMIX_ERR_INVALID_ARGUMENT && st != RTMIX_ERR_BAD_STATE) bad |= 1 << 9;
    st = rtmix_render_s16_checked(e, outs, 1, 256);
    if (st != RTMIX_ERR_INVALID_ARGUMENT && st != RTMIX_ERR_BAD_STATE) bad |= 1 << 10;
    if (rtmix_session_config_init(&scfg) != RTMIX_OK || rtmix_session_settings_init(&sset) != RTMIX_OK ||
        rtmix_session_route_init(&sroute) != RTMIX_OK || rtmix_session_action_init(&saction) != RTMIX_OK ||
        rtmix_session_alarm_init(&salarm) != RTMIX_OK || rtmix_session_state_init(&sstate) != RTMIX_OK)
        bad |= 1 << 11;
    if (rtmix_session_check_config(&scfg, &problems, &invalid) != RTMIX_OK || problems != 0) bad |= 1 << 12;
    if (rtmix_session_action_name(1)[0] == '\0' || rtmix_session_alarm_name(1)[0] == '\0') bad |= 1 << 13;
    return bad;
}

static int rt_misc(rtmix_engine *e, rtmix_source_id fixed, float *outf, int16_t *outs) NONBLOCKING {
    return misc_calls(e, fixed, outf, outs);
}

/* --------------------------------------------------- negative controls */

static void *volatile g_sink;

static int rt_negative_malloc(size_t n) NONBLOCKING {
    /* A violation on purpose: RTSan must report malloc and abort. The
     * block escapes through a volatile global so the optimiser cannot
     * elide the malloc/free pair. */
    g_sink = malloc(n);
    return g_sink != NULL;
}

static int32_t rt_negative_lib(rtmix_engine *e, rtmix_engine_stats *s) NONBLOCKING {
    /* Not real-time safe by contract (control lock inside librtmix.so). */
    return rtmix_engine_get_stats(e, s);
}

/* ------------------------------------------------------------- helpers */

static void sleep_us(long us) {
    struct timespec ts;
    ts.tv_sec = us / 1000000;
    ts.tv_nsec = (us % 1000000) * 1000L;
    nanosleep(&ts, NULL);
}

static rtmix_source_id add_source(rtmix_engine *e, rtmix_domain d, uint32_t rate, uint32_t ch,
                                  uint32_t buffer_frames) {
    rtmix_source_config sc;
    rtmix_source_id id = 0;
    rtmix_source_config_init(&sc, d, rate, ch);
    sc.buffer_frames = buffer_frames;
    if (rtmix_source_add(e, &sc, &id) != RTMIX_OK) return 0;
    return id;
}

/* ------------------------------------------------------------- threads */

typedef struct producer {
    rtmix_engine *e;
    _Atomic rtmix_source_id id; /* may change (dynamic source) */
    uint32_t rate;
    uint32_t channels;
    uint32_t burst;     /* frames per push */
    int use_s16;
    long pause_us;      /* between pushes: sets the fill level */
    int starve_every;   /* every n-th round stops for a while: underruns */
    /* results */
    long pushes, ok, full, not_found, other;
    uint64_t accepted;
} producer;

static atomic_int g_stop;

static void *producer_main(void *arg) {
    producer *p = (producer *)arg;
    size_t samples = (size_t)p->burst * p->channels;
    float *f = (float *)malloc(samples * sizeof(float));
    int16_t *s = (int16_t *)malloc(samples * sizeof(int16_t));
    size_t i;
    long round = 0;
    double phase = 0.0;
    for (i = 0; i < samples; i++) {
        phase += 2.0 * 3.14159265358979 * 440.0 / (double)p->rate;
        f[i] = (float)(0.2 * sin(phase));
        s[i] = (int16_t)(f[i] * 32767.0f);
        if (i % 997 == 0) f[i] = NAN; /* non-finite input, counted, never output */
    }
    while (!atomic_load(&g_stop)) {
        uint32_t acc = 0;
        rtmix_source_id id = atomic_load(&p->id);
        int32_t st;
        if (p->use_s16 && (round & 1))
            st = rt_push_s16(p->e, id, s, p->burst, &acc);
        else
            st = rt_push_f32(p->e, id, f, p->burst, &acc);
        p->pushes++;
        p->accepted += acc;
        if (st == RTMIX_OK) p->ok++;
        else if (st == RTMIX_ERR_BUFFER_FULL) p->full++;
        else if (st == RTMIX_ERR_NOT_FOUND) p->not_found++;
        else p->other++;
        round++;
        if (p->starve_every > 0 && round % p->starve_every == 0)
            sleep_us(30000); /* let the source drain: underruns */
        else
            sleep_us(p->pause_us);
    }
    free(f);
    free(s);
    return NULL;
}

typedef struct control {
    rtmix_engine *e;
    rtmix_source_id fixed[4];
    producer *dynamic; /* its id is replaced by add/remove cycles */
    long adds, removes, gain_calls, failures;
} control;

static void *control_main(void *arg) {
    control *c = (control *)arg;
    long round = 0;
    while (!atomic_load(&g_stop)) {
        rtmix_source_id victim = c->fixed[round % 4];
        float g = (float)(round % 17) / 8.0f;
        rtmix_engine_stats es;
        if (rtmix_source_set_gain(c->e, victim, g) != RTMIX_OK) c->failures++;
        if (rtmix_source_set_muted(c->e, c->fixed[(round + 1) % 4], (int)(round & 1)) != RTMIX_OK) c->failures++;
        if (rtmix_domain_set_gain(c->e, RTMIX_DOMAIN_CALL, g) != RTMIX_OK) c->failures++;
        if (rtmix_domain_set_gain(c->e, RTMIX_DOMAIN_MEDIA, 2.0f - g) != RTMIX_OK) c->failures++;
        c->gain_calls += 4;
        if (round % 3 == 0) {
            /* Replace the dynamic source: remove while rendering/pushing,
             * then add a new one (ids never reused). */
            rtmix_source_id old = atomic_load(&c->dynamic->id);
            rtmix_source_id fresh;
            if (old != 0) {
                if (rtmix_source_remove(c->e, old) == RTMIX_OK) c->removes++;
                else c->failures++;
            }
            fresh = add_source(c->e, (round & 1) ? RTMIX_DOMAIN_CALL : RTMIX_DOMAIN_MEDIA,
                               c->dynamic->rate, c->dynamic->channels, 0);
            if (fresh != 0) c->adds++; /* LIMIT is possible while old ones fade */
            atomic_store(&c->dynamic->id, fresh);
        }
        rtmix_engine_stats_init(&es);
        if (rtmix_engine_get_stats(c->e, &es) != RTMIX_OK) c->failures++;
        round++;
        sleep_us(2000);
    }
    return NULL;
}

/* A second would-be renderer: must get RTMIX_OK or RTMIX_ERR_BAD_STATE,
 * never block. */
typedef struct intruder {
    rtmix_engine *e;
    long ok, bad_state, other;
} intruder;

static void *intruder_main(void *arg) {
    intruder *in = (intruder *)arg;
    static float buf[256 * CHANNELS];
    int oor = 0;
    while (!atomic_load(&g_stop)) {
        int32_t st = rt_callback(in->e, buf, NULL, 256, 0, 0, &oor);
        if (st == RTMIX_OK) in->ok++;
        else if (st == RTMIX_ERR_BAD_STATE) in->bad_state++;
        else in->other++;
        sleep_us(20000);
    }
    return NULL;
}

/* ---------------------------------------------------------------- main */

static rtmix_engine *make_engine(void) {
    rtmix_engine_config cfg;
    rtmix_engine *e = NULL;
    rtmix_engine_config_init(&cfg);
    cfg.max_frames = MAX_FRAMES;
    cfg.max_sources = 16;
    cfg.gain_ramp_ms = 5.0f;
    if (rtmix_engine_create(&cfg, &e) != RTMIX_OK) {
        printf("cannot create engine\n");
        exit(2);
    }
    return e;
}

int main(int argc, char **argv) {
    static float outf[MAX_FRAMES * CHANNELS];
    static int16_t outs[MAX_FRAMES * CHANNELS];
    static float warm[MAX_FRAMES * CHANNELS];
    rtmix_engine *e;
    producer prod[5];
    control ctl;
    intruder intr;
    pthread_t tp[5], tc, ti;
    int i, out_of_range = 0;
    long render_ok = 0, render_other = 0, render_bad_state = 0;
    long misc_failures = 0;
    int misc_bits = 0;
    uint64_t frames_asked = 0;
    rtmix_engine_stats es;
    static const uint32_t blocks[] = {64, 128, 256, 441, 480, 512, 960, 1024, 100, 7};

    if (argc > 1 && strcmp(argv[1], "--negative-malloc") == 0) {
        printf("negative control: malloc inside a nonblocking function\n");
        fflush(stdout);
        if (rt_negative_malloc(64)) free(g_sink); /* RTSan aborts first (43) */
        printf("negative control: RTSan did NOT abort\n");
        return 0;
    }
    e = make_engine();
    if (argc > 1 && strcmp(argv[1], "--negative-lib") == 0) {
        rtmix_engine_stats s;
        printf("negative control: rtmix_engine_get_stats (control lock) inside a nonblocking function\n");
        fflush(stdout);
        rtmix_engine_stats_init(&s);
        (void)rtmix_engine_get_stats(e, &s); /* warm-up outside: only the lock remains */
        return rt_negative_lib(e, &s) == RTMIX_OK ? 0 : 1; /* RTSan aborts first (43) */
    }
    if (argc > 1) {
        printf("usage: %s [--negative-malloc | --negative-lib]\n", argv[0]);
        return 2;
    }

    /* Setup (not real-time): the four sources of the scenario + one that
     * comes and goes. */
    memset(prod, 0, sizeof prod);
    prod[0].rate = 48000; prod[0].channels = 2; prod[0].burst = 1024; prod[0].pause_us = 2000;
    prod[0].use_s16 = 0;  prod[0].starve_every = 0;                    /* bypass, over-fed: ring full */
    prod[1].rate = 16000; prod[1].channels = 1; prod[1].burst = 320;  prod[1].pause_us = 20000;
    prod[1].use_s16 = 1;  prod[1].starve_every = 7;                    /* call voice, 20 ms frames */
    prod[2].rate = 44100; prod[2].channels = 2; prod[2].burst = 4096; prod[2].pause_us = 60000;
    prod[2].use_s16 = 0;  prod[2].starve_every = 5;                    /* media, decoded bursts */
    prod[3].rate = 8000;  prod[3].channels = 1; prod[3].burst = 160;  prod[3].pause_us = 20000;
    prod[3].use_s16 = 1;  prod[3].starve_every = 3;                    /* narrowband call */
    prod[4].rate = 22050; prod[4].channels = 1; prod[4].burst = 441;  prod[4].pause_us = 10000;
    prod[4].use_s16 = 1;  prod[4].starve_every = 0;                    /* dynamic source */
    {
        rtmix_source_id a = add_source(e, RTMIX_DOMAIN_MEDIA, 48000, 2, 2048);
        rtmix_source_id b = add_source(e, RTMIX_DOMAIN_CALL, 16000, 1, 0);
        rtmix_source_id c = add_source(e, RTMIX_DOMAIN_MEDIA, 44100, 2, 0);
        rtmix_source_id d = add_source(e, RTMIX_DOMAIN_CALL, 8000, 1, 0);
        rtmix_source_id x = add_source(e, RTMIX_DOMAIN_CALL, 22050, 1, 0);
        CHECK(a && b && c && d && x);
        atomic_store(&prod[0].id, a);
        atomic_store(&prod[1].id, b);
        atomic_store(&prod[2].id, c);
        atomic_store(&prod[3].id, d);
        atomic_store(&prod[4].id, x);
    }
    for (i = 0; i < 5; i++) prod[i].e = e;

    /* Warm-up outside the real-time region: one push per source and format,
     * one render of each kind. */
    for (i = 0; i < 5; i++) {
        rtmix_source_id id = atomic_load(&prod[i].id);
        int16_t s16[64 * 2];
        memset(s16, 0, sizeof s16);
        memset(warm, 0, sizeof warm);
        CHECK(rtmix_source_push_f32(e, id, warm, 64, NULL) == RTMIX_OK);
        CHECK(rtmix_source_push_s16(e, id, s16, 64, NULL) == RTMIX_OK);
    }
    CHECK(rtmix_render_f32(e, warm, 256) == RTMIX_OK);
    CHECK(rtmix_render_s16(e, outs, 256) == RTMIX_OK);
    CHECK(misc_calls(e, atomic_load(&prod[0].id), outf, outs) == 0);

    /* Threads: producers (real-time pushes), control (add/remove/gains),
     * a second would-be renderer. */
    memset(&ctl, 0, sizeof ctl);
    ctl.e = e;
    for (i = 0; i < 4; i++) ctl.fixed[i] = atomic_load(&prod[i].id);
    ctl.dynamic = &prod[4];
    memset(&intr, 0, sizeof intr);
    intr.e = e;
    for (i = 0; i < 5; i++) pthread_create(&tp[i], NULL, producer_main, &prod[i]);
    pthread_create(&tc, NULL, control_main, &ctl);
    pthread_create(&ti, NULL, intruder_main, &intr);

    /* The render thread: RENDER_ITERATIONS callbacks, paced at about four
     * times real time so sources both fill up and drain. */
    for (i = 0; i < RENDER_ITERATIONS; i++) {
        uint32_t n = blocks[i % (sizeof blocks / sizeof blocks[0])];
        int32_t st = rt_callback(e, outf, outs, n, i % 3 == 2, i % 2 == 0, &out_of_range);
        int misc = rt_misc(e, atomic_load(&prod[0].id), outf, outs);
        if (misc != 0) {
            misc_failures++;
            misc_bits |= misc;
        }
        if (st == RTMIX_OK) {
            render_ok++;
            frames_asked += n;
        } else if (st == RTMIX_ERR_BAD_STATE) {
            render_bad_state++; /* the intruder held the render role */
        } else {
            render_other++;
        }
        sleep_us((long)n * 1000000L / 48000L / 4);
    }
    atomic_store(&g_stop, 1);
    for (i = 0; i < 5; i++) pthread_join(tp[i], NULL);
    pthread_join(tc, NULL);
    pthread_join(ti, NULL);

    /* Results (outside the region). */
    rtmix_engine_stats_init(&es);
    CHECK(rtmix_engine_get_stats(e, &es) == RTMIX_OK);
    printf("renders: %ld ok, %ld bad_state, %ld other; intruder: %ld ok, %ld bad_state, %ld other\n",
           render_ok, render_bad_state, render_other, intr.ok, intr.bad_state, intr.other);
    for (i = 0; i < 5; i++)
        printf("producer %d (%u Hz %u ch): %ld pushes, %ld ok, %ld full, %ld not_found, %ld other\n", i,
               prod[i].rate, prod[i].channels, prod[i].pushes, prod[i].ok, prod[i].full, prod[i].not_found,
               prod[i].other);
    printf("control: %ld adds, %ld removes, %ld gain calls, %ld failures\n", ctl.adds, ctl.removes,
           ctl.gain_calls, ctl.failures);
    printf("engine: %llu render calls, %llu frames, %llu underrun frames, %llu rejected, %llu non-finite, "
           "%llu limiter frames, p50 %llu ns, p99 %llu ns, max %llu ns\n",
           (unsigned long long)es.render_calls, (unsigned long long)es.frames_rendered,
           (unsigned long long)es.underrun_frames, (unsigned long long)es.rejected_frames,
           (unsigned long long)es.nonfinite_samples, (unsigned long long)es.limiter_active_frames,
           (unsigned long long)es.render_ns_p50, (unsigned long long)es.render_ns_p99,
           (unsigned long long)es.render_ns_max);

    printf("other real-time-safe calls: %ld iterations with unexpected results (bits 0x%x)\n",
           misc_failures, misc_bits);
    CHECK(misc_failures == 0);
    CHECK(render_other == 0);
    CHECK(intr.other == 0);
    CHECK(render_ok + render_bad_state == RENDER_ITERATIONS);
    CHECK(render_ok > RENDER_ITERATIONS / 2);
    CHECK(!out_of_range);
    CHECK(es.render_calls == (uint64_t)(render_ok + intr.ok + 2));
    CHECK(es.frames_rendered >= frames_asked);
    CHECK(es.underrun_frames > 0);   /* sources drained while rendering */
    CHECK(es.rejected_frames > 0);   /* ring-full pushes happened */
    CHECK(prod[0].full > 0);
    CHECK(es.nonfinite_samples > 0);
    CHECK(ctl.adds > 10 && ctl.removes > 10);
    CHECK(ctl.failures == 0);
    for (i = 0; i < 4; i++) CHECK(prod[i].other == 0 && prod[i].not_found == 0 && prod[i].ok > 0);
    CHECK(prod[4].other == 0);
    rtmix_engine_destroy(e);
    printf("rtsan_harness: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
