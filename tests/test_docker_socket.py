"""gate/agent/docker_socket.py: who could connect to a docker socket, and what the gate changes (or only says)
before the agent starts. The image-level proof is tests/test_docker.py (the Action's container, a socket whose
group is the agent's); these are the decisions, on sockets made here."""

from __future__ import annotations

import os
import socket

import pytest

from gate.agent import docker_socket

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown of a test socket needs root")


@pytest.fixture
def sock(open_dir):
    path = open_dir / "engine.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    yield path
    server.close()


def test_who_can_connect(sock):
    sock.chmod(0o660)
    os.chown(sock, 0, 4242)
    assert not docker_socket.connectable(str(sock), 65534, 65534)
    assert docker_socket.connectable(str(sock), 65534, 4242)  # the socket's group: the id collision of an image
    sock.chmod(0o666)
    assert docker_socket.connectable(str(sock), 65534, 65534)
    sock.parent.chmod(0o700)
    assert not docker_socket.connectable(str(sock), 65534, 65534)  # a directory on the way it cannot search


def test_on_a_host_nothing_is_changed_and_the_report_says_so(sock):
    sock.chmod(0o666)
    line = docker_socket.guard("nobody", 65534, 65534, {"DOCKER_HOST": f"unix://{sock}"})
    assert line.startswith(f"the docker socket {sock} is in reach of nobody (uid 65534)"), line
    assert sock.stat().st_mode & 0o777 == 0o666 and sock.parent.stat().st_mode & 0o777 == 0o755  # not a mount
    sock.chmod(0o660)
    assert docker_socket.guard("nobody", 65534, 65534, {"DOCKER_HOST": f"unix://{sock}"}) is None


def test_only_a_directory_of_the_containers_own_file_system_is_closed():
    mounts = [("/", "overlay"), ("/run/docker.sock", "ext4"), ("/host/run", "ext4"), ("/tmp", "tmpfs")]
    assert docker_socket._container_owned("/run", mounts)
    assert docker_socket._container_owned("/tmp/x", mounts)
    assert not docker_socket._container_owned("/host/run", mounts)
    assert not docker_socket._container_owned("/run", [("/", "ext4")])  # a host's root: never changed


def test_a_tcp_docker_host_the_agent_could_drive_is_reported(open_dir):
    """A TCP engine is an address, not a path: no mode keeps the agent from it, only proxy-only or TLS whose
    client key it cannot read. The report says which holds."""
    bare = {"DOCKER_HOST": "tcp://127.0.0.1:2375"}
    line = docker_socket.tcp_note("nobody", 65534, 65534, bare)
    assert line.startswith("DOCKER_HOST is tcp://127.0.0.1:2375: nobody (uid 65534) can drive that docker engine")
    assert "proxy-only" in line
    certs = open_dir / "certs"
    certs.mkdir()
    certs.chmod(0o755)
    (certs / "key.pem").write_text("key")
    tls = {**bare, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": str(certs)}
    (certs / "key.pem").chmod(0o600)  # the gate's own (root's): out of the agent's reach
    assert docker_socket.tcp_note("nobody", 65534, 65534, tls) is None
    (certs / "key.pem").chmod(0o644)  # readable: the agent can present it
    assert docker_socket.tcp_note("nobody", 65534, 65534, tls).startswith("DOCKER_HOST is tcp://")
    assert docker_socket.tcp_note("nobody", 65534, 65534, {"DOCKER_HOST": "unix:///var/run/docker.sock"}) is None
