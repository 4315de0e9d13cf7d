/* RTMixExports: no code. This target exists only in the `rtmix` product
 * (librtmix.so) to carry the linker version script rtmix-swiftpm.map,
 * which exports the rtmix_* functions and hides everything else (the
 * Swift-mangled *_impl entry points and the Swift API), as the installable
 * build does (scripts/build-lib). A target's linker settings apply to every
 * product that contains it, so no other product (rtmix-cli, RTMixKit, the
 * tests, the fuzzers) gets the script. Checked by scripts/check-exports. */
typedef int rtmix_exports_empty_translation_unit;
