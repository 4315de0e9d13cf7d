/* PortAudio for rtmix-cli live (the CLI only; librtmix does not use it). */
#include <portaudio.h>
#include <pa_linux_alsa.h>
#include <alsa/asoundlib.h>

/* ALSA prints a line to stderr for every configuration it probes while
 * PortAudio enumerates devices ("Unknown PCM cards.pcm.rear", ...). The
 * live host silences that unless --verbose is given. */
static void rtmix_live_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                          const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline void rtmix_live_alsa_quiet(int quiet) {
    snd_lib_error_set_handler(quiet ? rtmix_live_alsa_quiet_handler : NULL);
}
