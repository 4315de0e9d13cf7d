/* The C usage example shown in README.md (kept compiling and passing by
 * scripts/c-tests). A voice at 16 kHz mono and media at 44.1 kHz stereo are
 * mixed into 48 kHz stereo 10 ms blocks; after each render, 10 ms of a
 * 16 kHz mono microphone is processed against that playout (duplex
 * callback) into the publish stream. */
#include <math.h>
#include <stdio.h>
#include "rtmix.h"

int main(void) {
    rtmix_engine_config cfg;
    rtmix_engine_config_init(&cfg);            /* 48 kHz stereo, defaults */
    cfg.capture_rate = 16000;                  /* capture on: mic at 16 kHz (default 0 = off) */
    cfg.capture_channels = 1;                  /* defaults: aec_tail_ms 200, noise_suppression 1, */
                                               /* echo_suppression 1, agc 0, aec_stereo_reference 1 */
    rtmix_engine *engine = NULL;
    int32_t st = rtmix_engine_create(&cfg, &engine);
    if (st != RTMIX_OK) { fprintf(stderr, "create: %s\n", rtmix_status_string(st)); return 1; }

    rtmix_source_config voice_cfg, media_cfg;
    rtmix_source_config_init(&voice_cfg, RTMIX_DOMAIN_CALL, 16000, 1);
    rtmix_source_config_init(&media_cfg, RTMIX_DOMAIN_MEDIA, 44100, 2);
    /* Defaults: drift compensation on (call 40 ms, media 100 ms low-water
     * target), start when that much is buffered, call drops its oldest audio
     * when full, media refuses what does not fit. */
    rtmix_source_id voice, media;
    if (rtmix_source_add(engine, &voice_cfg, &voice) != RTMIX_OK ||
        rtmix_source_add(engine, &media_cfg, &media) != RTMIX_OK) return 1;

    rtmix_domain_set_gain(engine, RTMIX_DOMAIN_MEDIA, 0.5f); /* duck media, ramped */
    rtmix_domain_set_publish_gain(engine, RTMIX_DOMAIN_MEDIA, 0.5f); /* far end hears the media too */
    rtmix_set_stream_delay_ms(engine, 60);     /* optional hint; the estimator corrects it */

    /* Producer threads push what they decode (here: inline, 100 ms each). */
    static float voice_pcm[1600], media_pcm[4410 * 2];
    for (int i = 0; i < 1600; i++) voice_pcm[i] = 0.3f * sinf(2 * 3.14159265f * 300 * i / 16000.0f);
    for (int i = 0; i < 4410; i++) media_pcm[2 * i] = media_pcm[2 * i + 1] = 0.2f * sinf(2 * 3.14159265f * 440 * i / 44100.0f);
    uint32_t accepted = 0;
    rtmix_source_push_f32(engine, voice, voice_pcm, 1600, &accepted);
    rtmix_source_push_f32(engine, media, media_pcm, 4410, &accepted);

    /* The duplex device callback, 10 ms at a time (real-time safe): render
     * the playout, then process the microphone against it. */
    static float out[480 * 2], mic[160], publish[160];
    for (int block = 0; block < 10; block++) {
        st = rtmix_render_f32_checked(engine, out, sizeof out / sizeof out[0], 480);
        if (st != RTMIX_OK) { fprintf(stderr, "render: %s\n", rtmix_status_string(st)); return 1; }
        for (int i = 0; i < 160; i++) mic[i] = 0.01f * sinf(2 * 3.14159265f * 200 * i / 16000.0f);
        st = rtmix_capture_process_f32(engine, mic, publish, 160);
        if (st != RTMIX_OK) { fprintf(stderr, "capture: %s\n", rtmix_status_string(st)); return 1; }
    }

    /* The player's video clock: where is its audio? (any thread, lock-free) */
    rtmix_source_position pos;
    rtmix_source_position_init(&pos);
    rtmix_source_get_position(engine, media, &pos);
    printf("media: %llu frames played, a frame pushed now plays in %.1f ms\n",
           (unsigned long long)pos.frames_played, pos.latency_ns / 1e6);
    rtmix_source_end(engine, media);           /* end of stream: plays out, then SOURCE_DRAINED */

    /* Control thread: why did audio go missing? */
    rtmix_event ev;
    rtmix_event_init(&ev);
    while (rtmix_engine_next_event(engine, &ev) == RTMIX_OK && ev.type != RTMIX_EVENT_NONE)
        printf("%s source=%u value=%lld\n", rtmix_event_name(ev.type), ev.source, (long long)ev.value);

    rtmix_engine_stats stats;
    rtmix_engine_stats_init(&stats);
    rtmix_engine_get_stats(engine, &stats);
    printf("rendered %llu frames, %llu underrun frames, render p99 %llu ns; "
           "captured %llu frames, ERLE %.1f dB, delay %.1f ms\n",
           (unsigned long long)stats.frames_rendered, (unsigned long long)stats.underrun_frames,
           (unsigned long long)stats.render_ns_p99, (unsigned long long)stats.capture_frames,
           stats.aec_erle_db, stats.aec_delay_ms);
    rtmix_engine_destroy(engine);
    int ok = stats.frames_rendered == 4800 && stats.render_calls == 10 &&
             stats.capture_frames == 1600 && stats.capture_calls == 10 &&
             pos.frames_played > 0 && pos.latency_ns > 0;
    printf("readme_example: %d passed, %d failed\n", ok, !ok);
    return ok ? 0 : 1;
}
