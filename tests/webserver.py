"""A real web server in front of `git http-backend`: lighttpd (Debian's package) on
127.0.0.1 with HTTP basic authentication, so the server's pre-receive sees the pushing
user as ``REMOTE_USER`` (git http-backend takes pushes only from an authenticated user).
lighttpd runs CGI as the user that starts it (Apache refuses root), so the hook runs with
the test's own interpreter. `.ci/run` installs it; elsewhere `apt-get install lighttpd`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.support import free_port, stop, wait_listening

LIGHTTPD = shutil.which("lighttpd") or "/usr/sbin/lighttpd"
BACKEND = subprocess.run(["git", "--exec-path"], capture_output=True, text=True,
                         check=True).stdout.strip() + "/git-http-backend"


def available() -> bool:
    return Path(LIGHTTPD).is_file() and Path(BACKEND).is_file()


class GitHttp:
    """``git http-backend`` for every repository under ``base``, behind lighttpd with basic
    authentication for ``users`` (name -> password)."""

    def __init__(self, base: Path, users: Mapping[str, str]) -> None:
        self.base, self.users = base, dict(users)
        self.port = free_port()
        self.home = base.parent / f"{base.name}-lighttpd"
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, repo: Path, user: str) -> str:
        return (f"http://{user}:{self.users[user]}@127.0.0.1:{self.port}/git/"
                f"{repo.relative_to(self.base)}")

    def _config(self) -> Path:
        self.home.mkdir(parents=True, exist_ok=True)
        lines = []
        for name, password in self.users.items():
            hashed = subprocess.run(["openssl", "passwd", "-apr1", password],
                                    capture_output=True, text=True, check=True).stdout.strip()
            lines.append(f"{name}:{hashed}")
        (self.home / "htpasswd").write_text("\n".join(lines) + "\n")
        conf = self.home / "lighttpd.conf"
        conf.write_text(f"""\
server.document-root = "{self.home}"
server.bind = "127.0.0.1"
server.port = {self.port}
server.errorlog = "{self.home}/error.log"
server.modules = ("mod_auth", "mod_authn_file", "mod_cgi", "mod_alias", "mod_setenv")
alias.url = ("/git/" => "{BACKEND}/")
$HTTP["url"] =~ "^/git/" {{
  cgi.assign = ("" => "")
  setenv.set-environment = ("GIT_PROJECT_ROOT" => "{self.base}", "GIT_HTTP_EXPORT_ALL" => "1")
}}
auth.backend = "htpasswd"
auth.backend.htpasswd.userfile = "{self.home}/htpasswd"
auth.require = ("/git/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
""")
        return conf

    def __enter__(self) -> GitHttp:
        self.proc = subprocess.Popen([LIGHTTPD, "-D", "-f", str(self._config())],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_listening(self.proc, self.port, "lighttpd")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop(self.proc)
