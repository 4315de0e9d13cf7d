/*
 * rtc_host.c — a small RTC-like host around RTMix, in plain C11 + POSIX.
 *
 *   voice thread   synthesises far-end voice frames (16 kHz mono, 20 ms),
 *                  paced like a jitter buffer's output, into a CALL source
 *   media thread   pushes decoded player PCM (44.1 kHz stereo) in bursts,
 *                  topping the ring up whenever it falls under 200 ms
 *   render thread  the "device": every 10 ms (absolute clock_nanosleep
 *                  deadlines) renders 480 frames of 48 kHz stereo int16 into
 *                  a preallocated buffer (no I/O on that thread)
 *   main thread    watches engine events, then writes the WAV file and
 *                  prints the statistics
 *
 * Build against an installed RTMix (pkg-config only):
 *   cc -std=c11 -O2 rtc_host.c $(pkg-config --cflags --libs rtmix) -pthread -lm -o rtc_host
 *   static: cc -std=c11 -O2 rtc_host.c $(pkg-config --cflags rtmix) -Wl,--as-needed \
 *           -Wl,-Bstatic -lrtmix -Wl,-Bdynamic $(pkg-config --static --libs rtmix) -pthread -lm
 * Run:   ./rtc_host [out.wav] [seconds]        (defaults: rtc_host.wav, 2)
 * Exits non-zero on any RTMix API error, or on any underrun after the first
 * 100 ms (the start-up window).
 */
#define _POSIX_C_SOURCE 200809L
#include <rtmix.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OUT_RATE 48000u
#define OUT_CHANNELS 2u
#define BLOCK_FRAMES 480u /* 10 ms */
#define VOICE_RATE 16000u
#define VOICE_FRAMES 320u /* 20 ms */
#define VOICE_LEAD 3      /* frames queued before the first render (60 ms) */
#define MEDIA_RATE 44100u
#define MEDIA_BURST 2048u
#define MEDIA_LOW_MS 200u
#define STARTUP_FRAMES (OUT_RATE / 10) /* underruns in the first 100 ms are tolerated */
#define TWO_PI 6.28318530717958647692

static rtmix_engine *engine;
static rtmix_source_id voice_id, media_id;
static atomic_int api_errors;
static atomic_bool rendering_done;
static int16_t *wav_pcm; /* blocks x BLOCK_FRAMES x OUT_CHANNELS, preallocated */
static uint32_t blocks_total;
static struct timespec start_time; /* first render deadline */

static void api_error(const char *call, int32_t st) {
    atomic_fetch_add(&api_errors, 1);
    fprintf(stderr, "rtc_host: %s failed: %s (%d)\n", call, rtmix_status_string(st), (int)st);
}

static void add_ns(struct timespec *t, long ns) {
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec += 1;
    }
}

static void sleep_until(const struct timespec *deadline) {
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR) {
    }
}

/* ------------------------------------------------------------ voice */

/* A crude voiced sound: harmonics of a gliding 110..150 Hz pitch with two
 * formant-like peaks, shaped into ~4 syllables per second. */
static void synth_voice(float *pcm, uint32_t frames, uint64_t *n) {
    static double phase;
    for (uint32_t i = 0; i < frames; i++, (*n)++) {
        double t = (double)*n / VOICE_RATE;
        double f0 = 130.0 + 20.0 * sin(TWO_PI * 0.7 * t);
        phase += TWO_PI * f0 / VOICE_RATE;
        if (phase > TWO_PI) phase -= TWO_PI;
        double s = 0.0;
        for (int h = 1; h <= 20; h++) {
            double fh = h * f0;
            double formants = exp(-pow((fh - 700.0) / 250.0, 2)) + 0.6 * exp(-pow((fh - 1200.0) / 300.0, 2));
            s += (0.05 + formants) / h * sin(h * phase);
        }
        double syllable = 0.5 - 0.5 * cos(TWO_PI * 4.0 * t);
        pcm[i] = (float)(0.35 * syllable * s);
    }
}

