// The engine-backend floor calls speexdsp's resampler directly (same library
// the engine's Resampler uses for voice-rate sources); the capture floor
// calls speexdsp's echo canceller and preprocessor directly (same library
// and settings as the engine's EchoCanceller).
#include <speex/speex_resampler.h>
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
