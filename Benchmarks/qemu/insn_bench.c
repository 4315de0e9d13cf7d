/* Driver for scripts/arm-insn-count: the README's duplex callback (48 kHz
 * stereo output; a 16 kHz mono voice and a 44.1 kHz stereo media source;
 * capture at 16 kHz mono) run for a given number of 10 ms blocks after 50
 * warm-up blocks. The instruction counts of two runs that differ only in
 * the number of blocks give the cost of one block; see the script.
 *
 * Usage: insn_bench CAPTURE BLOCKS DO_CAPTURE
 *   CAPTURE     1: the engine has capture on (16 kHz mono); 0: off
 *   BLOCKS      measured blocks after the warm-up
 *   DO_CAPTURE  1: each measured block also calls rtmix_capture_process_f32 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "rtmix.h"

/* 1 s of each signal, made before the engine: the measured blocks only
 * push slices of it (no sinf per block). */
static float voice_tab[16000], media_tab[44100 * 2], out[480 * 2], mic[160], publish[160];

static int block(rtmix_engine *e, rtmix_source_id voice, rtmix_source_id media, int k, int do_capture) {
    int i, slice = k % 100;
    if (rtmix_source_push_f32(e, voice, voice_tab + slice * 160, 160, NULL) != RTMIX_OK) return 0;
    if (rtmix_source_push_f32(e, media, media_tab + slice * 441 * 2, 441, NULL) != RTMIX_OK) return 0;
    if (rtmix_render_f32(e, out, 480) != RTMIX_OK) return 0;
    if (do_capture) {
        /* The mic hears the output 40 ms later, attenuated; plus a little noise. */
        for (i = 0; i < 160; i++) mic[i] = 0.3f * out[6 * i] + 0.001f * (float)((k * 160 + i) % 7 - 3);
        if (rtmix_capture_process_f32(e, mic, publish, 160) != RTMIX_OK) return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    rtmix_engine_config cfg;
    rtmix_source_config vc, mc;
    rtmix_engine *e = NULL;
    rtmix_source_id voice, media;
    int capture, blocks, do_capture, k;
    if (argc != 4) { fprintf(stderr, "usage: insn_bench CAPTURE BLOCKS DO_CAPTURE\n"); return 2; }
    capture = atoi(argv[1]);
    blocks = atoi(argv[2]);
    do_capture = atoi(argv[3]);
    for (k = 0; k < 16000; k++) voice_tab[k] = 0.3f * sinf(2 * 3.14159265f * 300 * (float)k / 16000.0f);
    for (k = 0; k < 44100; k++) media_tab[2 * k] = media_tab[2 * k + 1] = 0.2f * sinf(2 * 3.14159265f * 440 * (float)k / 44100.0f);
    rtmix_engine_config_init(&cfg);
    if (capture) { cfg.capture_rate = 16000; cfg.capture_channels = 1; }
    if (rtmix_engine_create(&cfg, &e) != RTMIX_OK) return 1;
    rtmix_source_config_init(&vc, RTMIX_DOMAIN_CALL, 16000, 1);
    rtmix_source_config_init(&mc, RTMIX_DOMAIN_MEDIA, 44100, 2);
    if (rtmix_source_add(e, &vc, &voice) != RTMIX_OK || rtmix_source_add(e, &mc, &media) != RTMIX_OK) return 1;
    for (k = 0; k < 50; k++)
        if (!block(e, voice, media, k, capture)) return 1;
    for (k = 50; k < 50 + blocks; k++)
        if (!block(e, voice, media, k, do_capture)) return 1;
    rtmix_engine_destroy(e);
    printf("insn_bench: %d blocks ok\n", blocks);
    return 0;
}
