/* device_host.c: RTMix on a real audio device (PortAudio), in plain C.
 *
 *   cc device_host.c $(pkg-config --cflags --libs rtmix portaudio-2.0) -lm
 *   ./device_host [seconds]          (default 5; uses the default devices)
 *
 * One duplex stream: every callback renders the mix into the speaker
 * buffer, then hands the microphone to the capture path, which cancels the
 * echo of everything just played (voice AND media) and returns the publish
 * signal. A producer (here: the main thread) pushes a 440 Hz "far-end
 * voice" at its own pace; the main thread also reads stats and events.
 * The engine is told nothing about the device latency: it estimates the
 * playout-to-capture delay itself (see "Device latency" below).
 *
 * Exit status: 0 ok, 1 engine error, 2 no usable audio device.
 * PortAudio's ALSA and JACK backends print a line to stderr for every
 * configuration they probe (about 100 lines on a machine without a sound
 * server); that is silenced while PortAudio starts and opens the devices,
 * unless DEVICE_HOST_VERBOSE=1. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <portaudio.h>
#include <rtmix.h>

#define RATE 48000     /* one rate for output and capture: a duplex stream has one */
#define PERIOD 480     /* frames per callback (10 ms); 0 would let the host choose */
#define MAX_FRAMES 4096 /* engine max_frames: longer callbacks are split */
#define TWO_PI 6.283185307179586

/* Points stderr at /dev/null; returns the saved descriptor (-1: left as
 * is, e.g. DEVICE_HOST_VERBOSE=1). */
static int quiet_stderr(void) {
    const char *verbose = getenv("DEVICE_HOST_VERBOSE");
    if (verbose != NULL && strcmp(verbose, "1") == 0) return -1;
    fflush(stderr);
    int saved = dup(2), nul = open("/dev/null", O_WRONLY);
    if (saved < 0 || nul < 0) {
        if (saved >= 0) close(saved);
        if (nul >= 0) close(nul);
        return -1;
    }
    dup2(nul, 2);
    close(nul);
    return saved;
}

