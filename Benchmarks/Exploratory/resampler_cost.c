// Exploratory reproducer (not part of the benchmark suite): instructions per
// 10 ms callback (480 output frames at 48 kHz) of libsamplerate
// SRC_SINC_FASTEST vs. the speexdsp resampler, for one source.
//
//   gcc -O2 resampler_cost.c -o /tmp/resampler_cost -lsamplerate -lspeexdsp -lm
//   for a in "src" "speex 3" "speex 5"; do
//     valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file=/tmp/rc.out /tmp/resampler_cost 16000 1 $a >/dev/null 2>&1
//     echo "$a: $(awk '/^summary:/ { print $2 / 1050 }' /tmp/rc.out) Ir/callback"
//   done
//
// Arguments: RATE CHANNELS src|speex [QUALITY]. 1050 callbacks, all counted
// (the first few include the filters' start-up). Compares cost only, not
// quality: check SNR (the engine's tests want >= 60 dB)
// before switching a path.
#include <samplerate.h>
#include <speex/speex_resampler.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CALLBACKS = 1050, OUT_FRAMES = 480, OUT_RATE = 48000 };
static float *in, out[OUT_FRAMES * 2];
static int rate, channels, loop_frames, window;

__attribute__((noinline)) void measured_src(SRC_STATE *s, int *pos) {
    SRC_DATA d;
    memset(&d, 0, sizeof d);
    d.data_in = in + (size_t)*pos * channels;
    d.input_frames = window;
    d.data_out = out;
    d.output_frames = OUT_FRAMES;
    d.src_ratio = (double)OUT_RATE / rate;
    if (src_process(s, &d) != 0) abort();
    *pos += (int)d.input_frames_used;
    if (*pos >= loop_frames) *pos -= loop_frames;
}

__attribute__((noinline)) void measured_speex(SpeexResamplerState *s, int *pos) {
    spx_uint32_t inl = (spx_uint32_t)window, outl = OUT_FRAMES;
    speex_resampler_process_interleaved_float(s, in + (size_t)*pos * channels, &inl, out, &outl);
    *pos += (int)inl;
    if (*pos >= loop_frames) *pos -= loop_frames;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s RATE CHANNELS src|speex [QUALITY]\n", argv[0]); return 64; }
    rate = atoi(argv[1]);
    channels = atoi(argv[2]);
    int use_speex = strcmp(argv[3], "speex") == 0, quality = argc > 4 ? atoi(argv[4]) : 3, err = 0, pos = 0;
    loop_frames = rate;
    window = OUT_FRAMES * rate / OUT_RATE + 8;  // what one callback needs, as the engine offers
    in = malloc(sizeof(float) * (size_t)(loop_frames + window) * channels);
    for (int i = 0; i < loop_frames + window; i++)
        for (int c = 0; c < channels; c++)
            in[(size_t)i * channels + c] = 0.1f * sinf(2 * 3.14159265f * 220 * (c + 1) * (i % loop_frames) / rate);
    if (use_speex) {
        SpeexResamplerState *s = speex_resampler_init(channels, rate, OUT_RATE, quality, &err);
        if (!s) return 1;
        speex_resampler_skip_zeros(s);
        for (int i = 0; i < CALLBACKS; i++) measured_speex(s, &pos);
    } else {
        SRC_STATE *s = src_new(SRC_SINC_FASTEST, channels, &err);
        if (!s) return 1;
        for (int i = 0; i < CALLBACKS; i++) measured_src(s, &pos);
    }
    printf("%f\n", out[100]);
    return 0;
}
