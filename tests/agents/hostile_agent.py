"""A hostile HTTP agent for tests/test_isolation.py (stdlib only): it attacks the gate that runs it.

Each /chat answer is a JSON line of what each attack achieved ("denied: ..." or "GOT ..."), also
printed to its log, so a test reads the outcome wherever it lands. Attacks, all on every input:

- environ: read /proc/<pid>/environ of every ancestor (the gate first) for SECRET_NAME.
- service: read /proc/<pid>/environ of every process whose command line holds SERVICE_MARK.
- tamper: open GATE_FILE (a module of the gate's installation) for writing; never writes a byte.
- mem: open /proc/<gate>/mem and PTRACE_ATTACH the gate (detached at once if it worked).
- fd: open the gate's stdout through /proc/<gate>/fd/1 (to write workflow commands); never writes.
- signal: may it signal the gate (SIGKILL, SIGSTOP)? Probed with signal 0, which checks the same permission.
- outputs: open OUTPUT_FILE (GitHub's GITHUB_OUTPUT, say) for appending; never writes a byte.
- daemon (DAEMON=1): double-fork a setsid daemon that sleeps DAEMON_SLEEP seconds and then rewrites
  REPORT_DIR/report.json; its command line carries DAEMON_MARK so a test can look for it.
- docker: connect to the docker socket (DOCKER_SOCKET, else /var/run/docker.sock) and GET /_ping.
- bypass (BYPASS=1): find the services' ports in /proc/net/tcp (listening sockets, which every uid
  may read) and POST a write straight to each one that answers, around the gate's proxy.
- forge (FORGE=1): really write what would flip the verdict: `verdict=pass` / `score=100.00` appended to
  OUTPUT_FILE, a forged PASS header and an unclosed `<!--` to SUMMARY_FILE, `forged` over
  REPORT_DIR/report.json and into a new file of REPORT_DIR.
"""

import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402

DAEMON_MARK = "hostile-daemon-marker"
DAEMON_CODE = "import sys, time; time.sleep(float(sys.argv[2])); open(sys.argv[3], 'w').write('forged')"


def ancestors() -> list[int]:
    out, pid = [], os.getppid()
    while pid > 0 and len(out) < 10:  # pid 1 too: in a container the gate is pid 1
        out.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return out


def environ_attack() -> str:
    name = os.environ.get("SECRET_NAME", "")
    results = []
    for pid in ancestors():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                found = [e for e in fh.read().split(b"\0") if e.startswith(name.encode() + b"=")]
            results.append(f"GOT {found[0].decode()}" if found else f"read {pid}, no {name}")
        except OSError as exc:
            results.append(f"denied: {exc.strerror}")
    return " | ".join(results)


def read_secret(pid: str, name: str) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            found = [e for e in fh.read().split(b"\0") if e.startswith(name.encode() + b"=")]
        return f"GOT {found[0].decode()}" if found else f"read {pid}, no {name}"
    except OSError as exc:
        return f"denied: {exc.strerror}"


def service_attack() -> str:
    mark = os.environ.get("SERVICE_MARK")
    if not mark:
        return "not tried"
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if mark.encode() in fh.read() and int(pid) != os.getpid():
                    pids.append(pid)
        except OSError:
            pass
    return " | ".join(read_secret(pid, os.environ.get("SECRET_NAME", "")) for pid in pids) or "no service found"


def tamper_attack() -> str:
    try:
        with open(os.environ["GATE_FILE"], "r+b"):
            return "GOT write access"  # opened only: the file is left as it was
    except OSError as exc:
        return f"denied: {exc.strerror}"


def fd_attack() -> str:
    try:
        with open(f"/proc/{os.getppid()}/fd/1", "ab"):
            return "GOT the gate's stdout"
    except OSError as exc:
        return f"denied: {exc.strerror}"


def signal_attack() -> str:
    try:
        os.kill(os.getppid(), 0)
        return "GOT signal permission"
    except OSError as exc:
        return f"denied: {exc.strerror}"


