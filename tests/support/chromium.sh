#!/bin/sh
# Chromium as the browser tests start it (tests/support/browser.py): Playwright's arguments, with
# the address bar's WebUI pop-ups turned off as well. Headless Chromium starts renderer processes
# for them (chrome://omnibox-popup.top-chrome) with every new window, which a test never shows:
# they took a fifth of the browser tests' CPU time. Chromium reads only the last
# --disable-features it is given, so the features are added to Playwright's own list rather than
# passed as a second one. An unknown feature name is ignored.
features=WebUIOmniboxPopup,WebUIOmniboxAimPopup
found=
for arg do
    shift
    case $arg in
        --disable-features=*) arg="$arg,$features"; found=1 ;;
    esac
    set -- "$@" "$arg"
done
[ -n "$found" ] || set -- "$@" "--disable-features=$features"
exec "${CHAT_APPLIANCE_TEST_CHROMIUM:?the real browser}" "$@"
