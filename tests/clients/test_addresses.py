import os
import re
from pathlib import Path

import pytest

from mountbench.clients.addresses import FIO_PORT, ClientSpec, fio_cwd, parse_client, parse_clients, parse_counts
from mountbench.errors import UsageError


def test_host_alone_uses_fios_default_port():
    client = parse_client("10.0.0.2")
    assert client == ClientSpec("10.0.0.2", FIO_PORT)
    assert client.label == "10.0.0.2"
    assert client.fio_arg == "10.0.0.2,8765"
    assert client.agent_port == 8766


def test_host_and_port():
    client = parse_client("node1:9000")
    assert (client.host, client.port, client.label, client.fio_arg) == ("node1", 9000, "node1:9000", "node1,9000")
    assert client.dirname == "node1_9000"


def test_ipv6_in_brackets():
    client = parse_client("[fd00::2]:9000")
    assert client.host == "fd00::2"
    assert client.fio_arg == "ip6:fd00::2,9000"
    assert client.label == "[fd00::2]:9000"
    assert ":" not in client.dirname
    assert parse_client("[fd00::2]").port == FIO_PORT


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "needs a host"),
        ("fd00::2", "in brackets"),
        ("host:http", "port must be a number"),
        ("host:0", "port must be a number"),
        ("host:70000", "port must be a number"),
        ("a,b", "not a host name"),
        ("[fd00::2", "IPv6"),
    ],
)
def test_bad_client_is_a_one_line_usage_error(text, says):
    with pytest.raises(UsageError, match=says) as info:
        parse_client(text)
    assert "\n" not in str(info.value)


def test_a_client_given_twice_is_refused():
    with pytest.raises(UsageError, match="given twice"):
        parse_clients(["10.0.0.2", "10.0.0.2:8765"])


def test_entries_match_by_host_and_port():
    client = ClientSpec("10.0.0.2", 9000)
    assert client.is_entry_of("10.0.0.2", 9000)
    assert not client.is_entry_of("10.0.0.2", 8765)
    assert ClientSpec("fd00::2").is_entry_of("ip6:fd00::2", 8765)


def test_counts_are_sorted_unique_and_within_the_clients_given():
    assert parse_counts("4,1,2,2", 4) == (1, 2, 4)
    assert parse_counts(None, 3) == ()
    with pytest.raises(UsageError, match="only 2 given"):
        parse_counts("1,3", 2)
    with pytest.raises(UsageError, match="counts such as"):
        parse_counts("1,x", 2)
    with pytest.raises(UsageError, match="--client HOST"):
        parse_counts("1,2", 0)


def test_roundtrip_through_a_dict():
    client = ClientSpec("node1", 9000)
    assert ClientSpec.from_dict(client.to_dict()) == client


def test_remote_views_name_a_path_and_a_client():
    from mountbench.clients.remoteprobe import RemoteView, parse_view

    a, b = parse_view("/mnt/nfs@10.0.0.2=/mnt/nfs@node3:9000")
    assert a == RemoteView(ClientSpec("10.0.0.2"), "/mnt/nfs")
    assert b == RemoteView(ClientSpec("node3", 9000), "/mnt/nfs")
    assert b.label == "/mnt/nfs@node3:9000"
    assert parse_view("/srv/share=/mnt/share") is None  # a local pair
    assert parse_view("/srv/a@b/c=/mnt/x") is None  # an @ inside a local path
    with pytest.raises(UsageError, match="both views through clients"):
        parse_view("/mnt/nfs@10.0.0.2=/mnt/local")
    with pytest.raises(UsageError, match="must be absolute"):
        parse_view("share@10.0.0.2=/mnt/nfs@10.0.0.3")


def test_ssh_clients_keep_the_address_as_given_as_their_label():
    client = parse_client("ssh://node1")
    assert client.ssh and client.host == "node1" and client.port is None and client.user == ""
    assert client.label == "ssh://node1" and client.destination == "node1"
    full = parse_client("ssh://me@10.0.0.2:2222")
    assert (full.user, full.host, full.port, full.label) == ("me", "10.0.0.2", 2222, "ssh://me@10.0.0.2:2222")
    assert full.destination == "me@10.0.0.2"
    assert parse_client(full.label) == full  # RunOptions keeps labels and parses them again
    assert ClientSpec.from_dict(full.to_dict()) == full
    v6 = parse_client("ssh://[fd00::2]:22")
    assert v6.host == "fd00::2" and v6.label == "ssh://[fd00::2]:22"


def test_an_ssh_client_has_no_fio_address_until_its_tunnel_exists():
    client = parse_client("ssh://node1")
    with pytest.raises(ValueError):
        _ = client.fio_arg
    dialed = client.dialed("/tmp/mb-ssh-1-x/ssh__node1_22.fio")
    assert dialed == client and dialed.label == "ssh://node1"  # the same client, reached another way
    # fio's client runs in the socket's directory and gets its bare name: fio names the logs it
    # receives LOG.HOSTNAME, which must not hold a "/"
    assert dialed.fio_arg == "sock:ssh__node1_22.fio"
    assert fio_cwd([dialed, ClientSpec("10.0.0.2")], Path("/w")) == Path("/tmp/mb-ssh-1-x")
    assert fio_cwd([ClientSpec("10.0.0.2")], Path("/w")) == Path("/w")
    assert dialed.is_entry_of("ssh__node1_22.fio", FIO_PORT) and not client.is_entry_of("ssh__node1_22.fio", FIO_PORT)
    assert dialed.dirname == client.dirname == "ssh__node1_22"