static void *voice_thread(void *arg) {
    (void)arg;
    float frame[VOICE_FRAMES];
    uint64_t n = 0;
    struct timespec next = start_time;
    /* Jitter-buffer lead: VOICE_LEAD frames before the first render. */
    for (int i = 0; i < VOICE_LEAD; i++) {
        synth_voice(frame, VOICE_FRAMES, &n);
        uint32_t accepted = 0;
        int32_t st = rtmix_source_push_f32(engine, voice_id, frame, VOICE_FRAMES, &accepted);
        if (st != RTMIX_OK) api_error("rtmix_source_push_f32 (voice)", st);
    }
    add_ns(&next, 20 * 1000000L);
    while (!atomic_load(&rendering_done)) {
        sleep_until(&next);
        add_ns(&next, 20 * 1000000L);
        synth_voice(frame, VOICE_FRAMES, &n);
        uint32_t accepted = 0;
        int32_t st = rtmix_source_push_f32(engine, voice_id, frame, VOICE_FRAMES, &accepted);
        if (st != RTMIX_OK) api_error("rtmix_source_push_f32 (voice)", st);
    }
    return NULL;
}

/* ------------------------------------------------------------ media */

/* "Decodes" a burst of music: an A-minor triad, panned, int16. */
static void decode_burst(int16_t *pcm, uint32_t frames, uint64_t *n) {
    static const double notes[3] = {220.0, 261.63, 329.63};
    for (uint32_t i = 0; i < frames; i++, (*n)++) {
        double t = (double)*n / MEDIA_RATE;
        double l = 0.0, r = 0.0;
        for (int k = 0; k < 3; k++) {
            double s = sin(TWO_PI * notes[k] * t) * (0.6 + 0.4 * sin(TWO_PI * (0.25 + 0.1 * k) * t));
            l += s * (1.0 - 0.3 * k);
            r += s * (0.4 + 0.3 * k);
        }
        pcm[2 * i] = (int16_t)(6000.0 * l);
        pcm[2 * i + 1] = (int16_t)(6000.0 * r);
    }
}

static void *media_thread(void *arg) {
    (void)arg;
    static int16_t burst[MEDIA_BURST * 2];
    uint64_t n = 0;
    const uint32_t low = MEDIA_RATE * MEDIA_LOW_MS / 1000;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&rendering_done)) {
        uint32_t buffered = 0;
        int32_t st = rtmix_source_get_buffered(engine, media_id, &buffered);
        if (st != RTMIX_OK) api_error("rtmix_source_get_buffered", st);
        while (st == RTMIX_OK && buffered < low) { /* a burst of decoded packets */
            decode_burst(burst, MEDIA_BURST, &n);
            uint32_t accepted = 0;
            st = rtmix_source_push_s16(engine, media_id, burst, MEDIA_BURST, &accepted);
            if (st != RTMIX_OK) api_error("rtmix_source_push_s16 (media)", st);
            buffered += accepted;
        }
        add_ns(&next, 50 * 1000000L); /* the "decoder" wakes every 50 ms */
        sleep_until(&next);
    }
    return NULL;
}

/* ------------------------------------------------------------ render */

static void *render_thread(void *arg) {
    (void)arg;
    struct sched_param sp = {.sched_priority = 10};
    (void)pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* best effort */
    struct timespec next = start_time;
    for (uint32_t b = 0; b < blocks_total; b++) {
        sleep_until(&next);
        add_ns(&next, 10 * 1000000L);
        int32_t st = rtmix_render_s16(engine, wav_pcm + (size_t)b * BLOCK_FRAMES * OUT_CHANNELS, BLOCK_FRAMES);
        if (st != RTMIX_OK) api_error("rtmix_render_s16", st);
    }
    atomic_store(&rendering_done, true);
    return NULL;
}

/* ------------------------------------------------------------ WAV */