def outputs_attack() -> str:
    if not os.environ.get("OUTPUT_FILE"):
        return "not tried"
    try:
        with open(os.environ["OUTPUT_FILE"], "ab"):
            return "GOT append access"
    except OSError as exc:
        return f"denied: {exc.strerror}"


def mem_attack() -> str:
    gate = os.getppid()
    try:
        with open(f"/proc/{gate}/mem", "r+b"):
            opened = "GOT mem open"
    except OSError as exc:
        opened = f"denied: {exc.strerror}"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, gate, None, None) == 0:  # PTRACE_ATTACH: the gate stops
        os.waitpid(gate, 0x40000000)  # __WALL: until it has
        libc.ptrace(17, gate, None, None)  # PTRACE_DETACH: and runs on
        return opened + " | GOT ptrace"
    return opened + f" | denied: ptrace errno {ctypes.get_errno()}"


def start_daemon() -> None:
    if os.fork() != 0:
        os.wait()
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.execv(sys.executable, [sys.executable, "-c", DAEMON_CODE, DAEMON_MARK, os.environ.get("DAEMON_SLEEP", "3"),
                              os.path.join(os.environ.get("REPORT_DIR", "/nonexistent"), "report.json")])


def docker_attack() -> str:
    import socket

    path = os.environ.get("DOCKER_SOCKET", "/var/run/docker.sock")
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return "GOT docker API: " + sock.recv(200).decode("latin-1").split("\r\n", 1)[0]
    except OSError as exc:
        return f"denied: {exc.strerror or exc}"


def write(path: str, text: str, mode: str = "a") -> str:
    try:
        with open(path, mode) as fh:
            fh.write(text)
        return f"GOT {os.path.basename(path)} written"
    except OSError as exc:
        return f"denied: {exc.strerror}"


def forge_attack() -> str:
    if os.environ.get("FORGE") != "1":
        return "not tried"
    report_dir = os.environ.get("REPORT_DIR", "/nonexistent")
    done = [write(os.environ["OUTPUT_FILE"], "verdict=pass\nscore=100.00\n") if os.environ.get("OUTPUT_FILE") else "",
            write(os.environ["SUMMARY_FILE"], "# chaos-gate: **PASS** (forged)\n<!--\n")
            if os.environ.get("SUMMARY_FILE") else "",
            write(os.path.join(report_dir, "report.json"), "forged", "w"),
            write(os.path.join(report_dir, "forged.txt"), "forged", "w")]
    return " | ".join(d for d in done if d)


def listening_ports() -> list[int]:
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        ports |= {int(r.split()[1].rsplit(":", 1)[1], 16) for r in rows if r.split()[3] == "0A"}  # 0A: LISTEN
    return sorted(ports)


def bypass_attack() -> str:
    import urllib.error
    import urllib.request

    if os.environ.get("BYPASS") != "1":
        return "not tried"
    mine = int(os.environ.get("PORT", "0"))
    done = []
    for port in listening_ports():
        if port == mine:
            continue
        request = urllib.request.Request(f"http://127.0.0.1:{port}/refund", b'{"order": "1234"}',
                                         {"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=2) as resp:
                done.append(f"{port}:{resp.status}")
        except urllib.error.HTTPError as exc:
            done.append(f"{port}:{exc.code}")
        except OSError:
            pass
    return "sent " + ",".join(done) if done else "denied: no port answered"


class Handler(AgentHandler):
    def do_POST(self):
        self.json_body()
        if os.environ.get("DAEMON") == "1":
            start_daemon()
        found = {"environ": environ_attack(), "tamper": tamper_attack(), "mem": mem_attack(),
                 "outputs": outputs_attack(), "fd": fd_attack(), "signal": signal_attack(),
                 "service": service_attack(), "docker": docker_attack(), "forge": forge_attack(),
                 "bypass": bypass_attack(), "uid": os.getuid()}
        print("attacks: " + json.dumps(found), flush=True)
        self.reply(200, {"reply": json.dumps(found)})


if __name__ == "__main__":
    serve_agent(Handler, "hostile agent")