def test_a_login_name_without_ssh_scheme_suggests_ssh():
    with pytest.raises(UsageError, match=re.escape("write --client ssh://root@node1 ")) as raised:
        parse_client("root@node1")
    assert "\n" not in str(raised.value)


def test_any_ssh_port_is_taken_but_a_fio_port_leaves_room_for_serves_agent():
    assert parse_client("ssh://node1:65535").port == 65535
    with pytest.raises(UsageError, match="from 1 to 65534"):
        parse_client("node1:65535")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ssh://", "give ssh://[USER@]HOST[:PORT]"),
        ("ssh://@node1", "is not a login name"),
        ("ssh://node1/path", "nothing after it"),
        ("ssh://node1:99999", "port must be a number"),
    ],
)
def test_bad_ssh_addresses_are_one_line_errors(text, words):
    with pytest.raises(UsageError, match=re.escape(words)) as raised:
        parse_client(text)
    assert str(raised.value).startswith(f"--client {text}")


def test_hosts_file_one_host_a_line(tmp_path):
    from mountbench.clients.addresses import read_hosts_file

    hosts = tmp_path / "hosts"
    hosts.write_text("# lab machines\nnode1\n\nme@node2:2222   # the odd one\nssh://node3\n10.0.0.9:8765\n")
    assert read_hosts_file(hosts) == ("ssh://node1", "ssh://me@node2:2222", "ssh://node3", "ssh://10.0.0.9:8765")
    hosts.write_text("node1 node2\n")
    with pytest.raises(UsageError, match="line 1: 'node1 node2': one host a line"):
        read_hosts_file(hosts)
    hosts.write_text("# nothing\n")
    with pytest.raises(UsageError, match="names no host"):
        read_hosts_file(hosts)
    with pytest.raises(UsageError, match="--hosts-file"):
        read_hosts_file(tmp_path / "missing")


def test_hosts_file_comments_may_hold_any_bytes_and_a_byte_order_mark_is_skipped(tmp_path):
    """Issue 49: a non-UTF-8 byte inside a comment, or a byte-order mark, made the file "not text". A comment
    is a comment; what comes before '#' must still be text."""
    from mountbench.clients.addresses import read_hosts_file

    hosts = tmp_path / "hosts"
    hosts.write_bytes(b"\xef\xbb\xbfnode1   # caf\xe9 (Latin-1), \x00 and \xff\xfe\n# \x80\x81 only a comment\nnode2\n")
    assert read_hosts_file(hosts) == ("ssh://node1", "ssh://node2")
    hosts.write_bytes(b"node\xe9  # a host name that is not UTF-8\n")
    with pytest.raises(UsageError, match="line 1: not text"):
        read_hosts_file(hosts)
    hosts.write_bytes(b"node1\x07\n")
    with pytest.raises(UsageError, match="control character"):
        read_hosts_file(hosts)


def test_hosts_file_on_the_command_line_dry_run_names_each_ssh_client(tmp_path):
    from support.runhelpers import mountbench

    hosts = tmp_path / "hosts"
    hosts.write_text("node1\nme@node2:2222\n")
    target = tmp_path / "share"
    target.mkdir()
    env = {**os.environ, "MOUNTBENCH_DB": str(tmp_path / "db.sqlite")}
    done = mountbench("run", "--client", "ssh://node0", "--hosts-file", str(hosts), f"share={target}", "--only",
                      "rnd4k-q1-read", "--size", "8M", "--dry-run", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    for label in ("ssh://node0", "ssh://node1", "ssh://me@node2:2222"):
        assert f"# --client={label} (through its SSH tunnel)" in done.stdout
    # issue 49: the checks printed a raw record ("✓ clients: {} (chosen now; …)")
    said = " ".join(done.stdout.split())
    assert "clients: {}" not in said and "{}" not in said.split("Order")[0], said
    assert "clients: 3 given (ssh://node0, ssh://node1, ssh://me@node2:2222), not contacted in a dry run" in said
    assert not list(target.iterdir())
    missing = mountbench("run", "--hosts-file", str(tmp_path / "nope"), f"share={target}", "--dry-run", env=env)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "--hosts-file" in missing.stderr


@pytest.mark.parametrize(
    "pair",
    [
        ("127.0.0.1", "localhost"),
        ("localhost", "127.0.0.1:8765"),
        ("localhost:9000", "127.0.0.1:9000"),
    ],
)
def test_one_fio_server_by_two_names_is_one_client(pair):
    """Issue 47 case 9: 127.0.0.1 and localhost were counted as two clients (one server, twice the jobs)."""
    with pytest.raises(UsageError, match="are one fio server"):
        parse_clients(list(pair))


def test_two_ports_of_one_machine_are_two_servers():
    assert len(parse_clients(["127.0.0.1:8765", "localhost:9000"])) == 2


@pytest.mark.parametrize("text", ["a\nb", "node\x1b[2J", "ssh://n\x07"])
def test_a_client_with_a_control_character_is_refused(text):
    with pytest.raises(UsageError, match="control character"):
        parse_clients([text])
