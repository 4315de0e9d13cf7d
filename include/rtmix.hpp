/*
 * rtmix.hpp — header-only C++17 RAII wrapper over the RTMix C ABI (rtmix.h).
 *
 *   rtmix::engine eng;                         // 48 kHz stereo defaults
 *   rtmix::source voice = eng.add_source(RTMIX_DOMAIN_CALL, 16000, 1);
 *   uint32_t n = voice.push(rtmix::span<const float>(pcm, frames));
 *   eng.render(rtmix::span<float>(out, frames * eng.channels()));
 *
 * - rtmix::engine and rtmix::source are move-only handles. Destroying an
 *   engine destroys it (rtmix_engine_destroy); destroying a source removes it
 *   (rtmix_source_remove). A source must not outlive its engine (destroy or
 *   release() it first).
 * - Every failing status throws rtmix::error (a std::runtime_error carrying
 *   the RTMIX_ERR_* code), except where a "try_" function returns the status
 *   instead, and except a partial push: push() returns the number of frames
 *   accepted (fewer than offered when the ring is full; that is not an
 *   error). Errors on the real-time paths (push, render) are programming
 *   errors (bad sizes, unknown ids, two render threads); use try_push /
 *   try_render where exceptions are not wanted on those threads.
 * - Buffers are rtmix::span<T>: pointer + element count (samples, i.e.
 *   frames x channels, interleaved). It converts from T* + size, C arrays and
 *   any contiguous container with data()/size() (std::vector, std::array,
 *   std::span in C++20).
 * - Thread safety and real-time safety are those of the wrapped C function
 *   (see rtmix.h); the wrapper adds no lock and no allocation. The throwing
 *   paths build an error message, i.e. allocate: only on failure.
 * Link with: pkg-config --cflags --libs rtmix (or CMake rtmix::rtmix).
 */
#ifndef RTMIX_HPP
#define RTMIX_HPP

#include "rtmix.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace rtmix {

/* ---------------------------------------------------------------- errors */

/* A failed RTMix call: code() is the RTMIX_ERR_* status. */
class error : public std::runtime_error {
public:
    error(int32_t code, const char *call)
        : std::runtime_error(std::string(call) + ": " + rtmix_status_string(code) + " (" +
                             std::to_string(code) + ")"),
          code_(code) {}
    int32_t code() const noexcept { return code_; }

private:
    int32_t code_;
};

/* Throws rtmix::error unless status is RTMIX_OK. */
inline void check(int32_t status, const char *call) {
    if (status != RTMIX_OK) throw error(status, call);
}

/* Library version as (major << 16) | (minor << 8) | patch. */
inline uint32_t version() noexcept { return rtmix_version(); }

/* ---------------------------------------------------------------- span */

/* Non-owning view of `size()` contiguous elements (not frames). */
template <class T>
class span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = std::size_t;

    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    /* Any contiguous container whose data() converts to T* (vector, array). */
    template <class C,
              class = std::enable_if_t<
                  !std::is_same_v<std::remove_cv_t<std::remove_reference_t<C>>, span> &&
                  std::is_convertible_v<decltype(std::declval<C &>().data()), T *> &&
                  std::is_convertible_v<decltype(std::declval<C &>().size()), std::size_t>>>
    constexpr span(C &container) noexcept : data_(container.data()), size_(container.size()) {}
    /* span<T> -> span<const T> */
    template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
    constexpr span(const span<U> &other) noexcept : data_(other.data()), size_(other.size()) {}

    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }
    constexpr span subspan(std::size_t offset, std::size_t count) const noexcept {
        return span(data_ + offset, count);
    }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

/* ---------------------------------------------------------------- config helpers */

inline rtmix_engine_config default_engine_config() {
    rtmix_engine_config cfg;
    check(rtmix_engine_config_init(&cfg), "rtmix_engine_config_init");
    return cfg;
}

inline rtmix_source_config default_source_config(rtmix_domain domain, uint32_t sample_rate,
                                                 uint32_t channels) {
    rtmix_source_config cfg;
    check(rtmix_source_config_init(&cfg, domain, sample_rate, channels), "rtmix_source_config_init");
    return cfg;
}

class engine;

/* ---------------------------------------------------------------- source */

/* A source of an engine. Move-only; the destructor removes the source. */
class source {
public:
    source() noexcept = default;
    ~source() { reset(); }
    source(const source &) = delete;
    source &operator=(const source &) = delete;
    source(source &&other) noexcept
        : engine_(std::exchange(other.engine_, nullptr)), id_(std::exchange(other.id_, 0)),
          channels_(other.channels_) {}
    source &operator=(source &&other) noexcept {
        if (this != &other) {
            reset();
            engine_ = std::exchange(other.engine_, nullptr);
            id_ = std::exchange(other.id_, 0);
            channels_ = other.channels_;
        }
        return *this;
    }

