// mix_tones.cpp — RTMix from C++17 through the header-only wrapper rtmix.hpp.
//
// Mixes a 440 Hz tone (MEDIA, 44.1 kHz mono, float) and a 660 Hz tone (CALL,
// 16 kHz stereo, int16) into 1 s of 48 kHz stereo, in 10 ms blocks, then
// checks the result and the wrapper's error handling. Single-threaded for
// brevity (see examples/c/rtc_host.c for producer and render threads).
//
// Build against an installed RTMix (pkg-config only):
//   c++ -std=c++17 mix_tones.cpp $(pkg-config --cflags --libs rtmix) -o mix_tones
// Exit status 0 when every check passes.
#include <rtmix.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr double kTwoPi = 6.283185307179586;
int failures = 0;

void expect(bool ok, const char *what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (!ok) ++failures;
}

}  // namespace

int main() {
    try {
        const uint32_t v = rtmix::version();
        std::printf("mix_tones: librtmix %u.%u.%u (header %d.%d.%d)\n", v >> 16, (v >> 8) & 0xff,
                    v & 0xff, RTMIX_VERSION_MAJOR, RTMIX_VERSION_MINOR, RTMIX_VERSION_PATCH);
        expect(v >> 16 == RTMIX_VERSION_MAJOR, "library ABI major matches the header");

        rtmix::engine eng;  // defaults: 48 kHz stereo
        expect(eng.sample_rate() == 48000 && eng.channels() == 2, "default engine is 48 kHz stereo");

        rtmix::source media = eng.add_source(RTMIX_DOMAIN_MEDIA, 44100, 1);
        rtmix::source call = eng.add_source(RTMIX_DOMAIN_CALL, 16000, 2);
        media.set_gain(0.5f);
        eng.set_domain_gain(RTMIX_DOMAIN_MEDIA, 0.8f);

        // Move-only handles: moving transfers ownership, the source stays.
        rtmix::source moved = std::move(call);
        expect(!call && moved && moved.id() != 0, "moving a source transfers the handle");

        const uint32_t blocks = 100;  // 100 x 10 ms = 1 s
        const uint32_t out_frames = 480;
        std::vector<float> out(out_frames * eng.channels());
        std::vector<float> tone_a(441);              // 10 ms at 44.1 kHz, mono
        std::array<int16_t, 160 * 2> tone_b{};       // 10 ms at 16 kHz, stereo
        uint64_t pushed_a = 0, pushed_b = 0, na = 0, nb = 0;
        double sum_sq = 0.0;
        float peak = 0.0f;

        for (uint32_t block = 0; block < blocks; ++block) {
            // Produce 10 ms per source (two blocks of lead at the start).
            for (int lead = 0; lead < (block == 0 ? 3 : 1); ++lead) {
                for (auto &s : tone_a) s = 0.5f * float(std::sin(kTwoPi * 440.0 * double(na++) / 44100.0));
                for (size_t f = 0; f < tone_b.size() / 2; ++f, ++nb) {
                    const auto s = int16_t(8000.0 * std::sin(kTwoPi * 660.0 * double(nb) / 16000.0));
                    tone_b[2 * f] = s;
                    tone_b[2 * f + 1] = int16_t(-s);
                }
                pushed_a += media.push(rtmix::span<const float>(tone_a));
                pushed_b += moved.push(rtmix::span<const int16_t>(tone_b));
            }
            eng.render(rtmix::span<float>(out));
            for (float s : out) {
                sum_sq += double(s) * double(s);
                peak = std::fmax(peak, std::fabs(s));
            }
        }
        const double rms = std::sqrt(sum_sq / double(blocks * out.size()));
        std::printf("mix_tones: pushed %llu + %llu frames, output rms %.4f, peak %.4f\n",
                    (unsigned long long)pushed_a, (unsigned long long)pushed_b, rms, double(peak));
        expect(pushed_a == na && pushed_b == nb, "every push was accepted in full");
        expect(rms > 0.05 && peak <= 1.0f, "the mix is audible and within [-1, 1]");

        const rtmix_engine_stats st = eng.stats();
        std::printf("mix_tones: %llu render calls, %llu frames, %llu underrun frames, p99 %llu ns\n",
                    (unsigned long long)st.render_calls, (unsigned long long)st.frames_rendered,
                    (unsigned long long)st.underrun_frames, (unsigned long long)st.render_ns_p99);
        expect(st.render_calls == blocks && st.active_sources == 2, "engine stats count the calls and sources");
        expect(moved.stats().frames_pushed == nb, "source stats count the pushed frames");

        // Errors become rtmix::error carrying the status code.
        try {
            std::vector<float> odd(3);  // not a multiple of 2 channels
            eng.render(rtmix::span<float>(odd));
            expect(false, "rendering a partial frame throws");
        } catch (const rtmix::error &e) {
            expect(e.code() == RTMIX_ERR_INVALID_ARGUMENT, "rendering a partial frame throws INVALID_ARGUMENT");
        }
        const rtmix_source_id gone = media.id();
        media.remove();
        try {
            rtmix_source_config cfg = rtmix::default_source_config(RTMIX_DOMAIN_MEDIA, 44100, 1);
            cfg.sample_rate = 1;  // unsupported
            (void)eng.add_source(cfg);
            expect(false, "an unsupported rate throws");
        } catch (const rtmix::error &e) {
            std::printf("mix_tones: caught \"%s\"\n", e.what());
            expect(e.code() == RTMIX_ERR_UNSUPPORTED_FORMAT, "an unsupported rate throws UNSUPPORTED_FORMAT");
        }
        uint32_t buffered = 0;
        expect(rtmix_source_get_buffered(eng.get(), gone, &buffered) == RTMIX_ERR_NOT_FOUND,
               "a removed source is gone (C API on the wrapped handle)");
    } catch (const std::exception &e) {
        std::printf("FAIL: unexpected exception: %s\n", e.what());
        ++failures;
    }
    std::printf("mix_tones: %s\n", failures == 0 ? "all checks passed" : "FAILED");
    return failures == 0 ? 0 : 1;
}
