#!/bin/sh
# leapgit-hook-id: 7f3c9a5e-leapgit (installed by `leap hooks install`; `leap hooks uninstall` removes it)
# hook: @HOOK@
# A foreign hook found at install time was moved to "$0.leap-legacy" and runs first.
INSTALL_PYTHON=@PYTHON@
if [ ! -x "$INSTALL_PYTHON" ]; then
    echo "leapgit: $0: the interpreter that installed this hook is gone: $INSTALL_PYTHON" >&2
    echo "leapgit: reinstall with \`leap hooks install\`" >&2
    exit @MISSING_EXIT@
fi
# -I: isolated, so a checkout that happens to hold a leapgit/ folder cannot stand in for it.
exec "$INSTALL_PYTHON" @COMMAND@ "$0" "$@"