    rtmix_source_id id() const noexcept { return id_; }
    uint32_t channels() const noexcept { return channels_; }
    explicit operator bool() const noexcept { return engine_ != nullptr; }

    /* Pushes interleaved PCM (samples.size() must be a multiple of
     * channels()). Returns the frames accepted: fewer than offered when the
     * ring is full. Throws on any other failure. Producer thread;
     * real-time safe when it does not throw. */
    uint32_t push(span<const float> samples) {
        uint32_t accepted = 0;
        int32_t st = try_push(samples, accepted);
        if (st != RTMIX_OK && st != RTMIX_ERR_BUFFER_FULL) throw error(st, "rtmix_source_push_f32");
        return accepted;
    }
    uint32_t push(span<const int16_t> samples) {
        uint32_t accepted = 0;
        int32_t st = try_push(samples, accepted);
        if (st != RTMIX_OK && st != RTMIX_ERR_BUFFER_FULL) throw error(st, "rtmix_source_push_s16");
        return accepted;
    }
    /* Non-throwing push: returns the C status, stores the frames accepted. */
    int32_t try_push(span<const float> samples, uint32_t &accepted) noexcept {
        accepted = 0;
        uint32_t frames = 0;
        if (!frames_of(samples.size(), frames)) return RTMIX_ERR_INVALID_ARGUMENT;
        return rtmix_source_push_f32(engine_, id_, samples.data(), frames, &accepted);
    }
    int32_t try_push(span<const int16_t> samples, uint32_t &accepted) noexcept {
        accepted = 0;
        uint32_t frames = 0;
        if (!frames_of(samples.size(), frames)) return RTMIX_ERR_INVALID_ARGUMENT;
        return rtmix_source_push_s16(engine_, id_, samples.data(), frames, &accepted);
    }

    /* Frames waiting in the ring. Any thread; real-time safe. */
    uint32_t buffered() const {
        uint32_t frames = 0;
        check(rtmix_source_get_buffered(engine_, id_, &frames), "rtmix_source_get_buffered");
        return frames;
    }
    /* Control threads. */
    void set_gain(float gain) { check(rtmix_source_set_gain(engine_, id_, gain), "rtmix_source_set_gain"); }
    void set_muted(bool muted) {
        check(rtmix_source_set_muted(engine_, id_, muted ? 1 : 0), "rtmix_source_set_muted");
    }
    rtmix_source_stats stats() const {
        rtmix_source_stats st;
        check(rtmix_source_stats_init(&st), "rtmix_source_stats_init");
        check(rtmix_source_get_stats(engine_, id_, &st), "rtmix_source_get_stats");
        return st;
    }
    /* Removes the source now (throws on failure); the handle becomes empty. */
    void remove() {
        if (engine_ == nullptr) return;
        rtmix_engine *e = std::exchange(engine_, nullptr);
        check(rtmix_source_remove(e, std::exchange(id_, 0)), "rtmix_source_remove");
    }
    /* Gives up ownership without removing the source; returns its id. */
    rtmix_source_id release() noexcept {
        engine_ = nullptr;
        return std::exchange(id_, 0);
    }

private:
    friend class engine;
    source(rtmix_engine *e, rtmix_source_id id, uint32_t channels) noexcept
        : engine_(e), id_(id), channels_(channels) {}
    bool frames_of(std::size_t samples, uint32_t &frames) const noexcept {
        if (channels_ == 0 || samples % channels_ != 0 || samples / channels_ > UINT32_MAX) return false;
        frames = static_cast<uint32_t>(samples / channels_);
        return true;
    }
    void reset() noexcept {
        if (engine_ != nullptr) (void)rtmix_source_remove(engine_, id_);
        engine_ = nullptr;
        id_ = 0;
    }

    rtmix_engine *engine_ = nullptr;
    rtmix_source_id id_ = 0;
    uint32_t channels_ = 0;
};

/* ---------------------------------------------------------------- engine */

