/* Stereo playout: mono-downmix reference vs speex_echo_state_init_mc.
 *
 * Two loudspeakers play a stereo signal (a common part plus an independent
 * part per channel, `--width`), each through its own room response to one
 * microphone. The canceller gets either the mono downmix (L+R)/2 as its
 * reference or both channels (speex_echo_state_init_mc(N, tail, 1, 2)).
 * Prints the linear-stage ERLE (mic power / output power) per 2 s and the
 * median after 10 s, and the cost per frame (clock time, for a ratio only).
 *
 *   cc -O2 stereo_reference.c -o stereo_reference -lspeexdsp -lm
 *   ./stereo_reference [width 0..1]        (default 0.5)
 */
#include <math.h>
#include <speex/speex_echo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 16000
#define N 160
#define TAIL (RATE / 5)
#define SECONDS 30
#define LEN (RATE * SECONDS)
#define RIR 3200

static unsigned lcg = 1;
static float noise(void) {
    lcg = lcg * 1664525u + 1013904223u;
    return (float)(lcg >> 8) / 8388608.0f - 1.0f;
}

static void rir(float *h, int direct, float gain) {
    float env = 0.05f;
    memset(h, 0, sizeof(float) * RIR);
    h[direct] = gain;
    for (int i = direct + 16; i < RIR; i++) {
        h[i] = env * noise();
        env *= 0.99875f; /* about 60 dB in 0.35 s */
    }
}

/* Coloured source: noise through a one-pole low-pass, with a slow
 * amplitude envelope (music-like dynamics). */
static void source(float *x, int n, float pole, float rate_hz) {
    float y = 0;
    for (int i = 0; i < n; i++) {
        y = pole * y + (1 - pole) * noise();
        float env = 0.6f + 0.4f * sinf(2 * 3.14159265f * rate_hz * i / RATE);
        x[i] = 3.0f * y * env;
    }
}

static int cmp(const void *a, const void *b) {
    float d = *(const float *)a - *(const float *)b;
    return (d > 0) - (d < 0);
}

static float run(const float *l, const float *r, const float *mic, int stereo, double *seconds) {
    SpeexEchoState *st = stereo ? speex_echo_state_init_mc(N, TAIL, 1, 2) : speex_echo_state_init(N, TAIL);
    int rate = RATE;
    speex_echo_ctl(st, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
    static spx_int16_t m[N], ref[2 * N], out[N];
    float erle[SECONDS / 2];
    int windows = 0;
    double pm = 0, po = 0;
    clock_t t0 = clock();
    for (int f = 0; f < LEN / N; f++) {
        for (int i = 0; i < N; i++) {
            int k = f * N + i;
            m[i] = (spx_int16_t)lrintf(mic[k] * 32767);
            if (stereo) {
                ref[2 * i] = (spx_int16_t)lrintf(l[k] * 32767);
                ref[2 * i + 1] = (spx_int16_t)lrintf(r[k] * 32767);
            } else {
                ref[i] = (spx_int16_t)lrintf(0.5f * (l[k] + r[k]) * 32767);
            }
        }
        speex_echo_cancellation(st, m, ref, out);
        for (int i = 0; i < N; i++) {
            pm += (double)m[i] * m[i];
            po += (double)out[i] * out[i];
        }
        if ((f + 1) % (2 * RATE / N) == 0) {
            erle[windows++] = (float)(10 * log10(pm / (po + 1e-9)));
            pm = po = 0;
        }
    }
    *seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    speex_echo_state_destroy(st);
    printf("  %s:", stereo ? "init_mc (2 speakers)" : "mono downmix      ");
    for (int i = 0; i < windows; i++) printf(" %.1f", erle[i]);
    float tail[SECONDS / 2];
    int k = 0;
    for (int i = 5; i < windows; i++) tail[k++] = erle[i];
    qsort(tail, k, sizeof tail[0], cmp);
    printf("  | median after 10 s %.1f dB\n", tail[k / 2]);
    return tail[k / 2];
}

int main(int argc, char **argv) {
    float width = argc > 1 ? (float)atof(argv[1]) : 0.5f;
    float *c = malloc(sizeof(float) * LEN), *a = malloc(sizeof(float) * LEN), *b = malloc(sizeof(float) * LEN);
    float *l = malloc(sizeof(float) * LEN), *r = malloc(sizeof(float) * LEN), *mic = calloc(LEN, sizeof(float));
    static float hl[RIR], hr[RIR];
    source(c, LEN, 0.9f, 0.7f);
    source(a, LEN, 0.8f, 1.3f);
    source(b, LEN, 0.95f, 0.4f);
    for (int i = 0; i < LEN; i++) {
        l[i] = 0.1f * ((1 - width) * c[i] + width * a[i]);
        r[i] = 0.1f * ((1 - width) * c[i] + width * b[i]);
    }
    rir(hl, 24, 0.5f); /* left speaker 0.5 m away */
    rir(hr, 40, 0.4f); /* right speaker 0.85 m away */
    for (int i = 0; i < LEN; i++) {
        double s = 0;
        int jmax = i < RIR ? i + 1 : RIR;
        for (int j = 0; j < jmax; j++) s += hl[j] * l[i - j] + hr[j] * r[i - j];
        mic[i] = (float)s + 1e-4f * noise();
    }
    printf("stereo width %.2f (0 = mono content, 1 = independent channels), 16 kHz, tail 200 ms\n", width);
    double tm, ts;
    float em = run(l, r, mic, 0, &tm);
    float es = run(l, r, mic, 1, &ts);
    printf("  init_mc - mono: %+.1f dB; cost ratio %.2f\n", es - em, ts / tm);
    return 0;
}
