/* Plain speexdsp baseline for aec_eval.py: speex_echo_cancellation (tail ms)
 * + speex_preprocess linked to it (denoise on, its residual-echo
 * suppression), 10 ms frames, on raw float32 mono files at one rate. The
 * reference file is already aligned by the caller (it leads the echo).
 *   speex_baseline RATE TAIL_MS mic.f32 ref.f32 out.f32
 * Evaluation only: not part of RTMix. */
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

static short s16(float v) {
    float x = v * 32768.0f;
    if (!(x == x)) x = 0;
    if (x > 32767) x = 32767;
    if (x < -32768) x = -32768;
    return (short)lrintf(x);
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: %s RATE TAIL_MS mic.f32 ref.f32 out.f32\n", argv[0]); return 2; }
    int rate = atoi(argv[1]), tail = atoi(argv[2]) * rate / 1000, n = rate / 100;
    FILE *fm = fopen(argv[3], "rb"), *fr = fopen(argv[4], "rb"), *fo = fopen(argv[5], "wb");
    if (!fm || !fr || !fo) { perror("open"); return 1; }
    SpeexEchoState *e = speex_echo_state_init(n, tail);
    SpeexPreprocessState *p = speex_preprocess_state_init(n, rate);
    speex_echo_ctl(e, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
    int on = 1;
    speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_DENOISE, &on);
    speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, e);
    float *mf = malloc(n * sizeof(float)), *rf = malloc(n * sizeof(float)), *of = malloc(n * sizeof(float));
    short *m = malloc(n * 2), *r = malloc(n * 2), *o = malloc(n * 2);
    for (;;) {
        if (fread(mf, sizeof(float), n, fm) != (size_t)n) break;
        size_t got = fread(rf, sizeof(float), n, fr);
        for (size_t i = got; i < (size_t)n; i++) rf[i] = 0;
        for (int i = 0; i < n; i++) { m[i] = s16(mf[i]); r[i] = s16(rf[i]); }
        speex_echo_cancellation(e, m, r, o);
        speex_preprocess_run(p, o);
        for (int i = 0; i < n; i++) of[i] = o[i] / 32768.0f;
        fwrite(of, sizeof(float), n, fo);
    }
    fclose(fo);
    return 0;
}