static void put_le(unsigned char *p, uint32_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static int write_wav(const char *path, const int16_t *pcm, uint32_t frames) {
    uint32_t data_bytes = frames * OUT_CHANNELS * 2;
    unsigned char h[44];
    memcpy(h, "RIFF", 4);
    put_le(h + 4, 36 + data_bytes, 4);
    memcpy(h + 8, "WAVEfmt ", 8);
    put_le(h + 16, 16, 4);                         /* fmt chunk size */
    put_le(h + 20, 1, 2);                          /* PCM */
    put_le(h + 22, OUT_CHANNELS, 2);
    put_le(h + 24, OUT_RATE, 4);
    put_le(h + 28, OUT_RATE * OUT_CHANNELS * 2, 4); /* byte rate */
    put_le(h + 32, OUT_CHANNELS * 2, 2);            /* block align */
    put_le(h + 34, 16, 2);                          /* bits per sample */
    memcpy(h + 36, "data", 4);
    put_le(h + 40, data_bytes, 4);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(h, 1, sizeof h, f) == sizeof h;
    for (uint32_t i = 0; ok && i < frames * OUT_CHANNELS; i++) { /* samples little-endian */
        unsigned char s[2];
        put_le(s, (uint16_t)pcm[i], 2);
        ok = fwrite(s, 1, 2, f) == 2;
    }
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* ------------------------------------------------------------ main */

static uint64_t events_after_startup(const char **last_name) {
    uint64_t late_underruns = 0;
    rtmix_event ev;
    for (;;) {
        rtmix_event_init(&ev);
        int32_t st = rtmix_engine_next_event(engine, &ev);
        if (st != RTMIX_OK) {
            api_error("rtmix_engine_next_event", st);
            break;
        }
        if (ev.type == RTMIX_EVENT_NONE) break;
        printf("rtc_host: event %-16s source %u at frame %llu value %lld\n", rtmix_event_name(ev.type),
               (unsigned)ev.source, (unsigned long long)ev.frame_time, (long long)ev.value);
        if (ev.type == RTMIX_EVENT_UNDERRUN_BEGAN && ev.frame_time >= STARTUP_FRAMES) {
            late_underruns++;
            *last_name = rtmix_event_name(ev.type);
        }
    }
    return late_underruns;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "rtc_host.wav";
    double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    if (seconds <= 0.0 || seconds > 600.0) {
        fprintf(stderr, "usage: rtc_host [out.wav] [seconds (0..600]]\n");
        return 2;
    }
    uint32_t v = rtmix_version();
    printf("rtc_host: librtmix %u.%u.%u (header %d.%d.%d)\n", v >> 16, (v >> 8) & 0xff, v & 0xff,
           RTMIX_VERSION_MAJOR, RTMIX_VERSION_MINOR, RTMIX_VERSION_PATCH);
    if (v >> 16 != RTMIX_VERSION_MAJOR) {
        fprintf(stderr, "rtc_host: library ABI major differs from the header\n");
        return 1;
    }

    rtmix_engine_config cfg;
    int32_t st = rtmix_engine_config_init(&cfg);
    cfg.sample_rate = OUT_RATE;
    cfg.channels = OUT_CHANNELS;
    cfg.max_frames = BLOCK_FRAMES;
    cfg.max_sources = 4;
    if (st == RTMIX_OK) st = rtmix_engine_create(&cfg, &engine);
    if (st != RTMIX_OK) {
        api_error("rtmix_engine_create", st);
        return 1;
    }
    rtmix_source_config voice, media;
    rtmix_source_config_init(&voice, RTMIX_DOMAIN_CALL, VOICE_RATE, 1);
    rtmix_source_config_init(&media, RTMIX_DOMAIN_MEDIA, MEDIA_RATE, 2);
    media.gain = 0.7f;
    if ((st = rtmix_source_add(engine, &voice, &voice_id)) != RTMIX_OK) api_error("rtmix_source_add (voice)", st);
    if ((st = rtmix_source_add(engine, &media, &media_id)) != RTMIX_OK) api_error("rtmix_source_add (media)", st);
    if (atomic_load(&api_errors) != 0) {
        rtmix_engine_destroy(engine);
        return 1;
    }
    /* Ducking: the call is active, so the media domain plays at -6 dB. */
    if ((st = rtmix_domain_set_gain(engine, RTMIX_DOMAIN_MEDIA, 0.5f)) != RTMIX_OK) api_error("rtmix_domain_set_gain", st);

    blocks_total = (uint32_t)(seconds * 100.0 + 0.5);
    wav_pcm = calloc((size_t)blocks_total * BLOCK_FRAMES * OUT_CHANNELS, sizeof *wav_pcm);
    if (!wav_pcm) {
        fprintf(stderr, "rtc_host: out of memory\n");
        return 1;
    }

    /* Producers start now; the first render is 30 ms later. */
    clock_gettime(CLOCK_MONOTONIC, &start_time);
    add_ns(&start_time, 30 * 1000000L);
    pthread_t tv, tm, tr;
    if (pthread_create(&tv, NULL, voice_thread, NULL) != 0 || pthread_create(&tm, NULL, media_thread, NULL) != 0 ||
        pthread_create(&tr, NULL, render_thread, NULL) != 0) {
        fprintf(stderr, "rtc_host: pthread_create failed\n");
        return 1;
    }

    uint64_t late_underruns = 0;
    const char *late_name = NULL;
    struct timespec poll = start_time;
    while (!atomic_load(&rendering_done)) { /* control thread: drain events */
        add_ns(&poll, 100 * 1000000L);
        sleep_until(&poll);
        late_underruns += events_after_startup(&late_name);
    }
    pthread_join(tr, NULL);
    pthread_join(tv, NULL);
    pthread_join(tm, NULL);
    late_underruns += events_after_startup(&late_name);

    /* Statistics. */
    rtmix_engine_stats es;
    rtmix_engine_stats_init(&es);
    if ((st = rtmix_engine_get_stats(engine, &es)) != RTMIX_OK) api_error("rtmix_engine_get_stats", st);
    printf("rtc_host: %llu render calls, %llu frames (%.2f s), underrun frames %llu, rejected %llu, "
           "limiter active %llu frames (min %.2f dB)\n",
           (unsigned long long)es.render_calls, (unsigned long long)es.frames_rendered,
           (double)es.frames_rendered / OUT_RATE, (unsigned long long)es.underrun_frames,
           (unsigned long long)es.rejected_frames, (unsigned long long)es.limiter_active_frames,
           (double)es.limiter_min_gain_db);
    printf("rtc_host: render time p50 %.1f us, p99 %.1f us, max %.1f us (budget 10000 us)\n",
           es.render_ns_p50 / 1e3, es.render_ns_p99 / 1e3, es.render_ns_max / 1e3);
    const rtmix_source_id ids[2] = {voice_id, media_id};
    const char *names[2] = {"voice", "media"};
    for (int i = 0; i < 2; i++) {
        rtmix_source_stats ss;
        rtmix_source_stats_init(&ss);
        if ((st = rtmix_source_get_stats(engine, ids[i], &ss)) != RTMIX_OK) {
            api_error("rtmix_source_get_stats", st);
            continue;
        }
        printf("rtc_host: %-5s %5u Hz x%u: pushed %llu, consumed %llu, rejected %llu, underrun frames %llu "
               "(%llu events), buffered %.1f ms\n",
               names[i], (unsigned)ss.sample_rate, (unsigned)ss.channels, (unsigned long long)ss.frames_pushed,
               (unsigned long long)ss.frames_consumed, (unsigned long long)ss.frames_rejected,
               (unsigned long long)ss.underrun_frames, (unsigned long long)ss.underrun_events,
               (double)ss.buffered_ms);
    }

    /* The WAV: written off the render thread, after it finished. */
    uint32_t frames = blocks_total * BLOCK_FRAMES;
    double sum_sq = 0.0;
    for (size_t i = 0; i < (size_t)frames * OUT_CHANNELS; i++) sum_sq += (double)wav_pcm[i] * wav_pcm[i];
    double rms = sqrt(sum_sq / ((double)frames * OUT_CHANNELS)) / 32768.0;
    int wav_ok = write_wav(path, wav_pcm, frames) == 0;
    printf("rtc_host: wrote %s (%u frames, 48 kHz stereo s16, rms %.3f)%s\n", path, frames, rms,
           wav_ok ? "" : " FAILED");

    rtmix_engine_destroy(engine);
    free(wav_pcm);

    int errors = atomic_load(&api_errors);
    int ok = errors == 0 && late_underruns == 0 && wav_ok && rms > 0.01;
    printf("rtc_host: %s (%d API errors, %llu underruns after the first 100 ms%s%s)\n", ok ? "ok" : "FAILED",
           errors, (unsigned long long)late_underruns, late_name ? ", last: " : "", late_name ? late_name : "");
    return ok ? 0 : 1;
}