static void restore_stderr(int saved) {
    if (saved < 0) return;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

typedef struct {
    rtmix_engine *engine;
    float publish[MAX_FRAMES]; /* preallocated: the callback never allocates */
    volatile unsigned long callbacks, render_errors, capture_errors;
} host;

/* The device callback runs on the audio server's real-time thread.
 * Allowed here: rtmix_render_*, rtmix_capture_process_*, other calls the
 * header marks "Real-time safe: yes", memcpy, arithmetic.
 * Not allowed: malloc/free, printf, locks, file or network I/O, sleeping,
 * waiting for another thread, and the engine's control calls (source
 * add/remove, set_output_format, destroy). */
static int callback(const void *in, void *out, unsigned long frames,
                    const PaStreamCallbackTimeInfo *time, PaStreamCallbackFlags flags, void *user) {
    host *h = user;
    const float *mic = in;
    float *speaker = out;
    (void)time;
    (void)flags; /* paOutputUnderflow etc.: count them if you want (the engine cannot see them) */
    h->callbacks++;
    /* The device may call back with more frames than max_frames, or with
     * varying counts: process in chunks; any count is fine. */
    for (unsigned long done = 0; done < frames;) {
        uint32_t n = (uint32_t)(frames - done > MAX_FRAMES ? MAX_FRAMES : frames - done);
        /* 1. Render first: the reference for this block reaches the echo
         *    canceller before its echo can come back through the mic. The
         *    _checked variant never writes past the buffer, even if the
         *    engine's channel count were changed under us. */
        if (rtmix_render_f32_checked(h->engine, speaker + done * 2, (size_t)n * 2, n) != RTMIX_OK)
            h->render_errors++; /* the buffer was zeroed: silence plays */
        /* 2. Then the microphone (NULL on an input underflow: feed nothing). */
        if (mic) {
            if (rtmix_capture_process_f32(h->engine, mic + done, h->publish, n) != RTMIX_OK)
                h->capture_errors++;
            /* h->publish now holds the echo-cancelled voice: hand it to the
             * encoder through a lock-free queue (not done in this example). */
        }
        done += n;
    }
    return paContinue;
}

/* The producer's signal at 16 kHz. */
static void next_voice(float *out, int n) {
    static uint32_t seed = 1, t = 0;
    for (int i = 0; i < n; i++, t++) {
        seed = seed * 1664525u + 1013904223u; /* LCG noise in [-1, 1) */
        float noise = (float)(seed >> 8) / 8388608.0f - 1.0f;
        float env = 0.5f + 0.5f * (float)sin(TWO_PI * 3.0 * t / 16000);
        out[i] = 0.3f * env * noise;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    static host h; /* static: the 16 KiB publish buffer stays off the stack */

    /* Engine: 48 kHz stereo output, mono capture at the same rate. */
    rtmix_engine_config cfg;
    rtmix_engine_config_init(&cfg);
    cfg.sample_rate = RATE;
    cfg.channels = 2;
    cfg.max_frames = MAX_FRAMES;
    cfg.capture_rate = RATE;
    cfg.capture_channels = 1;
    int32_t st = rtmix_engine_create(&cfg, &h.engine);
    if (st != RTMIX_OK) { fprintf(stderr, "device_host: engine: %s\n", rtmix_status_string(st)); return 1; }

    rtmix_source_config voice_cfg;
    rtmix_source_config_init(&voice_cfg, RTMIX_DOMAIN_CALL, 16000, 1);
    voice_cfg.target_buffer_ms = 40; /* the producer's clock is not the device's: follow it */
    rtmix_source_id voice;
    if ((st = rtmix_source_add(h.engine, &voice_cfg, &voice)) != RTMIX_OK) {
        fprintf(stderr, "device_host: source: %s\n", rtmix_status_string(st));
        rtmix_engine_destroy(h.engine);
        return 1;
    }

    /* Device: no device is an error to report, not a crash. The backends'
     * probing noise goes to /dev/null (see the top of the file). */
    int saved_stderr = quiet_stderr();
    if (Pa_Initialize() != paNoError) {
        restore_stderr(saved_stderr);
        fprintf(stderr, "device_host: PortAudio does not initialize\n");
        return 2;
    }
    PaDeviceIndex out_dev = Pa_GetDefaultOutputDevice(), in_dev = Pa_GetDefaultInputDevice();
    if (out_dev == paNoDevice || in_dev == paNoDevice) {
        restore_stderr(saved_stderr);
        fprintf(stderr, "device_host: no default audio %s device (start a sound server, see docs/live.md)\n",
                out_dev == paNoDevice ? "output" : "input");
        Pa_Terminate();
        rtmix_engine_destroy(h.engine);
        return 2;
    }
    PaStreamParameters op = {out_dev, 2, paFloat32, Pa_GetDeviceInfo(out_dev)->defaultLowOutputLatency, NULL};
    PaStreamParameters ip = {in_dev, 1, paFloat32, Pa_GetDeviceInfo(in_dev)->defaultLowInputLatency, NULL};
    PaStream *stream = NULL;
    PaError pe = Pa_OpenStream(&stream, &ip, &op, RATE, PERIOD, paClipOff, callback, &h);
    restore_stderr(saved_stderr);
    if (pe != paNoError) {
        fprintf(stderr, "device_host: cannot open a duplex stream: %s\n", Pa_GetErrorText(pe));
        Pa_Terminate();
        rtmix_engine_destroy(h.engine);
        return 2;
    }
    /* Device latency: PortAudio's figures are only what the driver claims.
     * By default tell the engine nothing: it measures the real delay.
     * A host that knows better may give a hint (the estimator still
     * replaces a wrong one):
     *   const PaStreamInfo *si = Pa_GetStreamInfo(stream);
     *   rtmix_set_stream_delay_ms(h.engine, (int32_t)((si->outputLatency + si->inputLatency) * 1000));
     * Format changes: when the device's rate or channel count changes,
     * stop the stream, call rtmix_engine_set_output_format (control
     * thread; sources and gains are kept), reopen and restart. The capture
     * rate is fixed at creation: a new capture rate needs a new engine. */

    /* Producer (this thread): 20 ms of "voice" whenever < 60 ms is buffered:
     * noise in 3 Hz syllables (a pure tone would do too, but its echo delay
     * is ambiguous: the estimator needs a signal that does not repeat). */
    float tone[320];
    uint32_t accepted;
    for (int k = 0; k < 3; k++) { /* prefill before the device starts */
        next_voice(tone, 320);
        rtmix_source_push_f32(h.engine, voice, tone, 320, &accepted);
    }
    if ((pe = Pa_StartStream(stream)) != paNoError) {
        fprintf(stderr, "device_host: cannot start: %s\n", Pa_GetErrorText(pe));
        Pa_CloseStream(stream);
        Pa_Terminate();
        rtmix_engine_destroy(h.engine);
        return 2;
    }
    double end = now_s() + seconds;
    rtmix_source_stats ss;
    rtmix_source_stats_init(&ss);
    rtmix_event ev;
    rtmix_event_init(&ev);
    while (now_s() < end && Pa_IsStreamActive(stream) == 1) {
        if (rtmix_source_get_stats(h.engine, voice, &ss) == RTMIX_OK && ss.buffered_ms < 60) {
            next_voice(tone, 320);
            rtmix_source_push_f32(h.engine, voice, tone, 320, &accepted);
        }
        /* Control thread: events say why audio went missing. */
        while (rtmix_engine_next_event(h.engine, &ev) == RTMIX_OK && ev.type != RTMIX_EVENT_NONE)
            printf("device_host: event %s value %lld\n", rtmix_event_name(ev.type), (long long)ev.value);
        Pa_Sleep(5);
    }
    Pa_StopStream(stream); /* the callback is not running after this returns */
    Pa_CloseStream(stream);
    Pa_Terminate();

    rtmix_engine_stats es;
    rtmix_engine_stats_init(&es);
    rtmix_engine_get_stats(h.engine, &es);
    printf("device_host: %lu callbacks, %llu frames rendered, %llu captured, render errors %lu, capture errors %lu\n",
           h.callbacks, (unsigned long long)es.frames_rendered, (unsigned long long)es.capture_frames,
           h.render_errors, h.capture_errors);
    printf("device_host: echo delay %.1f ms (%s), ERLE %.1f dB\n", es.aec_delay_ms,
           es.aec_delay_source == RTMIX_DELAY_SOURCE_ESTIMATOR ? "estimated" : "not yet estimated", es.aec_erle_db);
    rtmix_engine_destroy(h.engine); /* after the stream is closed: never while a callback may run */
    return h.render_errors || h.capture_errors ? 1 : 0;
}
