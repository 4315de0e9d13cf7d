# RTMix C library: build, install, uninstall. Thin wrapper; the logic is in
# scripts/ (build-lib, install-lib, install-check). See docs/install.md.
#
#   make                                   release build into $(BUILD)/lib (the C
#                                          library) and $(BUILD)/bin (rtmix-cli)
#   make install PREFIX=/usr/local         (DESTDIR=/staging supported)
#   make install-strip PREFIX=...          same, local symbol tables stripped
#   make uninstall PREFIX=/usr/local       removes exactly what install put there
#   make check-install                     full install test in a temp prefix

PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= .build-install

all: lib cli

lib:
	scripts/build-lib $(BUILD)

# rtmix-cli, statically linked Swift runtime, and its manual page.
cli:
	scripts/build-cli $(BUILD)

install: all
	DESTDIR="$(DESTDIR)" scripts/install-lib install "$(PREFIX)" $(BUILD)

install-strip: all
	DESTDIR="$(DESTDIR)" scripts/install-lib install-strip "$(PREFIX)" $(BUILD)

uninstall:
	DESTDIR="$(DESTDIR)" scripts/install-lib uninstall "$(PREFIX)" $(BUILD)

check-install:
	RTMIX_INSTALL_BUILD=$(BUILD) scripts/install-check

clean:
	rm -rf $(BUILD)/obj $(BUILD)/lib $(BUILD)/rtmix.map $(BUILD)/version $(BUILD)/bin $(BUILD)/man

.PHONY: all lib cli install install-strip uninstall check-install clean