/* An engine. Move-only; the destructor destroys it. */
class engine {
public:
    /* Engine with the default configuration (48 kHz, stereo). */
    engine() : engine(default_engine_config()) {}
    explicit engine(const rtmix_engine_config &cfg) {
        check(rtmix_engine_create(&cfg, &handle_), "rtmix_engine_create");
        rtmix_engine_config effective;
        int32_t st = rtmix_engine_config_init(&effective);
        if (st == RTMIX_OK) st = rtmix_engine_get_config(handle_, &effective);
        if (st != RTMIX_OK) {  // the destructor will not run: clean up here
            rtmix_engine_destroy(std::exchange(handle_, nullptr));
            throw error(st, "rtmix_engine_get_config");
        }
        sample_rate_ = effective.sample_rate;
        channels_ = effective.channels;
    }
    ~engine() { rtmix_engine_destroy(handle_); }
    engine(const engine &) = delete;
    engine &operator=(const engine &) = delete;
    engine(engine &&other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)), sample_rate_(other.sample_rate_),
          channels_(other.channels_) {}
    engine &operator=(engine &&other) noexcept {
        if (this != &other) {
            rtmix_engine_destroy(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
            sample_rate_ = other.sample_rate_;
            channels_ = other.channels_;
        }
        return *this;
    }

    rtmix_engine *get() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }
    uint32_t sample_rate() const noexcept { return sample_rate_; }
    uint32_t channels() const noexcept { return channels_; }

    rtmix_engine_config config() const {
        rtmix_engine_config cfg = default_engine_config();
        check(rtmix_engine_get_config(handle_, &cfg), "rtmix_engine_get_config");
        return cfg;
    }

    /* Control threads; allocates. */
    source add_source(const rtmix_source_config &cfg) {
        rtmix_source_id id = 0;
        check(rtmix_source_add(handle_, &cfg, &id), "rtmix_source_add");
        return source(handle_, id, cfg.channels);
    }
    source add_source(rtmix_domain domain, uint32_t sample_rate, uint32_t channels) {
        return add_source(default_source_config(domain, sample_rate, channels));
    }

    void set_domain_gain(rtmix_domain domain, float gain) {
        check(rtmix_domain_set_gain(handle_, domain, gain), "rtmix_domain_set_gain");
    }
    float domain_gain(rtmix_domain domain) const {
        float gain = 0.0f;
        check(rtmix_domain_get_gain(handle_, domain, &gain), "rtmix_domain_get_gain");
        return gain;
    }

    /* Render thread: fills `out` (size = frames x channels()). Throws on a
     * failure; try_render returns the status instead. */
    void render(span<float> out) { check(try_render(out), "rtmix_render_f32"); }
    void render(span<int16_t> out) { check(try_render(out), "rtmix_render_s16"); }
    /* The library checks out.size() against the engine's current channel
     * count (even if it changed behind this wrapper's back) and zero-fills
     * `out` on any failure. */
    int32_t try_render(span<float> out) noexcept {
        uint32_t frames = 0;
        if (!frames_of(out.size(), frames)) return fail_silent(out, RTMIX_ERR_INVALID_ARGUMENT);
        return rtmix_render_f32_checked(handle_, out.data(), out.size(), frames);
    }
    int32_t try_render(span<int16_t> out) noexcept {
        uint32_t frames = 0;
        if (!frames_of(out.size(), frames)) return fail_silent(out, RTMIX_ERR_INVALID_ARGUMENT);
        return rtmix_render_s16_checked(handle_, out.data(), out.size(), frames);
    }

    /* Control threads, device stopped: changes the output format (see
     * rtmix_engine_set_output_format) and the cached sample_rate() and
     * channels(). */
    void set_output_format(uint32_t sample_rate, uint32_t channels) {
        check(try_set_output_format(sample_rate, channels), "rtmix_engine_set_output_format");
    }
    int32_t try_set_output_format(uint32_t sample_rate, uint32_t channels) noexcept {
        int32_t st = rtmix_engine_set_output_format(handle_, sample_rate, channels);
        if (st == RTMIX_OK) {
            sample_rate_ = sample_rate;
            channels_ = channels;
        }
        return st;
    }

    /* Control threads. */
    rtmix_engine_stats stats() const {
        rtmix_engine_stats st;
        check(rtmix_engine_stats_init(&st), "rtmix_engine_stats_init");
        check(rtmix_engine_get_stats(handle_, &st), "rtmix_engine_get_stats");
        return st;
    }
    /* Takes the oldest event; false when the queue is empty. */
    bool next_event(rtmix_event &ev) {
        check(rtmix_event_init(&ev), "rtmix_event_init");
        check(rtmix_engine_next_event(handle_, &ev), "rtmix_engine_next_event");
        return ev.type != RTMIX_EVENT_NONE;
    }

private:
    bool frames_of(std::size_t samples, uint32_t &frames) const noexcept {
        if (channels_ == 0 || samples % channels_ != 0 || samples / channels_ > UINT32_MAX) return false;
        frames = static_cast<uint32_t>(samples / channels_);
        return true;
    }
    template <class T>
    static int32_t fail_silent(span<T> out, int32_t status) noexcept {
        for (std::size_t i = 0; i < out.size(); i++) out.data()[i] = T(0);
        return status;
    }

    rtmix_engine *handle_ = nullptr;
    uint32_t sample_rate_ = 0;
    uint32_t channels_ = 0;
};

}  // namespace rtmix

#endif /* RTMIX_HPP */
